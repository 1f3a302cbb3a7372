"""A recipe's fingerprint: checksums of its corpus, features, alignments and models, stage by
stage, and of the numeric environment, so two runs show where they first part.

Tables are summed by content, not by file: a feature archive's checksum is over its (key,
matrix) pairs in key order, and the alignments of all ``ali.*.gz`` jobs form one table, so
``--nj 1`` and ``--nj 4`` runs that agree have the same fingerprint even though their archives
are cut differently. Model files (``*.mdl``, ``*.nnet``, ``*.dbn``, ``final.feature_transform``)
are checksummed as bytes, and a decoding directory's ``wer_*`` files as one row.
"""
from __future__ import annotations

import dataclasses
import glob
import hashlib
import os
import shutil
import subprocess
from typing import Iterator

import numba
import numpy as np

from nnetmix.errors import FormatError
from nnetmix.kaldi import SequentialReader
from nnetmix.kernel_pin import kernel_settings

__all__ = ["recipe_fingerprint", "environment", "md5_file", "md5_table", "format_fingerprint",
           "read_fingerprint", "compare_fingerprints", "FingerprintComparison"]

#: the header line of a fingerprint table, as fingerprint-recipe.py prints it
HEADER = "| what | md5 |"

#: model files of an exp/<name> directory, in the order a recipe makes them
_MODELS = ("0.mdl", "final.mdl", "*.dbn", "final.feature_transform", "final.nnet")


def md5_file(path: str) -> str:
    h = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def md5_table(rspecifiers: list[str], kind: str) -> str:
    """Checksum of the (key, value) pairs of one or more tables, in key order."""
    items: dict[str, np.ndarray] = {}
    for rs in rspecifiers:
        with SequentialReader(rs, kind) as r:
            for key, value in r:
                items[key] = np.ascontiguousarray(value)
    h = hashlib.md5()
    for key in sorted(items):
        v = items[key]
        h.update(f"{key} {v.dtype.str} {v.shape}\n".encode())
        h.update(v.tobytes())
    return h.hexdigest()


def _md5_audio(wav_scp: str) -> str:
    """Checksum of the audio files a wav.scp names, in its order (a ``cmd |`` entry counts by
    its text: running it here would run the corpus's commands)."""
    h = hashlib.md5()
    with open(wav_scp) as f:
        for line in f:
            parts = line.split(maxsplit=1)
            if len(parts) == 2 and not parts[1].rstrip().endswith("|") and \
                    os.path.isfile(parts[1].strip()):
                with open(parts[1].strip(), "rb") as w:
                    h.update(w.read())
            else:
                h.update(line.encode())
    return h.hexdigest()


def _data_rows(recipe: str) -> Iterator[tuple[str, str]]:
    for d in sorted(glob.glob(os.path.join(recipe, "data", "*", ""))):
        name = os.path.relpath(d, recipe).rstrip("/")
        for f in ("text", "utt2spk"):
            if os.path.isfile(os.path.join(d, f)):
                yield f"{name}/{f}", md5_file(os.path.join(d, f))
        if os.path.isfile(os.path.join(d, "wav.scp")):
            yield f"{name}/wav.scp (audio)", _md5_audio(os.path.join(d, "wav.scp"))
        for f, kind in (("feats.scp", "mat"), ("cmvn.scp", "mat")):
            p = os.path.join(d, f)
            if os.path.isfile(p):
                yield f"{name}/{f} (matrices)", md5_table([f"scp:{p}"], kind)


def _exp_rows(recipe: str) -> Iterator[tuple[str, str]]:
    for d in sorted(glob.glob(os.path.join(recipe, "exp", "*", ""))):
        name = os.path.relpath(d, recipe).rstrip("/")
        for pattern in _MODELS:
            for p in sorted(glob.glob(os.path.join(d, pattern))):
                yield f"{name}/{os.path.basename(p)}", md5_file(p)
        alis = sorted(glob.glob(os.path.join(d, "ali.*.gz")))
        if alis:
            yield f"{name}/ali.*.gz (alignments)", md5_table(
                [f"ark:gunzip -c {a} |" for a in alis], "ivec")
        for dec in sorted(glob.glob(os.path.join(d, "decode*", ""))):
            wers = sorted(glob.glob(os.path.join(dec, "wer_*")))
            if wers:
                h = hashlib.md5()
                for w in wers:
                    h.update(f"{os.path.basename(w)}\n".encode())
                    with open(w, "rb") as f:
                        h.update(f.read())
                yield f"{os.path.relpath(dec, recipe).rstrip('/')}/wer_* (scores)", h.hexdigest()


def recipe_fingerprint(recipe: str) -> list[tuple[str, str]]:
    """(what, md5) for the data and exp directories of a recipe directory, data first, then
    the experiments by name (not in the order they were made: stages that run side by side
    finish in either order, and two runs of the same bits must list the same rows)."""
    return list(_data_rows(recipe)) + list(_exp_rows(recipe))


def _version(cmd: list[str]) -> str:
    if shutil.which(cmd[0]) is None:
        return "(not found)"
    out = subprocess.run(cmd, capture_output=True, text=True)
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0] if lines else "(no version)"


def environment() -> list[tuple[str, str]]:
    """(what, value) of what decides the bits: kernel pinning, library and tool versions."""
    return [("kernels", kernel_settings()),
            ("numpy", np.__version__), ("numba", numba.__version__),
            ("espeak-ng", _version(["espeak-ng", "--version"])),
            ("sox", _version(["sox", "--version"]))]


def format_fingerprint(rows: list[tuple[str, str]], env: list[tuple[str, str]]) -> str:
    """The Markdown table fingerprint-recipe.py prints and :func:`read_fingerprint` reads: file
    rows backquoted, then the environment rows."""
    table = [HEADER, "| --- | --- |"]
    table += [f"| `{what}` | {md5} |" for what, md5 in rows]
    table += [f"| {what} | {value} |" for what, value in env]
    return "\n".join(table) + "\n"


def read_fingerprint(text: str, source: str = "<text>") -> tuple[dict[str, str], dict[str, str]]:
    """The first fingerprint table in a Markdown text (an ``exp/fingerprint.md``, or a
    RESULTS.md that holds one) as ({file row: md5}, {environment row: value}), in the table's
    order; file rows are the backquoted ones, their name without the quotes."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == HEADER)
    except StopIteration:
        raise FormatError(f"{source}: no fingerprint table (a '{HEADER}' header line)") from None
    files: dict[str, str] = {}
    env: dict[str, str] = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2:
            raise FormatError(f"{source}: fingerprint row '{line.strip()}' has "
                              f"{len(cells)} cells, expected 2")
        if cells[0].startswith("`") and cells[0].endswith("`"):
            files[cells[0][1:-1]] = cells[1]
        else:
            env[cells[0]] = cells[1]
    if not files:
        raise FormatError(f"{source}: the fingerprint table has no file rows")
    return files, env


@dataclasses.dataclass
class FingerprintComparison:
    """Published rows against this run's, in the published table's order (then this run's
    extra rows): each is same, differs, missing (published, not here) or extra (here only)."""
    rows: list[tuple[str, str]]  # (what, status)
    env_differ: dict[str, tuple[str, str | None]]  # what: (published, here)

    def having(self, status: str) -> list[str]:
        return [what for what, st in self.rows if st == status]

    @property
    def identical(self) -> bool:
        """Every published file row is here with the same checksum (extra rows allowed)."""
        return all(st in ("same", "extra") for _, st in self.rows)

    @property
    def first_difference(self) -> str | None:
        """The first published row that differs or is missing: where this run left that one."""
        return next((what for what, st in self.rows if st in ("differs", "missing")), None)


def compare_fingerprints(published: tuple[dict[str, str], dict[str, str]],
                         here: tuple[dict[str, str], dict[str, str]]) -> FingerprintComparison:
    """Compare two ``read_fingerprint`` results, published first."""
    (want, want_env), (got, got_env) = published, here
    rows = [(k, "missing" if k not in got else "same" if got[k] == v else "differs")
            for k, v in want.items()]
    return FingerprintComparison(
        rows=rows + [(k, "extra") for k in got if k not in want],
        env_differ={k: (v, got_env.get(k)) for k, v in want_env.items() if got_env.get(k) != v})
