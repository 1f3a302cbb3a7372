"""split_data: speakers whole, parts balanced (never worse than Kaldi's), each part valid."""
from __future__ import annotations

import itertools
import os
import random

import pytest
from helpers import keys, make_listing_data_dir, read_lines, run_script

from nnetmix.data import (partition_counts, read_utt2spk, split_data, validate_data_dir)
from nnetmix.errors import DataDirError


def kaldi_split(counts, n):
    """split_scp.pl --utt2spk as Kaldi does it: equal speakers per part, then neighbour moves."""
    parts = [[] for _ in range(n)]
    for i, c in enumerate(counts):
        parts[i * n // len(counts)].append(c)
    changed = True
    while changed:
        changed = False
        for k in range(n):
            if k < n - 1 and parts[k]:
                c, a, b = parts[k][-1], sum(parts[k]), sum(parts[k + 1])
                if abs((b + c) - (a - c)) < abs(b - a):
                    parts[k + 1].insert(0, parts[k].pop())
                    changed = True
            if k > 0 and parts[k]:
                c, a, b = parts[k][0], sum(parts[k - 1]), sum(parts[k])
                if abs((b - c) - (a + c)) < abs(b - a):
                    parts[k - 1].append(parts[k].pop(0))
                    changed = True
    return [sum(p) for p in parts]


def sizes(counts, starts):
    bounds = starts + [len(counts)]
    return [sum(counts[bounds[k]:bounds[k + 1]]) for k in range(len(starts))]


def best_max(counts, n):
    """Brute force: the smallest possible largest part over all contiguous cuts."""
    return min(max(sizes(counts, [0, *cuts]))
               for cuts in itertools.combinations(range(1, len(counts)), n - 1))


def test_partition_is_optimal_and_never_worse_than_kaldi():
    rng = random.Random(7)
    for _ in range(300):
        n_groups = rng.randint(1, 9)
        counts = [rng.choice([1, 2, 3, 5, 8, 40]) for _ in range(n_groups)]
        n = rng.randint(1, n_groups)
        starts = partition_counts(counts, n)
        got = sizes(counts, starts)
        assert len(got) == n and min(got) > 0 and sum(got) == sum(counts)
        assert max(got) == best_max(counts, n), (counts, n, got)
        assert max(got) <= max(kaldi_split(counts, n))
    with pytest.raises(ValueError):
        partition_counts([3, 4], 3)


def test_partition_large_is_quick_and_even():
    rng = random.Random(1)
    counts = [rng.randint(1, 300) for _ in range(3000)]
    got = sizes(counts, partition_counts(counts, 64))
    assert max(got) - min(got) <= 2 * max(counts)
    assert max(got) <= max(kaldi_split(counts, 64))


def test_split_data_library(tmp_path):
    d = tmp_path / "train"
    utt2spk = make_listing_data_dir(d, num_spk=11, utts_per_spk=(1, 9), seed=11, segments=True)
    out, written = split_data(d, 4)
    assert written and out == d / "split4"
    seen_utts, seen_spk = [], set()
    for k in range(1, 5):
        part = out / str(k)
        validate_data_dir(part)  # raises on any broken invariant (warnings allowed)
        part_u2s = read_utt2spk(part / "utt2spk")
        spks = set(part_u2s.values())
        assert not spks & seen_spk  # speakers whole
        assert all(utt2spk[u] == s for u, s in part_u2s.items())
        assert {u for u, s in utt2spk.items() if s in spks} == set(part_u2s)
        seen_spk |= spks
        seen_utts += list(part_u2s)
        assert keys(part / "cmvn.scp") == sorted(spks)
        assert keys(part / "feats.scp") == list(part_u2s)
        recos = {line.split()[1] for line in read_lines(part / "segments")}
        assert set(keys(part / "wav.scp")) == recos
    assert seen_utts == list(utt2spk)  # union (in order) equals the whole
    counts = [sum(1 for s in utt2spk.values() if s == spk) for spk in sorted(set(utt2spk.values()))]
    part_sizes = [len(keys(out / str(k) / "utt2spk")) for k in range(1, 5)]
    assert max(part_sizes) <= max(kaldi_split(counts, 4))


def test_split_data_script(tmp_path):
    d = tmp_path / "train"
    make_listing_data_dir(d, num_spk=6, seed=2)
    proc = run_script(["split_data.sh", d, "3"])
    assert proc.returncode == 0, proc.stderr
    for k in (1, 2, 3):
        assert run_script(["validate_data_dir.sh", d / "split3" / str(k)]).returncode == 0
    # up to date: skipped, files untouched
    stamp = os.stat(d / "split3" / "1" / "utt2spk").st_mtime_ns
    proc = run_script(["split_data.sh", d, "3"])
    assert proc.returncode == 0 and "up to date, skipping" in proc.stdout
    assert os.stat(d / "split3" / "1" / "utt2spk").st_mtime_ns == stamp
    # a newer source file makes it split again
    later = stamp + 5_000_000_000
    os.utime(d / "text", ns=(later, later))
    assert split_data(d, 3)[1] is True
    # more jobs than speakers: refused with one line
    proc = run_script(["split_data.sh", d, "7"])
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "6 speakers" in proc.stderr and len(proc.stderr.splitlines()) == 1
    with pytest.raises(DataDirError, match="--per-utt"):
        split_data(d, 7)


def test_split_per_utt(tmp_path):
    d = tmp_path / "train"
    utt2spk = make_listing_data_dir(d, num_spk=2, utts_per_spk=(5, 5), seed=3)
    proc = run_script(["split_data.sh", "--per-utt", d, "3"])
    assert proc.returncode == 0, proc.stderr
    parts = [keys(d / "split3utt" / str(k) / "utt2spk") for k in (1, 2, 3)]
    assert [len(p) for p in parts] == [4, 3, 3]
    assert sum(parts, []) == list(utt2spk)
    for k in (1, 2, 3):
        validate_data_dir(d / "split3utt" / str(k))
