"""Byte streams behind Kaldi extended filenames: files, offsets, stdin/stdout and pipes.

:class:`InputStream` counts the bytes it has handed out (``pos``), so archives read from a pipe
still know where each object starts, and it has a push-back buffer so text parsers can read a
whole line and give back what follows a closing ``]``. :class:`OutputSink` writes a file under a
temporary name in the same directory and renames it into place on :meth:`OutputSink.commit`
(docs/design.md: a killed run never leaves a half-written ark/scp); :meth:`OutputSink.abort` removes
the temporary file and leaves any previous file untouched. A device, a FIFO or a name under /dev
is written in place and a symlink through to its target (:mod:`nnetmix.outfile`, the one rule).

Pipes run through ``/bin/sh`` as Kaldi's popen does; a command that exits non-zero is an error
(``gunzip -c missing.gz |`` must not read as an empty archive). Written here: kaldiio's
``open_like_kaldi`` has no byte counting, no atomic rename and does not check exit status.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
from typing import BinaryIO, Optional

from nnetmix.kaldi.errors import KaldiIOError, PipeClosedError
from nnetmix import outfile
from nnetmix.errors import WriteError
from nnetmix.kaldi.specifier import RxFile, WxFile, classify_rxfilename, classify_wxfilename

__all__ = ["InputStream", "OutputSink", "open_input", "open_output", "check_output_dir",
           "read_all"]

_WS = b" \t\n\r\v\f"
_CHUNK = 1 << 16     # the most of the push-back buffer a scan looks at in one piece


class InputStream:
    """A readable byte stream with position counting, peeking and push-back."""

    def __init__(self, raw: BinaryIO, name: str, proc: Optional[subprocess.Popen] = None,
                 pos: int = 0, owns: bool = True):
        if not hasattr(raw, "peek"):
            raw = io.BufferedReader(raw)  # type: ignore[arg-type]
        self.raw = raw
        self.name = name      #: the rxfilename, for error messages
        self.pos = pos        #: bytes consumed so far (the file offset for files)
        self._back = b""      #: pushed-back bytes, handed out again from ``_off`` on
        self._off = 0
        self._proc = proc
        self._owns = owns
        self._eof = False

    # -- reading ---------------------------------------------------------------------------
    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes; fewer only at end of stream."""
        if self._back:
            # an offset into the pushed-back bytes, not a slice of the rest on every read: a
            # reader that gives back a large read and takes it in small pieces stays linear
            off = self._off
            head = self._back[off:off + n]
            off += len(head)
            if off < len(self._back):
                self._off = off
            else:
                self._back, self._off = b"", 0
            if len(head) < n:
                head += self.raw.read(n - len(head))
        else:
            head = self.raw.read(n)
        self.pos += len(head)
        if len(head) < n:
            self._eof = True
        return head

    def unread(self, data: bytes) -> None:
        """Give back bytes just read; the next read returns them first."""
        if data:
            k = len(data)
            if k <= self._off and self._back[self._off - k:self._off] == data:
                self._off -= k        # the bytes just read from the push-back buffer
            else:
                self._back, self._off = data + self._back[self._off:], 0
            self.pos -= k

    def peek(self, n: int = 1) -> bytes:
        data = self.read(n)
        self.unread(data)
        return data

    def _chunk(self) -> bytes:
        if self._back:
            return self._back[self._off:self._off + _CHUNK]
        data = self.raw.peek(1)
        if not data:
            self._eof = True
        return data

    def readline(self) -> bytes:
        """The rest of the current line including its newline (without one at end of stream)."""
        if self._back:
            i = self._back.find(b"\n", self._off)
            if i >= 0:
                return self.read(i + 1 - self._off)
            head = self.read(len(self._back) - self._off)
            return head + self._readline_raw()
        return self._readline_raw()

    def _readline_raw(self) -> bytes:
        line = self.raw.readline()
        self.pos += len(line)
        if not line.endswith(b"\n"):
            self._eof = True
        return line

    def skip_space(self) -> None:
        """Consume whitespace, as ``is >> std::ws``."""
        while True:
            chunk = self._chunk()
            if not chunk:
                return
            stripped = chunk.lstrip(_WS)
            used = len(chunk) - len(stripped)
            if used:
                self.read(used)
            if stripped:
                return

    def read_word(self, limit: int = 1 << 16) -> bytes:
        """Skip whitespace, then read up to the next whitespace (not consumed); b'' at EOF.

        Returns at most ``limit`` bytes; the caller decides what a missing delimiter means.
        """
        self.skip_space()
        parts: list[bytes] = []
        size = 0
        while size < limit:
            chunk = self._chunk()
            if not chunk:
                break
            for i, c in enumerate(chunk[: limit - size]):
                if c in _WS:
                    parts.append(self.read(i))
                    return b"".join(parts)
            take = min(len(chunk), limit - size)
            parts.append(self.read(take))
            size += take
        return b"".join(parts)

    def seek(self, offset: int) -> None:
        try:
            self.raw.seek(offset)
        except (OSError, ValueError) as e:
            raise KaldiIOError(f"{self.name}: cannot seek to byte {offset} ({e})") from None
        self._back, self._off = b"", 0
        self.pos = offset
        self._eof = False

    # -- closing ---------------------------------------------------------------------------
    def close(self, check: bool = True) -> None:
        """Close; for a pipe read to the end, a non-zero exit status raises KaldiIOError.

        A pipe closed before its end (random access, an early ``break``) is killed and its status
        ignored, as Kaldi does.
        """
        proc, self._proc = self._proc, None
        if self._owns:
            try:
                self.raw.close()
            except OSError:
                pass
        if proc is None:
            return
        if not self._eof and proc.poll() is None:
            proc.kill()
            proc.wait()
            return
        rc = proc.wait()
        if rc != 0 and check:
            raise KaldiIOError(f"{self.name}: command exited with status {rc}")


def open_input(rx: str | RxFile, context: str = "") -> InputStream:
    """Open an rxfilename (file, ``file:offset``, ``-``, ``cmd |``) for reading."""
    f = rx if isinstance(rx, RxFile) else classify_rxfilename(rx, context)
    where = f"{context}: " if context and context != f.name else ""
    if f.kind == "stdin":
        return InputStream(sys.stdin.buffer, "standard input", owns=False)
    if f.kind == "pipe":
        try:
            proc = subprocess.Popen(f.path, shell=True, stdout=subprocess.PIPE)
        except OSError as e:
            raise KaldiIOError(f"{where}cannot run '{f.path}': {e.strerror}") from None
        return InputStream(proc.stdout, f.name, proc=proc)  # type: ignore[arg-type]
    try:
        fh = open(f.path, "rb")
    except OSError as e:
        raise KaldiIOError(f"{where}cannot open {f.path}: {e.strerror}") from None
    except ValueError:  # a NUL in the name: an scp or a list that is not text
        raise KaldiIOError(f"{where}cannot open {f.path!r}: a file name cannot hold a NUL byte "
                           "(a damaged or binary scp?)") from None
    stream = InputStream(fh, f.name)
    if f.kind == "offset":
        stream.seek(f.offset)
    return stream


def read_all(rx: str | RxFile, context: str = "") -> bytes:
    """The whole content of an rxfilename (a small text file such as roots.int or sets.int)."""
    src = open_input(rx, context)
    try:
        return b"".join(iter(lambda: src.read(1 << 16), b""))
    finally:
        src.close(check=False)


def check_output_dir(path: str, context: str = "") -> None:
    """Refuse early, in one line, to write where the directory does not exist."""
    d = os.path.dirname(path) or "."
    if not os.path.isdir(d):
        where = f"{context}: " if context else ""
        raise KaldiIOError(f"{where}cannot write {path}: no such directory {d}")


class OutputSink:
    """A writable byte stream: a temp file renamed into place, stdout, or a pipe.

    ``kind`` is the wxfilename's (``file``, ``stdout``, ``pipe``), or ``in-place`` for a file
    written where it is (a device, a FIFO: :func:`nnetmix.outfile.writes_in_place`)."""

    def __init__(self, wx: WxFile, context: str = ""):
        self.name = wx.name
        self.kind = wx.kind
        self.pos = 0  #: bytes written so far: the offset of the next byte in the final file
        self._context = context
        self._proc: Optional[subprocess.Popen] = None
        self._tmp: Optional[str] = None
        self._path = wx.path
        where = f"{context}: " if context and context != wx.name else ""
        if wx.kind == "stdout" or outfile.is_stdout(wx.path):
            self.kind = "stdout"
            self._fh: BinaryIO = sys.stdout.buffer
        elif wx.kind == "pipe":
            try:
                self._proc = subprocess.Popen(wx.path, shell=True, stdin=subprocess.PIPE)
            except OSError as e:
                raise KaldiIOError(f"{where}cannot run '{wx.path}': {e.strerror}") from None
            self._fh = self._proc.stdin  # type: ignore[assignment]
        else:
            check_output_dir(wx.path, context or wx.name)
            try:
                if outfile.writes_in_place(wx.path):  # a device or FIFO: no temporary file
                    self.kind = "in-place"  # streams, like a pipe (an empty one is fine)
                    self._fh = outfile.open_in_place(wx.path, "wb")
                else:
                    fd, self._tmp = outfile.make_temp(wx.path)
                    self._fh = os.fdopen(fd, "wb")
            except OSError as e:
                raise KaldiIOError(f"{where}cannot write {wx.path}: {e.strerror}") from None
            except WriteError as e:
                raise KaldiIOError(f"{where}{e}") from None
        self.closed = False

    def write(self, data: bytes) -> None:
        try:
            self._fh.write(data)
        except BrokenPipeError:
            raise PipeClosedError(f"{self.name}: the output pipe was closed by its reader") from None
        except OSError as e:
            raise KaldiIOError(f"{self.name}: write failed: {e.strerror}") from None
        self.pos += len(data)

    def flush(self) -> None:
        try:
            self._fh.flush()
        except BrokenPipeError:
            raise PipeClosedError(f"{self.name}: the output pipe was closed by its reader") from None

    def commit(self) -> None:
        """Finish: flush, close, rename a temp file into place, check a pipe's exit status."""
        if self.closed:
            return
        self.closed = True
        try:
            if self.kind == "stdout":
                self._fh.flush()
                return
            self._fh.close()
        except BrokenPipeError:
            self._finish_pipe(kill=True)
            raise PipeClosedError(f"{self.name}: the output pipe was closed by its reader") from None
        except OSError as e:
            self._remove_tmp()
            raise KaldiIOError(f"{self.name}: write failed: {e.strerror}") from None
        if self._tmp is not None:
            tmp, self._tmp = self._tmp, None
            try:
                outfile.commit_temp(tmp, self._path)
            except WriteError as e:
                raise KaldiIOError(str(e)) from None
        rc = self._finish_pipe(kill=False)
        if rc:
            raise KaldiIOError(f"{self.name}: command exited with status {rc}")

    def abort(self) -> None:
        """Give up: remove the temp file (any previous file stays as it was), stop a pipe."""
        if self.closed:
            return
        self.closed = True
        try:
            if self.kind == "stdout":
                self._fh.flush()
            else:
                self._fh.close()
        except OSError:
            pass
        self._remove_tmp()
        self._finish_pipe(kill=True)

    def _remove_tmp(self) -> None:
        outfile.discard_temp(self._tmp)
        self._tmp = None

    def _finish_pipe(self, kill: bool) -> int:
        proc, self._proc = self._proc, None
        if proc is None:
            return 0
        if kill and proc.poll() is None:
            proc.kill()
        return proc.wait()


def open_output(wx: str | WxFile, context: str = "") -> OutputSink:
    """Open a wxfilename (file, ``-``, ``| cmd``) for writing; commit() or abort() it."""
    f = wx if isinstance(wx, WxFile) else classify_wxfilename(wx, context)
    return OutputSink(f, context)
