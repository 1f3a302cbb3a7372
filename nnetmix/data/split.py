"""Split a data directory into N parts for N parallel jobs (what utils/split_data.sh does).

Parts go to ``<data>/split<N>/<n>`` (``split<N>utt`` with per_utt), n = 1..N, each a complete
data directory. By default a speaker's utterances all go to one part, so per-speaker CMVN and
adaptation work inside a job.

Parts are contiguous runs of speakers in utt2spk order, so that concatenating the jobs' outputs
in job order (``cat feats.{1..N}.scp``, as make_mfcc.sh does) is still sorted. The default
assignment is Kaldi's (split_scp.pl --utt2spk, :func:`kaldi_partition`), so that a part holds
the same speakers as Kaldi's part of the same number: Kaldi users compare job logs split by split
and run our splits beside Kaldi's jobs. ``balanced`` instead minimises the largest part
(:func:`partition_counts`), which can end a run sooner when speakers differ much in size.

utt2spk must be sorted and unique (as validate_data_dir.sh demands): an unsorted one would give
unsorted parts, which every later merge of the jobs' outputs trips over, so it is refused.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from nnetmix.data.filter import filter_data_dir_parts
from nnetmix.data.io import first_unsorted_key, read_utt2spk, utt2spk_to_spk2utt
from nnetmix.data.layout import ALL_FILES
from nnetmix.errors import DataDirError

__all__ = ["kaldi_partition", "partition_counts", "split_dir_name", "split_data",
           "split_is_up_to_date"]


def kaldi_partition(counts: Sequence[int], num_parts: int) -> list[int]:
    """Cut group sizes into ``num_parts`` contiguous runs as Kaldi's split_scp.pl --utt2spk does.

    Returns the start index of each run (the first is 0). Group i first goes to run
    ``i * num_parts // len(counts)`` (equal numbers of groups, the longer runs spread out); then,
    until nothing changes, each run k in turn offers its last group to run k+1 and then its first
    group to run k-1, and a group moves when that narrows the gap between the two runs' totals.
    Each move lowers the sum of squared run totals, so this ends. Raises ValueError when there
    are fewer groups than runs.
    """
    n = len(counts)
    if num_parts < 1:
        raise ValueError(f"num_parts must be positive, got {num_parts}")
    if n < num_parts:
        raise ValueError(f"{n} groups cannot fill {num_parts} non-empty parts")
    # run k starts at the first i with i * num_parts // n >= k, i.e. ceil(k * n / num_parts)
    starts = [-(-k * n // num_parts) for k in range(num_parts)] + [n]
    sizes = [sum(counts[starts[k]:starts[k + 1]]) for k in range(num_parts)]

    def move(k: int, c: int, start: int) -> None:
        """Group of size c passes from run k to run k+1 (c > 0) or back (c < 0)."""
        sizes[k] -= c
        sizes[k + 1] += c
        starts[k + 1] = start

    changed = True
    while changed:
        changed = False
        for k in range(num_parts):
            if k + 1 < num_parts and starts[k + 1] > starts[k]:  # last group of k to k+1
                c = counts[starts[k + 1] - 1]
                if abs((sizes[k + 1] + c) - (sizes[k] - c)) < abs(sizes[k + 1] - sizes[k]):
                    move(k, c, starts[k + 1] - 1)
                    changed = True
            if k > 0 and starts[k + 1] > starts[k]:  # first group of k to k-1
                c = counts[starts[k]]
                if abs((sizes[k] - c) - (sizes[k - 1] + c)) < abs(sizes[k] - sizes[k - 1]):
                    move(k - 1, -c, starts[k] + 1)
                    changed = True
    if any(starts[k + 1] == starts[k] for k in range(num_parts)):  # cannot happen: counts > 0
        raise ValueError(f"a run came out empty for sizes {list(counts)} in {num_parts} runs")
    return starts[:-1]


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
               balanced: bool = False, force: bool = False) -> tuple[Path, bool]:
    """Split ``data`` into ``num_split`` parts; return (split directory, whether it was written).

    Speakers are assigned as Kaldi assigns them, or with ``balanced`` so that the largest part
    is as small as it can be. Raises DataDirError when utt2spk is not sorted or has duplicates,
    or when there are fewer speakers (with per_utt: utterances) than parts. Skips the work when
    the split is up to date, unless ``force``.
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
    bad = first_unsorted_key(list(utt2spk))
    if bad is not None:
        raise DataDirError(f"file {data}/utt2spk is not in sorted order or has duplicates "
                           f"(first bad key: {bad}); run utils/fix_data_dir.sh {data}")
    if per_utt:
        groups = [[u] for u in utt2spk]
        if len(groups) < num_split:
            raise DataDirError(f"{data}/utt2spk: {len(groups)} utterances cannot be split "
                               f"{num_split} ways (use fewer jobs)")
        # equal numbers of lines, the first (total mod N) parts one longer, as split_scp.pl does
        q, r = divmod(len(groups), num_split)
        starts = [k * q + min(k, r) for k in range(num_split)] + [len(groups)]
    else:
        # speakers in order of first appearance (split_scp.pl's order): with speaker-prefixed
        # utt-ids that is the sorted order
        groups = list(utt2spk_to_spk2utt(utt2spk.items(), sort=False).values())
        if len(groups) < num_split:
            raise DataDirError(f"{data}/utt2spk: refusing to split data because number of "
                               f"speakers {len(groups)} is less than the number of parts "
                               f"{num_split} (use --nj {len(groups)} or fewer, or --per-utt)")
        cut = partition_counts if balanced else kaldi_partition
        starts = cut([len(g) for g in groups], num_split) + [len(groups)]
    parts = [[u for g in groups[starts[n]:starts[n + 1]] for u in g] for n in range(num_split)]
    filter_data_dir_parts(data, [out / str(n + 1) for n in range(num_split)], parts)
    return out, True
