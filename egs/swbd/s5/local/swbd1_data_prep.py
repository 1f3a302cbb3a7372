#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Switchboard-1 Release 2 training data (LDC97S62 + MS-State transcripts) as data/train.

What Kaldi's egs/swbd/s5c/local/swbd1_data_prep.sh does, in one pass: every
``swb_ms98_transcriptions/NN/NNNN/swNNNN[AB]-ms98-a-trans.text`` line
``sw2001A-ms98-a-0002 0.977625 11.561375 hi um yeah ...`` becomes utterance
``sw02001-A_000098-001156`` of recording ``sw02001-A`` from 0.98 to 11.56 s, its words cleaned
of [silence] and aside markers, mapped as swbd1_map_words.pl maps them, and lower-cased (the
ms98 words are lower case already; the lexicon is lower-cased by Kaldi too, so this only
guards against stray capitals); segments left without a word are dropped. The audio is found
anywhere under the corpus directory (``swb1/disc*/data/*.sph`` or flat).

Kaldi writes the segment times with awk's default number format (``0.98``, ``0``, ``11.56``);
:func:`_awk_number` does the same, so segments files are Kaldi's byte for byte.

Run by local/swbd1_data_prep.sh: ``local/swbd1_data_prep.py [--sph2pipe CMD] <swbd-dir>
<ms98-transcript-dir> <data-dir> <local-dir>`` reads the corpus and writes the data directory
(wav.scp, segments, text, utt2spk, spk2utt, reco2file_and_channel) and <local-dir>/text.
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import os
from pathlib import Path

from nnetmix.data.io import ENCODING, c_key, write_lines

from local_script import run_script, script_parser
from conversations import (CorpusError, DataDirReport, Utterance, find_sph,
                           print_report, side_wav_scp, write_conversation_data_dir)
from swbd_text import clean_transcript, map_words, ms98_utt_id

__all__ = ["read_ms98_transcripts", "prepare_swbd_train", "SWBD_NUM_SPH"]

#: Conversation files in the full release (Kaldi warns when it finds another number).
SWBD_NUM_SPH = (2435, 2438)
_WHERE_SWBD = "the Switchboard-1 Release 2 audio, LDC97S62"
_WHERE_MS98 = ("the MS-State transcripts swb_ms98_transcriptions/NN/NNNN/swNNNNA-ms98-a-trans.text"
               " (LDC97S62 transcriptions/, or switchboard_word_alignments.tar.gz from "
               "openslr.org/resources/5)")


def _awk_number(hundredths: int) -> str:
    """``hundredths / 100`` printed as awk prints a number (integers bare, else %.6g)."""
    if hundredths % 100 == 0:
        return str(hundredths // 100)
    return f"{hundredths / 100:.6g}"


def read_ms98_transcripts(trans_dir: str | os.PathLike) -> list[Utterance]:
    """Every segment of ``trans_dir/*/*/*-trans.text`` that has words, Kaldi-mapped.

    Raises CorpusError when there is no transcript file or a line is not
    ``<segment-id> <start> <end> [words...]``.
    """
    trans_dir = Path(trans_dir)
    files = sorted(trans_dir.glob("*/*/*-trans.text"), key=lambda p: c_key(str(p)))
    if not files:
        raise CorpusError(f"no */*/*-trans.text files in {trans_dir} (expected {_WHERE_MS98})")
    utts = []
    for path in files:
        with open(path, **ENCODING) as fh:
            for n, line in enumerate(fh, 1):
                f = line.split()
                if not f:
                    continue
                try:
                    if len(f) < 3 or len(f[0]) < 7:
                        raise ValueError
                    start, end = float(f[1]), float(f[2])
                except ValueError:
                    raise CorpusError(f"{path}:{n}: expected '<segment-id> <start> <end> "
                                      f"words...' (e.g. sw2001A-ms98-a-0001 0.000000 0.977625 "
                                      f"[silence]), got '{line.strip()}'") from None
                words = clean_transcript(f[3:])
                if not words:
                    continue
                utt = ms98_utt_id(f[0], start, end)
                _, times = utt.split("_", 1)
                b, e = times.split("-")
                utts.append(Utterance(utt, utt.split("_", 1)[0], _awk_number(int(b)),
                                      _awk_number(int(e)),
                                      tuple(w.lower() for w in map_words(words))))
    return utts


def prepare_swbd_train(swbd_dir: str | os.PathLike, trans_dir: str | os.PathLike,
                       data_dir: str | os.PathLike, local_dir: str | os.PathLike,
                       sph2pipe: str = "sph2pipe") -> DataDirReport:
    """Write ``data_dir`` (Kaldi's data/train) and ``local_dir/text`` (every transcribed
    utterance, with or without audio, which Kaldi's LM is estimated from) plus
    ``local_dir/sph.flist``."""
    swbd_dir, local_dir = Path(swbd_dir), Path(local_dir)
    if not swbd_dir.is_dir():
        raise CorpusError(f"no such directory {swbd_dir} (expected {_WHERE_SWBD})")
    sph = find_sph(swbd_dir)
    if not sph:
        raise CorpusError(f"no *.sph files under {swbd_dir} (expected {_WHERE_SWBD}: "
                          f"swb1/disc*/data/sw0NNNN.sph)")
    utts = read_ms98_transcripts(trans_dir)
    local_dir.mkdir(parents=True, exist_ok=True)
    write_lines(local_dir / "sph.flist", (str(p) for p in sph.values()))
    ordered = sorted(utts, key=lambda u: c_key(u.utt))
    write_lines(local_dir / "text", (" ".join((u.utt,) + u.words) for u in ordered))
    rep = write_conversation_data_dir(data_dir, utts, side_wav_scp(sph, sph2pipe),
                                      what=f"{swbd_dir} + {trans_dir}")
    if len(sph) not in SWBD_NUM_SPH:
        rep.warnings.insert(0, f"WARNING: found {len(sph)} .sph files under {swbd_dir}; the "
                               f"full release has {SWBD_NUM_SPH[0]} or {SWBD_NUM_SPH[1]}")
    return rep


def get_args() -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--sph2pipe", default="sph2pipe",
                        help="the sph2pipe command written into wav.scp (default: sph2pipe)")
    parser.add_argument("swbd_dir", help="Switchboard-1 Release 2 (LDC97S62)")
    parser.add_argument("trans_dir", help="the ms98 transcripts (swb_ms98_transcriptions)")
    parser.add_argument("data_dir", help="output data directory, e.g. data/train")
    parser.add_argument("local_dir", help="where text (every transcribed utterance) goes")
    return parser.parse_args()


def _main(args: argparse.Namespace) -> None:
    report = prepare_swbd_train(args.swbd_dir, args.trans_dir, args.data_dir, args.local_dir,
                                sph2pipe=args.sph2pipe)
    print_report(args.prog, args.data_dir, report)


if __name__ == "__main__":
    run_script(get_args(), _main)
