"""Table readers: Kaldi's SequentialTableReader and RandomAccessTableReader for our kinds.

An archive is ``key SPACE object`` repeated (src/util/kaldi-table-inl.h): the key runs to the
first whitespace; a space or tab after it is consumed, a newline is not (Kaldi allows it for
script-made text arks). An scp line is ``key rxfilename``; the rxfilename may be a whole file,
``ark:offset`` (the offset of the object's ``\\0B``), ``cmd |`` and may end in a row range.

RandomAccessReader over an ark indexes the whole archive on opening: for a file it keeps byte
offsets and seeks back, for a pipe or stdin it keeps the values. Over an scp it reads the script
and seeks lazily, keeping a few archives open. Written here rather than delegated to kaldiio
(``load_ark``/``load_scp``): kaldiio neither reads posteriors nor names file and key in errors,
and it does not check the exit status of an input pipe.
"""
from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any, Callable, Iterator, Optional

import numpy as np

from nnetmix.errors import FormatError, NnetmixError
from nnetmix.kaldi.codec import Where, check_kind, read_value, skip_value
from nnetmix.kaldi.errors import KaldiIOError, TableKeyError
from nnetmix.kaldi.specifier import classify_rxfilename, parse_rspecifier, split_range
from nnetmix.kaldi.stream import InputStream, open_input

__all__ = ["SequentialReader", "RandomAccessReader", "iter_archive", "iter_object_table"]

logger = logging.getLogger(__name__)

_MAX_OPEN = 8  # archives an scp reader keeps open at once (scps usually walk a few arks in order)


def _key_text(word: bytes) -> str:
    return word.decode("utf-8", errors="surrogateescape")


def iter_archive(src: InputStream, kind: str, table: bool = True,
                 values: bool = True) -> Iterator[tuple[str, int, Any]]:
    """Yield (key, offset of the object, value) from an archive stream until its end; with
    ``values=False`` the value is None (each object is checked and passed over, not built)."""
    while True:
        word = src.read_word()
        if not word:
            return
        key = _key_text(word)
        after = src.peek(1)
        if after not in (b" ", b"\t", b"\n"):
            if not after:
                raise FormatError(f"{src.name}: truncated archive: key {key[:60]} is followed by "
                                  "end of file, expected an object")
            raise FormatError(f"{src.name}: bad archive: expected a space after key "
                              f"{key[:60]}, got {after!r}")
        if after != b"\n":
            src.read(1)
        offset = src.pos
        if values:
            yield key, offset, read_value(src, kind, Where(src.name, key), table)
        else:
            skip_value(src, kind, Where(src.name, key), table)
            yield key, offset, None


def _parse_scp_line(line: bytes, name: str, lineno: int) -> Optional[tuple[str, str]]:
    text = line.decode("utf-8", errors="surrogateescape").strip()
    if not text:
        return None
    parts = text.split(None, 1)
    if len(parts) != 2:
        raise FormatError(f"{name}:{lineno}: expected 'key rxfilename', got '{text[:80]}'")
    return parts[0], parts[1].strip()


def _apply_range(value: Any, rng, kind: str, where: Where, rx: str) -> Any:
    if rng is None:
        return value
    if kind != "mat":
        raise where.fail("bad scp entry", f"a row range like '{rx}' applies to matrices only")
    rows, cols = rng
    for span, size, what in ((rows, value.shape[0], "rows"), (cols, value.shape[1], "columns")):
        if span is not None and span[1] >= size:
            raise where.fail("bad range", f"'{rx}' asks for {what} up to {span[1]}, "
                             f"the matrix has {size}")
    if rows is not None:
        value = value[rows[0]:rows[1] + 1]
    if cols is not None:
        value = value[:, cols[0]:cols[1] + 1]
    return np.ascontiguousarray(value)


class _EntryLoader:
    """Reads the object an scp entry points to, keeping a few archives open for seeking."""

    def __init__(self, kind: str, scp_name: str):
        self.kind = kind
        self.scp_name = scp_name
        self._open: "OrderedDict[str, InputStream]" = OrderedDict()

    def load(self, key: str, rx: str) -> Any:
        base, rng = split_range(rx)
        f = classify_rxfilename(base, self.scp_name)
        where = Where(f.path if f.kind in ("file", "offset") else base, key)
        if f.kind == "stdin":
            raise KaldiIOError(f"{self.scp_name}: key {key}: '{rx}' (standard input) cannot be "
                               "an scp entry")
        if f.kind == "offset":
            src = self._archive(f.path, key)
            src.seek(f.offset)
            value = read_value(src, self.kind, where)
        else:
            src = self._open_one(base, key)
            try:
                value = read_value(src, self.kind, where)
                if f.kind == "pipe":
                    while src.read(1 << 16):
                        pass
            except BaseException:
                src.close(check=False)
                raise
            src.close()
        return _apply_range(value, rng, self.kind, where, rx)

    def _open_one(self, rx: str, key: str) -> InputStream:
        try:
            return open_input(rx)
        except KaldiIOError as e:
            raise KaldiIOError(f"{self.scp_name}: key {key}: {e}") from None

    def _archive(self, path: str, key: str) -> InputStream:
        src = self._open.pop(path, None)
        if src is None:
            src = self._open_one(path, key)
            while len(self._open) >= _MAX_OPEN:
                self._open.popitem(last=False)[1].close()
        self._open[path] = src
        return src

    def close(self) -> None:
        while self._open:
            self._open.popitem()[1].close()


class SequentialReader:
    """Iterate (key, value) over an ark or scp, as Kaldi's SequentialTableReader.

    ``kind`` is one of codec.KINDS ('mat', 'vec', 'ivec', 'post', 'pairvec', 'gpost'). One pass
    only; use as a context manager so pipes and files are closed (a pipe read to its end that exited
    non-zero raises KaldiIOError). With the 'p' option, scp entries that cannot be read are skipped with a warning.
    """

    def __init__(self, rspecifier: str, kind: str = "mat"):
        self.rspecifier = rspecifier
        self.spec = parse_rspecifier(rspecifier)
        self.kind = check_kind(kind, rspecifier)
        self._src: Optional[InputStream] = open_input(self.spec.filename, rspecifier)
        self._loader = _EntryLoader(self.kind, self.spec.filename or "standard input")
        self._started = False

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        if self._started:
            raise RuntimeError(f"{self.rspecifier}: a SequentialReader can be iterated once")
        self._started = True
        return self._archive() if self.spec.type == "ark" else self._script()

    def _archive(self) -> Iterator[tuple[str, Any]]:
        src = self._src
        if src is None:
            return
        try:
            for key, _, value in iter_archive(src, self.kind):
                yield key, value
        except NnetmixError as e:
            if not self.spec.permissive:
                raise
            logger.warning("%s: stopping early (permissive): %s", self.rspecifier, e)
        self._finish()

    def _script(self) -> Iterator[tuple[str, Any]]:
        src = self._src
        if src is None:
            return
        lineno = 0
        while True:
            line = src.readline()
            if not line:
                break
            lineno += 1
            entry = _parse_scp_line(line, src.name, lineno)
            if entry is None:
                continue
            key, rx = entry
            try:
                value = self._loader.load(key, rx)
            except NnetmixError as e:
                if not self.spec.permissive:
                    raise
                logger.warning("%s: skipping key %s (permissive): %s", self.rspecifier, key, e)
                continue
            yield key, value
        self._finish()

    def _finish(self) -> None:
        src, self._src = self._src, None
        self._loader.close()
        if src is not None:
            src.close(check=True)

    def close(self) -> None:
        src, self._src = self._src, None
        self._loader.close()
        if src is not None:
            src.close(check=False)

    def __enter__(self) -> "SequentialReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class RandomAccessReader:
    """Look values up by key in an ark or scp, as Kaldi's RandomAccessTableReader.

    ``key in r``, ``r[key]`` (TableKeyError, a KeyError, naming the rspecifier and key),
    ``r.get(key, default)``, ``r.keys()``, ``len(r)``. With the 'p' option an scp entry that
    cannot be read counts as absent.
    """

    def __init__(self, rspecifier: str, kind: str = "mat"):
        self.rspecifier = rspecifier
        self.spec = parse_rspecifier(rspecifier)
        self.kind = check_kind(kind, rspecifier)
        self._values: dict[str, Any] = {}    # ark read from a pipe or stdin
        self._offsets: dict[str, int] = {}   # ark in a file: where each object starts
        self._entries: dict[str, str] = {}   # scp: key -> rxfilename
        self._src: Optional[InputStream] = None
        self._loader = _EntryLoader(self.kind, self.spec.filename or "standard input")
        self._last: Optional[tuple[str, Any]] = None
        self._seekable = (self.spec.type == "ark"
                          and classify_rxfilename(self.spec.filename).kind in ("file", "offset"))
        src = open_input(self.spec.filename, rspecifier)
        try:
            if self.spec.type == "ark":
                self._index_archive(src)
            else:
                self._read_script(src)
        except BaseException:
            src.close(check=False)
            raise

    def _index_archive(self, src: InputStream) -> None:
        table = self._offsets if self._seekable else self._values
        for key, offset, value in iter_archive(src, self.kind, values=not self._seekable):
            if key in table:
                raise FormatError(f"{src.name}: duplicate key {key} in archive")
            table[key] = offset if self._seekable else value
        if self._seekable:
            self._src = src
        else:
            src.close(check=True)

    def _read_script(self, src: InputStream) -> None:
        lineno = 0
        while True:
            line = src.readline()
            if not line:
                break
            lineno += 1
            entry = _parse_scp_line(line, src.name, lineno)
            if entry is None:
                continue
            key, rx = entry
            if key in self._entries:
                raise FormatError(f"{src.name}:{lineno}: duplicate key {key}")
            self._entries[key] = rx
        src.close(check=True)

    def _index(self) -> dict:
        if self.spec.type == "scp":
            return self._entries
        return self._offsets if self._seekable else self._values

    def keys(self) -> list[str]:
        return list(self._index())

    def __len__(self) -> int:
        return len(self._index())

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __contains__(self, key: object) -> bool:
        if key not in self._index():
            return False
        if self.spec.type == "scp" and self.spec.permissive:
            try:
                self._last = (key, self._load(key))  # type: ignore[arg-type]
            except NnetmixError as e:
                logger.warning("%s: key %s unreadable (permissive): %s", self.rspecifier, key, e)
                return False
        return True

    def _load(self, key: str) -> Any:
        if self.spec.type == "scp":
            return self._loader.load(key, self._entries[key])
        if not self._seekable:
            return self._values[key]
        if self._src is None:
            raise KaldiIOError(f"{self.rspecifier}: reader is closed (reading key {key})")
        self._src.seek(self._offsets[key])
        return read_value(self._src, self.kind, Where(self._src.name, key))

    def __getitem__(self, key: str) -> Any:
        if key not in self._index():
            raise TableKeyError(f"{self.rspecifier}: no entry for key {key}")
        if self._last is not None and self._last[0] == key:
            value = self._last[1]
            self._last = None
            return value
        if self.spec.permissive and self.spec.type == "scp":
            try:
                return self._load(key)
            except NnetmixError as e:
                raise TableKeyError(f"{self.rspecifier}: key {key} unreadable: {e}") from None
        return self._load(key)

    def get(self, key: str, default: Any = None) -> Any:
        if key not in self._index():
            return default
        try:
            return self[key]
        except TableKeyError:
            return default

    def close(self) -> None:
        src, self._src = self._src, None
        if src is not None:
            src.close(check=False)
        self._loader.close()

    def __enter__(self) -> "RandomAccessReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def iter_object_table(rspecifier: str, read: Callable[[InputStream, str], Any]
                      ) -> Iterator[tuple[str, Any]]:
    """(key, object) from an archive or script of objects no codec kind covers (FSTs,
    lattices): ``read(stream, where)`` reads one object at the stream's position, ``where``
    naming the file and key for its errors. A space after a key is consumed, a newline is left
    to the reader (a text lattice starts on the next line). An input pipe's exit status is
    checked once the table was read to its end."""
    spec = parse_rspecifier(rspecifier)
    src = open_input(classify_rxfilename(spec.filename, rspecifier), rspecifier)
    ok = False
    try:
        if spec.type == "scp":
            for lineno, line in enumerate(iter(src.readline, b""), 1):
                entry = _parse_scp_line(line, spec.filename, lineno)
                if entry is None:
                    continue
                key, rx = entry
                sub = open_input(classify_rxfilename(rx, rspecifier), rspecifier)
                try:
                    yield key, read(sub, f"{rx} (key {key})")
                finally:
                    sub.close(check=False)
        else:
            while True:
                word = src.read_word()
                if not word:
                    break
                key = _key_text(word)
                if src.peek(1) == b" ":
                    src.read(1)
                yield key, read(src, f"{spec.filename} (key {key})")
        ok = True
    finally:
        src.close(check=ok)
