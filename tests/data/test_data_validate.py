"""validate_data_dir: a valid directory passes; each broken invariant is one line naming file and key."""
from __future__ import annotations

import pytest
from helpers import drop_line, keys, make_listing_data_dir, read_lines, run_script, write_lines

from nnetmix.data import KeyListMismatch, ValidateOptions, validate_data_dir
from nnetmix.errors import DataDirError


def test_valid_dir_validates(tmp_path):
    d = tmp_path / "train"
    make_listing_data_dir(d)
    assert validate_data_dir(d) == []
    proc = run_script(["validate_data_dir.sh", d])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith(f"validate_data_dir.sh: Successfully validated "
                                        f"data-directory {d}")


def test_valid_dir_with_segments_validates(tmp_path):
    d = tmp_path / "train"
    make_listing_data_dir(d, segments=True, seed=3)
    assert validate_data_dir(d) == []


def test_single_speaker_is_a_warning(tmp_path):
    d = tmp_path / "one"
    make_listing_data_dir(d, num_spk=1)
    assert any("only one speaker" in w for w in validate_data_dir(d))
    proc = run_script(["validate_data_dir.sh", d])
    assert proc.returncode == 0
    assert "WARNING" in proc.stderr and "Successfully validated" in proc.stdout


def _swap_first_two(path):
    lines = read_lines(path)
    lines[0], lines[1] = lines[1], lines[0]
    write_lines(path, lines)
    return lines[1].split()[0]  # the first key out of order


def _duplicate(path):
    lines = read_lines(path)
    write_lines(path, lines[:3] + [lines[2]] + lines[3:])
    return lines[2].split()[0]


def _spk2utt_disagree(path):
    lines = read_lines(path.parent / "spk2utt")
    first = lines[0].split()
    moved = first.pop()  # last utterance of speaker 0 now belongs to nobody
    lines[0] = " ".join(first)
    write_lines(path.parent / "spk2utt", lines)
    return moved


def _drop_from_feats(path):
    key = keys(path)[4]
    drop_line(path, key)
    return key


def _missing_recording(path):
    wav = path.parent / "wav.scp"
    reco = keys(wav)[1]
    drop_line(wav, reco)
    return reco


def _empty_transcript(path):
    lines = read_lines(path)
    lines[2] = lines[2].split()[0]
    write_lines(path, lines)
    return lines[2]


CASES = [
    # (file to break, how, message fragment, segments?)
    ("text", _swap_first_two, "not sorted or has duplicates", False),
    ("utt2spk", _duplicate, "not sorted or has duplicates", False),
    ("feats.scp", _duplicate, "not sorted or has duplicates", False),
    ("utt2spk", _spk2utt_disagree, "does not match", False),
    ("feats.scp", _drop_from_feats, "utterance list differs from utt2spk", False),
    ("segments", _missing_recording, "is not in", True),
    ("text", _empty_transcript, "has no transcript", False),
]


@pytest.mark.parametrize("name,breaker,fragment,segments", CASES,
                         ids=[f"{c[0]}-{c[1].__name__.strip('_')}" for c in CASES])
def test_bad_dir_gives_one_line_naming_file_and_key(tmp_path, name, breaker, fragment, segments):
    d = tmp_path / "bad"
    make_listing_data_dir(d, segments=segments, seed=1)
    key = breaker(d / name)
    with pytest.raises(DataDirError) as err:
        validate_data_dir(d)
    assert fragment in str(err.value) and key in str(err.value)
    proc = run_script(["validate_data_dir.sh", d])
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr + proc.stdout
    first = proc.stderr.splitlines()[0]
    assert first.split(": ", 1)[0].endswith("validate_data_dir.sh")  # "$0: ..."
    assert fragment in first and key in first and "\n" not in str(err.value)
    assert "Successfully" not in proc.stdout


def test_unsorted_names_first_bad_key_and_fix(tmp_path):
    d = tmp_path / "train"
    make_listing_data_dir(d)
    bad = _swap_first_two(d / "text")
    proc = run_script(["validate_data_dir.sh", d])
    assert proc.stderr.splitlines()[0].endswith(
        f"validate_data_dir.sh: {d}/text: not sorted or has duplicates (first bad key: {bad}); "
        f"run utils/fix_data_dir.sh {d}")


def test_mismatch_prints_partial_diff_and_lengths(tmp_path):
    d = tmp_path / "train"
    utt2spk = make_listing_data_dir(d, num_spk=8, utts_per_spk=(4, 4))
    for k in list(utt2spk)[:20]:
        drop_line(d / "feats.scp", k)
    with pytest.raises(KeyListMismatch) as err:
        validate_data_dir(d)
    detail = err.value.detail
    assert detail[-1] == "[Lengths are utt2spk=32 versus feats.scp=12]"
    assert "..." in detail and len(detail) <= 15
    proc = run_script(["validate_data_dir.sh", d])
    assert proc.returncode == 1 and "[Lengths are utt2spk=32 versus feats.scp=12]" in proc.stderr
    assert f"first bad key: {list(utt2spk)[0]}" in proc.stderr.splitlines()[0]


@pytest.mark.parametrize("name,flag", [("text", "--no-text"), ("feats.scp", "--no-feats"),
                                       ("wav.scp", "--no-wav")])
def test_missing_file_needs_its_flag(tmp_path, name, flag):
    d = tmp_path / "train"
    make_listing_data_dir(d)
    (d / name).unlink()
    proc = run_script(["validate_data_dir.sh", d])
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[0].endswith(
        f"no such file {d}/{name} (if this is by design, specify {flag})")
    proc = run_script(["validate_data_dir.sh", flag, d])
    assert proc.returncode == 0, proc.stderr


def test_missing_spk2utt_and_bad_option(tmp_path):
    d = tmp_path / "train"
    make_listing_data_dir(d)
    (d / "spk2utt").unlink()
    proc = run_script(["validate_data_dir.sh", d])
    assert proc.returncode == 1 and f"no such file {d}/spk2utt" in proc.stderr
    assert "utt2spk_to_spk2utt.pl" in proc.stderr
    proc = run_script(["validate_data_dir.sh", "--no-such", d])
    assert proc.returncode == 1 and "invalid option --no-such" in proc.stderr
    assert "Usage:" in proc.stderr


def test_cmvn_must_cover_speakers_and_spk_sort(tmp_path):
    d = tmp_path / "train"
    make_listing_data_dir(d)
    spk = keys(d / "cmvn.scp")[2]
    drop_line(d / "cmvn.scp", spk)
    with pytest.raises(DataDirError, match=f"cmvn.scp: speaker list differs.*first bad key: {spk}"):
        validate_data_dir(d)
    # utterance ids that do not start with their speaker id break the speaker order
    d2 = tmp_path / "nospk"
    d2.mkdir()
    write_lines(d2 / "utt2spk", ["a1 s2", "b1 s1"])
    write_lines(d2 / "spk2utt", ["s1 b1", "s2 a1"])
    with pytest.raises(DataDirError, match="sorted first on speaker-id.*first bad key: b1"):
        validate_data_dir(d2, ValidateOptions(no_text=True, no_wav=True, no_feats=True))
    validate_data_dir(d2, ValidateOptions(no_text=True, no_wav=True, no_feats=True,
                                          no_spk_sort=True))


def test_text_checks(tmp_path):
    d = tmp_path / "train"
    make_listing_data_dir(d)
    lines = read_lines(d / "text")
    key = lines[1].split()[0]
    lines[1] = f"{key} hello </s> world"
    write_lines(d / "text", lines)
    with pytest.raises(DataDirError, match=f"reserved symbol </s>.*{key}"):
        validate_data_dir(d)
    lines[1] = f"{key} bad\x07bell"
    write_lines(d / "text", lines)
    with pytest.raises(DataDirError, match="non-printable.*--non-print"):
        validate_data_dir(d)
    validate_data_dir(d, ValidateOptions(non_print=True))
    # no final newline
    (d / "text").write_text("\n".join(lines).replace("\x07", ""))
    with pytest.raises(DataDirError, match="newline"):
        validate_data_dir(d)


def test_invalid_utf8_in_text(tmp_path):
    d = tmp_path / "train"
    make_listing_data_dir(d, num_spk=2)
    raw = (d / "text").read_bytes().split(b"\n")
    key = raw[1].split(b" ")[0].decode()
    raw[1] = raw[1] + b" caf\xe9"  # Latin-1, not UTF-8
    (d / "text").write_bytes(b"\n".join(raw))
    proc = run_script(["validate_data_dir.sh", d])
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"line of {key} is not valid UTF-8" in proc.stderr
    assert run_script(["validate_data_dir.sh", "--non-print", d]).returncode == 0
