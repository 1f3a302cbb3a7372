#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""LibriSpeech corpus parts as Kaldi data directories, as Kaldi's egs/librispeech/s5/local/
data_prep.sh (which egs/mini_librispeech/s5 links to) makes them.

A part (``<corpus-dir>/LibriSpeech/<part>``, e.g. train-clean-5) holds one folder per reader
and in it one per chapter, both named by numbers; a chapter folder holds the utterances,
``<reader>-<chapter>-<nnnn>.flac`` (16 kHz mono FLAC), and their transcripts,
``<reader>-<chapter>.trans.txt`` (``<utterance> WORD WORD ...`` per line).
``LibriSpeech/SPEAKERS.TXT`` (``reader | sex | subset | minutes | name``, ``;`` comments) gives
each reader's sex. As Kaldi's script: the data directory's name is the part's with ``_`` for
``-`` (data/train_clean_5), each chapter is a speaker (``<reader>-<chapter>``: per-chapter CMVN
and fMLLR), spk2gender comes from SPEAKERS.TXT. Unlike it, wav.scp names each FLAC file itself
(nnetmix reads FLAC through libsndfile) where Kaldi's pipes it through ``flac -c -d -s``.

Every part is checked whole before anything is written: reader and chapter folders named by
numbers, a transcript in every chapter, a FLAC for every transcript line and a line for every
FLAC, each FLAC decoded to its last sample at 16 kHz mono, each reader in SPEAKERS.TXT. Bad
input is one line naming the file (and its line); then nothing is written under <data-dir>.
Each data directory is written under a temporary name and renamed into place; one that already
holds the same lists is kept (with its features).

Usage: ``local/data_prep.py <corpus-dir> <data-dir> <part> [<part> ...]``, where <corpus-dir>
holds LibriSpeech/ (or is that folder).
"""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from nnetmix.data.io import c_sorted
from nnetmix.data.prepare import Utterance, check_wav, write_data_dir
from nnetmix.errors import DataDirError

from local_script import run_script, script_parser

__all__ = ["SAMPLE_RATE", "CorpusError", "corpus_root", "read_speakers", "scan_part",
           "data_dir_name", "prepare_parts"]

SAMPLE_RATE = 16000
FOLDER = "LibriSpeech"
SPEAKERS = "SPEAKERS.TXT"
SOURCE = "OpenSLR resource 31 (local/download_corpus.py)"
_NUMBER = re.compile(r"[0-9]+")


class CorpusError(DataDirError):
    """The corpus folder is not in LibriSpeech's layout, or a file of it is damaged."""


def corpus_root(corpus_dir: str | os.PathLike) -> Path:
    """The folder holding the parts: ``<corpus-dir>/LibriSpeech`` or ``corpus_dir`` itself."""
    corpus_dir = Path(corpus_dir)
    if not corpus_dir.is_dir():
        raise CorpusError(f"no such directory {corpus_dir} (--corpus-dir: the folder holding "
                          f"{FOLDER}/, from {SOURCE})")
    inner = corpus_dir / FOLDER
    return inner if inner.is_dir() else corpus_dir


def read_speakers(path: Path) -> dict[str, str]:
    """reader -> 'm' or 'f' from SPEAKERS.TXT; CorpusError naming the file and line."""
    if not path.is_file():
        raise CorpusError(f"no such file {path} (LibriSpeech's list of readers, in every "
                          f"archive of {SOURCE})")
    out = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip() or line.startswith(";"):
                continue
            fields = [f.strip() for f in line.split("|")]
            if len(fields) < 3 or not _NUMBER.fullmatch(fields[0]) \
                    or fields[1].lower() not in ("m", "f"):
                raise CorpusError(f"{path}:{n}: expected 'reader | M or F | subset | ...', got "
                                  f"'{line.strip()}'")
            out[fields[0]] = fields[1].lower()
    return out


def _numbered_dirs(folder: Path, what: str) -> list[Path]:
    out = []
    for name in c_sorted(os.listdir(folder)):
        if name.startswith(".") or not (folder / name).is_dir():
            continue
        if not _NUMBER.fullmatch(name):
            raise CorpusError(f"{folder / name}: unexpected {what} folder name (LibriSpeech "
                              f"names {what} folders by numbers)")
        out.append(folder / name)
    return out


def _read_transcript(trans: Path, prefix: str) -> list[tuple[str, str, int]]:
    """(utterance, words, line number) of a chapter's .trans.txt."""
    if not trans.is_file():
        raise CorpusError(f"no such file {trans} (every chapter folder holds its transcript, "
                          f"<reader>-<chapter>.trans.txt; replace the chapter from {SOURCE})")
    out, seen = [], set()
    with open(trans, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            fields = line.split()
            if not fields:
                continue
            utt = fields[0]
            if not utt.startswith(prefix) or not _NUMBER.fullmatch(utt[len(prefix):]):
                raise CorpusError(f"{trans}:{n}: utterance '{utt}' is not {prefix}<number>")
            if len(fields) < 2:
                raise CorpusError(f"{trans}:{n}: utterance {utt} has no words")
            if utt in seen:
                raise CorpusError(f"{trans}:{n}: utterance {utt} is there twice")
            seen.add(utt)
            out.append((utt, " ".join(fields[1:]), n))
    return out


def scan_part(root: Path, part: str, genders: dict[str, str],
              check_audio: bool = True) -> tuple[list[Utterance], dict[str, str]]:
    """The utterances of one part and its spk2gender; CorpusError on anything out of layout."""
    src = root / part
    if not src.is_dir():
        raise CorpusError(f"no such directory {src} (the part {part} of Mini LibriSpeech, "
                          f"from {SOURCE})")
    utts, spk2gender = [], {}
    for reader_dir in _numbered_dirs(src, "reader"):
        reader = reader_dir.name
        if reader not in genders:
            raise CorpusError(f"{root / SPEAKERS}: no line for reader {reader} ({reader_dir})")
        for chapter_dir in _numbered_dirs(reader_dir, "chapter"):
            chapter = chapter_dir.name
            spk = f"{reader}-{chapter}"
            trans = chapter_dir / f"{spk}.trans.txt"
            lines = _read_transcript(trans, f"{spk}-")
            flacs = {n[:-len(".flac")] for n in os.listdir(chapter_dir) if n.endswith(".flac")}
            for utt, words, n in lines:
                flac = chapter_dir / f"{utt}.flac"
                if utt not in flacs:
                    raise CorpusError(f"{trans}:{n}: utterance {utt} has no audio (no such "
                                      f"file {flac})")
                check_wav(flac, SAMPLE_RATE, "LibriSpeech", SOURCE, CorpusError, kind="FLAC",
                          decode=check_audio)
                utts.append(Utterance(utt, flac, words, spk))
            extra = c_sorted(flacs - {u for u, _, _ in lines})
            if extra:
                raise CorpusError(f"{chapter_dir / extra[0]}.flac: no line in {trans}"
                                  + (f" (and {len(extra) - 1} more)" if len(extra) > 1 else ""))
            spk2gender[spk] = genders[reader]
    if not utts:
        raise CorpusError(f"{src}: no utterances (expected <reader>/<chapter>/ folders with "
                          f"FLAC files and a .trans.txt)")
    return utts, spk2gender


def data_dir_name(part: str) -> str:
    """Kaldi's name of a part's data directory: dev-clean-2 -> dev_clean_2."""
    return part.replace("-", "_")


def prepare_parts(corpus_dir: str | os.PathLike, data_dir: str | os.PathLike,
                  parts: list[str], check_audio: bool = True) -> dict[str, tuple[int, bool]]:
    """Write <data-dir>/<name> for each part once all are checked; name -> (utterances,
    written: False when an identical directory was kept)."""
    root = corpus_root(corpus_dir)
    genders = read_speakers(root / SPEAKERS)
    scanned = {data_dir_name(p): scan_part(root, p, genders, check_audio) for p in parts}
    return {name: (len(utts), write_data_dir(utts, Path(data_dir) / name, spk2gender))
            for name, (utts, spk2gender) in scanned.items()}


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("corpus_dir", help="the folder holding LibriSpeech/ (or LibriSpeech/ itself)")
    p.add_argument("data_dir", help="where data/<part> directories go")
    p.add_argument("parts", nargs="+", help="parts, e.g. train-clean-5 dev-clean-2")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    for name, (n, written) in prepare_parts(args.corpus_dir, args.data_dir, args.parts).items():
        done = "wrote" if written else "kept (unchanged)"
        print(f"{args.prog}: {done} {args.data_dir}/{name}: {n} utterances")


if __name__ == "__main__":
    run_script(get_args(), main)
