"""fix_data_dir: sort, keep the intersection, back up, print Kaldi's count line."""
from __future__ import annotations

import random

from helpers import drop_line, keys, make_listing_data_dir, read_lines, run_script, write_lines

from nnetmix.data import fix_data_dir, validate_data_dir


def _break(d, seed=0):
    """Shuffle text, drop one utterance from feats, another from text and one speaker's cmvn."""
    utts = keys(d / "utt2spk")
    lines = read_lines(d / "text")
    random.Random(seed).shuffle(lines)
    write_lines(d / "text", lines + [lines[0]])  # unsorted and a duplicate
    drop_line(d / "feats.scp", utts[1])
    drop_line(d / "text", utts[-1])
    spk = keys(d / "cmvn.scp")[1]
    drop_line(d / "cmvn.scp", spk)
    lost = {utts[1], utts[-1]} | {u for u in utts if u.startswith(spk + "-")}
    return utts, lost


def test_fix_keeps_intersection_library(tmp_path):
    d = tmp_path / "train"
    make_listing_data_dir(d, num_spk=5, seed=2)
    utts, lost = _break(d)
    original_text = (d / "text").read_text()
    report = fix_data_dir(d)
    assert (report.kept, report.total) == (len(utts) - len(lost), len(utts))
    assert keys(d / "utt2spk") == [u for u in utts if u not in lost]
    for name in ("text", "feats.scp", "wav.scp", "utt2num_frames", "utt2dur"):
        assert keys(d / name) == keys(d / "utt2spk"), name
    assert len(keys(d / "spk2utt")) == 4 and keys(d / "cmvn.scp") == keys(d / "spk2utt")
    assert (d / ".backup" / "text").read_text() == original_text
    assert validate_data_dir(d) == []


def test_fix_script_prints_count(tmp_path):
    d = tmp_path / "train"
    make_listing_data_dir(d, num_spk=4, seed=5)
    utts, lost = _break(d, seed=1)
    proc = run_script(["fix_data_dir.sh", d])
    assert proc.returncode == 0, proc.stderr
    assert f"fix_data_dir.sh: kept {len(utts) - len(lost)} utterances out of {len(utts)}" in proc.stdout
    assert run_script(["validate_data_dir.sh", d]).returncode == 0
    proc = run_script(["fix_data_dir.sh", d])  # nothing left to fix
    assert f"fix_data_dir.sh: kept all {len(utts) - len(lost)} utterances." in proc.stdout


def test_fix_segments_drops_utterances_of_missing_recordings(tmp_path):
    d = tmp_path / "train"
    make_listing_data_dir(d, num_spk=3, segments=True, seed=4)
    reco = keys(d / "wav.scp")[0]
    drop_line(d / "wav.scp", reco)
    report = fix_data_dir(d)
    spk = reco.removesuffix("-rec")
    assert all(not u.startswith(spk) for u in keys(d / "utt2spk"))
    assert report.kept < report.total and validate_data_dir(d) == []


def test_fix_errors_are_one_line(tmp_path):
    d = tmp_path / "train"
    make_listing_data_dir(d, num_spk=2)
    write_lines(d / "feats.scp", ["nobody /x.ark:1"])
    proc = run_script(["fix_data_dir.sh", d])
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "no utterances remained" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert keys(d / "utt2spk")  # left as it was
    proc = run_script(["fix_data_dir.sh", tmp_path / "nowhere"])
    assert proc.returncode == 1 and "no such directory" in proc.stderr
