"""egs/harbour/s5/local/plot_ladder.py: the ladder's WERs with intervals read from RESULTS.md's
table of the run in exp/ (what local/make_results.py writes), drawn as a chart."""
import importlib.util
import sys

import pytest

from helpers import ROOT, run_script

RECIPE = ROOT / "egs" / "harbour" / "s5"
SCRIPT = RECIPE / "local" / "plot_ladder.py"

TABLE = """\
# egs/harbour/s5 results

## Calibration runs

| run | mono wp |
| ---: | ---: |
| 1 | 90.59 [85.29, 95.03] |

## The run in exp/

| system | grammar | %WER [95% interval] (errors/words) | best wer_LMWT_WIP | notes |
| --- | --- | ---: | --- | --- |
| monophone GMM (`mono`, 1000 Gaussians) | word-pair grammar (`wp`) | 18.77 [17.18, 20.49] \
(2063/10993) | wer_9_0.5 | acwt 0.083333 |
| monophone GMM (`mono`, 1000 Gaussians) | trigram (`tg`) | 15.81 [14.51, 17.19] (1738/10993) \
| wer_14_0.0 | acwt 0.083333 |
| DNN (`dnn_fmllr_rbm_w2`, 2 x 512) on tri3's alignments | word-pair grammar (`wp`) | \
1.13 [0.80, 1.51] (124/10993) | wer_6_1.0 | acwt 0.1 |

| difference | grammar | %WER difference [95% interval] | MAPSSWE p | verdict |
| --- | --- | ---: | ---: | --- |
| `tri1` - `mono` | word-pair grammar (`wp`) | -9.65 [-10.9, -8.4] | <0.001 | better |
"""


@pytest.fixture
def plot_ladder(monkeypatch):
    monkeypatch.syspath_prepend(str(RECIPE / "local"))
    spec = importlib.util.spec_from_file_location("plot_ladder", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["plot_ladder"] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("plot_ladder", None)


def test_ladder_reads_the_system_table_only(plot_ladder):
    pts = plot_ladder.ladder(TABLE.splitlines())
    assert [(p.system, p.lm, p.wer, p.low, p.high) for p in pts] == [
        ("mono", "wp", 18.77, 17.18, 20.49), ("mono", "tg", 15.81, 14.51, 17.19),
        ("dnn_fmllr_rbm_w2", "wp", 1.13, 0.80, 1.51)]


def test_the_committed_results_give_the_whole_ladder(plot_ladder):
    pts = plot_ladder.ladder((RECIPE / "RESULTS.md").read_text().splitlines())
    systems = list(dict.fromkeys(p.system for p in pts))
    assert systems[:4] == ["mono", "tri1", "tri2", "tri3"] and len(systems) > 4
    assert all(p.low <= p.wer <= p.high for p in pts)
    assert {p.lm for p in pts} == {"wp", "tg"}


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                    reason="matplotlib (the bench extra)")
def test_script_draws_and_bad_input_is_one_line(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text(TABLE)
    out = tmp_path / "img" / "ladder.png"
    p = run_script([sys.executable, SCRIPT, "--prog", "plot_ladder.py", "--results", results,
                    "--out", out])
    assert p.returncode == 0, p.stderr
    assert "plot_ladder.py: wrote" in p.stdout and "(3 WERs of 2 systems)" in p.stdout
    assert out.read_bytes().startswith(b"\x89PNG") and not list(out.parent.glob("*.tmp"))
    results.write_text("# nothing\n")
    p = run_script([sys.executable, SCRIPT, "--prog", "plot_ladder.py", "--results", results,
                    "--out", tmp_path / "x.png"])
    assert p.returncode == 1 and not (tmp_path / "x.png").exists()
    assert p.stderr.strip().splitlines()[-1].startswith(f"plot_ladder.py: {results}: no system "
                                                        f"rows")
