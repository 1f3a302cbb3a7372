"""Split a data directory into N parts for N parallel jobs (what utils/split_data.sh does).

Parts go to ``<data>/split<N>/<n>`` (``split<N>utt`` with per_utt), n = 1..N, each a complete
data directory. By default a speaker's utterances all go to one part, so per-speaker CMVN and
adaptation work inside a job.

Parts are contiguous runs of speakers in sorted order, as Kaldi's split_scp.pl makes them, so
that concatenating the jobs' outputs in job order (``cat feats.{1..N}.scp``, as make_mfcc.sh does)
is still sorted. Kaldi starts from equal numbers of speakers per part and then moves boundary
speakers between neighbours while that evens out their utterance counts. Here the boundaries are
first chosen to minimise the largest part (binary search on the capacity, then greedy filling,
which is exact for contiguous parts), and then the same neighbour moves are applied: a move only
happens when it brings two neighbours closer, so it can never raise the largest part. The result
is therefore never worse than Kaldi's in its largest part, and as even as Kaldi's between
neighbours.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from nnetmix.data.filter import filter_data_dir_parts
from nnetmix.data.io import read_utt2spk, utt2spk_to_spk2utt
from nnetmix.data.layout import ALL_FILES
from nnetmix.errors import DataDirError

__all__ = ["partition_counts", "split_dir_name", "split_data", "split_is_up_to_date"]


def _parts_needed(counts: Sequence[int], cap: int) -> int:
    parts, load = 1, 0
    for c in counts:
        if load + c > cap:
            parts, load = parts + 1, 0
        load += c
    return parts


def partition_counts(counts: Sequence[int], num_parts: int) -> list[int]:
    """Cut a sequence of group sizes into ``num_parts`` non-empty contiguous runs.

    Returns the start index of each run (the first is 0). Minimises the largest run total, then
    evens out neighbours. Raises ValueError when there are fewer groups than parts.
    """
    n = len(counts)
    if num_parts < 1:
        raise ValueError(f"num_parts must be positive, got {num_parts}")
    if n < num_parts:
        raise ValueError(f"{n} groups cannot fill {num_parts} non-empty parts")
    lo, hi = max(counts), sum(counts)
    while lo < hi:  # smallest capacity that greedy filling fits into num_parts runs
        mid = (lo + hi) // 2
        if _parts_needed(counts, mid) <= num_parts:
            hi = mid
        else:
            lo = mid + 1
    starts, load = [0], 0
    for i, c in enumerate(counts):
        if load + c > lo:
            starts.append(i)
            load = 0
        load += c
    # fewer runs than asked: cut the largest run of two or more groups at its most even point
    while len(starts) < num_parts:
        bounds = starts + [n]
        j = max((k for k in range(len(starts)) if bounds[k + 1] - bounds[k] > 1),
                key=lambda k: sum(counts[bounds[k]:bounds[k + 1]]))
        a, b = bounds[j], bounds[j + 1]
        total, best, acc = sum(counts[a:b]), a + 1, 0
        best_gap = None
        for cut in range(a + 1, b):
            acc += counts[cut - 1]
            gap = abs(total - 2 * acc)
            if best_gap is None or gap < best_gap:
                best, best_gap = cut, gap
        starts.insert(j + 1, best)
    # Kaldi's neighbour moves: shift one boundary group while it narrows the gap between the two
    # (each move lowers the sum of squared part sizes, so this terminates)
    ends = starts[1:] + [n]
    sizes = [sum(counts[starts[k]:ends[k]]) for k in range(num_parts)]
    changed = True
    while changed:
        changed = False
        for k in range(1, num_parts):
            while True:
                s, left, right = starts[k], sizes[k - 1], sizes[k]
                end = starts[k + 1] if k + 1 < num_parts else n
                if end - s > 1 and abs((right - counts[s]) - (left + counts[s])) < right - left:
                    c, starts[k] = counts[s], s + 1  # first group of part k goes left
                elif s - starts[k - 1] > 1 and \
                        abs((right + counts[s - 1]) - (left - counts[s - 1])) < left - right:
                    c, starts[k] = -counts[s - 1], s - 1  # last group of part k-1 goes right
                else:
                    break
                sizes[k - 1] += c
                sizes[k] -= c
                changed = True
    return starts


def split_dir_name(data: str | os.PathLike, num_split: int, per_utt: bool = False) -> Path:
    """``<data>/split<N>`` or, per utterance, ``<data>/split<N>utt`` (Kaldi's names)."""
    return Path(data) / f"split{num_split}{'utt' if per_utt else ''}"


def split_is_up_to_date(data: str | os.PathLike, num_split: int, per_utt: bool = False) -> bool:
    """True when every part exists and no part file is older than its source (Kaldi's test).

    Kaldi looks only at part 1; all parts are checked here, so a split killed half-way is redone.
    """
    data = Path(data)
    out = split_dir_name(data, num_split, per_utt)
    for n in range(1, num_split + 1):
        part = out / str(n)
        if not (part / "utt2spk").is_file() or not (part / "spk2utt").is_file():
            return False
        for name in ALL_FILES:
            src = data / name
            if src.is_file():
                dst = part / name
                if not dst.is_file() or dst.stat().st_mtime_ns < src.stat().st_mtime_ns:
                    return False
    return True


def split_data(data: str | os.PathLike, num_split: int, *, per_utt: bool = False,
               force: bool = False) -> tuple[Path, bool]:
    """Split ``data`` into ``num_split`` parts; return (split directory, whether it was written).

    Raises DataDirError when there are fewer speakers (with per_utt: utterances) than parts.
    Skips the work when the split is up to date, unless ``force``.
    """
    data = Path(data)
    if num_split < 1:
        raise DataDirError(f"invalid num-to-split {num_split} (expected a positive integer)")
    if not (data / "utt2spk").is_file():
        raise DataDirError(f"no such file {data}/utt2spk")
    out = split_dir_name(data, num_split, per_utt)
    if not force and split_is_up_to_date(data, num_split, per_utt):
        return out, False
    utt2spk = read_utt2spk(data / "utt2spk")
    if per_utt:
        groups = [[u] for u in utt2spk]
        if len(groups) < num_split:
            raise DataDirError(f"{data}/utt2spk: {len(groups)} utterances cannot be split "
                               f"{num_split} ways (use fewer jobs)")
        # equal numbers of lines, the first (total mod N) parts one longer, as split_scp.pl does
        q, r = divmod(len(groups), num_split)
        starts = [k * q + min(k, r) for k in range(num_split)] + [len(groups)]
    else:
        # groups in utt2spk order: with speaker-prefixed utt-ids that is the speakers' order
        groups = list(utt2spk_to_spk2utt(utt2spk.items(), sort=False).values())
        if len(groups) < num_split:
            raise DataDirError(f"{data}/spk2utt: refusing to split {len(groups)} speakers "
                               f"{num_split} ways: every job needs at least one speaker "
                               f"(use --nj {len(groups)} or fewer, or --per-utt)")
        starts = partition_counts([len(g) for g in groups], num_split) + [len(groups)]
    parts = [[u for g in groups[starts[n]:starts[n + 1]] for u in g] for n in range(num_split)]
    filter_data_dir_parts(data, [out / str(n + 1) for n in range(num_split)], parts)
    return out, True
