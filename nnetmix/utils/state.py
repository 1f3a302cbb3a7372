"""State files (checkpoints): the one place that reads and writes them.

A training run leaves state beside its models so a killed run can resume: NG-SGD's Fisher
estimates (``<model>.ngsgd.npz``), the BMUF filter (``<model>.bmuf.npz``), the scheduler's
``.scheduler_state.json`` and each epoch's result file. A state file can be damaged in ways a
model file rarely is (a copy cut short, a full disk, a file from another version or another
tool), and ``np.load``/``json.load`` report such damage as any of seven exception types
(``BadZipFile``, ``EOFError``, ``ValueError``, ``NotImplementedError``, ``RuntimeError``, ...,
measured by truncating and flipping bytes of a real state file). So every state file is read
here, and any damage becomes one :class:`StateError` naming the file and what is wrong, which a
bin/ tool prints as one ERROR line. Pickles are never loaded (``allow_pickle=False``): a state
file is data, not code.

Reading checks what the owner declares: for ``.npz`` files, each array's dtype kind and shape
(:class:`Array`; a name in a shape ties sizes together across arrays), for JSON files each
field's type. Checks that need the model (does the state fit this network?) stay with the
owner. Writing is to a temporary name in the same directory, flushed and fsync'ed, then renamed
into place, so a reader sees the old file or the new one, never half of one.
"""
from __future__ import annotations

import dataclasses
import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any, Mapping, Union

import numpy as np

from nnetmix.data.io import atomic_open
from nnetmix.errors import FormatError

__all__ = ["StateError", "Array", "read_npz", "check_arrays", "write_npz", "read_json",
           "parse_json", "check_fields", "write_json", "write_text", "copy_file"]

Dim = Union[int, str, None]


class StateError(FormatError):
    """A state file that cannot be read or does not hold what it should."""


@dataclasses.dataclass(frozen=True)
class Array:
    """What one array of an ``.npz`` state must be.

    ``kinds``: the numpy dtype kinds accepted ("f" float, "iu" integer, "b" bool, "U" text);
    ``shape``: one entry per axis, an int (that size), None (any size) or a name (the same size
    wherever the name appears in one spec, e.g. W, W_g and delta of BMUF all ``("n",)``).
    """

    kinds: str
    shape: tuple[Dim, ...] = ()
    optional: bool = False


_KIND_NAMES = {"f": "float", "i": "integer", "u": "integer", "b": "bool", "U": "text"}


def _kind_text(kinds: str) -> str:
    return " or ".join(dict.fromkeys(_KIND_NAMES.get(k, k) for k in kinds))


def _fail(path: str | os.PathLike, what: str, problem: str, fix: str = "") -> StateError:
    return StateError(f"{path}: {what}: {problem}" + (f" ({fix})" if fix else ""))


def _not_npz(head: bytes) -> str:
    """What a file that does not start with a zip header is instead (np.load would try it as
    a pickle, which we never do)."""
    if not head:
        return "empty file (0 bytes), expected an .npz archive"
    if head.startswith(b"\x93NUMPY"):
        return "a single .npy array, expected an .npz archive"
    if head[:1] == b"\x80":
        return "a Python pickle, not an .npz archive (not loaded: it could run code)"
    return f"not an .npz archive (it starts with {head!r}, not a zip header)"


def _load_arrays(source: str | os.PathLike | io.BytesIO, what: str, fix: str,
                 path: str | os.PathLike) -> dict[str, np.ndarray]:
    """``source``: a file, or the bytes of one read from a pipe (``path`` names it)."""
    if isinstance(source, io.BytesIO):   # .npz needs seeking: a pipe was read whole
        head = source.getvalue()[:8]
    else:
        try:
            with open(source, "rb") as fh:
                head = fh.read(8)
        except OSError as e:
            raise _fail(path, what, f"cannot read it ({e.strerror})") from None
    if not head.startswith(b"PK"):
        raise _fail(path, what, _not_npz(head), fix)
    arrays: dict[str, np.ndarray] = {}
    try:
        with np.load(source, allow_pickle=False) as z:
            for key in z.files:
                try:
                    arrays[key] = z[key]
                except ValueError as e:
                    if "allow_pickle" not in str(e):
                        raise
                    raise _fail(path, what, f"array '{key}' holds Python objects, which a state "
                                "file never does (not loaded: it could run code)", fix) from None
    except StateError:
        raise
    except OSError as e:
        raise _fail(path, what, f"cannot read it ({e.strerror or e})", fix) from None
    except zipfile.BadZipFile as e:
        problem = ("truncated (the .npz archive ends before its zip directory)"
                   if "not a zip file" in str(e) else f"damaged .npz archive: {e}")
        raise _fail(path, what, problem, fix) from None
    except Exception as e:  # any other damage np.load/zipfile report (the module docstring)
        raise _fail(path, what, f"truncated or damaged .npz archive: {type(e).__name__}: {e}",
                    fix) from None
    return arrays


def read_npz(path: str | os.PathLike | io.BytesIO, what: str, spec: Mapping[str, Array],
             fix: str = "", name: str = "") -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` file ``path``, after checking those ``spec`` declares.

    ``what`` names the kind of state in messages ("NG-SGD state"); ``fix`` is the remedy put in
    parentheses (e.g. "remove it to start the filter afresh"); ``path`` may be the bytes of a
    file read from a pipe, ``name`` then names it. Raises :class:`StateError`.
    """
    where = name or path
    return check_arrays(_load_arrays(path, what, fix, where), spec, where, what, fix)


def check_arrays(arrays: Mapping[str, np.ndarray], spec: Mapping[str, Array],
                 path: str | os.PathLike, what: str, fix: str = "") -> dict[str, np.ndarray]:
    """``arrays`` (from :func:`read_npz` of ``path``) checked against more of a spec: for an
    owner whose spec depends on what the file says (NG-SGD's layers are in its metadata)."""
    missing = [k for k, a in spec.items() if not a.optional and k not in arrays]
    if missing:
        raise _fail(path, what, "missing array" + ("s" if len(missing) > 1 else "") + " "
                    + ", ".join(f"'{k}'" for k in missing), fix)
    sizes: dict[str, tuple[str, int]] = {}
    for key, want in spec.items():
        if key not in arrays:
            continue
        a = arrays[key]
        if a.dtype.kind not in want.kinds:
            raise _fail(path, what, f"array '{key}' has dtype {a.dtype}, expected "
                        f"{_kind_text(want.kinds)}", fix)
        if a.ndim != len(want.shape):
            raise _fail(path, what, f"array '{key}' has shape {a.shape}, expected "
                        f"{len(want.shape)} axes", fix)
        for n, dim in zip(a.shape, want.shape):
            if isinstance(dim, int) and n != dim:
                raise _fail(path, what, f"array '{key}' has shape {a.shape}, expected "
                            f"{tuple(want.shape)}", fix)
            if isinstance(dim, str):
                first = sizes.setdefault(dim, (key, n))
                if first[1] != n:
                    raise _fail(path, what, f"array '{key}' has shape {a.shape}, but "
                                f"'{first[0]}' has {arrays[first[0]].shape} (they must agree)",
                                fix)
    return dict(arrays)


def _type_ok(value: Any, kind: type) -> bool:
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def check_fields(data: Any, fields: Mapping[str, type], where: str | os.PathLike, what: str,
                 fix: str = "") -> dict[str, Any]:
    """``data`` as a dict, after checking it is a JSON object with ``fields`` (name: type;
    float accepts an integer, bool is never a number); other fields are kept unchecked."""
    if not isinstance(data, dict):
        raise _fail(where, what, f"expected a JSON object, found {type(data).__name__}", fix)
    missing = [k for k in fields if k not in data]
    if missing:
        raise _fail(where, what, "missing field" + ("s" if len(missing) > 1 else "") + " "
                    + ", ".join(f"'{k}'" for k in missing), fix)
    for name, kind in fields.items():
        if not _type_ok(data[name], kind):
            raise _fail(where, what, f"field '{name}' is {json.dumps(data[name])}, expected "
                        f"{'a number' if kind is float else kind.__name__}", fix)
    return data


def parse_json(text: str, fields: Mapping[str, type], where: str | os.PathLike, what: str,
               fix: str = "") -> dict[str, Any]:
    """A JSON object from ``text`` (read from ``where``), checked with :func:`check_fields`."""
    if not text.strip():
        raise _fail(where, what, "empty, expected a JSON object", fix)
    try:
        data = json.loads(text)
    except ValueError as e:  # JSONDecodeError, and bad numbers
        line = f" at line {e.lineno}" if isinstance(e, json.JSONDecodeError) else ""
        raise _fail(where, what, f"bad JSON{line} ({getattr(e, 'msg', e)}; truncated?)",
                    fix) from None
    return check_fields(data, fields, where, what, fix)


def read_json(path: str | os.PathLike, what: str, fields: Mapping[str, type],
              fix: str = "") -> dict[str, Any]:
    """The JSON object in ``path`` with ``fields`` checked; raises :class:`StateError`."""
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise _fail(path, what, f"cannot read it ({e.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _fail(path, what, f"not UTF-8 text (byte {e.start}), expected JSON", fix) from None
    return parse_json(text, fields, path, what, fix)


def write_npz(path: str | os.PathLike, arrays: Mapping[str, np.ndarray]) -> None:
    """``np.savez`` of ``arrays`` to ``path`` atomically (:func:`nnetmix.data.io.atomic_open`, durable)."""
    with atomic_open(path, "wb", durable=True) as fh:
        np.savez(fh, **arrays)


def write_json(path: str | os.PathLike, data: Mapping[str, Any]) -> None:
    """``data`` as indented JSON (one object, a newline at the end), atomically."""
    write_text(path, json.dumps(data, indent=1) + "\n")


def write_text(path: str | os.PathLike, text: str) -> None:
    """``text`` to ``path`` atomically (Kaldi's small state files: .learn_rate, .mlp_best)."""
    with atomic_open(path, "w", durable=True) as fh:
        fh.write(text)


def copy_file(src: str | os.PathLike, dst: str | os.PathLike, chunk: int = 1 << 20) -> None:
    """Copy ``src`` to ``dst`` atomically (a state seeded from another model's)."""
    with open(src, "rb") as fin, atomic_open(dst, "wb", durable=True) as fout:
        while True:
            block = fin.read(chunk)
            if not block:
                break
            fout.write(block)
