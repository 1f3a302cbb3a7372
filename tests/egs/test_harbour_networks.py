"""egs/harbour/s5's recurrent networks over MPI (issue 19): run.sh --stage 10 --stop-stage 11
--dnn-type blstm --rnn-num-workers 2 trains a tiny BLSTM in CSC-BPTT chunks with BMUF over two
ranks and decodes it in chunks, on a stand-in for the recipe's inputs (the Kaldi yesno model's
alignments and graph as exp/mono_ali and exp/mono/graph_wp, --dnn-input mfcc)."""
import re
import shutil

import pytest
from helpers import ROOT, link_recipe, run_script, yesno_recipe

from nnetmix.nnet import BlstmProjected, read_nnet

RECIPE = ROOT / "egs" / "harbour" / "s5"


@pytest.mark.slow
def test_stage_10_trains_a_blstm_with_bmuf_over_two_workers(kaldi_fixtures, tmp_path):
    yes = tmp_path / "yes"
    yes.mkdir()
    mono = yesno_recipe(yes, kaldi_fixtures, num_utts=20, noise=0.5)
    s5 = link_recipe(RECIPE, tmp_path)
    for d in ("train", "test"):
        shutil.copytree(yes / "data", s5 / "data" / d)
    shutil.copytree(yes / "lang", s5 / "data" / "lang")
    shutil.copytree(mono, s5 / "exp" / "mono_ali", ignore=shutil.ignore_patterns("graph"))
    shutil.copytree(mono / "graph", s5 / "exp" / "mono" / "graph_wp")
    p = run_script(["./run.sh", "--stage", "10", "--stop-stage", "11", "--nj", "1",
                    "--dnn-input", "mfcc", "--lms", "wp", "--dnn-type", "blstm",
                    "--rnn-num-workers", "2", "--dnn-average-every", "2",
                    "--rnn-layers", "1", "--rnn-cell-dim", "8", "--rnn-proj-dim", "4",
                    "--rnn-learn-rate", "0.01",
                    "--rnn-train-opts", "--num-streams=4 --chunk-size=32 "
                    "--chunk-left-context=8 --chunk-right-context=8",
                    "--rnn-decode-opts", "--chunk-size 32 --chunk-left-context 8 "
                    "--chunk-right-context 8 --chunk-overlap 16",
                    "--dnn-opts", "--bmuf true --max-iters 2", "--dnn-tag", "bmuf"],
                   cwd=s5, timeout=900)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    exp = s5 / "exp" / "dnn_blstm1x8_w2_bmuf"
    assert "Stage 10: blstm training on exp/mono_ali, 2 MPI worker(s)" in p.stdout
    assert "2 MPI workers per epoch (BMUF every 2 minibatches)" in p.stdout
    assert isinstance(read_nnet(str(exp / "final.nnet")).components[0], BlstmProjected)
    options = (s5 / "exp" / "options").read_text()
    assert "rnn_num_workers=2\n" in options and "dnn_tag=bmuf\n" in options
    assert (exp / "stage_options" / "11").read_text() == options
    for rank in (0, 1):     # both ranks trained CSC chunks in perutt mode
        log = (exp / "log" / f"iter01.tr.rank{rank}.log").read_text()
        assert "(up to 4 chunks 8-32+8); no state crosses a step" in log, log[-2000:]
        assert "BMUF block momentum 0.5" in log and re.search(r"CSC-BPTT 8-32\+8: \d utterances", log)
    sched = (exp / "log" / "train_scheduler.log").read_text()
    assert len(re.findall(r"FRAME_ACCURACY tr [\d.]+% cv [\d.]+%", sched)) >= 1, sched[-2000:]
    dec = exp / "decode_test_wp"
    assert "Forwarding in chunks of 32 frames" in (dec / "log" / "decode.1.log").read_text()
    assert list(dec.glob("wer_*"))
