"""bin/compute-wer-bootci.py: Kaldi's bootstrap interval (mean +- 1.96 std of the drawn WERs)
and probability of improvement, on compare-wer.py's draws."""
import math

import numpy as np
import pytest

from helpers import load_bin
from nnetmix.score.bootci import boot_ci, utterance_errors


@pytest.fixture
def texts(tmp_path):
    (tmp_path / "ref").write_text("u1 a b c d\nu2 e f\nu3 g h i\nu4 j\n")
    (tmp_path / "hyp1").write_text("u1 a x c\nu2 e f\nu3 g h i j\nu4 k\n")
    (tmp_path / "hyp2").write_text("u1 a b c d\nu2 e f\nu3 g h i\n")
    return {k: f"ark:{tmp_path / k}" for k in ("ref", "hyp1", "hyp2")}


def reference(errors, words, replications, seed=0):
    """Kaldi's GetBootstrapWERInterval in float64, on numpy's draws as resample_sums makes them."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(words), size=(replications, len(words)))
    e, w = np.asarray(errors)[idx].sum(1), np.asarray(words)[idx].sum(1)
    wer = e / w
    mean = wer.mean()
    return 100 * mean, 100 * 1.96 * math.sqrt((wer ** 2).mean() - mean ** 2)


def test_utterance_errors_modes():
    refs = [("u1", ["a", "b"]), ("u2", ["c"])]
    hyps = [{"u1": ["a"], "u2": ["c"]}, {"u1": ["a", "b"]}]
    assert utterance_errors(refs, hyps, "all") == ([[1, 0], [0, 1]], [2, 1])
    assert utterance_errors(refs, hyps, "present") == ([[1], [0]], [2])
    with pytest.raises(Exception, match="no hypothesis for key u2 and strict mode"):
        utterance_errors(refs, hyps, "strict", ["ref", "h1", "h2"])


def test_boot_ci_matches_the_float64_reference():
    rng = np.random.default_rng(5)
    words = rng.integers(1, 20, 50)
    errors = rng.integers(0, 5, 50)
    ci = boot_ci([errors], words, 2000)
    mean, half = reference(errors, words, 2000)
    assert ci.means[0] == pytest.approx(mean, rel=1e-12)
    assert ci.halves[0] == pytest.approx(half, rel=1e-9)
    assert ci.p_improve is None


def test_compute_wer_bootci_one_and_two_systems(texts, capsys):
    tool = load_bin("compute-wer-bootci.py")
    assert tool.main(["--replications=500", texts["ref"], texts["hyp1"]]) == 0
    out = capsys.readouterr().out.splitlines()
    mean, half = reference([2, 0, 1, 1], [4, 2, 3, 1], 500)
    assert out == [f"Set1: %WER {mean:.2f} 95% Conf Interval [ {mean - half:.2f}, "
                   f"{mean + half:.2f} ]"]
    assert tool.main(["--mode=all", texts["ref"], texts["hyp1"], texts["hyp2"]]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and out[1].startswith("Set2: %WER ")
    # hyp2 lacks u4 (1 error in --mode=all, as hyp1's): set 2 has fewer errors unless the
    # 4 drawn utterances are all u2 or u4, so it improves in 1 - (1/2)^4 = 93.75% of draws
    p = float(out[2].split(": ")[1])
    assert out[2].startswith("Probability of Set2 improving Set1: ") and abs(p - 93.75) < 3


def test_compute_wer_bootci_errors(texts, tmp_path, capsys):
    tool = load_bin("compute-wer-bootci.py")
    assert tool.main([texts["ref"], texts["hyp1"], texts["hyp2"]]) == 1  # strict: u4 missing
    err = capsys.readouterr()
    lines = [line for line in err.err.splitlines() if line.startswith("ERROR")]
    assert len(lines) == 1 and "hyp2: no hypothesis for key u4" in lines[0] and err.out == ""
    assert tool.main(["--mode=some", texts["ref"], texts["hyp1"]]) == 1
    assert '--mode option invalid: expected "present"|"all"|"strict", got some' in \
        capsys.readouterr().err
    assert tool.main([f"ark:{tmp_path}/missing", texts["hyp1"]]) == 1
    assert "missing" in capsys.readouterr().err
