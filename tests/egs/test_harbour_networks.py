"""egs/harbour/s5's recurrent networks over MPI (issue 19): local/run_blstm.sh (run.sh --stage 10
--stop-stage 11 --dnn-type blstm, with --rnn-num-workers 2 and model averaging or BMUF) trains
tiny BLSTMs in CSC-BPTT chunks and decodes them in chunks, on a stand-in for the recipe's inputs
(the Kaldi yesno model's alignments and graph as exp/mono_ali and exp/mono/graph_wp,
--dnn-input mfcc); and local/make_results.py's rows and comparisons of such networks."""
import importlib.util
import re
import shutil
import sys

import pytest
from helpers import ROOT, link_recipe, recipes_opt_in, run_script, yesno_recipe

from nnetmix.nnet import BlstmProjected, read_nnet

RECIPE = ROOT / "egs" / "harbour" / "s5"


def _load_make_results():
    """egs/harbour/s5/local/make_results.py under its own name (fsdd's recipe has one too); its
    ``local_script`` import is the repository's local/local_script.py either way."""
    sys.path.insert(0, str(RECIPE / "local"))
    spec = importlib.util.spec_from_file_location("harbour_make_results",
                                                  RECIPE / "local" / "make_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_results = _load_make_results()


#: local/run_blstm.sh's --run-opts for the stand-in: a toy BLSTM, 2 epochs
TINY = ("--nj 1 --dnn-input mfcc --lms wp --dnn-average-every 2 --rnn-layers 1 --rnn-cell-dim 8 "
        "--rnn-proj-dim 4 --rnn-learn-rate 0.001 --dnn-max-epochs 2")


@recipes_opt_in
def test_run_blstm_trains_one_worker_model_averaging_and_bmuf(kaldi_fixtures, tmp_path):
    """local/run_blstm.sh --workers 2 (~3 minutes): the BLSTM in CSC-BPTT 21-64+21 chunks on
    one worker, then over 2 MPI ranks with model averaging and with BMUF, each decoded in chunks;
    run again, it skips all three; make_results.py compares each 2-worker BLSTM with the
    1-worker one."""
    yes = tmp_path / "yes"
    yes.mkdir()
    mono = yesno_recipe(yes, kaldi_fixtures, num_utts=20, noise=0.5)
    s5 = link_recipe(RECIPE, tmp_path)
    for d in ("train", "test"):
        shutil.copytree(yes / "data", s5 / "data" / d)
    shutil.copytree(yes / "lang", s5 / "data" / "lang")
    shutil.copytree(mono, s5 / "exp" / "mono_ali", ignore=shutil.ignore_patterns("graph"))
    shutil.copytree(mono / "graph", s5 / "exp" / "mono" / "graph_wp")
    cmd = ["local/run_blstm.sh", "--workers", "2", "--results", "false", "--run-opts", TINY]
    p = run_script(cmd, cwd=s5, timeout=1500)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    exp = s5 / "exp"
    assert "Stage 10: blstm training on exp/mono_ali, 1 MPI worker(s)" in p.stdout
    assert "2 MPI workers per epoch (allreduce mixing every 2 minibatches)" in p.stdout
    assert "2 MPI workers per epoch (BMUF every 2 minibatches)" in p.stdout
    one, ma, bmuf = (exp / f"dnn_blstm1x8{s}" for s in ("", "_w2", "_w2_bmuf"))
    for d in (one, ma, bmuf):
        assert isinstance(read_nnet(str(d / "final.nnet")).components[0], BlstmProjected), d
        dec = d / "decode_test_wp"
        assert "Forwarding in chunks of 64 frames" in (dec / "log" / "decode.1.log").read_text()
        assert list(dec.glob("wer_*")) and (d / "stage_seconds" / "11").is_file()
    assert "nnet-train-multistream-perutt.py" in (one / "log" / "iter01.tr.log").read_text()
    # each run's own options, though all three wrote exp/options
    options = (exp / "options").read_text()
    assert "rnn_num_workers=2\n" in options and "dnn_tag=bmuf\n" in options
    assert (bmuf / "stage_options" / "11").read_text() == options
    ma_opts = (ma / "stage_options" / "10").read_text()
    assert "rnn_num_workers=2\n" in ma_opts and "dnn_tag=\n" in ma_opts
    for rank in (0, 1):     # both ranks trained CSC chunks in perutt mode
        log = (bmuf / "log" / f"iter01.tr.rank{rank}.log").read_text()
        assert "(up to 20 chunks 21-64+21); no state crosses a step" in log, log[-2000:]
        assert "BMUF block momentum 0.5" in log
        assert re.search(r"CSC-BPTT 21-64\+21: \d+ utterances", log)
        assert "learning rate 0.002 (x 2)" in (ma / "log" / f"iter01.tr.rank{rank}.log").read_text()
    # run again: nothing to do
    p = run_script(cmd, cwd=s5, timeout=300)
    assert p.returncode == 0 and p.stdout.count("is trained and decoded") == 3, p.stdout
    # RESULTS.md: each network's shape, chunks, workers and mixing, from its stage_options/10,
    # and each 2-worker BLSTM against the 1-worker one
    p = run_script([sys.executable, RECIPE / "local" / "make_results.py", "--out", "R.md",
                    "--calibration", "none.jsonl"], cwd=s5)
    assert p.returncode == 0, p.stderr
    text = (s5 / "R.md").read_text()
    assert ("| BLSTM (`dnn_blstm1x8_w2_bmuf`, 1 x 8+8 cells, projection 4; CSC-BPTT 21-64+21, "
            "2 workers, BMUF every 2 steps) on the monophone alignments and MFCCs | word-pair "
            "grammar (`wp`) |") in text
    for other in ("dnn_blstm1x8_w2", "dnn_blstm1x8_w2_bmuf"):
        assert f"| `{other}` - `dnn_blstm1x8` | word-pair grammar (`wp`) |" in text


def _stage10(d, **opts):
    (d / "stage_options").mkdir(parents=True)
    (d / "stage_options" / "10").write_text("".join(f"{k}={v}\n" for k, v in opts.items()))
    return d


def test_results_compare_each_network_with_its_baseline(tmp_path):
    """The default DNN is the sigmoid feed-forward one; a ReLU DNN or a one-worker BLSTM is
    compared with it, a BLSTM over N workers with the same BLSTM on one worker."""
    rbm = _stage10(tmp_path / "dnn_fmllr_rbm_w2", dnn_type="dnn", dnn_activation="sigmoid",
                   dnn_hid_layers=2, dnn_hid_dim=512, dnn_num_workers=2, dnn_average_every=10,
                   dnn_optimizer="ngsgd", dnn_opts="")
    relu = _stage10(tmp_path / "dnn_fmllr_relu_w2", dnn_type="dnn", dnn_activation="relu")
    blstm = _stage10(tmp_path / "dnn_fmllr_blstm2x256", dnn_type="blstm", rnn_layers=2,
                     rnn_cell_dim=256, rnn_proj_dim=128, rnn_num_workers=1,
                     rnn_train_opts="--chunk-size=64 --chunk-left-context=21 "
                     "--chunk-right-context=21")
    assert make_results.is_default_dnn(rbm) and not make_results.is_default_dnn(relu)
    assert not make_results.is_default_dnn(blstm)
    assert make_results.is_default_dnn(tmp_path / "no_options")     # runs before stage_options
    assert make_results.network_what("dnn_fmllr_rbm_w2", rbm) == (
        "DNN (`dnn_fmllr_rbm_w2`, 2 x 512 sigmoid; 2 workers, model averaging every 10 "
        "minibatches, ngsgd) on tri3's alignments and fMLLR features")
    assert make_results.network_what("dnn_fmllr_blstm2x256", blstm) == (
        "BLSTM (`dnn_fmllr_blstm2x256`, 2 x 256+256 cells, projection 128; CSC-BPTT 21-64+21, "
        "1 worker) on tri3's alignments and fMLLR features")
    nets = ["dnn_fmllr_blstm2x256", "dnn_fmllr_blstm2x256_w2", "dnn_fmllr_blstm2x256_w4_bmuf",
            "dnn_fmllr_rbm_w2", "dnn_fmllr_relu_w2", "dnn_fmllr_lstm2x256_w2"]
    base = {n: make_results.network_base(n, nets, "dnn_fmllr_rbm_w2") for n in nets}
    assert base == {"dnn_fmllr_blstm2x256": "dnn_fmllr_rbm_w2",
                    "dnn_fmllr_blstm2x256_w2": "dnn_fmllr_blstm2x256",
                    "dnn_fmllr_blstm2x256_w4_bmuf": "dnn_fmllr_blstm2x256",
                    "dnn_fmllr_rbm_w2": None, "dnn_fmllr_relu_w2": "dnn_fmllr_rbm_w2",
                    # no one-worker LSTM to compare with: the DNN
                    "dnn_fmllr_lstm2x256_w2": "dnn_fmllr_rbm_w2"}
