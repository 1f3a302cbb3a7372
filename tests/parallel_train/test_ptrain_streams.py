"""bin/nnet-train-mpi.py with a recurrent network: multi-stream steps on every rank, mixed by
model averaging or BMUF. On one rank it is nnet-train-multistream.py; over ranks the LSTM learns
the memory task (tests/train/test_multistream.py's), the ranks are one model after every mix
while each keeps its own LSTM state (ptrain_stream_checks.py), CV is summed over the ranks, and
the scheduler runs it as its --train-tool."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import (ROOT, memory_lstm, memory_utts, mpi_env, mpiexec, run_mpi, run_mpiexec,
                     write_data, tiny_net, write_tables)

from nnetmix.driver.batches import epoch_streams, stream_steps
from nnetmix.train import parse_report
from nnetmix.train.multistream import train_streams_epoch
from nnetmix.train.options import TrainOptions
from nnetmix.train.seqstreams import PerUttOptions
from nnetmix.train.streams import StreamOptions

HERE = Path(__file__).resolve().parent
MULTISTREAM = ROOT / "bin" / "nnet-train-multistream.py"
STREAMS = ["--batch-size=10", "--num-streams=4"]
TRAIN = ["--learn-rate=0.01", "--momentum=0.5", *STREAMS]


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("ptrain_streams")
    rng = np.random.default_rng(1)
    tr, cv = write_data(d, memory_utts(rng, 150), "tr"), write_data(d, memory_utts(rng, 30), "cv")
    init = d / "lstm.init"
    memory_lstm().write(str(init))
    return d, tr, cv, init


def _data(data):
    return [f"--utt2num-frames={data['u2nf']}", data["feats"], data["targets"]]


def _cv(n, data, model) -> dict:
    p, _ = run_mpi(n, ["--cross-validate=true", *STREAMS, *_data(data), model])
    assert p.returncode == 0, p.stderr
    return parse_report(p.stderr)


def test_the_agreed_steps_are_the_stream_batchers():
    """Lengths 4, 2, 5 in 2 streams of 3 frames take 3 steps (test_multistream.py's EXPECTED);
    dropped utterances (0 frames) take none; a feed-forward network gets no streams."""
    opts, tr = StreamOptions(batch_size=3, num_streams=2), TrainOptions()
    assert stream_steps([4, 2, 5], opts, tr, 1) == stream_steps([4, 0, 2, 5, 0], opts, tr, 1) == 3
    assert stream_steps([7], opts, tr, 1) == 3 and stream_steps([], opts, tr, 1) == 0
    assert epoch_streams(memory_lstm(), opts) is opts and epoch_streams(memory_lstm(), None) is None
    assert epoch_streams(tiny_net(np.random.default_rng(0)), opts) is None


@pytest.mark.parametrize("stream_opts", [
    StreamOptions(batch_size=7, num_streams=3),
    PerUttOptions(num_streams=3, max_frames=120, matrix_buffer_size=0.002),
    PerUttOptions(num_streams=4, chunk_size=8, chunk_left_context=2, chunk_right_context=2)],
    ids=["multistream", "perutt", "csc"])
def test_the_count_is_the_pass_for_every_stream_source(stream_opts):
    """For each source make_stream_source picks, the steps counted over the lengths alone are
    the steps a pass takes (utterances past --max-frames skipped in both)."""
    utts = memory_utts(np.random.default_rng(4), 13, min_len=20, max_len=50)
    utts += [("long", np.ones((130, 1), np.float32), np.ones(130, np.int32))]
    opts = TrainOptions(cross_validate=True, randomizer_seed=778)
    net = memory_lstm()
    st = train_streams_epoch(net, utts, opts, stream_opts)
    assert st.minibatches == stream_steps([len(u[2]) for u in utts], stream_opts, opts,
                                          net.input_dim) > 0


def test_one_rank_is_nnet_train_multistream_bit_exact(task):
    """At N = 1 the MPI tool reads the utterances in the table's order into the same streams,
    agrees on exactly the steps the streams take, scales the learning rate by 1 and its mixes are
    no-ops: the model file is byte-identical (both under mpiexec -n 1, as the frmshuff test)."""
    d, tr, _, init = task
    p, _ = run_mpi(1, [*TRAIN, "--average-every=5", *_data(tr), init, d / "mpi1.nnet"])
    assert p.returncode == 0, p.stderr
    q = run_mpiexec([mpiexec(), "-n", "1", sys.executable, str(MULTISTREAM), *TRAIN,
                        tr["feats"], tr["targets"], str(init), str(d / "ms.nnet")],
                       env=mpi_env(), timeout=120)
    assert q.returncode == 0, q.stderr
    assert (d / "mpi1.nnet").read_bytes() == (d / "ms.nnet").read_bytes()
    assert (d / "mpi1.nnet").read_bytes() != init.read_bytes()
    for key in ("AvgLoss:", "FRAME_ACCURACY >>"):
        a = [ln[ln.index(key):] for ln in p.stderr.splitlines() if key in ln]
        b = [ln[ln.index(key):] for ln in q.stderr.splitlines() if key in ln]
        assert len(a) == 1 and a == b
    assert ") Done 150 files, 0 with no tgt_mats" in p.stderr
    assert "one multi-stream step (4 streams x 10 frames)" in p.stderr
    assert "[TRAINING, NOT-RANDOMIZED," in p.stderr


def test_after_every_mix_the_ranks_are_one_model_with_their_own_lstm_state():
    """Model averaging and BMUF every 3 steps at 2 ranks: parameters bit-identical after each
    mix (and apart before it), the LSTM state per rank and untouched by the mix."""
    p = run_mpiexec([mpiexec(), "-n", "2", "--oversubscribe", sys.executable,
                        str(HERE / "ptrain_stream_checks.py")], cwd=ROOT, env=mpi_env(),
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "2 ranks: all stream checks passed (allreduce 13 mixes, bmuf 13 mixes)" in p.stdout


def test_cross_validation_over_ranks_is_one_process_cv(task):
    """Each rank evaluates its shard in streams (state reset per utterance), the statistics are
    summed: the same frames and loss as nnet-train-multistream.py over all the data."""
    d, _, cv, init = task
    a = _cv(2, cv, init)
    q = subprocess.run([sys.executable, str(MULTISTREAM), "--cross-validate=true", *STREAMS,
                        cv["feats"], cv["targets"], str(init)], env=mpi_env(), text=True,
                       capture_output=True, timeout=120)
    assert q.returncode == 0, q.stderr
    b = parse_report(q.stderr)
    assert a["avg_loss"] == pytest.approx(b["avg_loss"], rel=1e-5)
    assert a["frame_accuracy"] == pytest.approx(b["frame_accuracy"], abs=1e-3)


def _first_error(p) -> str:
    errs = [ln for ln in p.stderr.splitlines() if ln.startswith("ERROR")]
    assert p.returncode != 0 and errs, p.stderr
    return errs[0]


def test_bad_input_gives_an_error_line_and_no_model(task):
    """NG-SGD with an LSTM is refused; a rank with no usable frames (2 ranks, 2 utterances,
    one without targets) stops the job before any step."""
    d, tr, _, init = task
    p, _ = run_mpi(1, [*TRAIN, "--optimizer=ngsgd", *_data(tr), init, d / "ng.nnet"])
    assert "--optimizer=ngsgd is for feed-forward networks" in _first_error(p)
    two = memory_utts(np.random.default_rng(2), 2)
    feats, targets = write_tables(d, two, "two", drop_targets=(two[0][0],))
    p, _ = run_mpi(2, [*TRAIN, feats, targets, init, d / "one.nnet"])
    assert "fewer usable frames than one frame on some rank" in _first_error(p)
    assert not (d / "ng.nnet").exists() and not (d / "one.nnet").exists()


def _epochs(task, n, tag, extra, epochs):
    """``epochs`` epochs at ``n`` ranks; (training accuracies, CV accuracy before, after)."""
    d, tr, cv, init = task
    accs, model = [], init
    for e in range(1, epochs + 1):
        out = d / f"{tag}.{e}.nnet"
        p, _ = run_mpi(n, [*TRAIN, f"--epoch={e}", *extra, *_data(tr), model, out], timeout=180)
        assert p.returncode == 0, p.stderr
        assert p.stderr.count("AvgLoss:") == 1 and f"MPI summary: {n} ranks" in p.stderr
        accs.append(parse_report(p.stderr)["frame_accuracy"])
        model = out
    return accs, _cv(n, cv, init)["frame_accuracy"], _cv(n, cv, model)["frame_accuracy"]


@pytest.mark.slow
@pytest.mark.parametrize("tag,extra", [("ma", ["--average-every=5"]),
                                       ("bmuf", ["--average-every=5", "--bmuf=true"])])
def test_two_ranks_learn_the_memory_task(task, tag, extra):
    """4 epochs at 2 ranks (~50 s on 2 shared cores): the accuracy rises epoch by epoch, CV
    from chance to above 95% (a feed-forward net stays below 65%, test_multistream.py)."""
    accs, before, after = _epochs(task, 2, f"r2{tag}", extra, 4)
    assert all(b > a for a, b in zip(accs, accs[1:])), accs
    assert before < 60 and after > 95, (before, after)


@pytest.mark.slow
def test_four_ranks_bmuf_learns_the_memory_task(task):
    """4 oversubscribed ranks, BMUF blocks of 5 steps (~60 s): a quarter of the data per rank,
    so it learns slower, but it learns."""
    accs, before, after = _epochs(task, 4, "r4bmuf", ["--average-every=5", "--bmuf=true"], 4)
    assert all(b > a for a, b in zip(accs, accs[1:])), accs
    assert before < 60 and after > 75, (before, after)


@pytest.mark.slow
def test_the_scheduler_runs_it_over_two_ranks(task):
    """nnet-train-scheduler.py --train-cmd='utils/run.py --num-tasks 2'
    --train-tool='nnet-train-mpi.py --num-streams=4 ...' (~50 s): the epochs' losses come back
    through the result files and the model learns."""
    d, tr, cv, init = task
    exp = d / "exp"
    cmd = [sys.executable, str(ROOT / "bin" / "nnet-train-scheduler.py"), "--learn-rate=0.01",
           "--momentum=0.5", "--max-iters=3", "--train-cmd=utils/run.py --num-tasks 2",
           "--train-tool=nnet-train-mpi.py --batch-size=10 --num-streams=4 --average-every=5",
           f"--tr-tool-opts=--utt2num-frames={tr['u2nf']}",
           f"--cv-tool-opts=--utt2num-frames={cv['u2nf']}",
           str(init), tr["feats"], cv["feats"], tr["targets"], cv["targets"], str(exp)]
    q = subprocess.run(cmd, cwd=ROOT, env=mpi_env(), text=True, capture_output=True, timeout=300)
    assert q.returncode == 0, q.stderr
    accs = [float(a) for a in re.findall(r"FRAME_ACCURACY tr [\d.]+% cv ([\d.]+)%", q.stderr)]
    assert len(accs) == 3 and accs[-1] > 95 and (exp / "final.nnet").exists(), q.stderr
    log = (exp / "log" / "iter01.tr.log").read_text()
    assert "MPI summary: 2 ranks" in log and "one multi-stream step" in \
        (exp / "log" / "iter01.tr.rank1.log").read_text()
