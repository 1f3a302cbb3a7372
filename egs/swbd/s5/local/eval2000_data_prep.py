#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""The Hub5'00 evaluation set (LDC2002S09 audio + LDC2002T43 transcripts) as data/eval2000.

As Kaldi's egs/swbd/s5c/local/eval2000_data_prep.sh: the 40 conversations ``english/*.sph``
(20 Switchboard ``sw_NNNN``, 20 CallHome ``en_NNNN``), two sides each. Utterances are the
segments of the partitioned evaluation map ``english/hub5e_00.pem``
(``en_4156 A unknown_speaker 301.85 302.48``), named ``en_4156-A_030184-030248``: times
times 100 *truncated* (awk's %d, so 301.85 gives 30184 through floating point, exactly as
Kaldi's ids), then each segment widened by 0.1 s on both sides without running into its
neighbours (:func:`extend_segments`, Kaldi's local/extend_segments.pl). The words come from
the reference ``reference/hub5e00.english.000405.stm`` (same ids from its columns 1, 2, 4, 5;
the two lists must agree); segments marked IGNORE_TIME_SEGMENT_ are not scored and are left
out. The stm (with Kaldi's fixes: ``((`` -> ``(``, aside markers removed) and the GLM
``reference/en20000405_hub5.glm`` are copied next to the data for scoring.

Run by local/eval2000_data_prep.sh: ``local/eval2000_data_prep.py [--sph2pipe CMD]
<speech-dir> <transcript-dir> <data-dir>`` reads LDC2002S09 and LDC2002T43 and writes the data
directory with its stm and glm.
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

__all__ = ["extend_segments", "read_pem", "read_stm_text", "fix_stm_line", "eval2000_paths",
           "prepare_eval2000", "EVAL2000_NUM_SIDES", "PEM_NAME", "STM_NAME", "GLM_NAME"]

PEM_NAME = "hub5e_00.pem"
STM_NAME = "hub5e00.english.000405.stm"
GLM_NAME = "en20000405_hub5.glm"
#: Conversation sides in the full set (Kaldi stops when wav.scp has another number).
EVAL2000_NUM_SIDES = 80
_IGNORE = "IGNORE_TIME_SEGMENT_"
_WHERE_AUDIO = "the Hub5'00 audio, LDC2002S09 hub5e_00"
_WHERE_TEXT = "the Hub5'00 transcripts, LDC2002T43"


def _utt_id(path: Path, n: int, f: list[str]) -> str:
    try:
        start, end = float(f[3]), float(f[4])
    except (IndexError, ValueError):
        raise CorpusError(f"{path}:{n}: expected '<file> <channel> <speaker> <start> <end> ...', "
                          f"got '{' '.join(f)}'") from None
    return f"{f[0]}-{f[1]}_{int(start * 100):06d}-{int(end * 100):06d}"


def extend_segments(segments: list[tuple[str, str, float, float]], extend: float
                    ) -> list[tuple[str, str, float, float]]:
    """Widen every segment by ``extend`` seconds at both ends, per recording, never below 0
    and never past the middle of the gap to the next segment; segments that already overlap
    keep their times. The order of the list is kept (Kaldi's extend_segments.pl)."""
    segs = [list(s) for s in segments]
    by_reco: dict[str, list[int]] = {}
    for i, s in enumerate(segs):
        by_reco.setdefault(s[1], []).append(i)
    for idx in by_reco.values():
        idx = sorted(idx, key=lambda i: segs[i][2])  # stable, as Perl's sort
        segs[idx[0]][2] = max(0.0, segs[idx[0]][2] - extend)
        segs[idx[-1]][3] += extend
        for a, b in zip(idx, idx[1:]):
            end, start = segs[a][3], segs[b][2]
            if end > start:
                continue
            ext = min(extend, 0.5 * (start - end))
            segs[a][3], segs[b][2] = end + ext, start - ext
    return [tuple(s) for s in segs]


def read_pem(path: str | os.PathLike) -> list[tuple[str, str, float, float]]:
    """``(utt, reco, start, end)`` of the pem file, sorted unique as Kaldi's ``sort -u``."""
    path = Path(path)
    lines = {}
    with open(path, **ENCODING) as fh:
        for n, line in enumerate(fh, 1):
            if ";;" in line or not line.split():
                continue
            f = line.split()
            utt = _utt_id(path, n, f)
            lines[f"{utt} {f[0]}-{f[1]} {f[3]} {f[4]}"] = (utt, f"{f[0]}-{f[1]}", float(f[3]),
                                                           float(f[4]))
    return [lines[k] for k in sorted(lines, key=c_key)]


def read_stm_text(path: str | os.PathLike) -> dict[str, tuple[str, ...]]:
    """``utt -> words`` of the stm (columns 7 on), ids as :func:`read_pem` makes them."""
    path = Path(path)
    out = {}
    with open(path, **ENCODING) as fh:
        for n, line in enumerate(fh, 1):
            if ";;" in line or not line.split():
                continue
            f = line.split()
            out.setdefault(_utt_id(path, n, f), tuple(f[6:]))
    return out


def fix_stm_line(line: str) -> str:
    """Kaldi's repairs of the stm for hubscr.pl: the first ``((`` of a line becomes ``(``,
    and the aside markers go."""
    return line.replace("((", "(", 1).replace("<B_ASIDE>", "").replace("<E_ASIDE>", "")


def eval2000_paths(speech_dir: str | os.PathLike, trans_dir: str | os.PathLike
                   ) -> tuple[Path, Path, Path, Path]:
    """(english/ audio directory, pem, stm, glm), checked; ``trans_dir`` may be LDC2002T43 or
    its ``2000_hub5_eng_eval_tr`` subdirectory."""
    english = Path(speech_dir) / "english"
    if not english.is_dir():
        raise CorpusError(f"no such directory {english} (expected {_WHERE_AUDIO}/english)")
    tdir = Path(trans_dir)
    if (tdir / "2000_hub5_eng_eval_tr").is_dir():
        tdir = tdir / "2000_hub5_eng_eval_tr"
    ref = tdir / "reference"
    if not ref.is_dir():
        raise CorpusError(f"no such directory {ref} (expected {_WHERE_TEXT}: "
                          f"[2000_hub5_eng_eval_tr/]reference/{STM_NAME})")
    pem, stm, glm = english / PEM_NAME, ref / STM_NAME, ref / GLM_NAME
    for p, where in ((pem, _WHERE_AUDIO), (stm, _WHERE_TEXT), (glm, _WHERE_TEXT)):
        if not p.is_file():
            raise CorpusError(f"no such file {p} (part of {where})")
    return english, pem, stm, glm


def prepare_eval2000(speech_dir: str | os.PathLike, trans_dir: str | os.PathLike,
                     data_dir: str | os.PathLike, sph2pipe: str = "sph2pipe",
                     extend: float = 0.1) -> DataDirReport:
    """Write data/eval2000 (Kaldi's files plus ``stm`` and ``glm``)."""
    english, pem, stm, glm = eval2000_paths(speech_dir, trans_dir)
    sph = find_sph(english)
    if not sph:
        raise CorpusError(f"no *.sph files in {english} (expected {_WHERE_AUDIO}/english/*.sph)")
    segs = read_pem(pem)
    text = read_stm_text(stm)
    pem_ids, stm_ids = [s[0] for s in segs], sorted(text, key=c_key)
    if sorted(pem_ids, key=c_key) != stm_ids:
        only_pem = sorted(set(pem_ids) - set(stm_ids), key=c_key)
        only_stm = sorted(set(stm_ids) - set(pem_ids), key=c_key)
        first = (f"{only_pem[0]} only in {pem}" if only_pem else
                 f"{only_stm[0]} only in {stm}" if only_stm else "repeated segments")
        raise CorpusError(f"the segments of {pem} and {stm} do not match (first difference: "
                          f"{first})")
    utts = [Utterance(u, r, f"{s:.2f}", f"{e:.2f}", text[u])
            for u, r, s, e in extend_segments(segs, extend) if _IGNORE not in " ".join(text[u])]
    rep = write_conversation_data_dir(data_dir, utts, side_wav_scp(sph, sph2pipe),
                                      what=f"{speech_dir} + {trans_dir}")
    rep.messages.append(f"{len(segs) - len(utts)} segments marked {_IGNORE}* are not scored")
    data_dir = Path(data_dir)
    with open(stm, **ENCODING) as fh:
        write_lines(data_dir / "stm", (fix_stm_line(line.rstrip("\n")) for line in fh))
    with open(glm, **ENCODING) as fh:
        write_lines(data_dir / "glm", (line.rstrip("\n") for line in fh))
    if rep.recordings != EVAL2000_NUM_SIDES:
        rep.warnings.append(f"WARNING: {rep.recordings} conversation sides with utterances; "
                            f"the full Hub5'00 set has {EVAL2000_NUM_SIDES}")
    return rep


def get_args() -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--sph2pipe", default="sph2pipe",
                        help="the sph2pipe command written into wav.scp (default: sph2pipe)")
    parser.add_argument("speech_dir", help="LDC2002S09's hub5e_00 (english/*.sph, *.pem)")
    parser.add_argument("trans_dir", help="LDC2002T43 or its 2000_hub5_eng_eval_tr")
    parser.add_argument("data_dir", help="output data directory, e.g. data/eval2000")
    return parser.parse_args()


def _main(args: argparse.Namespace) -> None:
    report = prepare_eval2000(args.speech_dir, args.trans_dir, args.data_dir,
                              sph2pipe=args.sph2pipe)
    print_report(args.prog, args.data_dir, report)


if __name__ == "__main__":
    run_script(get_args(), _main)
