"""Small text tables the feature tools read and write beside their matrices.

Kaldi reads spk2utt/utt2spk as token tables (``ark:data/train/spk2utt``) and writes lengths and
durations as ``ark,t:`` int/float tables; nnetmix.kaldi handles matrices, vectors and
posteriors, so these one-line-per-key text tables live here. Specifier classification follows
Kaldi's ClassifyRspecifier/ClassifyWspecifier (src/util/kaldi-table.cc).
"""
from __future__ import annotations

import contextlib
import re
import sys
from typing import Iterable, Iterator

from nnetmix.errors import FormatError, UsageError
from nnetmix.outfile import output_file

__all__ = ["is_rspecifier", "is_wspecifier", "read_token_table", "TextTableWriter",
           "write_text_table",
           "write_text_object", "read_utt2spk"]

_SPEC = re.compile(r"^(ark|scp)(,[a-z]+)*:")


def is_rspecifier(text: str) -> bool:
    """True for ``ark:...``/``scp,p:...`` and the like; False for a plain rxfilename."""
    return bool(_SPEC.match(text.strip()))


def is_wspecifier(text: str) -> bool:
    """True for ``ark:...``, ``ark,t:-``, ``ark,scp:a.ark,a.scp``; False for a wxfilename."""
    return bool(_SPEC.match(text.strip()))


def _split_spec(spec: str) -> tuple[set[str], str]:
    head, _, path = spec.strip().partition(":")
    return set(head.split(",")), path


def read_token_table(rspecifier: str) -> Iterator[tuple[str, list[str]]]:
    """Yield (key, tokens) from a text table such as spk2utt (``ark:file``, a path, or -)."""
    if is_rspecifier(rspecifier):
        kinds, path = _split_spec(rspecifier)
        if "scp" in kinds:
            raise UsageError(f"{rspecifier}: token tables are read as ark:file, not scp")
    else:
        path = rspecifier
    try:
        fh = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as e:
        raise UsageError(f"cannot open {path}: {e.strerror}") from None
    with contextlib.nullcontext(fh) if path == "-" else fh:
        try:
            for n, line in enumerate(fh, 1):
                parts = line.split()
                if not parts:
                    continue
                if len(parts) < 2:
                    raise FormatError(f"{path}:{n}: expected '<key> <value> ...', "
                                      f"got '{line.strip()}'")
                yield parts[0], parts[1:]
        except UnicodeDecodeError:  # decoded a block at a time: no line number to give
            raise FormatError(f"{path}: not UTF-8 text (a binary or damaged file?)") from None


def read_utt2spk(rspecifier: str) -> dict[str, str]:
    """utterance -> speaker from an utt2spk table (``ark:data/x/utt2spk`` or a file name)."""
    return {utt: toks[0] for utt, toks in read_token_table(rspecifier)}


def _open_out(path: str):
    return output_file(path, "w")


class TextTableWriter:
    """Writes ``key value`` lines to an ``ark,t:file`` (or ``ark,t:-``) table, atomically.

    Only text archives: Kaldi scripts ask for these tables (utt2num_frames, utt2dur) as
    ``ark,t:`` and read them with awk and sort; a binary int32 archive is of no use to them.
    """

    def __init__(self, wspecifier: str):
        kinds, path = _split_spec(wspecifier)
        if (not is_wspecifier(wspecifier) or "ark" not in kinds or "scp" in kinds
                or "t" not in kinds):
            raise UsageError(f"unsupported wspecifier '{wspecifier}' for a table of numbers "
                             "(use ark,t:file or ark,t:-)")
        self._ctx = _open_out(path)
        self._fh = self._ctx.__enter__()
        self.count = 0

    def write(self, key: str, value: object) -> None:
        try:
            self._fh.write(f"{key} {_fmt(value)}\n")
        except OSError as e:  # a full disk or a file-size limit: WriteError, temp file removed
            self._end(e)
        self.count += 1

    def close(self, ok: bool = True) -> None:
        if self._ctx is None:
            return
        if not ok:
            self._end(RuntimeError("abandoned"))
            return
        try:
            self._fh.flush()
        except OSError as e:
            self._end(e)
        ctx, self._ctx = self._ctx, None
        ctx.__exit__(None, None, None)

    def _end(self, e: BaseException) -> None:
        """Close on a failure: the temporary file goes; an OSError comes back as a WriteError."""
        ctx, self._ctx = self._ctx, None
        if ctx is not None:
            ctx.__exit__(type(e), e, e.__traceback__)
        if isinstance(e, OSError):
            raise e

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close(ok=exc_type is None)
        return False


def write_text_table(wspecifier: str, items: Iterable[tuple[str, object]]) -> int:
    """Write all (key, value) pairs to an ``ark,t:`` table; return how many."""
    with TextTableWriter(wspecifier) as w:
        for key, value in items:
            w.write(key, value)
    return w.count


def write_text_object(wxfilename: str, value: object) -> None:
    """Write one number as a line to a file or ``-`` (Kaldi's WriteKaldiObject in text mode)."""
    with _open_out(wxfilename) as fh:
        fh.write(f"{_fmt(value)}\n")
        fh.flush()


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
