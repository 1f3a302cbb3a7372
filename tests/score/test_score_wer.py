"""bin/compute-wer.py and nnetmix.score.wer against hand-worked cases and Kaldi's recursion."""
import random

import pytest

from helpers import load_bin
from nnetmix.score import ScoreError, WerStats, compute_wer, edit_distance, format_wer

compute_wer_bin = load_bin("compute-wer.py")


def kaldi_levenshtein(ref, hyp):
    """A transcription of Kaldi's LevenshteinEditDistance (src/util/edit-distance-inl.h),
    tie-breaking included: (ins, del, sub)."""
    e = [(0, i, 0, i) for i in range(len(ref) + 1)]  # (ins, del, sub, total)
    for h in range(1, len(hyp) + 1):
        cur = [(e[0][0] + 1, e[0][1], e[0][2], e[0][3] + 1)]
        for r in range(1, len(ref) + 1):
            ins_err, del_err = e[r][3] + 1, cur[r - 1][3] + 1
            same = hyp[h - 1] == ref[r - 1]
            sub_err = e[r - 1][3] + (0 if same else 1)
            if sub_err < ins_err and sub_err < del_err:
                p = e[r - 1]
                cur.append((p[0], p[1], p[2] + (0 if same else 1), sub_err))
            elif del_err < ins_err:
                p = cur[r - 1]
                cur.append((p[0], p[1] + 1, p[2], del_err))
            else:
                p = e[r]
                cur.append((p[0] + 1, p[1], p[2], ins_err))
        e = cur
    return e[-1][:3]


def test_edit_distance_matches_kaldi_split():
    rng = random.Random(5)
    for _ in range(3000):
        ref = [rng.choice("abc") for _ in range(rng.randint(0, 7))]
        hyp = [rng.choice("abcd") for _ in range(rng.randint(0, 7))]
        assert edit_distance(ref, hyp) == kaldi_levenshtein(ref, hyp), (ref, hyp)


@pytest.mark.parametrize("ref,hyp,want", [
    ("a b c", "a b c", (0, 0, 0)),
    ("a b c", "a x b c", (1, 0, 0)),
    ("a b c", "a c", (0, 1, 0)),
    ("a b c", "a x c", (0, 0, 1)),
    ("a b c", "", (0, 3, 0)),
    ("", "a b", (2, 0, 0)),
    ("a b c d", "b c d e", (1, 1, 0)),
    ("a b", "c d e", (1, 0, 2)),
])
def test_edit_distance_hand_cases(ref, hyp, want):
    assert edit_distance(ref.split(), hyp.split()) == want


REF = "u1 a b c d\nu2 a b\nu3 x y z\nu4 p q\n"
HYP = "u1 a c d e\nu2 a b\nu4 p q r\n"


@pytest.fixture
def texts(tmp_path):
    (tmp_path / "ref").write_text(REF)
    (tmp_path / "hyp").write_text(HYP)
    return tmp_path


def _run(capsys, *argv):
    rc = compute_wer_bin.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_modes(texts, capsys):
    ref, hyp = f"ark:{texts / 'ref'}", f"ark,t:{texts / 'hyp'}"
    # present: u1 (1 ins 1 del), u2 ok, u4 (1 ins) -> 3 errors over 8 words; u3 skipped
    rc, out, _ = _run(capsys, "--text", "--mode=present", ref, hyp)
    assert rc == 0
    assert out == ("%WER 37.50 [ 3 / 8, 2 ins, 1 del, 0 sub ] [PARTIAL]\n"
                   "%SER 66.67 [ 2 / 3 ]\n"
                   "Scored 3 sentences, 1 not present in hyp.\n")
    # all: u3 counts as three deletions
    rc, out, _ = _run(capsys, "--mode=all", ref, hyp)
    assert out.splitlines() == ["%WER 54.55 [ 6 / 11, 2 ins, 4 del, 0 sub ] [PARTIAL]",
                                "%SER 75.00 [ 3 / 4 ]",
                                "Scored 4 sentences, 1 not present in hyp."]
    # strict (the default): an error naming the key, no traceback
    rc, out, err = _run(capsys, ref, hyp)
    assert rc == 1 and out == "" and "No hypothesis for key u3 and strict mode" in err
    assert "Traceback" not in err
    # complete hypotheses: no [PARTIAL]
    rc, out, _ = _run(capsys, ref, ref)
    assert out.splitlines()[0] == "%WER 0.00 [ 0 / 11, 0 ins, 0 del, 0 sub ]"
    rc, out, err = _run(capsys, "--mode=bogus", ref, hyp)
    assert rc == 1 and "--mode=bogus" in err


def test_empty_hypotheses_and_scp(texts, capsys):
    (texts / "empty").write_text("u1\nu2\nu3\nu4\n")
    rc, out, _ = _run(capsys, f"ark:{texts / 'ref'}", f"ark:{texts / 'empty'}")
    assert out.splitlines()[:2] == ["%WER 100.00 [ 11 / 11, 0 ins, 11 del, 0 sub ]",
                                    "%SER 100.00 [ 4 / 4 ]"]
    (texts / "h1").write_text("a b c d\n")
    (texts / "hyp.scp").write_text(f"u1 {texts / 'h1'}\n")
    rc, out, _ = _run(capsys, "--mode=present", f"ark:{texts / 'ref'}", f"scp:{texts / 'hyp.scp'}")
    assert out.splitlines()[0] == "%WER 0.00 [ 0 / 4, 0 ins, 0 del, 0 sub ] [PARTIAL]"
    rc, out, _ = _run(capsys, "--mode=present", f"ark:cat {texts / 'ref'} |",
                      f"ark:{texts / 'hyp'}")
    assert out.startswith("%WER 37.50 ")
    rc, out, err = _run(capsys, f"ark:{texts / 'ref'}")
    assert rc == 1 and "Usage: compute-wer.py" in err


def test_percent_is_kaldis():
    st = WerStats(num_words=997, word_errs=75, num_ins=10, num_del=20, num_sub=45, num_sent=100,
                  sent_errs=12)
    assert format_wer(st) == ["%WER 7.52 [ 75 / 997, 10 ins, 20 del, 45 sub ]",
                              "%SER 12.00 [ 12 / 100 ]",
                              "Scored 100 sentences, 0 not present in hyp."]
    assert format_wer(WerStats())[0] == "%WER -nan [ 0 / 0, 0 ins, 0 del, 0 sub ]"
    with pytest.raises(ScoreError):
        compute_wer([("u", ["a"])], {}, mode="strict")
