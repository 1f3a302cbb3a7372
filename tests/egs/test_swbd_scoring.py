"""Hub5 scoring of eval2000 with compute-wer (egs/swbd/s5/local/hub5_filter.py, score_eval2000.sh)."""
import os
import sys
from pathlib import Path

import pytest

from helpers import ROOT, run_script

RECIPE = ROOT / "egs" / "swbd" / "s5"
# the recipe's local/*.py modules import each other as run from local/ (sys.path[0])
sys.path[:0] = [str(Path(__file__).resolve().parent), str(RECIPE / "local")]
import swbd_standin  # noqa: E402
from conversations import CorpusError  # noqa: E402
from eval2000_data_prep import prepare_eval2000  # noqa: E402
from hub5_filter import hub5_filter, read_glm  # noqa: E402


@pytest.fixture
def glm(tmp_path):
    path = tmp_path / "test.glm"
    path.write_text(swbd_standin.EVAL2000_GLM + "GOTTA => GOT TO / [ ] __ [ A ]\n")
    return read_glm(path)


def test_read_glm(glm, tmp_path):
    assert glm.rules[("uh",)] == ("%hesitation",)
    assert glm.rules[("ok",)] == ("okay",)
    assert glm.rules[("i'm",)] == ("i'm",)            # alternation: its first spelling
    assert glm.rules[("gonna",)] == ("going", "to")
    assert glm.rules[("yeah",)] == ("yeah",)          # ";;" comment after a rule
    assert ("gotta",) not in glm.rules and glm.skipped == 1  # a rule with a context
    bad = tmp_path / "bad.glm"
    bad.write_text("* name 'x'\nUH %HESITATION\n")
    with pytest.raises(CorpusError, match=r"bad.glm:2: expected 'LHS => RHS"):
        read_glm(bad)


@pytest.mark.parametrize("words, expected", [
    ("oh yeah (%HESITATION) i'm", "oh yeah i'm"),                  # optionally deletable
    ("<B_ASIDE> um i don't know ok <E_ASIDE>", "i don't know okay"),  # asides, GLM
    ("it's (th-) fine", "it's fine"),
    ("{ OK / OKAY } then (A B) done", "okay then done"),           # stm alternation, group
    ("[noise] uh gonna th- <unk> [laughter-yeah] [vocalized-noise] mm !sil fine",
     "going to fine"),                                             # what Kaldi strips from CTMs
    ("", ""),
])
def test_hub5_filter(glm, words, expected):
    assert hub5_filter(words.split(), glm) == expected.split()


def link_recipe(tmp_path: Path) -> Path:
    s5 = tmp_path / "s5"
    s5.mkdir()
    for name in ("cmd.sh", "path.sh", "local", "steps", "utils", "bin", "conf"):
        os.symlink(RECIPE / name, s5 / name)
    return s5


def test_score_eval2000_per_subset(tmp_path):
    """local/score.sh sends eval2000 (it has an stm) to score_eval2000.sh; stages 1-2 on known
    best paths give the WER of the whole set and of its Switchboard and CallHome parts."""
    speech, trans = swbd_standin.make_eval2000(tmp_path / "ldc")
    s5 = link_recipe(tmp_path)
    prepare_eval2000(speech, trans, s5 / "data" / "eval2000")
    graph = s5 / "exp" / "graph"
    graph.mkdir(parents=True)
    (graph / "words.txt").write_text("<eps> 0\nokay 1\n")
    dec = s5 / "exp" / "decode"
    (dec / "scoring").mkdir(parents=True)
    (dec / "scoring" / "10.0.0.tra").write_text(
        "en_4156-A_000050-000185 oh yeah i'm\n"
        "en_4156-A_000191-000320 um i do not know ok\n"      # 1 sub, 1 ins
        "en_4156-B_000430-000595 it's fine [noise]\n"
        "sw_4390-A_000114-000250 uh right\n"
        "sw_4390-B_000060-000200 i think\n"                   # 1 del
        "sw_4390-B_000206-000330 okay\n")
    p = run_script(["local/score.sh", "--stage", "1", "--min-lmwt", "10", "--max-lmwt", "10",
                    "--word-ins-penalty", "0.0", "data/eval2000", "exp/graph", "exp/decode"], cwd=s5)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "using local/score_eval2000.sh" in p.stdout
    wer = {sub: (dec / sub / "wer_10_0.0").read_text() for sub in ("", "score_swbd", "score_callhm")}
    assert "%WER 21.43 [ 3 / 14, 1 ins, 1 del, 1 sub ]" in wer[""]
    assert "%WER 20.00 [ 1 / 5, 0 ins, 1 del, 0 sub ]" in wer["score_swbd"]
    assert "%WER 22.22 [ 2 / 9, 1 ins, 0 del, 1 sub ]" in wer["score_callhm"]
    assert "swbd: %WER 20.00" in p.stdout and "callhm: %WER 22.22" in p.stdout
    ref = (dec / "scoring_hub5" / "ref.txt").read_text().splitlines()
    assert ref[1] == "en_4156-A_000191-000320 i don't know okay"


def test_score_without_stm_goes_to_the_shared_scorer(tmp_path):
    s5 = link_recipe(tmp_path)
    (s5 / "data" / "train_dev").mkdir(parents=True)
    (s5 / "data" / "train_dev" / "text").write_text("u1 yeah\n")
    (s5 / "exp" / "graph").mkdir(parents=True)
    (s5 / "exp" / "graph" / "words.txt").write_text("<eps> 0\nyeah 1\n")
    (s5 / "exp" / "decode").mkdir()
    p = run_script(["local/score.sh", "data/train_dev", "exp/graph", "exp/decode"], cwd=s5)
    assert "does not exist: using the shared local/score.sh" in p.stdout
    assert p.returncode == 1 and "no lattices exp/decode/lat.*.gz" in p.stderr
    assert "--ignore-words [noise],[laughter],[vocalized-noise],<unk>,%hesitation" in p.stdout
