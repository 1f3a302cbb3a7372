"""egs/fsdd/s5/run.sh end to end on a small subset of the real recordings (../shared/corpora/fsdd).

Stage 0 prepares the official split of the whole corpus; the test then keeps 3 speakers' takes
5-19 for training (450 utterances; takes 5-9 are the DNN's CV set) and takes 0-2 for testing
(90), and runs stages 1-11: the monophone, tri1, tri2, tri3 (SAT, fMLLR) and a
small randomly initialised DNN on tri3's fMLLR features, one worker (4 epochs; scoring over LM
weights 9-11), down to a WER for each GMM and the DNN.
"""
import os
import re
import shutil

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
                   cwd=s5, timeout=3600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    exp = s5 / "exp" / "official"
    wers = {g: best(exp / g / "decode_test") for g in ("mono", "tri1", "tri2", "tri3")}
    dnn_wer, dnn_words = best(exp / "dnn_fmllr_rand_w1" / "decode_test")
    assert {w for _, w in wers.values()} == {dnn_words} == {90}   # one word each, all decoded
    # chance is 90% (ten equally likely words); every system is far from it on seen speakers
    assert max(w for w, _ in wers.values()) < 30 and dnn_wer < 50, (wers, dnn_wer)
    # tri3's decode: the speaker-independent first pass, then the test speakers' transforms,
    # which are the DNN's test features
    assert (exp / "tri3" / "decode_test.si").is_dir() and (exp / "tri3" / "decode_test" / "trans.1").is_file()
    assert len(read_lines(s5 / "data-fmllr-tri3" / "official" / "test" / "feats.scp")) == 90
    assert sorted(os.listdir(exp / "stage_seconds"), key=int) == [str(n) for n in range(10)]
    assert sorted(os.listdir(exp / "dnn_fmllr_rand_w1" / "stage_seconds")) == ["10", "11"]
    p = run_script([RECIPE / "local" / "make_results.py", "--exp", "exp", "--out",
                    "RESULTS.md"], cwd=s5)
    assert p.returncode == 0, p.stdout + p.stderr
    text = (s5 / "RESULTS.md").read_text()
    assert f"| monophone GMM (`mono`) | 3-4 | {wers['mono'][0]:.2f} (" in text
    assert f"| tri3, SAT (fMLLR) (`tri3`) | 7-8 | {wers['tri3'][0]:.2f} (" in text
    assert f"| DNN (`dnn_fmllr_rand_w1`) | 9-11 | {dnn_wer:.2f} (" in text
    assert "| 7 | tri3 (SAT) + fMLLR alignment |" in text
    # every system against the monophone, the DNN against the best GMM, on the same 90 utterances
    for sys in ("tri1", "tri2", "tri3", "dnn_fmllr_rand_w1"):
        assert re.search(rf"\| `{sys}` - `mono` \| \d+ vs \d+ of 90 \| [+-]\d+\.\d\d \| \[", text)
    assert re.search(r"\| `dnn_fmllr_rand_w1` - `(mono|tri\d)` \(best GMM\) \| \d+ vs \d+ of 90 \|", text)
    assert "Run at commit " in text and "unknown" not in (exp / "commit").read_text()
    # the split kept in the results store gives the same RESULTS.md without exp/
    p = run_script([RECIPE / "local" / "store_split.py", "official"], cwd=s5)
    assert p.returncode == 0, p.stdout + p.stderr
    shutil.rmtree(s5 / "exp")
    p = run_script([RECIPE / "local" / "make_results.py", "--out", "RESULTS.store.md"], cwd=s5)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (s5 / "RESULTS.store.md").read_text() == text
