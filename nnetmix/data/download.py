# Copyright 2026 nnetmix authors. Apache 2.0.
"""Corpus files downloaded whole or not at all, checked against their published MD5, and tar
archives unpacked whole (the recipes' download stages: egs/yesno, egs/mini_librispeech).

A download goes to ``<file>.part`` and is renamed to ``<file>`` only once its MD5 (and size,
when one is published) match, so a file at its final name is complete: a failed or truncated
download is one line naming the ``.part`` file, which is removed. An archive is unpacked into a
temporary folder beside its destination and only the folders asked for are renamed into place,
so an error leaves no half corpus. Kaldi's download scripts (egs/mini_librispeech/s5/local/
download_and_untar.sh, download_lm.sh) check sizes only; an MD5 also catches a corrupted copy
of the right length.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable, Optional, Sequence

from nnetmix.errors import DataDirError

__all__ = ["DownloadError", "file_md5", "download", "read_members", "unpack_tar"]

_CHUNK = 1 << 16


class DownloadError(DataDirError):
    """A download failed, or a downloaded file or archive is not the published one."""


def file_md5(path: str | os.PathLike) -> str:
    """The MD5 of a file, read in blocks (archives are hundreds of MB)."""
    h = hashlib.md5()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def download(url: str, dest: str | os.PathLike, md5: str, size: Optional[int] = None,
             error: type[DataDirError] = DownloadError, timeout: float = 60.0) -> None:
    """``url`` to ``dest`` through ``dest.part``; ``error`` naming the .part file when the
    download fails or its MD5 is not ``md5`` (or its size not ``size``); the .part is removed."""
    dest = Path(dest)
    part = dest.with_name(dest.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp, open(part, "wb") as out:
            shutil.copyfileobj(resp, out, _CHUNK)
    except (urllib.error.URLError, OSError, ValueError) as e:
        part.unlink(missing_ok=True)
        raise error(f"{part}: download of {url} failed ({e}); the partial file was removed "
                    f"(check the network and run stage 0 again, or pass a local copy with "
                    f"--corpus-dir)") from None
    got, got_size = file_md5(part), part.stat().st_size
    if got != md5 or (size is not None and got_size != size):
        part.unlink()
        expected = f"{md5}" + (f" ({size} bytes)" if size is not None else "")
        raise error(f"{part}: MD5 {got} ({got_size} bytes), expected {expected}: a truncated "
                    f"or failed download of {url}; the file was removed (run stage 0 again)")
    os.replace(part, dest)


def read_members(archive: str | os.PathLike,
                 error: type[DataDirError] = DownloadError) -> list[tarfile.TarInfo]:
    """The members of a tar.gz archive; ``error`` naming it when it cannot be read whole."""
    try:
        with tarfile.open(archive, "r:gz") as tar:
            return tar.getmembers()
    except (tarfile.TarError, OSError, EOFError) as e:
        raise error(f"{archive}: not a readable tar.gz archive ({e}); remove it and run stage 0 "
                    f"again") from None


def unpack_tar(archive: str | os.PathLike, root: str | os.PathLike, keep: Sequence[str],
               check: Optional[Callable[[list[tarfile.TarInfo]], None]] = None,
               error: type[DataDirError] = DownloadError,
               members: Optional[list[tarfile.TarInfo]] = None) -> None:
    """Unpack ``archive`` into a temporary folder in ``root``, then rename each path of ``keep``
    (relative, e.g. ``LibriSpeech/dev-clean-2``) to the same path under ``root``, replacing a
    file there. ``check`` sees the members first and raises ``error`` on an unexpected one;
    members are unpacked with tarfile's "data" filter (no absolute paths, links out, devices).
    ``members``: the archive's, when the caller has read them already (read_members)."""
    root = Path(root)
    if members is None:
        members = read_members(archive, error)
    if check is not None:
        check(members)
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{Path(archive).name}.", suffix=".tmp", dir=root))
    try:
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(tmp, members=members, filter="data")
        for rel in keep:
            if not (tmp / rel).exists():
                raise error(f"{archive}: has no {rel} (not the published archive: remove it "
                            f"and run stage 0 again)")
        for rel in keep:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / rel, root / rel)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise error(f"{archive}: unpacking failed ({e}); remove it and run stage 0 "
                    f"again") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
