#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Download what the mini_librispeech recipe reads into <corpus-dir>, skipping what is there.

From OpenSLR resource 31 (Mini LibriSpeech, CC BY 4.0), each corpus part's archive
``<part>.tar.gz``, unpacked to ``<corpus-dir>/LibriSpeech/<part>/`` (with the archive's
``LibriSpeech/*.TXT``: SPEAKERS.TXT gives each reader's sex), as Kaldi's
egs/mini_librispeech/s5/local/download_and_untar.sh does; from OpenSLR resource 11 (LibriSpeech
language models, public domain), ``librispeech-lexicon.txt`` and the ARPA language models asked
for, as Kaldi's local/download_lm.sh does, into <corpus-dir> itself. Kaldi's names for the LMs:
tgsmall = 3-gram.pruned.3e-7.arpa.gz, tgmed = 3-gram.pruned.1e-7.arpa.gz, tglarge =
3-gram.arpa.gz.

A part whose folder is there and a file that is there are skipped, not checked: every download
goes through a ``.part`` file that is renamed only once its MD5 and size match, so a file at its
final name is a whole download or a copy the user put there (--corpus-dir). An archive left
from an earlier run (downloaded, not unpacked) is checked before it is unpacked. A failed or
truncated download is one line naming the file (nnetmix/data/download.py).

Checksums: the sizes are those Kaldi's download scripts check (download_and_untar.sh's
``sizes``, download_lm.sh's ``filesize``). OpenSLR publishes no checksum for resource 31 on its
page; the MD5s of the two archives are those PaddleSpeech's dataset/mini_librispeech/
mini_librispeech.py checks (MD5_TRAIN_CLEAN, MD5_DEV_CLEAN), and those of resource 11 are
sdrobert/pytorch-database-prep's librispeech.py FILE2MD5 table; none was recomputed here (this
machine cannot reach OpenSLR). ``--checksums FILE`` (md5sum's format, ``<md5>  <name>``)
replaces them, e.g. for a mirror or the tests' own files, and ``--base-url`` the site.

With ``--lm-dir`` (run.sh: data/local/lm) it then links the lexicon and each LM there as
Kaldi's download_lm.sh does (``lm_tgsmall.arpa.gz`` -> the corpus's 3-gram.pruned.3e-7.arpa.gz).

Usage: ``local/download_corpus.py [--parts "dev-clean-2 train-clean-5"] [--lms tgsmall]
[--base-url URL] [--checksums FILE] [--lm-dir DIR] <corpus-dir>``
"""
from __future__ import annotations

import argparse
import os
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from nnetmix.data.download import DownloadError, download, file_md5, read_members, unpack_tar

from local_script import run_script, script_parser

__all__ = ["SITE", "Remote", "PARTS", "LEXICON", "LMS", "remote_files", "read_checksums",
           "fetch_corpus", "link_lm_dir"]

#: OpenSLR; resource 31 holds the corpus parts, resource 11 the lexicon and LMs.
SITE = "https://www.openslr.org/resources"
#: The folder the archives unpack to, as in the full LibriSpeech.
FOLDER = "LibriSpeech"


@dataclass(frozen=True)
class Remote:
    """One published file: its name, OpenSLR resource, MD5 and size in bytes."""

    name: str
    resource: int
    md5: str
    size: int


#: Mini LibriSpeech's two parts (the only ones Kaldi's download_and_untar.sh accepts).
PARTS = {
    "dev-clean-2": Remote("dev-clean-2.tar.gz", 31, "6d7ab67ac6a1d2c993d050e16d61080d",
                          126046265),
    "train-clean-5": Remote("train-clean-5.tar.gz", 31, "5df7d4e78065366204ca6845bb08f490",
                            332954390),
}
LEXICON = Remote("librispeech-lexicon.txt", 11, "28f72663f6bfed7cd346283c064c315b", 5627653)
#: Kaldi's LM names and their files.
LMS = {
    "tgsmall": Remote("3-gram.pruned.3e-7.arpa.gz", 11, "8f67ec741827742eee05799ab7605b50",
                      13654242),
    "tgmed": Remote("3-gram.pruned.1e-7.arpa.gz", 11, "9a0f1325bcaf3a0f7b7be4be10823c2a",
                    34094057),
    "tglarge": Remote("3-gram.arpa.gz", 11, "74cbb837e582378c26c602e1c8cbcb9c", 759636181),
}


def remote_files(parts: list[str],
                 lms: list[str]) -> tuple[list[tuple[str, Remote]], list[Remote]]:
    """The archives of ``parts`` (with their part names) and the lexicon and ``lms`` files;
    DownloadError naming an unknown part or LM."""
    for p in parts:
        if p not in PARTS:
            raise DownloadError(f"--parts: unknown part '{p}' (Mini LibriSpeech has "
                                f"{' '.join(PARTS)})")
    for lm in lms:
        if lm not in LMS:
            raise DownloadError(f"--lms: unknown LM '{lm}' (OpenSLR 11's are {' '.join(LMS)})")
    return [(p, PARTS[p]) for p in parts], [LEXICON] + [LMS[lm] for lm in lms]


def read_checksums(path: str | os.PathLike) -> dict[str, str]:
    """``name -> md5`` from an md5sum-style file; DownloadError naming a bad line."""
    out = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 2 or len(fields[0]) != 32:
                raise DownloadError(f"{path}:{n}: expected '<md5> <file name>', got "
                                    f"'{line.strip()}'")
            out[fields[1].lstrip("*")] = fields[0].lower()
    return out


def _check_archive(archive: Path, part: str, members: list[tarfile.TarInfo]) -> None:
    """DownloadError unless every member is under LibriSpeech/ (the part's folder and the
    corpus's *.TXT files)."""
    for m in members:
        parts = m.name.rstrip("/").split("/")
        if parts[0] != FOLDER or not (m.isfile() or m.isdir()):
            raise DownloadError(f"{archive}: unexpected member {m.name} (the archive of {part} "
                                f"holds {FOLDER}/{part}/ and {FOLDER}/*.TXT only)")


def fetch(remote: Remote, dest: Path, base_url: str, md5: Optional[str]) -> str:
    """``dest`` downloaded unless there; says what was done."""
    if dest.is_file():
        return f"{dest} is there, skipping its download"
    md5 = md5 or remote.md5
    size = remote.size if md5 == remote.md5 else None   # another file's size is unknown
    url = f"{base_url}/{remote.resource}/{remote.name}"
    download(url, dest, md5, size)
    return f"downloaded {url} to {dest} (MD5 {md5})"


def fetch_corpus(root: str | os.PathLike, parts: list[str], lms: list[str],
                 base_url: str = SITE, checksums: Optional[dict[str, str]] = None) -> list[str]:
    """Everything the recipe reads, under ``root``; one line per file saying what was done."""
    root = Path(root)
    checksums = checksums or {}
    archives, files = remote_files(parts, lms)
    root.mkdir(parents=True, exist_ok=True)
    done = []
    for part, remote in archives:
        folder = root / FOLDER / part
        if folder.is_dir():
            done.append(f"{folder} is there, skipping its download")
            continue
        archive = root / remote.name
        md5 = checksums.get(remote.name, remote.md5)
        if archive.is_file():
            got = file_md5(archive)
            if got != md5:
                raise DownloadError(f"{archive}: MD5 {got}, expected {md5} (a truncated or "
                                    f"failed download: remove it and run stage 0 again)")
            done.append(f"checked {archive} (MD5 {md5})")
        else:
            done.append(fetch(remote, archive, base_url, md5))
        members = read_members(archive)
        _check_archive(archive, part, members)
        # the corpus's LibriSpeech/*.TXT (SPEAKERS.TXT: each reader's sex) come with every part
        txt = [m.name for m in members if m.isfile() and m.name.count("/") == 1
               and m.name.endswith(".TXT") and not (root / m.name).is_file()]
        unpack_tar(archive, root, [f"{FOLDER}/{part}", *txt], members=members)
        done.append(f"unpacked {folder}")
    for remote in files:
        done.append(fetch(remote, root / remote.name, base_url, checksums.get(remote.name)))
    return done


def link_lm_dir(root: str | os.PathLike, lm_dir: str | os.PathLike, lms: list[str]) -> None:
    """Kaldi's links in data/local/lm (download_lm.sh): lm_<name>.arpa.gz and
    librispeech-lexicon.txt, to the files in ``root``, which must be there."""
    root, lm_dir = Path(root).resolve(), Path(lm_dir)
    lm_dir.mkdir(parents=True, exist_ok=True)
    links = {LEXICON.name: LEXICON.name} | {f"lm_{lm}.arpa.gz": LMS[lm].name for lm in lms}
    for link, name in links.items():
        target = root / name
        if not target.is_file():
            raise DownloadError(f"no such file {target} (run stage 0 without --stop-stage, or "
                                f"put OpenSLR 11's {name} there)")
        tmp = lm_dir / f".{link}.tmp"
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(target)
        os.replace(tmp, lm_dir / link)


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("--parts", default=" ".join(PARTS), help="corpus parts to fetch")
    p.add_argument("--lms", default="tgsmall", help="LMs to fetch (Kaldi's names: "
                   + ", ".join(f"{k} = {v.name}" for k, v in LMS.items()) + ")")
    p.add_argument("--base-url", default=SITE, help="where the OpenSLR resources are")
    p.add_argument("--checksums", default="", help="md5sum-style file of MD5s replacing the "
                   "published ones (a mirror, the tests)")
    p.add_argument("--lm-dir", default="", help="where the links lm_<name>.arpa.gz and "
                   "librispeech-lexicon.txt go, as Kaldi's download_lm.sh (data/local/lm)")
    p.add_argument("corpus_dir", help="the folder that gets LibriSpeech/<part>/ and the files")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    sums = read_checksums(args.checksums) if args.checksums else None
    for line in fetch_corpus(args.corpus_dir, args.parts.split(), args.lms.split(),
                             args.base_url.rstrip("/"), sums):
        print(f"{args.prog}: {line}")
    if args.lm_dir:
        link_lm_dir(args.corpus_dir, args.lm_dir, args.lms.split())
        print(f"{args.prog}: linked the lexicon and LMs ({args.lms}) into {args.lm_dir}")


if __name__ == "__main__":
    run_script(get_args(), main)
