"""egs/fsdd/s5/run.sh end to end on a small subset of the real recordings (../shared/corpora/fsdd).

Stage 0 prepares the official split of the whole corpus; the test then keeps 3 speakers' takes
5-19 for training (450 utterances; takes 5-9 are the DNN's CV set) and takes 0-2 for testing
(90), and runs stages 1-7 with a
small randomly initialised DNN on one worker (4 epochs; scoring over LM weights 9-11), down to a
WER for the monophone GMM and the DNN.
"""
import os
import re

import pytest

from helpers import ROOT, link_recipe, read_lines, recipes_opt_in, run_script

RECIPE = ROOT / "egs" / "fsdd" / "s5"
FSDD = ROOT.parent / "shared" / "corpora" / "fsdd"
SPEAKERS = ("george", "jackson", "theo")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (FSDD / "recordings").is_dir(),
                       reason=f"{FSDD}/recordings is not there (the FSDD corpus, "
                              "../shared/corpora/fsdd; a user's clone has no ../shared)"),
]
WER = re.compile(r"%WER ([\d.]+) \[ (\d+) / (\d+)")


def keep(s5, data, takes, name):
    """Replace data/official/<data> by the utterances of SPEAKERS with a take in ``takes``."""
    d = s5 / "data" / "official"
    utts = [line.split()[0] for line in read_lines(d / data / "text")
            if line.split("_")[0] in SPEAKERS and int(line.split()[0].split("_")[2]) in takes]
    (s5 / f"{name}.list").write_text("\n".join(utts) + "\n")
    p = run_script(["utils/subset_data_dir.sh", "--utt-list", f"{name}.list", d / data,
                    d / f"{data}.sub"], cwd=s5)
    assert p.returncode == 0, p.stdout + p.stderr
    os.rename(d / data, d / f"{data}.all")
    os.rename(d / f"{data}.sub", d / data)
    return len(utts)


def best(decode_dir):
    rates = [WER.search(f.read_text()) for f in decode_dir.glob("wer_*")]
    return min((float(m.group(1)), int(m.group(3))) for m in rates if m)


@recipes_opt_in
def test_run_sh_end_to_end_on_a_subset(tmp_path):
    s5 = link_recipe(RECIPE, tmp_path)
    p = run_script(["./run.sh", "--fsdd-dir", FSDD, "--stop-stage", "0"], cwd=s5)
    assert p.returncode == 0, p.stdout + p.stderr
    assert keep(s5, "train", range(5, 20), "train") == 450
    assert keep(s5, "test", range(0, 3), "test") == 90
    # 4 DNN epochs (to its CV frame accuracy of 72-73%) and 3 LM weights in scoring keep it short
    p = run_script(["./run.sh", "--stage", "1", "--pretrain", "false", "--dnn-num-workers", "1",
                    "--dnn-hid-layers", "1", "--dnn-hid-dim", "64", "--dnn-opts", "--max-iters 4",
                    "--scoring-opts", "--min-lmwt 9 --max-lmwt 11 --word-ins-penalty 0.0"],
                   cwd=s5, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    exp = s5 / "exp" / "official"
    mono_wer, words = best(exp / "mono" / "decode_test")
    dnn_wer, dnn_words = best(exp / "dnn_rand_w1" / "decode_test")
    assert words == dnn_words == 90           # one word per utterance, every utterance decoded
    # chance is 90% (ten equally likely words); both systems are far from it on seen speakers
    assert mono_wer < 30 and dnn_wer < 50, (mono_wer, dnn_wer)
    assert sorted(os.listdir(exp / "stage_seconds")) == [str(n) for n in range(6)]
    assert sorted(os.listdir(exp / "dnn_rand_w1" / "stage_seconds")) == ["6", "7"]
    p = run_script([RECIPE / "local" / "make_results.py", "--exp", "exp", "--out",
                    "RESULTS.md"], cwd=s5)
    assert p.returncode == 0, p.stdout + p.stderr
    text = (s5 / "RESULTS.md").read_text()
    assert f"| monophone GMM (`mono`) | 3-4 | {mono_wer:.2f} (" in text
    assert f"| DNN (`dnn_rand_w1`) | 5-7 | {dnn_wer:.2f} (" in text
    assert "| 3 | monophone GMM + alignment |" in text
    # the DNN against the monophone on the same 90 utterances (compare-wer.py's tests)
    assert re.search(r"\| `dnn_rand_w1` - `mono` \| \d+ vs \d+ of 90 \| [+-]\d+\.\d\d \| \[", text)
    assert "Run at commit " in text and "unknown" not in (exp / "commit").read_text()
