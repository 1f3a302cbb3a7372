#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Download and unpack Kaldi's yesno corpus: <corpus-root>/waves_yesno/ from OpenSLR resource 1.

The archive (``waves_yesno.tar.gz``, about 4.5 MB) is fetched to
``<corpus-root>/waves_yesno.tar.gz.part``, checked against its MD5 and only then renamed to
``waves_yesno.tar.gz``; a failed or truncated download is one line naming the file, and the
partial file is removed. The archive's members are checked before anything is unpacked: only
``waves_yesno/`` and files directly in it, 60 wav files and the archive's README. It is unpacked
into a temporary folder beside <corpus-root>/waves_yesno, which is renamed into place, so an
error leaves no half corpus. Nothing is done when waves_yesno/ is already there (stage 1 checks
it), and an archive already downloaded is checked and unpacked without a new download.

The checksum: OpenSLR's page for resource 1 gives the file and its size, not a checksum. The MD5
here, 962ff6e904d2df1126132ecec6978786, is the one torchaudio's ``datasets/yesno.py`` checks
for this archive (its ``_CHECKSUMS``) and that other recipes check with md5sum; it was not
recomputed here (this machine cannot reach OpenSLR). ``--md5`` replaces it (a mirror's copy, the
tests' own archive).

Usage: ``local/yesno_download.py [--url URL] [--md5 HEX] <corpus-root>``
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import os
import tarfile
from pathlib import Path

from nnetmix.data.download import download, file_md5, unpack_tar

from yesno_data_prep import NUM_WAVS, README, URL, CorpusError
from local_script import run_script, script_parser

__all__ = ["MD5", "check_members", "unpack", "fetch_yesno"]

#: The archive's MD5 (see the module docstring for where it comes from).
MD5 = "962ff6e904d2df1126132ecec6978786"
FOLDER = "waves_yesno"


def check_members(archive: Path, members: list[tarfile.TarInfo]) -> None:
    """CorpusError unless the members are waves_yesno/ with 60 wavs and README directly in it."""
    names = []
    for m in members:
        parts = m.name.rstrip("/").split("/")
        if parts[0] != FOLDER or len(parts) > 2 or not (m.isfile() or m.isdir()):
            raise CorpusError(f"{archive}: unexpected member {m.name} (the archive holds "
                              f"{FOLDER}/ and its files only)")
        if len(parts) == 2:
            names.append(parts[1])
    wavs = [n for n in names if n.endswith(".wav")]
    if len(wavs) != NUM_WAVS or README not in names:
        raise CorpusError(f"{archive}: {len(wavs)} wav files{'' if README in names else ', no '}"
                          f"{'' if README in names else README}; expected {NUM_WAVS} and "
                          f"{README} in {FOLDER}/ (remove it and run stage 0 again)")


def unpack(archive: Path, root: Path) -> None:
    """Unpack ``archive`` into a temporary folder in ``root``, then rename its waves_yesno/."""
    unpack_tar(archive, root, [FOLDER], check=lambda members: check_members(archive, members),
               error=CorpusError)


def fetch_yesno(root: str | os.PathLike, url: str = URL, md5: str = MD5) -> str:
    """<root>/waves_yesno/, downloaded and unpacked unless there; says what was done."""
    root = Path(root)
    if (root / FOLDER).is_dir():
        return f"{root / FOLDER} is there, skipping the download"
    root.mkdir(parents=True, exist_ok=True)
    archive = root / f"{FOLDER}.tar.gz"
    if archive.is_file():
        got = file_md5(archive)
        if got != md5:
            raise CorpusError(f"{archive}: MD5 {got}, expected {md5} (a truncated or failed "
                              f"download: remove it and run stage 0 again)")
        what = f"checked {archive}"
    else:
        download(url, archive, md5, error=CorpusError)
        what = f"downloaded {url} to {archive}"
    unpack(archive, root)
    return f"{what} (MD5 {md5}) and unpacked {root / FOLDER}"


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("--url", default=URL, help="where the archive is")
    p.add_argument("--md5", default=MD5, help="the archive's MD5")
    p.add_argument("root", help="the folder that gets waves_yesno/ (and the archive)")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    print(f"{args.prog}: {fetch_yesno(args.root, args.url, args.md5)}")


if __name__ == "__main__":
    run_script(get_args(), main)
