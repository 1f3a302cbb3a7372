"""Read and write the files of a Kaldi data directory, in C-locale (byte) order.

Every file in a data directory is a table: one line per entry, the key up to the first run of
whitespace, the value after it. Kaldi's tools merge these files by walking them in step, which
only works when each is sorted the way ``LC_ALL=C sort`` sorts, i.e. by the bytes of the key;
:func:`c_key` gives that order (UTF-8 keeps code-point order equal to byte order, and undecodable
bytes travel as surrogate escapes, so they are turned back into bytes for the comparison).

Lines are kept verbatim (:class:`Entry.line`) so that filtering a file, as Kaldi's
filter_scp.pl does, never rewrites the separators or the spacing inside a value. Writes go to a
temporary name in the same directory and are renamed into place, so a killed run leaves the old
file or the new one, never half of one.
"""
from __future__ import annotations

import gc
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, NamedTuple, Sequence

from nnetmix.errors import DataDirError
from nnetmix.outfile import output_file

__all__ = [
    "ENCODING", "Entry", "split_fields", "Segment", "c_key", "c_sorted", "first_unsorted_key",
    "read_entries",
    "read_table", "read_scp", "read_wav_scp", "read_text", "read_utt2spk", "read_spk2utt",
    "read_segments", "read_utt2num_frames", "read_utt2dur", "read_spk2gender",
    "read_reco2file_and_channel", "read_key_list", "write_lines", "write_table",
    "write_utt2spk", "write_spk2utt", "utt2spk_to_spk2utt", "spk2utt_to_utt2spk",
    "atomic_open",
]

#: Files are bytes on disk; reading them as UTF-8 with surrogate escapes round-trips any byte.
ENCODING = {"encoding": "utf-8", "errors": "surrogateescape"}

#: Kaldi splits fields on spaces and tabs only (a no-break space inside a transcript is text).
_WS = re.compile(r"[ \t]+")


def split_fields(line: str, maxsplit: int = 0) -> list[str]:
    """Fields of a line split on spaces and tabs, as Kaldi's readers and awk split them."""
    stripped = line.strip(" \t")
    if not stripped:
        return []
    if "\t" not in stripped and "  " not in stripped:  # the common case, in C
        return stripped.split(" ", maxsplit) if maxsplit else stripped.split(" ")
    return _WS.split(stripped, maxsplit)


class Entry(NamedTuple):
    """One line of a table: its key, the value after the key, the line itself, its number."""

    key: str
    value: str
    line: str
    lineno: int


@dataclass(frozen=True)
class Segment:
    """A line of ``segments``: the utterance is [start, end) seconds of ``recording``.

    ``end`` is -1 where the utterance runs to the end of the recording (Kaldi allows this).
    """

    recording: str
    start: float
    end: float


def c_key(text: str) -> bytes:
    """Sort key equal to ``LC_ALL=C sort``'s: the UTF-8 bytes of the string."""
    return text.encode("utf-8", "surrogateescape")


def c_sorted(keys: Iterable[str]) -> list[str]:
    """Keys in C-locale order."""
    return sorted(keys, key=c_key)


def first_unsorted_key(keys: Sequence[str]) -> str | None:
    """The first key that is not strictly greater than the one before it (unsorted or repeated)."""
    prev: bytes | None = None
    for k in keys:
        b = c_key(k)
        if prev is not None and b <= prev:
            return k
        prev = b
    return None


def read_entries(path: str | os.PathLike, *, allow_blank: bool = False) -> list[Entry]:
    """All lines of a table in file order; duplicates and disorder are left for the caller.

    A blank line is an error (Kaldi's readers reject it) unless ``allow_blank``, when it is
    skipped, which is what fix_data_dir.sh wants.
    """
    path = Path(path)
    try:
        with open(path, newline="\n", **ENCODING) as fh:
            text = fh.read()
    except FileNotFoundError:
        raise DataDirError(f"no such file {path}") from None
    except IsADirectoryError:
        raise DataDirError(f"{path}: is a directory, expected a file") from None
    except OSError as e:
        raise DataDirError(f"cannot read {path}: {e.strerror}") from None
    # millions of small tuples set off the cyclic collector again and again, for nothing
    # (they hold no cycles): that tripled the time to read a Switchboard-sized table
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse_entries(path, text, allow_blank)
    finally:
        if enabled:
            gc.enable()


def _parse_entries(path: Path, text: str, allow_blank: bool) -> list[Entry]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the empty string after the final newline
    if not ("\t" in text or "\r" in text or "  " in text or "\n " in text or " \n" in text
            or text.startswith(" ") or text.endswith(" ") or "\n\n" in text or text == "\n"):
        # single spaces only, no blank line (the usual file): split each line once, in C
        entries = []
        for n, line in enumerate(lines, 1):
            key, _, value = line.partition(" ")
            entries.append(Entry(key, value, line, n))
        return entries
    entries = []
    for n, line in enumerate(lines, 1):
        if line.endswith("\r"):
            line = line[:-1]
        parts = split_fields(line, 1)
        if not parts:
            if allow_blank:
                continue
            raise DataDirError(f"{path}:{n}: empty line")
        value = parts[1] if len(parts) > 1 else ""
        entries.append(Entry(parts[0], value, line, n))
    return entries


def _unique(path: Path, entries: list[Entry]) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for e in entries:
        if e.key in out:
            raise DataDirError(f"{path}:{e.lineno}: duplicate key {e.key} "
                               f"(first bad key: {e.key}); run utils/fix_data_dir.sh")
        out[e.key] = e
    return out


def read_table(path: str | os.PathLike, *, need_value: bool = True) -> dict[str, str]:
    """``key -> value`` for a table with unique keys (file order kept).

    Raises DataDirError naming the file and line on a duplicate key, or on a key with no value
    when ``need_value``.
    """
    path = Path(path)
    table = _unique(path, read_entries(path))
    if need_value:
        for e in table.values():
            if not e.value:
                raise DataDirError(f"{path}:{e.lineno}: key {e.key} has no value")
    return {k: e.value for k, e in table.items()}


def read_scp(path: str | os.PathLike) -> dict[str, str]:
    """An scp file (feats.scp, cmvn.scp, vad.scp): ``key -> rxfilename``."""
    return read_table(path)


def read_wav_scp(path: str | os.PathLike) -> dict[str, str]:
    """wav.scp: ``recording (or utterance) -> wav rxfilename`` (a path or a command ending in |)."""
    return read_table(path)


def read_text(path: str | os.PathLike) -> dict[str, str]:
    """text: ``utterance -> transcript`` (an empty transcript is kept as '')."""
    return read_table(path, need_value=False)


def _fields(path: Path, e: Entry, n: int, what: str) -> list[str]:
    f = split_fields(e.line)
    if len(f) != n:
        raise DataDirError(f"{path}:{e.lineno}: expected {what}, got '{e.line.strip()}'")
    return f


def read_utt2spk(path: str | os.PathLike) -> dict[str, str]:
    """utt2spk: ``utterance -> speaker``; each line has exactly two fields."""
    path = Path(path)
    table = _unique(path, read_entries(path))
    return {k: _fields(path, e, 2, "<utterance> <speaker>")[1] for k, e in table.items()}


def read_spk2utt(path: str | os.PathLike) -> dict[str, list[str]]:
    """spk2utt: ``speaker -> [utterances]``; a speaker with no utterance is an error."""
    path = Path(path)
    out = {}
    for k, e in _unique(path, read_entries(path)).items():
        utts = split_fields(e.value)
        if not utts:
            raise DataDirError(f"{path}:{e.lineno}: speaker {k} has no utterances")
        out[k] = utts
    return out


def read_segments(path: str | os.PathLike) -> dict[str, Segment]:
    """segments: ``utterance -> Segment(recording, start, end)``; end > start, or end == -1."""
    path = Path(path)
    out = {}
    for k, e in _unique(path, read_entries(path)).items():
        f = _fields(path, e, 4, "<utterance> <recording> <start> <end>")
        try:
            start, end = float(f[2]), float(f[3])
        except ValueError:
            raise DataDirError(f"{path}:{e.lineno}: start and end of {k} must be numbers, "
                               f"got '{f[2]} {f[3]}'") from None
        if start < 0 or (end <= start and end != -1):
            raise DataDirError(f"{path}:{e.lineno}: bad times for {k}: start {f[2]}, end {f[3]} "
                               f"(expected 0 <= start < end, or end -1)")
        out[k] = Segment(f[1], start, end)
    return out


def _numbers(path: str | os.PathLike, kind: type, what: str) -> dict:
    path = Path(path)
    out = {}
    for k, e in _unique(path, read_entries(path)).items():
        f = _fields(path, e, 2, f"<key> <{what}>")
        try:
            v = kind(f[1])
        except ValueError:
            v = None
        if v is None or not v > 0:
            raise DataDirError(f"{path}:{e.lineno}: bad {what} for {k}: '{f[1]}' "
                               f"(expected a positive {kind.__name__})")
        out[k] = v
    return out


def read_utt2num_frames(path: str | os.PathLike) -> dict[str, int]:
    """utt2num_frames: ``utterance -> number of frames`` (a positive integer)."""
    return _numbers(path, int, "num-frames")


def read_utt2dur(path: str | os.PathLike) -> dict[str, float]:
    """utt2dur (or reco2dur): ``key -> duration in seconds`` (positive)."""
    return _numbers(path, float, "duration")


def read_spk2gender(path: str | os.PathLike) -> dict[str, str]:
    """spk2gender: ``speaker -> m|f``."""
    path = Path(path)
    out = {}
    for k, e in _unique(path, read_entries(path)).items():
        g = _fields(path, e, 2, "<speaker> <m|f>")[1]
        if g not in ("m", "f"):
            raise DataDirError(f"{path}:{e.lineno}: gender of {k} is '{g}' (expected m or f)")
        out[k] = g
    return out


def read_reco2file_and_channel(path: str | os.PathLike) -> dict[str, tuple[str, str]]:
    """reco2file_and_channel: ``recording -> (file, channel)``, channel A or B (CTM scoring)."""
    path = Path(path)
    out = {}
    for k, e in _unique(path, read_entries(path)).items():
        f = _fields(path, e, 3, "<recording> <file> <channel>")
        out[k] = (f[1], f[2])
    return out


def read_key_list(path: str | os.PathLike) -> list[str]:
    """The first field of each line (an utterance or speaker list, as filter_scp.pl reads it)."""
    return [e.key for e in read_entries(path, allow_blank=True)]


def atomic_open(path: str | os.PathLike, mode: str = "w", durable: bool = False):
    """Open a temporary file next to ``path`` for writing (``mode`` "w" or "wb"); rename it onto
    ``path`` on success, remove it otherwise (the old file, if any, stays). ``durable``: fsync
    the file before the rename and the directory after it (state a crash must not lose).
    Devices, FIFOs and symlinks follow :mod:`nnetmix.outfile`; a failed write is a WriteError."""
    return output_file(path, mode, durable=durable, **ENCODING)


def write_lines(path: str | os.PathLike, lines: Iterable[str]) -> None:
    """Write lines (without their newlines) atomically, in the order given."""
    with atomic_open(path) as fh:
        for line in lines:
            fh.write(line)
            fh.write("\n")


def write_table(path: str | os.PathLike, table: Mapping[str, str] | Iterable[tuple[str, str]],
                *, sort: bool = True) -> None:
    """Write ``key value`` lines atomically, C-sorted by key unless ``sort=False``."""
    items = list(table.items()) if isinstance(table, Mapping) else list(table)
    if sort:
        items.sort(key=lambda kv: c_key(kv[0]))
    write_lines(path, (f"{k} {v}" if v != "" else k for k, v in items))


def write_utt2spk(path: str | os.PathLike, utt2spk: Mapping[str, str]) -> None:
    """Write utt2spk, sorted by utterance."""
    write_table(path, utt2spk)


def write_spk2utt(path: str | os.PathLike, spk2utt: Mapping[str, Sequence[str]]) -> None:
    """Write spk2utt, sorted by speaker; utterances in the order given."""
    write_table(path, {s: " ".join(u) for s, u in spk2utt.items()})


def utt2spk_to_spk2utt(utt2spk: Mapping[str, str] | Iterable[tuple[str, str]],
                       *, sort: bool = True) -> dict[str, list[str]]:
    """Invert utt2spk. With ``sort`` speakers and their utterances come out C-sorted; without
    it they keep their order of first appearance, as utt2spk_to_spk2utt.pl prints them."""
    items = utt2spk.items() if isinstance(utt2spk, Mapping) else utt2spk
    out: dict[str, list[str]] = {}
    for utt, spk in items:
        out.setdefault(spk, []).append(utt)
    if sort:
        out = {s: c_sorted(out[s]) for s in c_sorted(out)}
    return out


def spk2utt_to_utt2spk(spk2utt: Mapping[str, Sequence[str]], *,
                       sort: bool = True) -> dict[str, str]:
    """Invert spk2utt (C-sorted by utterance unless ``sort=False``)."""
    out = {u: s for s, utts in spk2utt.items() for u in utts}
    if sort:
        out = {u: out[u] for u in c_sorted(out)}
    return out
