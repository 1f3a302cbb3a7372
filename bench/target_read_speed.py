#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Reading a training target archive (ali-to-post's one-pair posteriors) the way every rank of
an MPI epoch reads it: frame by frame (the reader before issue 31's campaign found the cost)
against whole utterances at once with the index passing values over.

Writes a synthetic archive shaped like harbour's (--utterances, --frames-per-utterance, pdf ids
below --pdfs; --empty-share of the frames with no pair, as weight-silence-post leaves silence
frames for gmm-est-fmllr, which the whole-utterance layout does not fit, so they are taken apart
in large reads instead), then times, interleaved, for each way: a sequential read of every value, and
what one of --ranks ranks does (a random-access index of the whole archive, then its own share
of the values). Checks that both ways read the same values. The machine may be shared: the load
average before and after is printed; read the ratio more than the seconds.
Usage: bench/target_read_speed.py [--utterances 5000] [--frames-per-utterance 350]
          [--pdfs 1464] [--empty-share 0] [--ranks 16] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import nnetmix.kaldi.codec as codec  # noqa: E402
from nnetmix.kaldi import RandomAccessReader, SequentialReader, TableWriter  # noqa: E402


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--utterances", type=int, default=5000)
    p.add_argument("--frames-per-utterance", type=int, default=350)
    p.add_argument("--pdfs", type=int, default=1464)
    p.add_argument("--empty-share", type=float, default=0.0,
                   help="share of frames with no pair (weight-silence-post's silence frames)")
    p.add_argument("--ranks", type=int, default=16, help="a rank reads 1/RANKS of the values")
    p.add_argument("--repeat", type=int, default=3, help="runs of each way (the median)")
    return p.parse_args()


def write_archive(path: Path, args: argparse.Namespace) -> None:
    rng = np.random.default_rng(777)
    with TableWriter(f"ark:{path}", "post") as w:
        for u in range(args.utterances):
            ids = rng.integers(0, args.pdfs, args.frames_per_utterance)
            empty = rng.random(args.frames_per_utterance) < args.empty_share
            w[f"utt{u:06d}"] = [[] if e else [(int(i), 1.0)] for i, e in zip(ids, empty)]


def sequential(rspec: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    with SequentialReader(rspec, "post") as r:
        values = {k: v for k, v in r}
    return time.perf_counter() - t0, values


def one_rank(rspec: str, ranks: int) -> tuple[float, dict]:
    t0 = time.perf_counter()
    with RandomAccessReader(rspec, "post") as r:
        values = {k: r[k] for k in r.keys()[::ranks]}
    return time.perf_counter() - t0, values


def main() -> int:
    args = get_args()
    fast = (codec._one_pair_records, codec._read_post_buffered)
    ways = {"frame by frame": (lambda src, frames: None,
                               lambda src, where, frames, keep=True:
                               codec._read_post_frames(src, where, frames)),
            "whole": fast}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "post.ark")
        write_archive(path, args)
        size = path.stat().st_size
        rspec = f"ark:{path}"
        times: dict[str, dict[str, list[float]]] = {w: {"seq": [], "rank": []} for w in ways}
        values: dict[str, tuple[dict, dict]] = {}
        load0 = os.getloadavg()
        for _ in range(args.repeat):  # interleaved, so both ways see the same machine
            for way, readers in ways.items():
                codec._one_pair_records, codec._read_post_buffered = readers
                t_seq, seq = sequential(rspec)
                t_rank, mine = one_rank(rspec, args.ranks)
                times[way]["seq"].append(t_seq)
                times[way]["rank"].append(t_rank)
                values[way] = (seq, mine)
        codec._one_pair_records, codec._read_post_buffered = fast
        load1 = os.getloadavg()
    same = values["frame by frame"] == values["whole"]
    med = {w: {k: sorted(v)[len(v) // 2] for k, v in t.items()} for w, t in times.items()}
    frames = args.utterances * args.frames_per_utterance
    print(f"Machine: {os.cpu_count()} CPUs; load average {' '.join(f'{x:.2f}' for x in load0)}"
          f" -> {' '.join(f'{x:.2f}' for x in load1)}")
    print(f"Archive: {args.utterances} utterances, {frames} frames ({100 * args.empty_share:g}% "
          f"with no pair), {size / 2**20:.1f} MiB; median of {args.repeat}\n")
    print(f"| way | read every value, s | one of {args.ranks} ranks (index + its values), s |")
    print("|---|---:|---:|")
    for way in ways:
        print(f"| {way} | {med[way]['seq']:.2f} | {med[way]['rank']:.2f} |")
    slow, fast = med["frame by frame"], med["whole"]
    print(f"\nframe by frame / whole: every value {slow['seq'] / fast['seq']:.1f}x, one rank "
          f"{slow['rank'] / fast['rank']:.1f}x; same values: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
