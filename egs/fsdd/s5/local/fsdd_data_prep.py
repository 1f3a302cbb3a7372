#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""The Free Spoken Digit Dataset (FSDD) as Kaldi data directories <data-dir>/{train,test}.

FSDD (Zohar Jackson and contributors, CC BY-SA 4.0; the public GitHub repository
Jakobovski/free-spoken-digit-dataset, commit 26eb9aaf76e81b692f806f9140c2d2777410d7a1) holds
3000 recordings ``recordings/{digit}_{speaker}_{index}.wav``: 6 speakers x 10 digits x 50
takes (indices 0-49), mono 16-bit PCM at 8 kHz. The whole corpus is checked before anything
is written (every name of that form, every expected file there, each a readable 8 kHz mono
wav), so a clone with missing or renamed files stops with one line naming the first problem.

Splits: ``official`` is the dataset's own (indices 0-4 of every speaker and digit are the test
set, 300 recordings; 5-49 train, 2700); ``speaker`` leaves one speaker out (``--test-speaker``:
their 500 recordings are the test set, the other 2500 train).

Utterance ids are speaker-prefixed, ``{speaker}_{digit}_{index}`` (``jackson_7_12``), so
sorting by utterance sorts by speaker too, as Kaldi's data directories require; the speaker is
the FSDD speaker, the transcript the digit's word in capitals (``SEVEN``). Each directory is
written under a temporary name and renamed into place, so an error leaves nothing half-written;
a directory that already holds the same lists is kept as it is (with its features).

Usage: ``local/fsdd_data_prep.py [--split official|speaker] [--test-speaker NAME] <fsdd-dir>
<data-dir>``, where <fsdd-dir> is the clone (the folder that holds ``recordings/``).
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import os
import re
from dataclasses import dataclass
from pathlib import Path

from nnetmix.data.io import c_sorted
from nnetmix.data.prepare import Utterance, check_wav, write_data_dir
from nnetmix.errors import DataDirError

from local_script import run_script, script_parser

__all__ = ["SPEAKERS", "WORDS", "NUM_TAKES", "TEST_TAKES", "SAMPLE_RATE", "Recording",
           "CorpusError", "scan_fsdd", "split_fsdd", "write_fsdd_data", "prepare_fsdd"]

#: The speakers of the pinned commit, in the dataset README's order.
SPEAKERS = ("jackson", "nicolas", "theo", "yweweler", "george", "lucas")
#: The transcript word of each digit (CMUdict spellings, in capitals as Kaldi's English recipes).
WORDS = ("ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE")
#: Takes of each digit by each speaker (indices 0 .. NUM_TAKES - 1).
NUM_TAKES = 50
#: The dataset's own test set: takes 0-4 of every speaker and digit (its README).
TEST_TAKES = range(5)
SAMPLE_RATE = 8000
SOURCE = ("a clone of github.com/Jakobovski/free-spoken-digit-dataset at commit "
          "26eb9aaf76e81b692f806f9140c2d2777410d7a1")
_NAME = re.compile(r"([0-9])_([a-z]+)_(0|[1-9][0-9]*)\.wav")


class CorpusError(DataDirError):
    """The FSDD directory is not the documented corpus, or an option does not fit it."""


@dataclass(frozen=True)
class Recording:
    """One recording: digit, speaker and take index, from the file name."""

    path: Path
    digit: int
    speaker: str
    index: int

    @property
    def utt_id(self) -> str:
        return f"{self.speaker}_{self.digit}_{self.index}"

    @property
    def word(self) -> str:
        return WORDS[self.digit]


def scan_fsdd(fsdd_dir: str | os.PathLike, check_audio: bool = True) -> list[Recording]:
    """Every recording of the corpus, in name order; CorpusError on anything undocumented.

    Checks that ``<fsdd-dir>/recordings`` exists, that every entry there (dot files aside) is
    named ``{digit}_{speaker}_{index}.wav`` with a documented speaker and an index below
    NUM_TAKES, that all 6 x 10 x 50 files are present, and (``check_audio``) that each is an
    8 kHz mono wav.
    """
    fsdd_dir = Path(fsdd_dir)
    if not fsdd_dir.is_dir():
        raise CorpusError(f"no such directory {fsdd_dir} (--fsdd-dir: {SOURCE})")
    rec_dir = fsdd_dir / "recordings"
    if not rec_dir.is_dir():
        raise CorpusError(f"no such directory {rec_dir} (--fsdd-dir is the folder that holds "
                          f"recordings/: {SOURCE})")
    found: dict[tuple[int, str, int], Recording] = {}
    for name in c_sorted(os.listdir(rec_dir)):
        if name.startswith("."):
            continue
        m = _NAME.fullmatch(name)
        if not m:
            raise CorpusError(f"{rec_dir / name}: not an FSDD file name "
                              f"(expected {{digit}}_{{speaker}}_{{index}}.wav, e.g. 7_jackson_12"
                              f".wav; restore the corpus from {SOURCE})")
        digit, speaker, index = int(m.group(1)), m.group(2), int(m.group(3))
        if speaker not in SPEAKERS:
            raise CorpusError(f"{rec_dir / name}: unknown speaker '{speaker}' (the recipe "
                              f"expects {' '.join(SPEAKERS)}: {SOURCE})")
        if index >= NUM_TAKES:
            raise CorpusError(f"{rec_dir / name}: index {index} out of range (FSDD has takes "
                              f"0-{NUM_TAKES - 1} of each digit: {SOURCE})")
        found[(digit, speaker, index)] = Recording(rec_dir / name, digit, speaker, index)
    expected = len(SPEAKERS) * len(WORDS) * NUM_TAKES
    if len(found) != expected:
        missing = [f"{d}_{s}_{i}.wav" for s in SPEAKERS for d in range(len(WORDS))
                   for i in range(NUM_TAKES) if (d, s, i) not in found]
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise CorpusError(f"{rec_dir}: {len(found)} recordings, expected {expected} "
                          f"({len(SPEAKERS)} speakers x {len(WORDS)} digits x {NUM_TAKES}); "
                          f"missing {missing[0]}{more} (restore the corpus from {SOURCE})")
    recs = sorted(found.values(), key=lambda r: r.path.name)
    if check_audio:
        for r in recs:
            check_wav(r.path, SAMPLE_RATE, "FSDD", SOURCE, CorpusError)
    return recs


def split_fsdd(recs: list[Recording], split: str, test_speaker: str = ""
               ) -> tuple[list[Recording], list[Recording]]:
    """(train, test) of the ``official`` split (takes 0-4 are test) or the ``speaker`` split
    (every recording of ``test_speaker`` is test)."""
    if split == "official":
        if test_speaker:
            raise CorpusError(f"--test-speaker {test_speaker} goes with --split speaker, not "
                              f"--split official")
        is_test = [r.index in TEST_TAKES for r in recs]
    elif split == "speaker":
        if not test_speaker:
            raise CorpusError("--split speaker needs --test-speaker NAME (one of: "
                              f"{' '.join(SPEAKERS)})")
        if test_speaker not in SPEAKERS:
            raise CorpusError(f"test speaker '{test_speaker}' is not in the corpus (one of: "
                              f"{' '.join(SPEAKERS)})")
        is_test = [r.speaker == test_speaker for r in recs]
    else:
        raise CorpusError(f"--split must be official or speaker, got '{split}'")
    return ([r for r, t in zip(recs, is_test) if not t], [r for r, t in zip(recs, is_test) if t])


def write_fsdd_data(train: list[Recording], test: list[Recording], data_dir: str | os.PathLike
                    ) -> list[str]:
    """<data-dir>/train and <data-dir>/test; returns the names of those (re)written."""
    data_dir = Path(data_dir)
    return [name for name, recs in (("train", train), ("test", test))
            if write_data_dir([Utterance(r.utt_id, r.path, r.word, r.speaker) for r in recs],
                              data_dir / name)]


def prepare_fsdd(fsdd_dir: str | os.PathLike, data_dir: str | os.PathLike,
                 split: str = "official", test_speaker: str = ""
                 ) -> tuple[int, int, list[str]]:
    """Check the corpus, split it and write the data directories: (#train, #test, written)."""
    split_fsdd([], split, test_speaker)      # the option errors, before the corpus scan
    train, test = split_fsdd(scan_fsdd(fsdd_dir), split, test_speaker)
    return len(train), len(test), write_fsdd_data(train, test, data_dir)


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("--split", default="official", help="official or speaker")
    p.add_argument("--test-speaker", default="", help="the held-out speaker of --split speaker")
    p.add_argument("fsdd_dir", help="the FSDD clone (holds recordings/)")
    p.add_argument("data_dir", help="where train/ and test/ go")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    n_train, n_test, written = prepare_fsdd(args.fsdd_dir, args.data_dir, args.split,
                                            args.test_speaker)
    what = (f"split {args.split}" + (f", test speaker {args.test_speaker}" if args.test_speaker
                                     else ""))
    for name, n in (("train", n_train), ("test", n_test)):
        done = "wrote" if name in written else "kept (unchanged)"
        print(f"{args.prog}: {done} {args.data_dir}/{name}: {n} utterances ({what})")


if __name__ == "__main__":
    run_script(get_args(), main)
