"""Reading and writing data-directory tables: C-locale order, atomic writes, named errors."""
from __future__ import annotations

import os
import subprocess

import pytest
from helpers import ROOT, make_listing_data_dir, run_script

from nnetmix.data import (c_sorted, first_unsorted_key, read_segments, read_spk2utt, read_table,
                          read_text, read_utt2num_frames, read_utt2spk, read_wav_scp,
                          spk2utt_to_utt2spk, utt2spk_to_spk2utt, write_table)
from nnetmix.errors import DataDirError


def test_c_locale_order_matches_sort():
    keys = ["b", "B", "a_1", "a-1", "a1", "a", "é", "z", "Z9", "a b"]
    expected = subprocess.run(["sort"], input="\n".join(keys) + "\n", capture_output=True,
                              text=True, env={**os.environ, "LC_ALL": "C"}).stdout.splitlines()
    assert c_sorted(keys) == expected
    assert first_unsorted_key(["a", "b", "b", "c"]) == "b"
    assert first_unsorted_key(["a", "B"]) == "B" and first_unsorted_key(["B", "a"]) is None


def test_write_is_sorted_atomic_and_round_trips(tmp_path):
    p = tmp_path / "wav.scp"
    table = {"u2": "sox in.sph -t wav - |", "U1": "/a b/x.wav", "u10": "/y.wav"}
    write_table(p, table)
    assert p.read_text() == "U1 /a b/x.wav\nu10 /y.wav\nu2 sox in.sph -t wav - |\n"
    assert read_wav_scp(p) == {"U1": "/a b/x.wav", "u10": "/y.wav", "u2": "sox in.sph -t wav - |"}
    assert sorted(os.listdir(tmp_path)) == ["wav.scp"]  # no temporary left behind


def test_readers_and_inversions(tmp_path):
    d = tmp_path / "train"
    u2s = make_listing_data_dir(d, num_spk=3, segments=True)
    assert read_utt2spk(d / "utt2spk") == u2s
    s2u = read_spk2utt(d / "spk2utt")
    assert utt2spk_to_spk2utt(u2s) == s2u and spk2utt_to_utt2spk(s2u) == u2s
    seg = read_segments(d / "segments")
    first = next(iter(seg.values()))
    assert first.recording == "spk000-rec" and 0 <= first.start < first.end
    assert all(v > 0 for v in read_utt2num_frames(d / "utt2num_frames").values())
    assert set(read_text(d / "text")) == set(u2s)


@pytest.mark.parametrize("content,reader,fragment", [
    ("a x\na y\n", read_table, "duplicate key a"),
    ("a x\n\nb y\n", read_table, ":2: empty line"),
    ("a\n", read_table, "key a has no value"),
    ("u1 s1 extra\n", read_utt2spk, "expected <utterance> <speaker>"),
    ("u1 r1 2.0 1.0\n", read_segments, "bad times for u1"),
    ("u1 r1 x 1.0\n", read_segments, "must be numbers"),
    ("u1 0\n", read_utt2num_frames, "bad num-frames for u1"),
])
def test_read_errors_name_file_and_line(tmp_path, content, reader, fragment):
    p = tmp_path / "f"
    p.write_text(content)
    with pytest.raises(DataDirError, match=fragment) as err:
        reader(p)
    assert str(p) in str(err.value)
    with pytest.raises(DataDirError, match="no such file"):
        reader(tmp_path / "missing")


def test_scripts_through_recipe_symlink(tmp_path):
    """A recipe reaches utils/ through a symlink and calls utils/<script> by relative path."""
    recipe = tmp_path / "s5"
    recipe.mkdir()
    (recipe / "utils").symlink_to(ROOT / "utils")
    make_listing_data_dir(recipe / "data" / "train", num_spk=2)
    env_proc = run_script(["utils/validate_data_dir.sh", "data/train"], cwd=recipe)
    assert env_proc.returncode == 0, env_proc.stderr
    assert env_proc.stdout == "utils/validate_data_dir.sh: Successfully validated " \
                              "data-directory data/train\n"
