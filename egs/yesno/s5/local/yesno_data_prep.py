#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Kaldi's yesno corpus as the data directories <data-dir>/train_yesno and <data-dir>/test_yesno.

The corpus (OpenSLR resource 1, ``waves_yesno.tar.gz``, made for the Kaldi project; Apache 2.0)
is the folder ``waves_yesno/``: 60 wav files, 8 kHz 16-bit mono, one male speaker saying eight
words, each "yes" or "no"; the file name is the transcript, 1 for yes and 0 for no
(``0_0_1_0_1_0_1_1.wav``), and the archive's ``README`` sits beside them. The whole folder is
checked before anything is written: every entry but README (and dot files) must be a wav named
by a transcript of 0s and 1s, all 60 must be there, and each must read as an 8 kHz mono wav, so
a wrong or damaged copy stops with one line naming the file.

The split is Kaldi's egs/yesno/s5/local/create_yesno_waves_test_train.pl: of the sorted file list
(``ls -1``), line i (from 1) of n goes to train when i <= n/2, the rest to test. Kaldi's list
also holds README, which sorts last (61 lines), so it changes nothing: the first 30 wavs train,
the last 30 test (Kaldi's fix_data_dir.sh drops README from test when its features fail).
Utterance ids are the file names without ``.wav``, the one speaker is ``global`` and the
transcript is the words in capitals (``NO NO YES ...``), as Kaldi's local/prepare_data.sh writes
them. Each directory is written under a temporary name and renamed into place; one that already
holds the same lists is kept (with its features).

Usage: ``local/yesno_data_prep.py <corpus-dir> <data-dir>``, where <corpus-dir> is
``waves_yesno/`` or the folder that holds it.
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import os
import re
from pathlib import Path

from nnetmix.data.io import c_sorted
from nnetmix.data.prepare import Utterance, check_wav, write_data_dir
from nnetmix.errors import DataDirError

from local_script import run_script, script_parser

__all__ = ["URL", "NUM_WAVS", "SAMPLE_RATE", "WORDS", "README", "CorpusError", "corpus_folder",
           "scan_yesno", "kaldi_split", "prepare_yesno"]

#: Where Kaldi's run.sh downloads the corpus (OpenSLR resource 1).
URL = "https://www.openslr.org/resources/1/waves_yesno.tar.gz"
#: The archive's wav files (its README: "contains 60 .wav files, sampled at 8 kHz").
NUM_WAVS = 60
SAMPLE_RATE = 8000
#: The transcript word of each digit of a file name.
WORDS = {"0": "NO", "1": "YES"}
#: The archive's own README, the one entry of waves_yesno/ that is not a recording.
README = "README"
SOURCE = f"the folder waves_yesno/ of {URL}"
_NAME = re.compile(r"[01](_[01])*\.wav")


class CorpusError(DataDirError):
    """The corpus folder is not Kaldi's waves_yesno/ (names, count, audio)."""


def corpus_folder(corpus_dir: str | os.PathLike) -> Path:
    """``corpus_dir`` itself, or its ``waves_yesno/`` when it holds one."""
    corpus_dir = Path(corpus_dir)
    if not corpus_dir.is_dir():
        raise CorpusError(f"no such directory {corpus_dir} (--corpus-dir: {SOURCE}, or the "
                          f"folder that holds it)")
    inner = corpus_dir / "waves_yesno"
    return inner if inner.is_dir() else corpus_dir


def scan_yesno(corpus_dir: str | os.PathLike, check_audio: bool = True) -> list[Path]:
    """The corpus's wav files in C-sorted name order; CorpusError on anything else."""
    folder = corpus_folder(corpus_dir)
    wavs = []
    for name in c_sorted(os.listdir(folder)):
        if name.startswith(".") or name == README:
            continue
        if not _NAME.fullmatch(name):
            raise CorpusError(f"{folder / name}: not a yesno file name (expected the transcript "
                              f"as 0s and 1s joined by _, e.g. 0_0_1_0_1_0_1_1.wav; "
                              f"{SOURCE} holds only those and README)")
        wavs.append(folder / name)
    if not wavs:
        raise CorpusError(f"{folder}: no wav files (--corpus-dir is {SOURCE}, or the folder "
                          f"that holds it)")
    if len(wavs) != NUM_WAVS:
        raise CorpusError(f"{folder}: {len(wavs)} wav files, expected {NUM_WAVS} (restore "
                          f"{SOURCE})")
    if check_audio:
        for w in wavs:
            check_wav(w, SAMPLE_RATE, "yesno", SOURCE, CorpusError)
    return wavs


def kaldi_split(names: list[str]) -> tuple[list[str], list[str]]:
    """create_yesno_waves_test_train.pl: line i (from 1) of n is train when i <= n/2."""
    n = len(names)
    return ([x for i, x in enumerate(names, 1) if i <= n / 2],
            [x for i, x in enumerate(names, 1) if i > n / 2])


def _utterance(wav: Path) -> Utterance:
    stem = wav.name[:-len(".wav")]
    return Utterance(stem, wav, " ".join(WORDS[c] for c in stem.split("_")), "global")


def prepare_yesno(corpus_dir: str | os.PathLike, data_dir: str | os.PathLike
                  ) -> dict[str, tuple[int, bool]]:
    """Check the corpus, split it and write the data directories: name -> (#utts, written)."""
    wavs = scan_yesno(corpus_dir)
    train, test = kaldi_split([w.name for w in wavs])
    by_name = {w.name: w for w in wavs}
    out = {}
    for name, names in (("train_yesno", train), ("test_yesno", test)):
        utts = [_utterance(by_name[x]) for x in names]
        out[name] = (len(utts), write_data_dir(utts, Path(data_dir) / name))
    return out


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("corpus_dir", help="waves_yesno/ or the folder that holds it")
    p.add_argument("data_dir", help="where train_yesno/ and test_yesno/ go")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    for name, (n, written) in prepare_yesno(args.corpus_dir, args.data_dir).items():
        done = "wrote" if written else "kept (unchanged)"
        print(f"{args.prog}: {done} {args.data_dir}/{name}: {n} utterances")


if __name__ == "__main__":
    run_script(get_args(), main)
