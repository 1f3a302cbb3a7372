"""bin/nnet-train-mpi.py --stream-mode=perutt: a BLSTM trained on whole utterances or CSC-BPTT
chunks on every rank, mixed by model averaging or BMUF (a block counted in steps of chunks). On
one rank it is nnet-train-multistream-perutt.py; over two ranks the BLSTM learns the look-ahead
task (tests/train/test_perutt_csc.py's, which a past-only LSTM cannot learn)."""
import dataclasses
import sys

import numpy as np
import pytest
from helpers import (ROOT, load_bin, memory_blstm, memory_lstm, memory_utts, mpi_env, mpiexec,
                     run_mpi, run_mpiexec, tiny_net, write_data)

from nnetmix.cli.streams import mpi_stream_options
from nnetmix.nnet import NnetTrainOptions, read_nnet
from nnetmix.train import (PerUttOptions, StreamOptions, TrainOptions, parse_report,
                           train_streams_epoch)
from nnetmix.train.data import read_utterances

PERUTT = ROOT / "bin" / "nnet-train-multistream-perutt.py"
#: the label is the sign of the input 3 frames ahead
AHEAD = -3
CSC = ["--stream-mode=perutt", "--num-streams=8", "--chunk-size=10", "--chunk-left-context=4",
       "--chunk-right-context=4", "--randomizer-size=512"]
TRAIN = ["--learn-rate=0.01", "--momentum=0.5"]


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("ptrain_csc")
    rng = np.random.default_rng(1)
    tr = write_data(d, memory_utts(rng, 150, k=AHEAD), "tr")
    cv = write_data(d, memory_utts(rng, 30, k=AHEAD), "cv")
    init = d / "blstm.init"
    memory_blstm().write(str(init))
    return d, tr, cv, init


def _data(data):
    return [f"--utt2num-frames={data['u2nf']}", data["feats"], data["targets"]]


def _first_error(p) -> str:
    errs = [ln for ln in p.stderr.splitlines() if ln.startswith("ERROR")]
    assert p.returncode != 0 and errs, p.stderr
    return errs[0]


@pytest.mark.parametrize("mode", [["--stream-mode=perutt", "--num-streams=4"], CSC,
                                  ["--stream-mode=perutt"]],
                         ids=["perutt", "csc", "perutt-default-streams"])
def test_one_rank_is_nnet_train_multistream_perutt_bit_exact(task, mode):
    """At N = 1 the MPI tool's source is the perutt tool's (same seed, same utterance order),
    the agreed step count is the pass's own and the mixes are no-ops: the same model bytes and
    the same AvgLoss/FRAME_ACCURACY lines (both under mpiexec -n 1). Without --num-streams
    both take the perutt tool's default, 20."""
    d, tr, _, init = task
    tag = "-".join(m.strip("-=") for m in mode[-1:] + mode[:1])
    p, _ = run_mpi(1, [*TRAIN, *mode, "--average-every=3", *_data(tr), init, d / f"{tag}.mpi"])
    assert p.returncode == 0, p.stderr
    q = run_mpiexec([mpiexec(), "-n", "1", sys.executable, str(PERUTT), *TRAIN,
                        *[m for m in mode if not m.startswith("--stream-mode")],
                        tr["feats"], tr["targets"], str(init), str(d / f"{tag}.perutt")],
                       env=mpi_env(), timeout=120)
    assert q.returncode == 0, q.stderr
    assert (d / f"{tag}.mpi").read_bytes() == (d / f"{tag}.perutt").read_bytes()
    assert (d / f"{tag}.mpi").read_bytes() != init.read_bytes()
    for key in ("AvgLoss:", "FRAME_ACCURACY >>"):
        a = [ln[ln.index(key):] for ln in p.stderr.splitlines() if key in ln]
        b = [ln[ln.index(key):] for ln in q.stderr.splitlines() if key in ln]
        assert len(a) == 1 and a == b
    step = ("up to 8 chunks 4-10+4" if mode is CSC else
            "up to 4 utterances" if "--num-streams=4" in mode else "up to 20 utterances")
    assert f"one multi-stream step ({step})" in p.stderr


@pytest.mark.parametrize("argv, mode, streams", [
    ([], StreamOptions, 4), (["--stream-mode=perutt"], PerUttOptions, 20),
    (["--stream-mode=perutt", "--num-streams=7"], PerUttOptions, 7),
    (["--num-streams=7"], StreamOptions, 7)])
def test_num_streams_default_follows_the_stream_mode(argv, mode, streams):
    """--num-streams=0 (the default) is the default of the tool --stream-mode names, Kaldi's 4
    for nnet-train-multistream and 20 for nnet-train-multistream-perutt; --help says so."""
    tool = load_bin("nnet-train-mpi.py")
    parser = tool.make_parser()
    opts, _ = parser.parse([*argv, "a", "b", "c"])
    got = mpi_stream_options(opts)
    assert type(got) is mode and got.num_streams == streams
    assert "0: the mode's tool's default, 4 for multistream, 20 for perutt" in \
        parser.format_usage().replace("\n", " ")


def test_per_utterance_options_need_the_perutt_mode(task):
    """A CSC option in the default (multistream) mode would be silently unused: refused, as is
    an unknown mode; no model is written."""
    d, tr, _, init = task
    p, _ = run_mpi(1, [*TRAIN, "--chunk-size=10", *_data(tr), init, d / "bad.nnet"])
    assert "--chunk-size: per-utterance/CSC-BPTT options, which need --stream-mode=perutt" \
        in _first_error(p)
    p, _ = run_mpi(1, [*TRAIN, "--stream-mode=csc", *_data(tr), init, d / "bad.nnet"])
    assert "--stream-mode must be one of multistream, perutt, got csc" in _first_error(p)
    assert not (d / "bad.nnet").exists()


@pytest.mark.slow
@pytest.mark.parametrize("tag,extra,least", [("ma", ["--average-every=3"], 95),
                                             ("bmuf", ["--average-every=3", "--bmuf=true"], 80)])
def test_two_ranks_csc_learn_the_look_ahead_task(task, tag, extra, least):
    """4 CSC-BPTT epochs at 2 ranks, mixing every 3 steps of 8 chunks (~20 s each): the training
    accuracy rises epoch by epoch and CV goes from chance to above 95% with model averaging
    (learning rate x 2), above 80% with BMUF (learning rate x 1 by default, so it is slower)."""
    d, tr, cv, init = task
    accs, model = [], init
    for e in range(1, 5):
        out = d / f"r2{tag}.{e}.nnet"
        p, _ = run_mpi(2, [*TRAIN, *CSC, f"--epoch={e}", *extra, *_data(tr), model, out],
                       timeout=180)
        assert p.returncode == 0, p.stderr
        assert p.stderr.count("AvgLoss:") == 1 and "MPI summary: 2 ranks" in p.stderr
        accs.append(parse_report(p.stderr)["frame_accuracy"])
        model = out
    cvs = []
    for m in (init, model):
        p, _ = run_mpi(2, ["--cross-validate=true", *CSC, *_data(cv), m])
        assert p.returncode == 0, p.stderr
        cvs.append(parse_report(p.stderr)["frame_accuracy"])
    assert all(b > a for a, b in zip(accs, accs[1:])), accs
    assert cvs[0] < 65 and cvs[1] > least, (accs, cvs)


@pytest.mark.parametrize("tool,opts,init", [
    ("nnet-train-multistream.py", StreamOptions(batch_size=10, num_streams=4), "lstm"),
    ("nnet-train-multistream.py", StreamOptions(batch_size=10, num_streams=4), "ff"),
    ("nnet-train-multistream-perutt.py",
     PerUttOptions(num_streams=8, chunk_size=10, chunk_left_context=4, chunk_right_context=4),
     "blstm")], ids=["multistream", "feed-forward", "csc"])
def test_the_one_worker_tools_are_the_stream_loop(task, tmp_path, tool, opts, init):
    """The single-worker tools run dnn_epoch (the MPI tool's epoch driver) on one worker: their
    model is byte for byte the stream loop's own (train_streams_epoch over the table, as
    multistream_epoch ran it before), a feed-forward network trained in streams too."""
    d, tr, _, _ = task
    nets = {"lstm": memory_lstm, "blstm": memory_blstm, "ff": lambda: tiny_net(
        np.random.default_rng(0), dim=1, hid=4, num_classes=2)}
    nets[init]().write(str(tmp_path / "init"))
    flags = [f"--{f.name.replace('_', '-')}={getattr(opts, f.name)}"
             for f in dataclasses.fields(opts)]
    rc = load_bin(tool).main([*TRAIN, *flags, tr["feats"], tr["targets"],
                              str(tmp_path / "init"), str(tmp_path / "tool.nnet")])
    assert rc == 0
    ref = read_nnet(str(tmp_path / "init"))
    train_streams_epoch(ref, read_utterances(tr["feats"], tr["targets"], "post"), TrainOptions(),
                        opts, NnetTrainOptions(learn_rate=0.01, momentum=0.5))
    ref.write(str(tmp_path / "ref.nnet"))
    assert (tmp_path / "tool.nnet").read_bytes() == (tmp_path / "ref.nnet").read_bytes()
    assert (tmp_path / "ref.nnet").read_bytes() != (tmp_path / "init").read_bytes()
