"""egs/swbd/s5's seed 002 networks (--dnn-type lstm|blstm with the --rnn-* options, --dnn-activation
relu): --help and the checks, the default DBLSTM's size against the seed's, and stages 12-14 run
with a tiny BLSTM trained in CSC-BPTT chunks on the Kaldi yesno model's alignments and graph
(given as --ali-dir/--graph-dir, as a Kaldi tri4 would be) and decoded in chunks."""
import re
import shutil
from pathlib import Path

import pytest
from helpers import ROOT, link_recipe, run_script, yesno_recipe

from nnetmix.nnet import BlstmProjected, Nnet, ParametricRelu, init_components, read_nnet

RECIPE = ROOT / "egs" / "swbd" / "s5"


def _help(tmp_path: Path) -> str:
    p = run_script(["./run.sh", "--help"], cwd=link_recipe(RECIPE, tmp_path))
    assert p.returncode == 0  # Kaldi prints --help to stderr
    return p.stderr


def _default(text: str, option: str) -> str:
    m = re.search(rf"^  --{option} +(\S.*?)  # ", text, re.M)
    assert m, option
    return m.group(1).strip('"')


def test_help_shows_seed_002_options_and_checks_them(tmp_path):
    text = _help(tmp_path)
    for option, default in (("dnn-type", "dnn"), ("dnn-activation", "sigmoid"),
                            ("rnn-layers", "5"), ("rnn-cell-dim", "256"),
                            ("rnn-train-opts",
                             "--chunk-size=64 --chunk-left-context=21 --chunk-right-context=21"),
                            ("rnn-decode-opts", "--chunk-size 64 --chunk-left-context 21 "
                             "--chunk-right-context 21 --chunk-overlap 32"),
                            ("dnn-hid-dim", "2048"), ("swbd-dir", "/export/corpora3/LDC/LDC97S62")):
        assert _default(text, option) == default, option
    assert "LDC97S62" in text and "--dnn-activation relu" in text   # the header comes first
    s5 = tmp_path / "s5"
    p = run_script(["./run.sh", "--dnn-type", "blstm", "--dnn-activation", "relu"], cwd=s5)
    assert p.returncode == 1 and "(relu with dnn only), got 'blstm' 'relu'" in p.stderr
    p = run_script(["./run.sh", "--dnn-type", "rnn"], cwd=s5)
    assert p.returncode == 1 and "--dnn-type must be dnn, lstm or blstm" in p.stderr


def _proto(tmp_path: Path, tool: str, opts: str, *dims) -> str:
    return run_script([tool, *opts.split(), *dims], cwd=tmp_path, check=True).stdout


def test_default_dblstm_is_seed_002s_size(tmp_path):
    """The --rnn-* defaults through the recipes' rnn_proto_opts and make-blstm-proto.py, on 40
    fbank inputs and seed 002's 9304 states: 5 <BlstmProjected> layers of 256 + 256 cells and
    "about 11 million" parameters (12.3M: the projection nnet1 adds; the seed gives none)."""
    text = _help(tmp_path)
    sets = " ".join(f"{o.replace('-', '_')}={_default(text, o)}"
                    for o in ("rnn-layers", "rnn-cell-dim", "rnn-proj-dim"))
    opts = run_script(["bash", "-c", f"{sets} dnn_type=blstm; . utils/recipe_options.sh; "
                       "rnn_proto_opts"], cwd=RECIPE, check=True).stdout.strip()
    assert opts == "--cell-dim=256 --proj-dim=256 --num-layers=5 --proj-dim-last=256"
    net = Nnet(init_components(_proto(tmp_path, "make-blstm-proto.py", opts, "40", "9304")))
    blstm = [c for c in net.components if isinstance(c, BlstmProjected)]
    assert len(blstm) == 5 and all(c.cell_dim == 256 for c in blstm)
    assert (net.input_dim, net.output_dim) == (40, 9304)
    assert 10e6 < net.num_params < 12.5e6, net.num_params


def test_relu_proto_opts_make_a_parametric_relu_dnn(tmp_path):
    """relu_proto_opts (both recipes' --dnn-activation relu) through make-nnet-proto.py: seed
    002's SWB+Fisher shape, 7 x 2048 <ParametricRelu> on 440 inputs (sized down here)."""
    opts = run_script(["bash", "-c", ". utils/recipe_options.sh; relu_proto_opts"], cwd=RECIPE,
                      check=True).stdout.strip()
    net = Nnet(init_components(_proto(tmp_path, "make-nnet-proto.py", opts, "44", "30", "7",
                                      "20")))
    assert sum(isinstance(c, ParametricRelu) for c in net.components) == 7


def _standin(tmp_path: Path, fixtures: Path) -> tuple[Path, list]:
    """A recipe directory whose stage 12-14 inputs are the yesno fixture's: its features as
    data/fbank/{train,eval2000} and train_nodup, its lang as data/lang_nosp; and the run.sh
    options that give its model, alignments and graph as a Kaldi tri4's."""
    yes = tmp_path / "yes"
    yes.mkdir()
    mono = yesno_recipe(yes, fixtures, num_utts=6, noise=0.5)
    s5 = link_recipe(RECIPE, tmp_path)
    for d in ("fbank/train", "fbank/eval2000", "train_nodup"):
        shutil.copytree(yes / "data", s5 / "data" / d)
    shutil.copytree(yes / "lang", s5 / "data" / "lang_nosp")
    return s5, ["--stage", "12", "--nj", "1", "--ali-dir", mono, "--graph-dir", mono / "graph",
                "--dnn-num-workers", "1", "--dnn-backend", "cpu", "--scoring-opts",
                "--min-lmwt 10 --max-lmwt 10"]


def _wer(decode_dir: Path) -> float:
    return float((decode_dir / "wer_10_0.0").read_text().split()[1])


@pytest.mark.slow
def test_stages_12_to_14_train_and_decode_a_tiny_blstm(kaldi_fixtures, tmp_path):
    """run.sh --stage 12 --dnn-type blstm with --rnn-* sizes of a toy and CSC-BPTT 8-32+8 on one
    worker, the yesno model's alignments and graph standing in for Kaldi's tri4 (~100 s): the
    BLSTM trains from train.sh's make-blstm-proto.py prototype, learns, and decodes eval2000 in
    chunks with the recipe's decoding options."""
    s5, opts = _standin(tmp_path, kaldi_fixtures)
    p = run_script(["./run.sh", *opts, "--dnn-type", "blstm", "--rnn-layers", "1",
                    "--rnn-cell-dim", "8", "--rnn-proj-dim", "4", "--rnn-learn-rate", "0.01",
                    "--rnn-train-opts", "--num-streams=8 --chunk-size=32 "
                    "--chunk-left-context=8 --chunk-right-context=8",
                    "--rnn-decode-opts", "--chunk-size 32 --chunk-left-context 8 "
                    "--chunk-right-context 8 --chunk-overlap 16",
                    "--dnn-opts", "--max-iters 3"], cwd=s5)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    exp = s5 / "exp" / "blstm1x8_w1"
    assert "no RBM pretraining (--pretrain true --dnn-type blstm" in p.stdout
    assert ("Stage 13: blstm training, 1 MPI workers, --cell-dim=8 --proj-dim=4 --num-layers=1 "
            "--proj-dim-last=4") in p.stdout
    final = read_nnet(str(exp / "final.nnet"))
    assert isinstance(final.components[0], BlstmProjected) and final.components[0].cell_dim == 8
    log = (exp / "log" / "iter01.tr.log").read_text()
    assert "nnet-train-multistream-perutt.py" in log and "--chunk-size=32" in log
    sched = (exp / "log" / "train_scheduler.log").read_text()
    prerun = float(re.search(r"CROSSVAL PRERUN AVG.LOSS [\d.]+ \(Xent\), FRAME_ACCURACY ([\d.]+)%",
                             sched).group(1))
    accs = [float(a) for a in re.findall(r"FRAME_ACCURACY tr [\d.]+% cv ([\d.]+)%", sched)]
    # learns: every epoch's CV accuracy above the untrained network's (the accuracy of the last
    # epochs on 3 yesno utterances goes up and down: the CV loss of the accepted models falls)
    assert len(accs) >= 2 and min(accs) > prerun + 20, (prerun, accs)
    dec = exp / "decode_eval2000_graph"
    assert "Forwarding in chunks of 32 frames" in (dec / "log" / "decode.1.log").read_text()
    wer = _wer(dec)
    assert wer < 50, wer
    print(f"\nswbd run.sh, tiny BLSTM on yesno: CV frame accuracy {prerun}% untrained, by epoch "
          f"{accs}; WER {wer}%")


@pytest.mark.slow
def test_stages_12_to_14_train_and_decode_a_relu_dnn(kaldi_fixtures, tmp_path):
    """run.sh --stage 12 --dnn-activation relu (seed 002's SWB+Fisher DNN, at a toy's size):
    no RBMs even with --pretrain true, a <ParametricRelu> network from relu_proto_opts on
    spliced features, trained and decoded (~1 min)."""
    s5, opts = _standin(tmp_path, kaldi_fixtures)
    p = run_script(["./run.sh", *opts, "--dnn-activation", "relu", "--dnn-hid-layers", "2",
                    "--dnn-hid-dim", "16", "--dnn-minibatch-size", "64", "--dnn-optimizer",
                    "sgd", "--dnn-learn-rate", "0.001", "--dnn-opts", "--max-iters 2"], cwd=s5)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    assert "no RBM pretraining (--pretrain true --dnn-type dnn --dnn-activation relu)" in p.stdout
    assert not (s5 / "exp" / "dnn2x16_pretrain").exists()
    exp = s5 / "exp" / "dnn2x16_relu_w1"
    final = read_nnet(str(exp / "final.nnet"))
    assert sum(isinstance(c, ParametricRelu) for c in final.components) == 2
    assert (exp / "decode_eval2000_graph" / "wer_10_0.0").exists()
