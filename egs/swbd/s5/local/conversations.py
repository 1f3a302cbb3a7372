#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Two-sided telephone conversations in SPHERE files, as Kaldi data directories.

Switchboard-1 (LDC97S62) and Hub5'00 (LDC2002S09) store each conversation as one two-channel
8 kHz SPHERE file; Kaldi makes each side a recording (``sw02001-A`` is channel 1, ``-B``
channel 2) read through ``sph2pipe -f wav -p -c <channel> <file> |``, and each transcribed
stretch an utterance in ``segments``. The corpus preparations (swbd1_data_prep.py,
eval2000_data_prep.py) share this module: finding the files, the wav.scp and
reco2file_and_channel lines, and writing a
consistent, C-sorted directory (what Kaldi gets from fix_data_dir.sh after its awk scripts).
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from nnetmix.data.io import (c_key, c_sorted, utt2spk_to_spk2utt, write_lines, write_spk2utt,
                             write_table)
from nnetmix.errors import NnetmixError

__all__ = ["CorpusError", "Utterance", "DataDirReport", "find_sph", "side_wav_scp",
           "write_conversation_data_dir", "print_report", "CHANNELS"]

#: Conversation side -> sph2pipe channel (side A is channel 1).
CHANNELS = {"A": 1, "B": 2}


class CorpusError(NnetmixError):
    """A corpus directory or file is missing or not in the layout/format of its LDC release."""


@dataclass(frozen=True)
class Utterance:
    """One segment: its id, recording (conversation side), times as written, and words."""

    utt: str
    reco: str
    start: str
    end: str
    words: tuple[str, ...]


@dataclass
class DataDirReport:
    """What went into a data directory, and what was left out and why."""

    utterances: int = 0
    recordings: int = 0
    speakers: int = 0
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def find_sph(root: str | os.PathLike) -> dict[str, Path]:
    """``name -> path`` of every ``*.sph`` (any case) under ``root``, following links.

    Kaldi finds the files with ``find -iname '*.sph'`` so that any unpacking of the discs
    works (``swb1/disc1/data/`` or flat). Where a name occurs twice the first path in C order
    wins, as sort -u on the keys keeps it.
    """
    root = Path(root)
    paths = []
    for d, _, files in os.walk(root, followlinks=True):
        paths.extend(Path(d) / f for f in files if f.lower().endswith(".sph"))
    found: dict[str, Path] = {}
    for p in sorted(paths, key=lambda p: c_key(str(p))):
        found.setdefault(p.name[:-4], p.resolve())
    return found


def side_wav_scp(sph: dict[str, Path], sph2pipe: str = "sph2pipe") -> dict[str, str]:
    """``reco -> rxfilename`` for both sides of every conversation (Kaldi's wav.scp lines)."""
    out = {}
    for name, path in sph.items():
        for side, channel in CHANNELS.items():
            out[f"{name}-{side}"] = f"{sph2pipe} -f wav -p -c {channel} {path} |"
    return out


def write_conversation_data_dir(out: str | os.PathLike, utts: list[Utterance],
                                wav_scp: dict[str, str], *, min_kept: int = 1,
                                what: str = "") -> DataDirReport:
    """Write wav.scp, segments, text, utt2spk, spk2utt and reco2file_and_channel into ``out``.

    Every conversation side is its own speaker, as in Kaldi's recipes. Utterances whose side has
    no audio and sides with no utterance are left out (counted in the report, one warning per
    conversation without audio); fewer than ``min_kept`` utterances left is an error. Repeated
    utterance ids keep their first segment.
    """
    out = Path(out)
    rep = DataDirReport()
    seen: dict[str, Utterance] = {}
    for u in utts:
        if u.utt in seen:
            rep.warnings.append(f"WARNING: utterance {u.utt} appears twice; keeping the first")
            continue
        seen[u.utt] = u
    no_audio: dict[str, int] = {}
    kept = []
    for u in seen.values():
        if u.reco in wav_scp:
            kept.append(u)
        else:
            conv = u.reco.rsplit("-", 1)[0]
            no_audio[conv] = no_audio.get(conv, 0) + 1
    for conv in c_sorted(no_audio):
        rep.warnings.append(f"WARNING: no audio for conversation {conv} ({no_audio[conv]} "
                            f"transcribed utterances left out)")
    if len(kept) < min_kept:
        raise CorpusError(f"{what or out}: no utterance has both a transcript and audio "
                          f"({len(seen)} transcribed, {len(wav_scp)} recordings)")
    kept.sort(key=lambda u: c_key(u.utt))
    recos = c_sorted({u.reco for u in kept})
    unused = len(wav_scp) - len(recos)
    if unused:
        rep.messages.append(f"{unused} of {len(wav_scp)} recordings have no transcribed "
                            f"utterance and are left out")
    out.mkdir(parents=True, exist_ok=True)
    for name in ("feats.scp", "cmvn.scp", "utt2num_frames", "utt2dur"):  # stale outputs
        (out / name).unlink(missing_ok=True)
    write_table(out / "wav.scp", {r: wav_scp[r] for r in recos})
    write_lines(out / "segments", (f"{u.utt} {u.reco} {u.start} {u.end}" for u in kept))
    write_lines(out / "text", (" ".join((u.utt,) + u.words) for u in kept))
    utt2spk = {u.utt: u.reco for u in kept}
    write_table(out / "utt2spk", utt2spk)
    write_spk2utt(out / "spk2utt", utt2spk_to_spk2utt(utt2spk))
    write_table(out / "reco2file_and_channel",
                {r: " ".join(r.rsplit("-", 1)) for r in recos})
    rep.utterances, rep.recordings, rep.speakers = len(kept), len(recos), len(recos)
    return rep


def print_report(prog: str, data_dir: str, rep: DataDirReport) -> None:
    """The data-preparation scripts' output: warnings on stderr, progress lines on stdout, each
    starting with ``prog`` (the calling local/*.sh script's $0)."""
    for line in rep.warnings:
        print(f"{prog}: {line}", file=sys.stderr, flush=True)
    for m in rep.messages:
        print(f"{prog}: {m}", flush=True)
    print(f"{prog}: done, {data_dir}: {rep.utterances} utterances, {rep.recordings} recordings "
          f"(conversation sides, one speaker each)", flush=True)
