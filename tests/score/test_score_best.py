"""utils/best_wer.sh and the lattice-free LM-weight sweep of local/score.sh."""
import pytest

from helpers import ROOT, run_script
from nnetmix.score import ScoreError, best_wer_line, score_sweep

LINES = [
    "exp/d/wer_10_0.0:%WER 7.52 [ 75 / 997, 10 ins, 20 del, 45 sub ]",
    "exp/d/wer_11_0.0:%WER 7.10 [ 71 / 997, 10 ins, 20 del, 41 sub ]",
    "exp/d/wer_12_0.5:%WER 7.10 [ 71 / 997, 11 ins, 20 del, 40 sub ]",
    "exp/d/wer_9_1.0:%WER 12.00 [ 120 / 997, 10 ins, 20 del, 90 sub ] [PARTIAL]",
]


def test_best_wer_picks_first_minimum():
    assert best_wer_line(LINES) == \
        "%WER 7.10 [ 71 / 997, 10 ins, 20 del, 41 sub ] exp/d/wer_11_0.0"
    assert best_wer_line(["no rates here"]) is None
    sclite = "exp/d/score_10/ctm.filt.sys:| Sum/Avg| 4459 42989 | 88.1 8.6 3.3 2.1 14.0 48.9 |"
    assert best_wer_line(LINES[:1] + [sclite]).startswith("%WER 7.52")
    best = best_wer_line(LINES[:1] + [sclite.replace("14.0", "5.0")])
    # as Kaldi's awk prints it: the part after Sum/Avg, then the part before
    assert best == "| 4459 42989 | 88.1 8.6 3.3 2.1 5.0 48.9 | exp/d/score_10/ctm.filt.sys:| "


def test_best_wer_script():
    p = run_script([ROOT / "utils/best_wer.sh"], input="\n".join(LINES) + "\n", check=True)
    assert p.stdout == "%WER 7.10 [ 71 / 997, 10 ins, 20 del, 41 sub ] exp/d/wer_11_0.0\n"
    p = run_script([ROOT / "utils/best_wer.sh"], input="", check=True)
    assert p.stdout == ""


def test_score_sweep(tmp_path):
    (tmp_path / "text").write_text("u1 ONE TWO\nu2 OH\nu3 FIVE FIVE SIX\n")
    decode = tmp_path / "decode"
    hyps = {(8, "0.0"): "u1 ONE\nu2 OH\nu3 FIVE SIX\n",          # 2 del
            (9, "0.0"): "u1 ONE TWO\nu2 OH\nu3 FIVE FIVE SIX\n",  # perfect
            (8, "0.5"): "u1 ONE TWO TWO\nu2\n",                     # u3 absent
            (9, "0.5"): "u1 ONE TWO\nu2 OH\nu3 FIVE FIVE SIX\n"}  # perfect, second
    for (lmwt, wip), text in hyps.items():
        p = decode / f"scoring_kaldi/penalty_{wip}/{lmwt}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    results, best = score_sweep(f"ark:{tmp_path / 'text'}", decode, [8, 9], ["0.0", "0.5"])
    assert len(results) == 4
    assert (decode / "wer_8_0.0").read_text().splitlines()[0] == \
        "%WER 33.33 [ 2 / 6, 0 ins, 2 del, 0 sub ]"
    assert (decode / "wer_8_0.5").read_text().splitlines()[0] == \
        "%WER 66.67 [ 2 / 3, 1 ins, 1 del, 0 sub ] [PARTIAL]"
    assert best == f"%WER 0.00 [ 0 / 6, 0 ins, 0 del, 0 sub ] {decode}/wer_9_0.0"
    assert (decode / "scoring_kaldi/best_wer").read_text() == best + "\n"
    p = run_script([ROOT / "bin/score-sweep.py", "--min-lmwt", "8", "--max-lmwt", "9",
                    "--word-ins-penalty", "0.0,0.5", tmp_path / "text", decode], cwd=ROOT, check=True)
    assert p.stdout.splitlines()[-1] == best
    with pytest.raises(ScoreError, match="no such file"):
        score_sweep(f"ark:{tmp_path / 'text'}", decode, [10], ["0.0"])
