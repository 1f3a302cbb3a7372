"""Where an output file's bytes go: one rule for every writer in nnetmix.

A regular file (or a name that does not exist yet) is written under a temporary name in the same
directory and renamed into place when the writer succeeds, so a failed or killed tool never
leaves half an output and the previous file stays intact. Anything else is written *in place*,
as Kaldi's ``std::ofstream`` does: a character device (``/dev/null``), a FIFO, a socket, and every
name under ``/dev`` (but /dev/shm) or ``/proc`` (renaming a file over ``/dev/null`` as root would
replace the system's device). A symlink is written through: the temporary file goes beside the link's final
target and is renamed onto that target, so the link stays and its target gets the bytes.
``-`` and ``/dev/stdout`` are standard output and stream.

A write that fails (a full disk, a file-size limit) raises :class:`~nnetmix.errors.WriteError`
naming the file, after the temporary file is removed.
"""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import sys
import tempfile
from typing import IO, Callable, Iterator, Sequence

from nnetmix.errors import NnetmixError, WriteError

__all__ = ["is_stdout", "writes_in_place", "rename_target", "make_temp", "temp_name",
           "commit_temp", "discard_temp", "output_file", "write_via_temp", "write_together",
           "write_failed", "open_in_place"]

_STDOUT = ("", "-", "/dev/stdout")
_SYSTEM_DIRS = ("/dev/", "/proc/")
_SCRATCH_DIRS = ("/dev/shm/",)  # a tmpfs of regular files: the usual rule


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask




def is_stdout(path: str | os.PathLike) -> bool:
    """True for the names that mean standard output: ``-`` and ``/dev/stdout``."""
    return os.fspath(path) in _STDOUT


def writes_in_place(path: str | os.PathLike) -> bool:
    """True when ``path`` must be opened and written where it is, never renamed over: it exists
    and (through any links) is not a regular file, or it names something under /dev or /proc
    (``/dev/stderr`` redirected to a log file; /dev/shm holds regular files and is excluded)."""
    path = os.fspath(path)
    for name in (os.path.abspath(path), os.path.realpath(path)):
        if name.startswith(_SYSTEM_DIRS) and not name.startswith(_SCRATCH_DIRS):
            return True
    try:
        st = os.stat(path)
    except OSError:
        return False  # missing (or a dangling link): created by the rename
    return not stat.S_ISREG(st.st_mode)


def rename_target(path: str | os.PathLike) -> str:
    """The name a finished temporary file is renamed onto: a symlink's final target."""
    path = os.fspath(path)
    return os.path.realpath(path) if os.path.islink(path) else path


def write_failed(path: str | os.PathLike, e: OSError) -> WriteError:
    """The one-line error for a failed write (ENOSPC, EFBIG, EIO ...) of ``path``."""
    why = e.strerror or str(e)
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        why += " (free some space and run again)"
    elif e.errno == errno.EFBIG:
        why += " (a file-size limit: see ulimit -f)"
    return WriteError(f"cannot write {os.fspath(path)}: {why}")


def make_temp(path: str | os.PathLike) -> tuple[int, str]:
    """An open (fd, name) for a new temporary file beside :func:`rename_target` of ``path``
    (in the system's temporary directory for a path written in place: never a file in /dev)."""
    target = rename_target(path)
    d, base = os.path.split(target)
    d = tempfile.gettempdir() if writes_in_place(path) else (d or ".")
    if not os.path.isdir(d):
        raise WriteError(f"cannot write {os.fspath(path)}: no such directory {d}")
    try:
        return tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=d)
    except OSError as e:
        raise write_failed(path, e) from None


def temp_name(path: str | os.PathLike) -> str:
    """A fresh temporary name beside ``path``'s target, for writers that need a file name
    (kaldifst, kaldilm); the empty file exists, the caller overwrites it."""
    fd, tmp = make_temp(path)
    os.close(fd)
    return tmp


def discard_temp(tmp: str | None) -> None:
    if tmp:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def commit_temp(tmp: str, path: str | os.PathLike, durable: bool = False) -> None:
    """Put a finished temporary file's bytes at ``path``: renamed onto the target, or copied into
    ``path`` where it :func:`writes_in_place` (then removed). ``durable``: fsync the file
    before the rename and the directory after it."""
    try:
        if writes_in_place(path):
            with open(tmp, "rb") as src, open_in_place(path, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            os.unlink(tmp)
            return
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files
        if durable:
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        target = rename_target(path)
        os.replace(tmp, target)
    except OSError as e:
        discard_temp(tmp)
        raise write_failed(path, e) from None
    if durable:
        _fsync_dir(os.path.dirname(target) or ".")


def _fsync_dir(d: str) -> None:
    """Make a rename durable (best effort: some file systems refuse a directory fd)."""
    with contextlib.suppress(OSError):
        fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def open_in_place(path: str, mode: str, **kw) -> IO:
    """Open a device, FIFO or /proc name for writing without creating or truncating a file
    (``/dev/stderr`` redirected to a log appends to it)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    return os.fdopen(fd, mode, **kw)


class _Stdout:
    """Standard output as a context manager that flushes but never closes it."""

    def __init__(self, binary: bool):
        self.fh = sys.stdout.buffer if binary else sys.stdout

    def __enter__(self):
        return self.fh

    def __exit__(self, *exc):
        self.fh.flush()
        return False


@contextlib.contextmanager
def output_file(path: str | os.PathLike, mode: str = "w", durable: bool = False,
                encoding: str = "utf-8", errors: str = "strict") -> Iterator[IO]:
    """Open ``path`` for writing (``mode`` "w" or "wb") by the rule of this module: a temporary
    file renamed into place on success and removed on any exception (the old file stays), the
    file itself where it :func:`writes_in_place`, standard output for ``-``. An OSError while
    writing or closing becomes a :class:`WriteError` naming ``path``."""
    binary = "b" in mode
    text_kw = {} if binary else {"newline": "\n", "encoding": encoding, "errors": errors}
    if is_stdout(path):
        with _Stdout(binary) as fh:
            yield fh
        return
    path = os.fspath(path)
    if writes_in_place(path):
        try:
            fh = open_in_place(path, mode, **text_kw)
        except OSError as e:
            raise write_failed(path, e) from None
        try:
            with fh:
                yield fh
        except OSError as e:
            raise write_failed(path, e) from None
        return
    fd, tmp = make_temp(path)
    try:
        with os.fdopen(fd, mode, **text_kw) as fh:
            yield fh
    except OSError as e:
        discard_temp(tmp)
        raise write_failed(path, e) from None
    except BaseException:
        discard_temp(tmp)
        raise
    commit_temp(tmp, path, durable)


def write_via_temp(path: str | os.PathLike, write: Callable[[str], object]) -> None:
    """For writers that take a file name (kaldifst's ``fst.write``, kaldilm): ``write(tmp)``
    writes a temporary file that :func:`commit_temp` then puts at ``path``. ``write`` returning
    False, or raising, leaves nothing behind."""
    tmp = temp_name(path)
    try:
        ok = write(tmp)
    except BaseException:
        discard_temp(tmp)
        raise
    if ok is False:
        discard_temp(tmp)
        raise WriteError(f"cannot write {os.fspath(path)}")
    commit_temp(tmp, path)


def write_together(outputs: Sequence[tuple[str, Callable[[str], object]]]) -> None:
    """Write several files that belong together (a model and its optimizer state) all or none:
    each ``write(name)`` writes a temporary file beside its path, and only when every one has
    succeeded are they renamed into place, in the order given: put the model last, so that a
    model on disk implies its state files are there too. A failure removes every temporary
    file and leaves all previous files as they were; its WriteError names the real path.
    A path that is standard output, a pipe or written in place is written at commit time."""
    tmps: list[tuple[str, str]] = []
    direct: list[tuple[str, Callable[[str], object]]] = []
    try:
        for path, write in outputs:
            if is_stdout(path) or path.lstrip().startswith("|") or writes_in_place(path):
                direct.append((path, write))
                continue
            tmp = temp_name(path)
            tmps.append((path, tmp))
            try:
                write(tmp)
            except NnetmixError as e:  # the writer named its temporary file: name the real one
                raise type(e)(str(e).replace(tmp, path)) from None
    except BaseException:
        for _path, tmp in tmps:
            discard_temp(tmp)
        raise
    for path, tmp in tmps:
        commit_temp(tmp, path)
    for path, write in direct:
        write(path)
