"""Multi-stream truncated BPTT: the stream batcher's layout, the trainer's masking and carried
state, and bin/nnet-train-multistream.py on a task that needs memory."""
import json
import re
import subprocess
import sys

import numpy as np
import pytest
from helpers import (ROOT, load_bin, memory_utts, mpi_env, tiny_net, write_tables,
                     write_targets)

from nnetmix.kernels import get_backend
from nnetmix.nnet import Nnet, NnetTrainOptions, init_components, read_nnet
from nnetmix.train import MinibatchLoop, TrainError, TrainOptions, parse_report
from nnetmix.train.multistream import train_streams_epoch
from nnetmix.train.streams import StreamBatcher, StreamOptions

LOG_RE = r"LOG \(nnet-train-multistream.py\[[^\]]*\]:\w+\(\):[\w.-]+:\d+\) "
LSTM_PROTO = ("<LstmProjected> <InputDim> 1 <OutputDim> 6 <CellDim> 12 <ParamRange> 0.3\n"
              "<AffineTransform> <InputDim> 6 <OutputDim> 2 <ParamStddev> 0.3\n"
              "<Softmax> <InputDim> 2 <OutputDim> 2\n")


def _utt(u: int, n: int):
    """Frame t of utterance u has the feature 100 u + t and the target u."""
    return (100.0 * u + np.arange(n, dtype=np.float32))[:, None], np.full(n, u, np.int32)


def _steps(batches):
    """Each step as (rows' features (None = padding), lengths, resets)."""
    out = []
    for x, b in batches:
        feats = [float(x[i, 0]) if b.mask[i] else None for i in range(len(b.mask))]
        assert all(x[i, 0] == 0 and b.targets[i] == 0 for i in np.flatnonzero(~b.mask))
        real = np.flatnonzero(b.mask)
        assert np.array_equal(b.targets[real], (x[real, 0] // 100).astype(np.int32))
        out.append((feats, list(b.lengths), list(b.resets)))
    return out


#: lengths 4, 2, 5 over S = 2 streams of T = 3 frames: row t*S + s is frame t of stream s
EXPECTED = [
    ([0, 100, 1, 101, 2, None], [3, 2], [1, 1]),         # u0 -> stream 0, u1 -> stream 1
    ([3, 200, None, 201, None, 202], [1, 3], [0, 1]),    # u1 ended: u2 -> stream 1
    ([None, 203, None, 204, None, None], [0, 2], [0, 0]),  # no data left for stream 0
]


def test_batcher_layout_on_hand_made_utterances():
    b = StreamBatcher(StreamOptions(batch_size=3, num_streams=2))
    for u, n in enumerate((4, 2, 5)):
        b.add(*_utt(u, n))
    assert b.is_full() and not b.done()
    b.end_of_data()
    assert _steps(list(b.minibatches())) == EXPECTED
    assert b.done()


class _Record:
    """The loop's rule, keeping each step (its x is fresh each step)."""

    def __init__(self):
        self.stats = type("S", (), {"minibatches": 0, "time_io": 0.0, "time_optimize": 0.0,
                                    "time_hook": 0.0})()
        self.model = None
        self.steps = []

    def prepare(self, item):
        return item[1], item[2]

    def step(self, x, batch):
        self.steps.append((x, batch))
        self.stats.minibatches += 1


def test_the_loop_feeds_streams_utterance_by_utterance_as_kaldi_reads():
    """Through MinibatchLoop the steps are the same as with all the data at hand: a stream is
    only refilled when it is empty, from the next utterance in the table's order."""
    rule = _Record()
    loop = MinibatchLoop(rule, StreamBatcher(StreamOptions(batch_size=3, num_streams=2)))
    loop.run([(f"u{u}", *_utt(u, n)) for u, n in enumerate((4, 2, 5))], prefetch=False)
    assert _steps(rule.steps) == EXPECTED


def test_bad_stream_options():
    with pytest.raises(TrainError, match="--num-streams must be > 0"):
        StreamBatcher(StreamOptions(num_streams=0))
    with pytest.raises(TrainError, match="--batch-size must be > 0"):
        StreamBatcher(StreamOptions(batch_size=0))


def _lstm_net(seed: int = 3) -> Nnet:
    return Nnet(init_components(LSTM_PROTO, seed=seed), backend=get_backend("cpu"))


def test_cv_in_chunks_equals_whole_utterances_and_leaves_the_model():
    """The state carried across steps (and reset per utterance) makes chunked evaluation equal
    a per-utterance forward pass; padding is not counted; the parameters do not move."""
    rng = np.random.default_rng(5)
    utts = memory_utts(rng, 9)
    net = _lstm_net()
    before = np.array(net.params, copy=True)
    st = train_streams_epoch(net, utts, TrainOptions(cross_validate=True),
                             StreamOptions(batch_size=7, num_streams=3))
    assert np.array_equal(np.asarray(net.params), before)
    loss, correct, frames = 0.0, 0, 0
    for _, x, y in utts:  # no seq lengths: each call is one utterance from a zero state
        p = np.asarray(net.propagate(np.ascontiguousarray(x)), dtype=np.float64)
        loss -= np.log(p[np.arange(len(y)), y]).sum()
        correct += int((p.argmax(1) == y).sum())
        frames += len(y)
    assert st.frames == frames and st.correct == correct
    assert st.avg_loss == pytest.approx(loss / frames, rel=1e-5)
    assert st.num_done == 9 and not st.randomized


def test_padding_rows_give_no_gradient():
    """One utterance of 5 frames in a step of 8 rows (3 padding) updates a feed-forward net
    exactly as a step of 5 rows does."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    utt = [("u", x, np.array([0, 1, 2, 3, 4], np.int32))]
    nets = [tiny_net(np.random.default_rng(9)) for _ in range(2)]
    upd = NnetTrainOptions(learn_rate=0.1)
    for net, T in zip(nets, (8, 5)):
        st = train_streams_epoch(net, utt, TrainOptions(), StreamOptions(batch_size=T,
                                                                         num_streams=1), upd)
        assert (st.frames, st.minibatches) == (5, 1)
    assert not np.array_equal(np.asarray(nets[0].params), np.asarray(tiny_net(
        np.random.default_rng(9)).params))
    np.testing.assert_allclose(np.asarray(nets[0].params), np.asarray(nets[1].params),
                               rtol=1e-6, atol=1e-7)


def test_a_blstm_trains_on_chunks_with_a_warning(caplog):
    """Kaldi's tool gives a BLSTM each chunk as whole sequences; so do we, and say so."""
    net = Nnet(init_components("<BlstmProjected> <InputDim> 1 <OutputDim> 4 <CellDim> 3\n"
                               "<AffineTransform> <InputDim> 4 <OutputDim> 2\n"
                               "<Softmax> <InputDim> 2 <OutputDim> 2\n", seed=4),
               backend=get_backend("cpu"))
    before = np.array(net.params, copy=True)
    utts = memory_utts(np.random.default_rng(8), 5, min_len=8, max_len=14)
    with caplog.at_level("WARNING"):
        st = train_streams_epoch(net, utts, TrainOptions(), StreamOptions(batch_size=6,
                                 num_streams=2), NnetTrainOptions(learn_rate=0.01))
    assert st.frames == sum(len(u[2]) for u in utts) and np.isfinite(st.avg_loss)
    assert not np.array_equal(np.asarray(net.params), before)
    assert any("<BlstmProjected> sees each --batch-size=6 chunk" in r.message
               for r in caplog.records)


@pytest.fixture
def memory_task(tmp_path):
    rng = np.random.default_rng(1)
    tr, cv = memory_utts(rng, 150), memory_utts(rng, 30)
    tr_f, tr_t = write_tables(tmp_path, tr, "tr")
    cv_f, cv_t = write_tables(tmp_path, cv, "cv")
    return tmp_path, (tr_f, tr_t), (cv_f, cv_t)


def _train(tool, capsys, tmp, tr, cv, model, epochs):
    """``epochs`` training runs of the tool, then CV; (CV log, each training log)."""
    logs = []
    for e in range(epochs):
        out = tmp / f"{model}.{e + 1}"
        rc = tool.main(["--learn-rate=0.01", "--momentum=0.5", "--batch-size=10",
                        "--num-streams=4", *tr, str(tmp / (model if e == 0 else f"{model}.{e}")),
                        str(out)])
        logs.append(capsys.readouterr().err)
        assert rc == 0, logs[-1]
    rc = tool.main(["--cross-validate=true", "--batch-size=10", "--num-streams=4",
                    f"--result-file={tmp / 'cv.json'}", *cv, str(out)])
    err = capsys.readouterr().err
    assert rc == 0, err
    return err, logs


def test_lstm_learns_what_a_feed_forward_net_cannot(memory_task, capsys):
    """The label is the sign of the input 3 frames back: the LSTM learns it through the tool,
    the same tool with a feed-forward net cannot (Kaldi's tool trains one all the same)."""
    tmp, tr, cv = memory_task
    tool = load_bin("nnet-train-multistream.py")
    _lstm_net().write(str(tmp / "lstm.init"))
    rc = tool.main(["--cross-validate=true", "--batch-size=10", "--verbose=2", *cv,
                    str(tmp / "lstm.init")])
    err = capsys.readouterr().err
    acc0 = parse_report(err)["frame_accuracy"]
    # Kaldi's VLOG lines: each step's stream lengths, the network after the first and last step
    assert re.search(r"VLOG\[2\] \(.*\) frame_num_utt\[4\] \[ 10 10 10 10 \]\n", err)
    assert err.count(") ### After ") == 2 and "GRADIENT STATS" not in err
    err, logs = _train(tool, capsys, tmp, tr, cv, "lstm.init", 4)
    accs = [parse_report(e)["frame_accuracy"] for e in logs]
    cv_acc = parse_report(err)["frame_accuracy"]
    assert rc == 0 and acc0 < 70 and accs[-1] > accs[0] and cv_acc > 95
    assert re.search(LOG_RE + r"Done 150 files, 0 with no tgt_mats, 0 with other errors\. "
                     r"\[TRAINING, NOT-RANDOMIZED, [\d.e-]+ min, processing [\d.e+]+ frames per "
                     r"sec; i/o time [\d.]+%\]", logs[0])
    assert re.search(LOG_RE + r"AvgLoss: [\d.e-]+ \(Xent\), \[AvgXent: [\d.e-]+, AvgTargetEnt: "
                     r"0\]\nprogress: \[\]\nFRAME_ACCURACY >> [\d.]+% <<", err)
    assert "[CROSS-VALIDATION, NOT-RANDOMIZED," in err
    res = json.loads((tmp / "cv.json").read_text())
    assert res["frame_accuracy"] == pytest.approx(cv_acc, abs=1e-3) and res["cross_validate"]

    tiny_net(np.random.default_rng(4), dim=1, hid=12, num_classes=2).write(str(tmp / "ff.init"))
    err, logs = _train(tool, capsys, tmp, tr, cv, "ff.init", 4)
    assert "WARNING" in logs[0] and "no recurrent component" in logs[0]
    assert parse_report(err)["frame_accuracy"] < 65


def _error_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("ERROR")]


def test_bad_input_gives_one_error_line(memory_task, capsys):
    tmp, tr, cv = memory_task
    tool = load_bin("nnet-train-multistream.py")
    _lstm_net().write(str(tmp / "lstm.init"))
    # features without targets: each warned about, then the epoch fails
    none = write_targets(tmp / "none.ark", [("other", None, np.zeros(3, np.int32))])
    rc = tool.main([tr[0], none, str(tmp / "lstm.init"), str(tmp / "out")])
    err = capsys.readouterr().err
    assert rc == 1 and "utt0000, missing targets" in err
    errs = _error_lines(err)
    assert len(errs) == 1 and "no utterance could be used (150 without targets" in errs[0]
    assert not (tmp / "out").exists()
    # a model whose input is not the features'
    tiny_net(np.random.default_rng(4), dim=3, num_classes=2).write(str(tmp / "ff3.init"))
    rc = tool.main([*tr, str(tmp / "ff3.init"), str(tmp / "out")])
    errs = _error_lines(capsys.readouterr().err)
    assert rc == 1 and len(errs) == 1 and "feature dim is 1, the network's input dim is 3" \
        in errs[0]
    # a recurrent model given to the frame-shuffling tool: refused, naming this tool
    rc = load_bin("nnet-train-frmshuff.py").main([*tr, str(tmp / "lstm.init"), str(tmp / "out")])
    errs = _error_lines(capsys.readouterr().err)
    assert rc == 1 and len(errs) == 1 and "nnet-train-multistream.py" in errs[0]
    # no <model-out> without --cross-validate
    rc = tool.main([*tr, str(tmp / "lstm.init")])
    assert rc == 1 and "wrong number of arguments" in capsys.readouterr().err
    assert read_nnet(str(tmp / "lstm.init")).components[0].marker == "<LstmProjected>"


@pytest.mark.slow
def test_the_scheduler_runs_it_as_its_train_tool(memory_task):
    """nnet-train-scheduler.py --train-tool=nnet-train-multistream.py: every option the
    scheduler passes is taken, and the losses come back through the result files (~30 s)."""
    tmp, tr, cv = memory_task
    _lstm_net().write(str(tmp / "lstm.init"))
    exp = tmp / "exp"
    cmd = [sys.executable, str(ROOT / "bin" / "nnet-train-scheduler.py"), "--learn-rate=0.01",
           "--momentum=0.5", "--max-iters=3", "--train-cmd=utils/run.py",
           "--train-tool=nnet-train-multistream.py --batch-size=10 --num-streams=4",
           "--pass-epoch=false", str(tmp / "lstm.init"), tr[0], cv[0], tr[1], cv[1], str(exp)]
    q = subprocess.run(cmd, cwd=ROOT, env=mpi_env(), text=True, capture_output=True, timeout=300)
    assert q.returncode == 0, q.stderr
    accs = [float(a) for a in re.findall(r"FRAME_ACCURACY tr [\d.]+% cv ([\d.]+)%", q.stderr)]
    assert len(accs) == 3 and accs[-1] > 95 and (exp / "final.nnet").exists()
    log = (exp / "log" / "iter03.cv.log").read_text()
    assert parse_report(log)["frame_accuracy"] == pytest.approx(accs[-1], abs=0.01)
