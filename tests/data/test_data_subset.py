"""subset_data_dir modes and the train/CV split; every output is a valid data directory."""
from __future__ import annotations

import pytest
from helpers import keys, make_listing_data_dir, read_lines, run_script, write_lines

from nnetmix.data import (read_utt2dur, read_utt2spk, spread_subset, subset_data_dir,
                          subset_tr_cv, validate_data_dir)
from nnetmix.errors import DataDirError


@pytest.fixture
def src(tmp_path):
    d = tmp_path / "train"
    make_listing_data_dir(d, num_spk=10, utts_per_spk=(2, 7), seed=9)
    return d


def test_spread_subset_matches_subset_scp():
    items = [str(i) for i in range(10)]
    assert spread_subset(items, 10) == items
    assert spread_subset(items, 0) == []
    assert spread_subset(items, 3) == ["4", "6", "9"]  # worked by hand from subset_scp.pl
    picked = spread_subset(items, 5)
    assert picked == sorted(picked, key=int) and len(set(picked)) == 5
    assert spread_subset([str(i) for i in range(1000)], 10) == \
        spread_subset([str(i) for i in range(1000)], 10)  # deterministic


@pytest.mark.parametrize("mode", ["spread", "first", "last", "shortest", "speakers", "per-spk"])
def test_modes_library(src, tmp_path, mode):
    utts = list(read_utt2spk(src / "utt2spk"))
    dest = tmp_path / mode
    kept, total = subset_data_dir(src, dest, 2 if mode == "per-spk" else 12, mode=mode)
    got = keys(dest / "utt2spk")
    assert total == len(utts) and kept == len(got)
    validate_data_dir(dest)
    assert set(got) <= set(utts) and got == [u for u in utts if u in set(got)]
    if mode == "first":
        assert got == utts[:12]
    elif mode == "last":
        assert got == utts[-12:]
    elif mode == "shortest":
        dur = read_utt2dur(src / "utt2dur")
        assert max(dur[u] for u in got) <= min(dur[u] for u in utts if u not in got)
    elif mode == "speakers":
        u2s = read_utt2spk(src / "utt2spk")
        spks = {u2s[u] for u in got}
        assert kept >= 12 and got == [u for u in utts if u2s[u] in spks]  # whole speakers
        again = tmp_path / "again"
        subset_data_dir(src, again, 12, mode=mode)
        assert keys(again / "utt2spk") == got  # seeded
    elif mode == "per-spk":
        u2s = read_utt2spk(src / "utt2spk")
        for s in set(u2s.values()):
            assert len([u for u in got if u2s[u] == s]) == 2
    else:
        assert kept == 12 and got == spread_subset(utts, 12)


def test_lists_and_scripts(src, tmp_path):
    utts = keys(src / "utt2spk")
    spks = keys(src / "spk2utt")
    write_lines(tmp_path / "spk.list", spks[3:5])
    proc = run_script(["subset_data_dir.sh", "--spk-list", tmp_path / "spk.list", src,
                       tmp_path / "two_spk"])
    assert proc.returncode == 0, proc.stderr
    assert keys(tmp_path / "two_spk" / "spk2utt") == spks[3:5]
    assert keys(tmp_path / "two_spk" / "cmvn.scp") == spks[3:5]
    write_lines(tmp_path / "utt.list", utts[::3])
    proc = run_script(["subset_data_dir.sh", "--utt-list", tmp_path / "utt.list", src,
                       tmp_path / "every3"])
    assert proc.returncode == 0 and keys(tmp_path / "every3" / "text") == utts[::3]
    # Kaldi's order (--first <src> <n> <dest>) and the short one (--first <n> <src> <dest>)
    proc = run_script(["subset_data_dir.sh", "--first", src, "5", tmp_path / "k"])
    assert proc.returncode == 0 and f"reducing #utt from {len(utts)} to 5" in proc.stdout
    proc = run_script(["subset_data_dir.sh", "--last", "4", src, tmp_path / "s"])
    assert proc.returncode == 0 and keys(tmp_path / "s" / "feats.scp") == utts[-4:]
    for d in ("two_spk", "every3", "k", "s"):
        assert run_script(["validate_data_dir.sh", tmp_path / d]).returncode == 0
    proc = run_script(["subset_data_dir.sh", src, str(len(utts) + 1), tmp_path / "x"])
    assert proc.returncode == 1 and "cannot subset" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_script(["subset_data_dir.sh", "--first", "--last", src, "3", tmp_path / "x"])
    assert proc.returncode == 1 and "Usage" in proc.stderr


def test_subset_with_segments_keeps_used_recordings(tmp_path):
    d = tmp_path / "seg"
    make_listing_data_dir(d, num_spk=4, segments=True, seed=2)
    subset_data_dir(d, tmp_path / "sub", 3, mode="first")
    recos = {line.split()[1] for line in read_lines(tmp_path / "sub" / "segments")}
    assert set(keys(tmp_path / "sub" / "wav.scp")) == recos
    validate_data_dir(tmp_path / "sub")


def test_tr_cv_default_is_ten_percent_of_speakers(src, tmp_path):
    u2s = read_utt2spk(src / "utt2spk")
    tr, cv = tmp_path / "tr90", tmp_path / "cv10"
    n_tr, n_cv = subset_tr_cv(src, tr, cv)
    cv_spk, tr_spk = keys(cv / "spk2utt"), keys(tr / "spk2utt")
    assert len(cv_spk) == 1 and len(tr_spk) == 9 and not set(cv_spk) & set(tr_spk)
    assert n_tr + n_cv == len(u2s) and sorted(keys(tr / "utt2spk") + keys(cv / "utt2spk")) == \
        sorted(u2s)
    validate_data_dir(tr)
    validate_data_dir(cv)
    proc = run_script(["subset_data_dir_tr_cv.sh", src, tmp_path / "a", tmp_path / "b"])
    assert proc.returncode == 0, proc.stderr
    assert keys(tmp_path / "b" / "spk2utt") == cv_spk  # deterministic, same seed
    proc = run_script(["subset_data_dir_tr_cv.sh", "--cv-spk-percent", "30", "--seed", "1", src,
                       tmp_path / "c", tmp_path / "d"])
    assert proc.returncode == 0 and len(keys(tmp_path / "d" / "spk2utt")) == 3


def test_tr_cv_small_and_utt_percent(tmp_path):
    d = tmp_path / "small"
    make_listing_data_dir(d, num_spk=3, seed=1)
    subset_tr_cv(d, tmp_path / "tr", tmp_path / "cv")
    assert len(keys(tmp_path / "cv" / "spk2utt")) == 1  # at least one speaker
    utts = keys(d / "utt2spk")
    n_tr, n_cv = subset_tr_cv(d, tmp_path / "tr2", tmp_path / "cv2", cv_utt_percent=40)
    assert keys(tmp_path / "cv2" / "utt2spk") == utts[n_tr:]  # the last utterances
    assert not set(keys(tmp_path / "tr2" / "spk2utt")) & set(keys(tmp_path / "cv2" / "spk2utt"))
    one = tmp_path / "one"
    make_listing_data_dir(one, num_spk=1)
    with pytest.raises(DataDirError, match="at least 2"):
        subset_tr_cv(one, tmp_path / "t", tmp_path / "c")


def test_spk2utt_tools_round_trip(src, tmp_path):
    proc = run_script(["utt2spk_to_spk2utt.pl", src / "utt2spk"])
    assert proc.returncode == 0 and proc.stdout == (src / "spk2utt").read_text()
    proc = run_script(["spk2utt_to_utt2spk.pl"], input=(src / "spk2utt").read_text())
    assert proc.returncode == 0 and proc.stdout == (src / "utt2spk").read_text()
    proc = run_script(["utt2spk_to_spk2utt.pl"], input="u1 s1\nbroken line here\n")
    assert proc.returncode == 1 and "stdin:2" in proc.stderr and "Traceback" not in proc.stderr
