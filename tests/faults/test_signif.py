"""compare-wer.py on bad input: one ERROR line naming the file and the key, exit 1, no JSON."""
import pytest

from helpers import load_bin, write_lines

compare_wer_bin = load_bin("compare-wer.py")

REF = ["u1 a b c", "u2 d e", "u3 f g h"]
HYP = ["u1 a b c", "u2 d x", "u3 f g"]


@pytest.fixture
def d(tmp_path):
    write_lines(tmp_path / "ref", REF)
    write_lines(tmp_path / "a", HYP)
    write_lines(tmp_path / "b", REF)
    return tmp_path


def _fails(capsys, d, *argv):
    """Run the tool; return its one ERROR line (and check nothing else went wrong)."""
    rc = compare_wer_bin.main(["--print-args=false", f"--write-json={d / 'out.json'}", *argv])
    out, err = capsys.readouterr()
    assert rc == 1 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ERROR (compare-wer.py["), err
    assert not (d / "out.json").exists()
    return lines[0]


def test_hypothesis_missing_an_utterance(d, capsys):
    write_lines(d / "b", REF[:2])
    line = _fails(capsys, d, f"ark:{d / 'ref'}", f"ark:{d / 'a'}", f"ark:{d / 'b'}")
    assert line.endswith(f"ark:{d / 'b'}: no hypothesis for utterance u3 of the reference "
                         f"ark:{d / 'ref'} (use --mode=all to count it as empty)")


def test_hypothesis_with_an_utterance_the_reference_lacks(d, capsys):
    write_lines(d / "a", HYP + ["u9 z"])
    line = _fails(capsys, d, f"ark:{d / 'ref'}", f"ark:{d / 'a'}", f"ark:{d / 'b'}")
    assert line.endswith(f"ark:{d / 'a'}: utterance u9 is not in the reference ark:{d / 'ref'} "
                         "(the two systems must be scored on the same test set)")


def test_missing_reference_file(d, capsys):
    line = _fails(capsys, d, f"ark:{d / 'nope'}", f"ark:{d / 'a'}", f"ark:{d / 'b'}")
    assert line.endswith(f"cannot open {d / 'nope'}: No such file or directory")


def test_decode_dirs_with_different_references(d, capsys):
    for name, ref in (("x", REF), ("y", REF[:2] + ["u3 f g i"])):
        s = d / name / "scoring"
        s.mkdir(parents=True)
        write_lines(s / "test_filt.txt", ref)
        write_lines(s / "7.0.0.tra.filt", HYP)
        write_lines(d / name / "wer_7_0.0", ["%WER 28.57 [ 2 / 7, 0 ins, 1 del, 1 sub ]"])
    line = _fails(capsys, d, "--decode-dirs=true", str(d / "x"), str(d / "y"))
    assert line.endswith(f"{d / 'y/scoring/test_filt.txt'}: utterance u3 differs from "
                         f"{d / 'x/scoring/test_filt.txt'} (the two directories were scored "
                         "against different references)")
    line = _fails(capsys, d, "--decode-dirs=true", str(d / "x"), str(d))
    assert line.endswith(f"{d}: no wer_LMWT_WIP files with a %WER line (run local/score.sh "
                         "first)")
    (d / "x" / "scoring" / "7.0.0.tra.filt").unlink()
    line = _fails(capsys, d, "--decode-dirs=true", str(d / "x"), str(d / "y"))
    assert f"best is {d / 'x/wer_7_0.0'} but no such file {d / 'x/scoring/7.0.0.tra.filt'}" in line


@pytest.mark.parametrize("opt,msg", [
    ("--alpha=1.5", "--alpha must be between 0 and 1, got 1.5"),
    ("--segmentation=words", "--segmentation=words: expected sclite or utterance"),
    ("--mode=present", "--mode=present: expected strict or all"),
    ("--num-bootstrap=0", "--num-bootstrap must be at least 1, got 0"),
    ("--min-good=0", "--min-good must be at least 1, got 0"),
    ("--names=one", "--names=one: expected two names, e.g. --names=mono,dnn"),
])
def test_bad_options(d, capsys, opt, msg):
    line = _fails(capsys, d, opt, f"ark:{d / 'ref'}", f"ark:{d / 'a'}", f"ark:{d / 'b'}")
    assert line.endswith(msg)
