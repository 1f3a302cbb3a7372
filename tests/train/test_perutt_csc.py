"""Whole-sequence training for BLSTMs: the per-utterance and CSC-BPTT batch sources' layouts,
the trainer on them (context frames computed, not trained on), and
bin/nnet-train-multistream-perutt.py on a task that needs the future."""
import re
import subprocess
import sys

import numpy as np
import pytest
from helpers import ROOT, load_bin, memory_utts, mpi_env, write_tables

from nnetmix.kernels import get_backend
from nnetmix.nnet import Nnet, NnetTrainOptions, init_components
from nnetmix.train import (ChunkBatcher, MinibatchLoop, PerUttOptions, StreamBatcher,
                           StreamOptions, TrainError, TrainOptions, UttBatcher,
                           make_stream_source, parse_report, train_streams_epoch)

TOOL = "nnet-train-multistream-perutt.py"
LOG_RE = r"LOG \(nnet-train-multistream-perutt.py\[[^\]]*\]:\w+\(\):[\w.-]+:\d+\) "
BLSTM_PROTO = ("<BlstmProjected> <InputDim> 1 <OutputDim> 8 <CellDim> 8 <ParamRange> 0.3\n"
               "<AffineTransform> <InputDim> 8 <OutputDim> 2 <ParamStddev> 0.3\n"
               "<Softmax> <InputDim> 2 <OutputDim> 2\n")
LSTM_PROTO = ("<LstmProjected> <InputDim> 1 <OutputDim> 6 <CellDim> 12 <ParamRange> 0.3\n"
              "<AffineTransform> <InputDim> 6 <OutputDim> 2 <ParamStddev> 0.3\n"
              "<Softmax> <InputDim> 2 <OutputDim> 2\n")
#: the label is the sign of the input 3 frames AHEAD: a past-only LSTM cannot know it
AHEAD = -3


def _utt(u: int, n: int):
    """Frame t of utterance u has the feature 100 u + t and the target 10 u + t % 10."""
    t = np.arange(n)
    return (100.0 * u + t).astype(np.float32)[:, None], (10 * u + t % 10).astype(np.int32)


def _sequences(x, batch):
    """Each stream of a step as (utterance, its frames, the frames trained on), checking the
    step's invariants on the way: rows t*S+s, padding zero and masked, every stream reset."""
    S = len(batch.lengths)
    assert x.shape[0] % S == 0 and batch.resets == [1] * S
    out = []
    for s, n in enumerate(batch.lengths):
        rows = np.arange(s, x.shape[0], S)
        real, pad = rows[:n], rows[n:]
        assert not batch.mask[pad].any() and not x[pad].any() and not batch.targets[pad].any()
        frames = x[real, 0].astype(int)
        u = int(frames[0]) // 100
        assert np.array_equal(frames, frames[0] + np.arange(n))  # consecutive frames of u
        trained = frames[batch.mask[real]] % 100
        t = batch.targets[real][batch.mask[real]]
        assert np.array_equal(t, 10 * u + trained % 10)   # the targets of the trained frames
        assert not batch.targets[real][~batch.mask[real]].any()   # 0 on context frames
        out.append((u, [int(f) % 100 for f in frames], [int(f) for f in trained]))
    return out


def _run(src, lens):
    for u, n in enumerate(lens):
        src.add(*_utt(u, n))
    src.end_of_data()
    src.randomize()
    steps = list(src.minibatches())
    assert src.done()
    return steps


def test_perutt_steps_are_whole_utterances_of_similar_length():
    lens = (4, 2, 5, 5, 3, 9, 2, 6)
    src = make_stream_source(PerUttOptions(num_streams=3, max_frames=12), TrainOptions())
    assert isinstance(src, UttBatcher) and src.randomized and src.max_rows == 12
    raw = _run(src, lens)
    steps = [_sequences(x, b) for x, b in raw]
    seen = sorted(u for step in steps for u, _, _ in step)
    assert seen == list(range(len(lens)))                  # every utterance once
    for step, (x, b) in zip(steps, raw):
        assert len(step) <= 3 and x.shape[0] <= 12         # --num-streams, --max-frames
        for u, frames, trained in step:                    # whole, all trained
            assert frames == trained == list(range(lens[u]))
        assert b.num_frames == sum(lens[u] for u, _, _ in step)
    # utterances of one length go together (the two 5s, the two 2s), the longest alone
    groups = [sorted(lens[u] for u, _, _ in step) for step in steps]
    assert [5, 5] in groups and [9] in groups and any(g[:2] == [2, 2] for g in groups), groups
    padding = sum(b.mask.size - b.num_frames for _, b in raw)
    assert src.summary() == [f"Per-utterance steps: 8 utterances in {len(steps)} steps (at "
                             "most --num-streams=3 utterances, --max-frames=12 rows), "
                             f"{padding} padding frames"]


def test_csc_chunks_carry_context_that_is_not_trained_on():
    """21-64+21 in small: 1-3+2 over utterances of 7 and 2 frames."""
    opts = PerUttOptions(num_streams=2, chunk_size=3, chunk_left_context=1,
                         chunk_right_context=2)
    src = make_stream_source(opts, TrainOptions(randomizer_size=4, minibatch_size=1))
    assert isinstance(src, ChunkBatcher) and src.max_rows == 2 * 6
    seqs = sorted(s for x, b in _run(src, (7, 2)) for s in _sequences(x, b))
    assert seqs == [
        (0, [0, 1, 2, 3, 4], [0, 1, 2]),        # no left context at the utterance's start
        (0, [2, 3, 4, 5, 6], [3, 4, 5]),        # 1 frame before, 1 (of 2) after: the end
        (0, [5, 6], [6]),                       # the last, short chunk: padded, kept
        (1, [0, 1], [0, 1]),                    # an utterance shorter than a chunk
    ]
    assert src.summary() == ["CSC-BPTT 1-3+2: 2 utterances cut into 4 chunks; 1 utterances "
                             "shorter than --chunk-size=3 (one padded chunk each), 1 last "
                             "chunks shorter than 3 (padded); 5 context frames computed, not "
                             "trained on"]


def _chunk_order(seed: int, lens=(12, 12, 12, 12)):
    src = ChunkBatcher(PerUttOptions(num_streams=2, chunk_size=3, chunk_left_context=1,
                                     chunk_right_context=1), seed, 1000)
    return [[(u, tr[0]) for u, _, tr in _sequences(x, b)] for x, b in _run(src, lens)]


def test_csc_shuffles_chunks_across_utterances_deterministically():
    a, b, c = _chunk_order(5), _chunk_order(5), _chunk_order(6)
    assert a == b and a != c                                  # seeded
    chunks = sorted(ch for step in a for ch in step)
    assert chunks == [(u, s) for u in range(4) for s in (0, 3, 6, 9)]   # each once
    assert any(step[0][0] != step[1][0] for step in a)       # utterances mixed in a step
    assert [ch for step in a for ch in step] != chunks       # not in the data's order


def test_perutt_length_draw_is_seeded():
    lens = tuple(range(2, 14))

    def order(seed):
        src = UttBatcher(PerUttOptions(num_streams=2), seed)
        return [[u for u, _, _ in _sequences(x, b)] for x, b in _run(src, lens)]

    assert order(1) == order(1) and order(1) != order(2)


def test_the_loop_refills_below_half_the_matrix_buffer():
    """Kaldi's MatrixBuffer: steps are drawn once the buffer is full, until it is half
    empty; the rest waits for more data (20 utterances of 4 kB, a buffer of 41 kB)."""
    class Rec:
        stats = type("S", (), {"minibatches": 0, "time_io": 0.0, "time_optimize": 0.0,
                               "time_hook": 0.0})()
        model = None
        steps: list = []

        def prepare(self, item):
            self.steps.append(("add", item[0]))
            return item[1], item[2]

        def step(self, x, b):
            self.steps.append(("step", len(b.lengths)))
            self.stats.minibatches += 1

    rec = Rec()
    src = UttBatcher(PerUttOptions(num_streams=2, max_frames=4000,
                                   matrix_buffer_size=41000 / 2 ** 20), 3)
    MinibatchLoop(rec, src).run([(f"u{u}", *_utt(u, 1000)) for u in range(20)], prefetch=False)
    first = rec.steps.index(("step", 2))
    assert first == 11          # the buffer holds 44 kB > 41 kB after the 11th utterance
    assert rec.steps[first:first + 3] == [("step", 2), ("step", 2), ("step", 2)]
    assert rec.steps[first + 3][0] == "add"   # 5 left = 20 kB < 20.5 kB: read on
    assert sum(1 for k, _ in rec.steps if k == "step") == 10


class _Steps:
    """The loop's rule that keeps each step's stream lengths and trained frames."""

    model = None

    def __init__(self):
        self.stats = type("S", (), {"minibatches": 0, "time_io": 0.0, "time_optimize": 0.0,
                                    "time_hook": 0.0})()
        self.steps = []

    def prepare(self, item):
        return item[1], item[2]

    def step(self, x, b):
        self.steps.append((list(b.lengths), b.num_frames))
        self.stats.minibatches += 1


@pytest.mark.parametrize("opts", [StreamOptions(batch_size=7, num_streams=3),
                                  PerUttOptions(num_streams=3, max_frames=200,
                                                matrix_buffer_size=6000 / 2 ** 20),
                                  PerUttOptions(num_streams=3, chunk_size=8,
                                                chunk_left_context=2, chunk_right_context=3)],
                         ids=["streams", "perutt", "csc"])
def test_a_dry_run_over_zero_width_features_takes_the_same_steps(opts):
    """What an MPI rank does to agree on a step count before the pass: the same source over
    features zero columns wide, given the real feature dim, takes the same steps (here with
    more data than the per-utterance buffer holds, so it refills)."""
    rng = np.random.default_rng(3)
    lens = rng.integers(5, 60, size=40)
    topts = TrainOptions(randomizer_size=100)
    runs = []
    for dim in (5, 0):
        rule = _Steps()
        utts = [(f"u{i}", np.ones((n, dim), np.float32), np.zeros(n, np.int32))
                for i, n in enumerate(lens)]
        MinibatchLoop(rule, make_stream_source(opts, topts, feat_dim=5)).run(utts,
                                                                            prefetch=False)
        runs.append(rule.steps)
    assert runs[0] == runs[1] and sum(n for _, n in runs[0]) == lens.sum()


def _net(proto: str, seed: int = 3) -> Nnet:
    return Nnet(init_components(proto, seed=seed), backend=get_backend("cpu"))


def test_csc_cv_loss_is_each_chunk_with_its_context_and_the_model_stays():
    """CV through the chunk source equals a forward pass of each chunk with its context (a
    whole sequence from a zero state) scored on the chunk's own frames only."""
    opts = PerUttOptions(num_streams=3, chunk_size=8, chunk_left_context=3,
                         chunk_right_context=4)
    utts = memory_utts(np.random.default_rng(4), 6, k=AHEAD, min_len=5, max_len=30)
    net = _net(BLSTM_PROTO)
    before = np.array(net.params, copy=True)
    st = train_streams_epoch(net, utts, TrainOptions(cross_validate=True), opts)
    assert np.array_equal(np.asarray(net.params), before)
    loss, correct = 0.0, 0
    for _, x, y in utts:
        n = len(y)
        for start in range(0, n, 8):
            a, b, end = max(0, start - 3), min(n, start + 12), min(n, start + 8)
            p = np.asarray(net.propagate(np.ascontiguousarray(x[a:b])), np.float64)
            p, t = p[start - a:end - a], y[start:end]
            loss -= np.log(p[np.arange(len(t)), t]).sum()
            correct += int((p.argmax(1) == t).sum())
    frames = sum(len(y) for _, _, y in utts)
    assert st.frames == frames and st.correct == correct and st.randomized
    assert st.avg_loss == pytest.approx(loss / frames, rel=1e-5)
    # the context changes the outputs: scoring chunks without it gives another loss
    x, y = utts[0][1], utts[0][2]
    with_ctx = np.array(net.propagate(np.ascontiguousarray(x[0:12])))[:8]  # a copy
    alone = np.asarray(net.propagate(np.ascontiguousarray(x[0:8])))
    assert not np.allclose(with_ctx, alone, atol=1e-4)


def test_perutt_cv_is_each_whole_utterance_and_the_model_stays():
    utts = memory_utts(np.random.default_rng(5), 9, k=AHEAD, min_len=5, max_len=30)
    net = _net(BLSTM_PROTO)
    before = np.array(net.params, copy=True)
    st = train_streams_epoch(net, utts, TrainOptions(cross_validate=True),
                             PerUttOptions(num_streams=4, max_frames=80))
    assert np.array_equal(np.asarray(net.params), before)
    loss = 0.0
    for _, x, y in utts:
        p = np.asarray(net.propagate(np.ascontiguousarray(x)), np.float64)
        loss -= np.log(p[np.arange(len(y)), y]).sum()
    assert st.frames == sum(len(y) for _, _, y in utts) and st.num_done == 9
    assert st.avg_loss == pytest.approx(loss / st.frames, rel=1e-5)


def test_context_frames_get_no_gradient():
    """One CSC step updates the network as the loss of the trained frames alone does: the
    step computed by hand with a zero derivative on every context and padding row."""
    utts = memory_utts(np.random.default_rng(6), 2, k=AHEAD, min_len=11, max_len=11)
    opts = PerUttOptions(num_streams=4, chunk_size=6, chunk_left_context=2,
                         chunk_right_context=3)
    upd = NnetTrainOptions(learn_rate=0.1)
    net = _net(BLSTM_PROTO)
    st = train_streams_epoch(net, utts, TrainOptions(), opts, upd)
    assert (st.minibatches, st.frames) == (1, 22)
    # the same step by hand: utt0's and utt1's chunks 0..5 (+3 after) and 6..10 (2 before)
    src = ChunkBatcher(opts, TrainOptions().randomizer_seed, TrainOptions().randomizer_size)
    for _, x, y in utts:
        src.add(x, y)
    src.end_of_data()
    src.randomize()
    (x, b), = list(src.minibatches())
    S = len(b.lengths)
    want = {9: [1] * 6 + [0] * 3, 7: [0] * 2 + [1] * 5}   # chunk 0..5 +3; 2+ chunk 6..10
    for s_, n in enumerate(b.lengths):
        assert b.mask[s_::S].astype(int).tolist() == want[n] + [0] * (9 - n)
    ref = _net(BLSTM_PROTO)
    ref.set_seq_lengths(b.lengths)
    ref.reset_streams(b.resets)
    z = np.asarray(ref.propagate(x, through_softmax=False), np.float64)
    dy = np.exp(z - z.max(1, keepdims=True))
    dy /= dy.sum(1, keepdims=True)
    dy[np.arange(len(dy)), b.targets] -= 1.0
    dy[~b.mask] = 0.0                       # what "not trained on" means
    assert (~b.mask).sum() > 2 * 5           # context and padding rows are there
    ref.backpropagate(dy.astype(np.float32), input_diff=False)
    ref.update(upd, x.shape[0])
    np.testing.assert_allclose(np.asarray(net.params), np.asarray(ref.params), rtol=1e-5,
                               atol=1e-6)


def test_bad_options():
    with pytest.raises(TrainError, match="need --chunk-size > 0"):
        make_stream_source(PerUttOptions(chunk_left_context=21), TrainOptions())
    for name in ("chunk_size", "chunk_right_context"):
        with pytest.raises(TrainError, match=f"--{name.replace('_', '-')} must be >= 0"):
            PerUttOptions(**{name: -1}).check()
    with pytest.raises(TrainError, match="--num-streams must be > 0"):
        make_stream_source(PerUttOptions(num_streams=0), TrainOptions())
    with pytest.raises(TrainError, match="--max-frames must be > 0"):
        PerUttOptions(max_frames=0).check()
    assert isinstance(make_stream_source(StreamOptions(), TrainOptions()), StreamBatcher)


# ---- the tool -----------------------------------------------------------------------------

@pytest.fixture
def ahead_task(tmp_path):
    rng = np.random.default_rng(1)
    tr, cv = memory_utts(rng, 150, k=AHEAD), memory_utts(rng, 30, k=AHEAD)
    return tmp_path, write_tables(tmp_path, tr, "tr"), write_tables(tmp_path, cv, "cv")


def _train(capsys, tmp, tr, cv, model, epochs, opts):
    """``epochs`` training runs of the tool, then CV; (CV log, each training log)."""
    tool = load_bin(TOOL)
    logs = []
    for e in range(epochs):
        rc = tool.main(["--learn-rate=0.01", "--momentum=0.5", *opts, *tr,
                        str(tmp / (model if e == 0 else f"{model}.{e}")),
                        str(tmp / f"{model}.{e + 1}")])
        logs.append(capsys.readouterr().err)
        assert rc == 0, logs[-1]
    rc = tool.main(["--cross-validate=true", "--num-streams=4", *cv,
                    str(tmp / f"{model}.{epochs}")])
    err = capsys.readouterr().err
    assert rc == 0, err
    return err, [parse_report(e)["frame_accuracy"] for e in logs]


CSC = ["--num-streams=8", "--chunk-size=10", "--chunk-left-context=4", "--randomizer-size=512"]


def test_a_blstm_learns_the_future_an_lstm_cannot(ahead_task, capsys, request):
    """The label is the sign of the input 3 frames ahead. A BLSTM learns it per utterance and
    with CSC-BPTT; without right context CSC cannot learn a chunk's last 3 frames (training
    accuracy near 7/10 + 3/10 * 1/2 = 85%); an LSTM stays at chance."""
    tmp, tr, cv = ahead_task
    _net(BLSTM_PROTO).write(str(tmp / "blstm.init"))
    _net(LSTM_PROTO).write(str(tmp / "lstm.init"))
    err, accs = _train(capsys, tmp, tr, cv, "blstm.init", 8, ["--num-streams=4"])
    cv_perutt = parse_report(err)["frame_accuracy"]
    rows = [("BLSTM per utterance", accs, cv_perutt)]
    assert accs[0] < 70 and accs[:4] == sorted(accs[:4]) and accs[-1] > 97 and cv_perutt > 95, \
        (accs, cv_perutt)
    assert re.search(LOG_RE + r"AvgLoss: [\d.e-]+ \(Xent\), \[AvgXent: [\d.e-]+, AvgTargetEnt: "
                     r"0\]\nprogress: \[\]\nFRAME_ACCURACY >> [\d.]+% <<", err)
    assert "[CROSS-VALIDATION, RANDOMIZED," in err

    err, accs = _train(capsys, tmp, tr, cv, "blstm.init", 6, [*CSC,
                                                              "--chunk-right-context=4"])
    rows.append(("BLSTM CSC 4-10+4", accs, parse_report(err)["frame_accuracy"]))
    assert accs[0] < 70 and accs[-1] > 97 and rows[-1][2] > 95, accs
    err, accs_r0 = _train(capsys, tmp, tr, cv, "blstm.init", 6, CSC)
    rows.append(("BLSTM CSC 4-10+0", accs_r0, parse_report(err)["frame_accuracy"]))
    assert 75 < accs_r0[-1] < 90, accs_r0

    err, accs = _train(capsys, tmp, tr, cv, "lstm.init", 6, ["--num-streams=4"])
    rows.append(("LSTM per utterance", accs, parse_report(err)["frame_accuracy"]))
    assert max(accs) < 60 and rows[-1][2] < 60, accs
    if request.config.getoption("capture") != "no":
        return
    with capsys.disabled():  # the numbers README.md quotes (pytest -s -k future)
        for name, tr_accs, cv_acc in rows:
            print(f"\n{name}: training accuracy per epoch "
                  f"{' '.join(f'{a:.1f}' for a in tr_accs)}; CV {cv_acc:.2f}%")


def test_the_tool_logs_its_counts_and_skips_too_long_utterances(ahead_task, capsys):
    tmp, tr, cv = ahead_task
    _net(BLSTM_PROTO).write(str(tmp / "blstm.init"))
    tool = load_bin(TOOL)
    rc = tool.main(["--learn-rate=0.01", "--num-streams=4", "--max-frames=45", *tr,
                    str(tmp / "blstm.init"), str(tmp / "out")])
    err = capsys.readouterr().err
    assert rc == 0, err
    lens = [len(y) for _, _, y in memory_utts(np.random.default_rng(1), 150, k=AHEAD)]
    long = sum(n > 45 for n in lens)
    assert 0 < long < 150 and err.count(", skipped") == long
    assert re.search(r"WARNING \(.*\) utt\d{4}, \d+ frames is more than --max-frames=45, "
                     r"skipped\n", err)
    assert f"Skipped {long} utterances longer than --max-frames=45" in err
    assert re.search(LOG_RE + rf"Per-utterance steps: {150 - long} utterances in \d+ steps \(at "
                     r"most --num-streams=4 utterances, --max-frames=45 rows\), \d+ padding "
                     r"frames\n", err)
    assert re.search(LOG_RE + rf"Done {150 - long} files, 0 with no tgt_mats, 0 with other "
                     r"errors\. \[TRAINING, RANDOMIZED,", err)
    # chunks longer than the utterances (30..60 frames): one padded chunk each, counted
    rc = tool.main(["--learn-rate=0.01", "--chunk-size=64", "--chunk-left-context=21",
                    "--chunk-right-context=21", *tr, str(tmp / "blstm.init"),
                    str(tmp / "out2")])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "CSC-BPTT 21-64+21: 150 utterances cut into 150 chunks; 150 utterances shorter " \
        "than --chunk-size=64 (one padded chunk each), 0 last chunks shorter than 64 " \
        "(padded); 0 context frames computed, not trained on" in err
    assert "Done 150 files," in err


def _error_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("ERROR")]


def test_bad_input_gives_one_error_line(ahead_task, capsys):
    tmp, tr, cv = ahead_task
    _net(BLSTM_PROTO).write(str(tmp / "blstm.init"))
    tool = load_bin(TOOL)
    for bad, what in ((["--chunk-left-context=21"], "need --chunk-size > 0"),
                      (["--chunk-size=-64"], "--chunk-size must be >= 0"),
                      (["--num-streams=0"], "--num-streams must be > 0")):
        rc = tool.main([*bad, *tr, str(tmp / "blstm.init"), str(tmp / "out")])
        errs = _error_lines(capsys.readouterr().err)
        assert rc == 1 and len(errs) == 1 and what in errs[0], errs
        assert not (tmp / "out").exists()
    # a BLSTM given to the frame-shuffling tool: refused, naming this tool
    rc = load_bin("nnet-train-frmshuff.py").main([*tr, str(tmp / "blstm.init"),
                                                  str(tmp / "out")])
    errs = _error_lines(capsys.readouterr().err)
    assert rc == 1 and len(errs) == 1 and TOOL in errs[0]


@pytest.mark.slow
def test_the_scheduler_runs_csc_as_its_train_tool(ahead_task):
    """nnet-train-scheduler.py --train-tool='nnet-train-multistream-perutt.py --chunk-size
    ...': every option the scheduler passes is taken; the losses come back (~30 s)."""
    tmp, tr, cv = ahead_task
    _net(BLSTM_PROTO).write(str(tmp / "blstm.init"))
    exp = tmp / "exp"
    cmd = [sys.executable, str(ROOT / "bin" / "nnet-train-scheduler.py"), "--learn-rate=0.01",
           "--momentum=0.5", "--max-iters=4", "--train-cmd=utils/run.py",
           f"--train-tool={TOOL} " + " ".join(CSC) + " --chunk-right-context=4",
           "--pass-epoch=false", str(tmp / "blstm.init"), tr[0], cv[0], tr[1], cv[1], str(exp)]
    q = subprocess.run(cmd, cwd=ROOT, env=mpi_env(), text=True, capture_output=True, timeout=300)
    assert q.returncode == 0, q.stderr
    accs = [float(a) for a in re.findall(r"FRAME_ACCURACY tr [\d.]+% cv ([\d.]+)%", q.stderr)]
    assert len(accs) == 4 and accs[-1] > 95 and (exp / "final.nnet").exists(), q.stderr
    log = (exp / "log" / "iter01.tr.log").read_text()
    assert "CSC-BPTT 4-10+4: 150 utterances cut into" in log
