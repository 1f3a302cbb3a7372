"""<LstmProjected> and <BlstmProjected>: a per-frame numpy reference, finite-difference gradient
checks in float64 (several streams, padding, carried state), resets, clipping, the update and
Kaldi's file layout."""
import struct
from pathlib import Path

import numpy as np
import pytest
from helpers import central_differences, load_bin, run_cuda_checks

from nnetmix.errors import FormatError
from nnetmix.kaldi import SequentialReader, TableWriter
from nnetmix.kernels import get_backend
from nnetmix.nnet import (AffineTransform, BlstmProjected, LstmProjected, Nnet, NnetError,
                          NnetTrainOptions, init_components, read_nnet)

EPS = 1e-6
BLOCKS = ("w_gifo_x", "w_gifo_r", "bias", "peephole_i_c", "peephole_f_c", "peephole_o_c", "w_r_m")


def _sig(a):
    return 1.0 / (1.0 + np.exp(-a))


def _params(rng, I, C, P, prefix="", scale=0.5):
    shapes = {"w_gifo_x": (4 * C, I), "w_gifo_r": (4 * C, P), "bias": (4 * C,),
              "peephole_i_c": (C,), "peephole_f_c": (C,), "peephole_o_c": (C,), "w_r_m": (P, C)}
    return {prefix + n: rng.standard_normal(shapes[n]) * scale for n in BLOCKS}


def _lstm(rng, I=3, C=3, P=2, **kw):
    return LstmProjected(I, P, C, _params(rng, I, C, P), **kw)


def _blstm(rng, I=3, C=2, P=2, **kw):
    p = {**_params(rng, I, C, P, "f_"), **_params(rng, I, C, P, "b_")}
    return BlstmProjected(I, 2 * P, C, p, **kw)


# -- the reference: one stream, one frame at a time, Kaldi's equations written out ------------

def ref_direction(x, p, c0, r0, reverse=False, cell_clip=0.0):
    """Outputs r (L, P) and every intermediate of one direction over one stream's frames."""
    C = p["peephole_i_c"].size
    order = range(len(x) - 1, -1, -1) if reverse else range(len(x))
    c, r = c0.copy(), r0.copy()
    out, trace = np.zeros((len(x), p["w_r_m"].shape[0])), {}
    for t in order:
        a = p["w_gifo_x"] @ x[t] + p["bias"] + p["w_gifo_r"] @ r
        g = np.tanh(a[:C])
        i = _sig(a[C:2 * C] + p["peephole_i_c"] * c)
        f = _sig(a[2 * C:3 * C] + p["peephole_f_c"] * c)
        c_new = g * i + c * f
        if cell_clip > 0:
            c_new = np.clip(c_new, -cell_clip, cell_clip)
        o = _sig(a[3 * C:] + p["peephole_o_c"] * c_new)
        h = np.tanh(c_new)
        m = h * o
        trace[t] = dict(g=g, i=i, f=f, o=o, c_prev=c, c=c_new, h=h, m=m, r_prev=r)
        c, r = c_new, p["w_r_m"] @ m
        out[t] = r
    return out, trace, c, r


def _streams(x, S):
    return [x[s::S] for s in range(S)]


def ref_lstm(comp, x, lengths, state=None):
    """LstmProjected on interleaved rows; returns (y, new state) as Kaldi carries it."""
    S = len(lengths)
    T = len(x) // S
    C, P = comp.cell_dim, comp.proj_dim
    p = {n: np.asarray(v, np.float64) for n, v in comp.params.items()}
    y = np.zeros((len(x), P))
    c_out, r_out = np.zeros((S, C)), np.zeros((S, P))
    for s, xs in enumerate(_streams(x, S)):
        c0, r0 = (np.zeros(C), np.zeros(P)) if state is None else (state[0][s], state[1][s])
        out, _, c, r = ref_direction(xs[:lengths[s]], p, c0, r0, cell_clip=float(comp.cell_clip))
        y[s::S][:lengths[s]] = out
        if lengths[s] == T:  # a stream that ended inside the chunk carries zeros (Kaldi)
            c_out[s], r_out[s] = c, r
    return y, (c_out, r_out)


def ref_blstm(comp, x, lengths):
    S = len(lengths)
    P = comp.proj_dim
    y = np.zeros((len(x), 2 * P))
    for d, rev in (("f_", False), ("b_", True)):
        p = {n[2:]: np.asarray(v, np.float64) for n, v in comp.params.items() if n.startswith(d)}
        C = p["peephole_i_c"].size
        for s, xs in enumerate(_streams(x, S)):
            out, _, _, _ = ref_direction(xs[:lengths[s]], p, np.zeros(C), np.zeros(P), rev,
                                         float(comp.cell_clip))
            y[s::S][:lengths[s], (P if rev else 0):(2 * P if rev else P)] = out
    return y


def _net(comp, dtype=np.float64):
    return Nnet([comp], backend=get_backend("cpu"), dtype=dtype)


def _run(net, x):
    be = net.backend
    return be.to_host(net.propagate(be.asarray(x, dtype=net.dtype)))


# -- forward against the reference --------------------------------------------------------------

def test_lstm_forward_matches_the_reference_across_calls_and_streams():
    rng = np.random.default_rng(1)
    comp = _lstm(rng, cell_clip=0.3)        # a clip that bites on these weights
    net = _net(comp)
    lengths = [5, 5, 5]
    net.set_seq_lengths(lengths)
    x1, x2 = rng.standard_normal((15, 3)), rng.standard_normal((15, 3))
    y1 = _run(net, x1)
    ref1, state = ref_lstm(comp, x1, lengths)
    np.testing.assert_allclose(y1, ref1, rtol=1e-12, atol=1e-12)
    assert np.abs(ref1).max() > 0.1
    net.set_seq_lengths([5, 3, 5])          # stream 1 ends inside the second chunk
    y2 = _run(net, x2)
    ref2, _ = ref_lstm(comp, x2, [5, 3, 5], state)
    np.testing.assert_allclose(y2, ref2, rtol=1e-12, atol=1e-12)
    assert not np.allclose(ref2, ref_lstm(comp, x2, [5, 3, 5])[0])  # the state mattered
    assert (y2[3 * 3 + 1::3] == 0).all()    # padded frames of stream 1 are zero


def test_lstm_without_seq_lengths_starts_from_zero_every_call():
    """nnet-forward: one utterance per call, one stream, no carried state (Kaldi's reset)."""
    rng = np.random.default_rng(2)
    comp = _lstm(rng)
    net = _net(comp, np.float32)
    x = rng.standard_normal((7, 3)).astype(np.float32)
    a, b = _run(net, x), _run(net, x)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, ref_lstm(comp, x.astype(np.float64), [7])[0], rtol=2e-5,
                               atol=1e-6)


def test_blstm_forward_matches_the_reference_with_unequal_lengths():
    rng = np.random.default_rng(3)
    comp = _blstm(rng)
    net = _net(comp)
    lengths = [6, 2, 4]
    net.set_seq_lengths(lengths)
    x = rng.standard_normal((18, 3))
    y = _run(net, x)
    np.testing.assert_allclose(y, ref_blstm(comp, x, lengths), rtol=1e-12, atol=1e-12)
    # a stream's backward direction starts at ITS last frame: the same as running it alone
    alone = _net(comp.detached(comp.params))
    alone.set_seq_lengths([2])
    xs = x[1::3][:2]
    np.testing.assert_allclose(_run(alone, xs), y[1::3][:2], rtol=1e-12, atol=1e-12)
    with pytest.raises(NnetError, match="not a multiple of the 3 streams"):
        _run(net, x[:17])


def test_reset_streams_zeroes_only_the_flagged_streams():
    rng = np.random.default_rng(4)
    comp = _lstm(rng)
    net = _net(comp)
    net.set_seq_lengths([4, 4])
    x1, x2 = rng.standard_normal((8, 3)), rng.standard_normal((8, 3))
    _run(net, x1)
    _, state = ref_lstm(comp, x1, [4, 4])
    net.reset_streams([1, 0])
    y = _run(net, x2)
    fresh = ref_lstm(comp, x2, [4, 4])[0]
    carried = ref_lstm(comp, x2, [4, 4], state)[0]
    np.testing.assert_allclose(y[0::2], fresh[0::2], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y[1::2], carried[1::2], rtol=1e-12, atol=1e-12)
    assert not np.allclose(fresh[1::2], carried[1::2])
    with pytest.raises(NnetError, match="2 streams"):
        net.reset_streams([1])


# -- gradients ----------------------------------------------------------------------------------

def _fd_check(net, x, w, before=None):
    """dL/dx and dL/dparams of L = sum(w * y) against central differences; ``before()`` runs
    before every forward (restores a carried state)."""
    be = net.backend

    def loss(xx):
        if before:
            before()
        return float((_run(net, xx) * w).sum())

    if before:
        before()
    net.propagate(be.asarray(x))
    dx = be.to_host(net.backpropagate(be.asarray(w)))
    grads = be.to_host(net.grads).copy()
    num_dx = central_differences(loss, x, EPS)
    np.testing.assert_allclose(dx, num_dx, rtol=1e-6, atol=1e-7 * max(1, np.abs(num_dx).max()))
    p0 = be.to_host(net.params).copy()

    def loss_at(p):
        net.set_params(p)
        return loss(x)

    num = central_differences(loss_at, p0, EPS)  # perturbing the FLAT buffer moves each block
    net.set_params(p0)
    for blk in net.layout:  # every block of every direction, by name
        got = grads[blk.offset:blk.offset + blk.size]
        want = num[blk.offset:blk.offset + blk.size]
        assert np.abs(want).max() > 1e-6, blk.name  # the check is not vacuous
        np.testing.assert_allclose(got, want, rtol=1e-6,
                                   atol=1e-7 * max(1, np.abs(want).max()), err_msg=blk.name)
    return dx


def test_lstm_gradients_with_streams_and_carried_state():
    rng = np.random.default_rng(5)
    comp = _lstm(rng, diff_clip=0.0)
    net = _net(comp)
    net.set_seq_lengths([4, 4])
    _run(net, rng.standard_normal((8, 3)))            # the first chunk leaves a state
    saved = tuple(a.copy() for a in comp._state)
    assert all(np.abs(a).max() > 0.01 for a in saved)
    net.set_seq_lengths([4, 3])

    def restore():
        comp._state = tuple(a.copy() for a in saved)

    x = rng.standard_normal((8, 3))
    dx = _fd_check(net, x, rng.standard_normal((8, 2)), restore)
    assert (dx[7] == 0).all()                          # stream 1's padded frame


def test_blstm_gradients_with_unequal_lengths():
    rng = np.random.default_rng(6)
    comp = _blstm(rng, diff_clip=0.0)
    net = _net(comp)
    net.set_seq_lengths([4, 2, 3])
    x = rng.standard_normal((12, 3))
    w = rng.standard_normal((12, 4))    # nonzero weights on padded rows too: they must not count
    dx = _fd_check(net, x, w)
    assert (dx[2 * 3 + 1::3] == 0).all() and (dx[3 * 3 + 2] == 0).all()


def test_gradients_inside_a_network():
    """LSTM and BLSTM stacked between affine layers: the diffs chain through Nnet."""
    rng = np.random.default_rng(7)
    comps = [AffineTransform(2, 3, rng.standard_normal((3, 2)), rng.standard_normal(3)),
             _lstm(rng, diff_clip=0.0), _blstm(rng, I=2, diff_clip=0.0),
             AffineTransform(4, 2, rng.standard_normal((2, 4)), rng.standard_normal(2))]
    net = Nnet(comps, backend=get_backend("cpu"), dtype=np.float64)
    net.set_seq_lengths([3, 2])
    _fd_check(net, rng.standard_normal((6, 2)), rng.standard_normal((6, 2)),
              lambda: net.reset_streams([1, 1]))  # else the LSTM carries state between calls


def ref_lstm_backward(comp, x, dy):
    """Kaldi's BackpropagateFnc for one stream from a zero state, clipping included."""
    p = {n: np.asarray(v, np.float64) for n, v in comp.params.items()}
    C = comp.cell_dim
    _, tr, _, _ = ref_direction(x, p, np.zeros(C), np.zeros(comp.proj_dim),
                                cell_clip=float(comp.cell_clip))
    T = len(x)
    dclip, cdclip = float(comp.diff_clip), float(comp.cell_diff_clip)
    D = np.zeros((T + 1, 4 * C))
    DC = np.zeros((T + 1, C))
    grads = {n: np.zeros_like(v) for n, v in p.items()}
    dx = np.zeros_like(x)
    for t in range(T - 1, -1, -1):
        s = tr[t]
        f_next = tr[t + 1]["f"] if t + 1 < T else np.zeros(C)
        dr = dy[t] + D[t + 1] @ p["w_gifo_r"]
        dm = dr @ p["w_r_m"]
        dh = dm * s["o"] * (1 - s["h"] ** 2)
        do = dm * s["h"] * s["o"] * (1 - s["o"])
        dc = (dh + DC[t + 1] * f_next + D[t + 1, C:2 * C] * p["peephole_i_c"]
              + D[t + 1, 2 * C:3 * C] * p["peephole_f_c"] + do * p["peephole_o_c"])
        if cdclip > 0:
            dc = np.clip(dc, -cdclip, cdclip)
        df = dc * s["c_prev"] * s["f"] * (1 - s["f"])
        di = dc * s["g"] * s["i"] * (1 - s["i"])
        dg = dc * s["i"] * (1 - s["g"] ** 2)
        d = np.concatenate([dg, di, df, do])
        if dclip > 0:
            d = np.clip(d, -dclip, dclip)
        D[t], DC[t] = d, dc
        dx[t] = d @ p["w_gifo_x"]
        grads["w_gifo_x"] += np.outer(d, x[t])
        grads["w_gifo_r"] += np.outer(d, s["r_prev"])
        grads["bias"] += d
        grads["peephole_i_c"] += d[C:2 * C] * s["c_prev"]
        grads["peephole_f_c"] += d[2 * C:3 * C] * s["c_prev"]
        grads["peephole_o_c"] += d[3 * C:] * s["c"]
        grads["w_r_m"] += np.outer(dr, s["m"])
    return dx, grads


def test_diff_and_cell_diff_clipping_match_kaldis_order():
    rng = np.random.default_rng(8)
    comp = _lstm(rng, C=4, diff_clip=0.02, cell_diff_clip=0.05, cell_clip=0.5)
    net = _net(comp)
    x, dy = rng.standard_normal((6, 3)), rng.standard_normal((6, 2)) * 3
    net.propagate(x)
    dx = net.backpropagate(dy)
    want_dx, want = ref_lstm_backward(comp, x, dy)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-12, atol=1e-12)
    unclipped = ref_lstm_backward(_lstm(np.random.default_rng(8), C=4, diff_clip=0,
                                        cell_diff_clip=0, cell_clip=0.5), x, dy)[0]
    assert not np.allclose(want_dx, unclipped)          # the clips did bite
    for n in BLOCKS:
        np.testing.assert_allclose(comp.grads[n], want[n], rtol=1e-12, atol=1e-12, err_msg=n)


# -- update -------------------------------------------------------------------------------------

def test_update_uses_coefficients_momentum_and_grad_clip():
    rng = np.random.default_rng(9)
    comp = _lstm(rng, learn_rate_coef=0.5, bias_learn_rate_coef=0.25, grad_clip=0.3)
    net = _net(comp)
    before = {n: comp.params[n].copy() for n in BLOCKS}
    x = rng.standard_normal((5, 3))
    net.propagate(x)
    net.backpropagate(rng.standard_normal((5, 2)) * 10)
    g = {n: comp.grads[n].copy() for n in BLOCKS}
    info = net.info_gradient()  # Kaldi's InfoGradient labels, the last call's buffers
    for line in ("\n  ### Gradients \n  w_gifo_x_corr_   ( min ", "\n  peephole_o_c_corr_   ( ",
                 "\n  ### Activations (mostly after non-linearities)\n  YI(0..1)^   ( min 0, ",
                 "\n  YC(-R..R)*  ( min ", "\n  ### Derivatives (w.r.t. inputs of non-linearities)"
                 "\n  DI^  ( min ", "\n  DR   ( min "):
        assert line in info, line
    lim = float(np.float32(0.3))                            # Kaldi's clip is a float
    assert max(np.abs(v).max() for v in g.values()) > lim   # some entries get clipped
    opts = NnetTrainOptions(learn_rate=0.1, momentum=0.5)
    net.update(opts)
    for n in BLOCKS:
        coef = 0.5 if n.startswith("w_") else 0.25
        np.testing.assert_allclose(comp.params[n], before[n] - 0.1 * coef * np.clip(g[n], -lim, lim),
                                   rtol=1e-12, atol=1e-14, err_msg=n)
    # the second step: v = 0.5 v + g, clipped, as Kaldi's *_corr_
    v = {n: np.clip(g[n], -lim, lim) for n in BLOCKS}
    mid = {n: comp.params[n].copy() for n in BLOCKS}
    net.update(opts)
    for n in BLOCKS:
        coef = 0.5 if n.startswith("w_") else 0.25
        step = np.clip(0.5 * v[n] + g[n], -lim, lim)
        np.testing.assert_allclose(comp.params[n], mid[n] - 0.1 * coef * step, rtol=1e-12,
                                   atol=1e-14, err_msg=n)


def test_training_a_tiny_blstm_lowers_the_loss():
    """float32 end to end: a BLSTM + softmax learns the sign of the NEXT frame's input (only
    the backward direction sees it)."""
    rng = np.random.default_rng(10)
    comps = init_components("<BlstmProjected> <InputDim> 2 <OutputDim> 8 <CellDim> 6\n"
                            "<AffineTransform> <InputDim> 8 <OutputDim> 2 <BiasMean> 0 "
                            "<BiasRange> 0 <ParamStddev> 0.5\n<Softmax> <InputDim> 2 "
                            "<OutputDim> 2\n", seed=3)
    net = Nnet(comps, backend=get_backend("cpu"))
    be = net.backend
    S, T = 4, 10
    net.set_seq_lengths([T] * S)
    losses = []
    for _ in range(150):
        x = rng.standard_normal((T * S, 2)).astype(np.float32)
        nxt = np.vstack([x[S:], x[-S:]])         # frame t+1 of the same stream (last: itself)
        targets = (nxt[:, 0] > 0).astype(np.int32)
        logits = net.propagate(be.asarray(x), through_softmax=False)
        probs, grad = np.empty_like(logits), np.empty_like(logits)
        loss, _ = be.softmax_xent(logits, targets, probs, grad)
        losses.append(loss / len(x))
        net.backpropagate(grad, input_diff=False)
        net.update(NnetTrainOptions(learn_rate=0.02, momentum=0.9))
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:10])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blstm_directions_side_by_side_give_the_same_bits(dtype):
    """With 2 BLAS threads the two directions' recurrences run side by side, each on one BLAS
    thread (lstm_cpu.run_recurrences); outputs, input diffs and gradients equal those of one
    thread bit for bit (unequal lengths, so padding runs in both)."""
    import numba

    from nnetmix.kernels.cpu import blas_num_threads, set_num_threads
    from nnetmix.kernels.lstm_cpu import _POOL
    rng = np.random.default_rng(21)
    comp = _blstm(rng, I=5, C=7, P=3)
    S, T = 3, 9
    x = rng.standard_normal((T * S, 5))
    dy = rng.standard_normal((T * S, 6))
    before, numba_before = blas_num_threads(), numba.get_num_threads()
    out = []
    try:
        for n in (1, 2):
            set_num_threads(n)
            if blas_num_threads() != n:
                pytest.skip("numpy's OpenBLAS not found through ctypes")
            net = _net(comp.detached({k: np.asarray(v) for k, v in comp.params.items()}),
                       dtype=dtype)
            net.set_seq_lengths([9, 4, 7])
            y = _run(net, x.astype(dtype))
            dx = net.backpropagate(net.backend.asarray(dy, dtype=dtype))
            out.append([y, np.array(dx)] + [np.array(g) for g in net.components[0].grads.values()])
    finally:
        set_num_threads(before)
        numba.set_num_threads(numba_before)
    assert _POOL, "the 2-thread run did not use the side-by-side path"
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)
    assert np.abs(out[0][0]).max() > 0 and np.abs(out[0][-1]).max() > 0


def test_frame_shuffled_training_refuses_a_recurrent_network():
    from nnetmix.train import TrainError, TrainOptions, train_epoch
    comps = init_components("<LstmProjected> <InputDim> 2 <OutputDim> 4 <CellDim> 3\n"
                            "<AffineTransform> <InputDim> 4 <OutputDim> 2\n<Softmax> "
                            "<InputDim> 2 <OutputDim> 2\n", seed=3)
    net = Nnet(comps, backend=get_backend("cpu"))
    utts = [("u1", np.zeros((5, 2), np.float32), np.zeros(5, np.int32))]
    with pytest.raises(TrainError, match="has <LstmProjected>: frame-shuffled training cannot"):
        train_epoch(net, utts, TrainOptions(), NnetTrainOptions())


# -- files --------------------------------------------------------------------------------------

def _both(rng):
    return Nnet([_lstm(rng, learn_rate_coef=0.5, cell_diff_clip=2.5),
                 _blstm(rng, I=2, grad_clip=0.0)])


@pytest.mark.parametrize("binary", [True, False])
def test_round_trip_is_byte_exact(tmp_path, binary):
    net = _both(np.random.default_rng(11))
    a, b = tmp_path / "a", tmp_path / "b"
    net.write(str(a), binary=binary)
    back = read_nnet(str(a))
    back.write(str(b), binary=binary)
    assert a.read_bytes() == b.read_bytes()
    assert [type(c) for c in back.components] == [LstmProjected, BlstmProjected]
    c0, c1 = back.components
    assert (c0.cell_dim, c0.learn_rate_coef, c0.cell_diff_clip) == (3, 0.5, 2.5)
    assert (c1.cell_dim, c1.proj_dim, c1.grad_clip, c1.diff_clip) == (2, 2, 0.0, 1.0)
    if binary:
        assert back.params.tobytes() == net.params.tobytes()


def test_binary_layout_byte_by_byte(tmp_path):
    comp = LstmProjected(1, 1, 1, {n: np.full(s, k + 1, np.float32) for k, (n, s) in
                                   enumerate(LstmProjected(1, 1, 1).param_specs())})

    def i32(v):
        return b"\x04" + struct.pack("<i", v)

    def f32(v):
        return b"\x04" + struct.pack("<f", v)

    def mat(r, c, v):
        return b"FM " + i32(r) + i32(c) + np.full(r * c, v, "<f4").tobytes()

    def vec(n, v):
        return b"FV " + i32(n) + np.full(n, v, "<f4").tobytes()

    expected = (b"\0B<Nnet> <LstmProjected> " + i32(1) + i32(1) + b"<CellDim> " + i32(1)
                + b"<LearnRateCoef> " + f32(1) + b"<BiasLearnRateCoef> " + f32(1)
                + b"<CellClip> " + f32(50) + b"<DiffClip> " + f32(1) + b"<CellDiffClip> "
                + f32(0) + b"<GradClip> " + f32(250) + mat(4, 1, 1) + mat(4, 1, 2) + vec(4, 3)
                + vec(1, 4) + vec(1, 5) + vec(1, 6) + mat(1, 1, 7)
                + b"<!EndOfComponent> </Nnet> ")
    Nnet([comp]).write(str(tmp_path / "m"), binary=True)
    assert (tmp_path / "m").read_bytes() == expected


# Written by hand from Kaldi's WriteData (nnet-blstm-projected.h): dims output first, then the
# options in WriteData's order, a newline, and the 14 blocks of the two directions.
HAND_BLSTM = """<Nnet> 
<BlstmProjected> 2 1 
<CellDim> 1 <LearnRateCoef> 1 <BiasLearnRateCoef> 0.1 <CellClip> 50 <DiffClip> 1 <CellDiffClip> 0 <GradClip> 250 
 [
  0.1 
  0.2 
  0.3 
  0.4 ]
 [
  -0.1 
  -0.2 
  -0.3 
  -0.4 ]
 [ 0 0 1 0 ]
 [ 0.5 ]
 [ 0.6 ]
 [ 0.7 ]
 [
  1.5 ]
 [
  1 
  2 
  3 
  4 ]
 [
  -1 
  -2 
  -3 
  -4 ]
 [ 0.25 0.5 1.25 0.75 ]
 [ -0.5 ]
 [ -0.6 ]
 [ -0.7 ]
 [
  -2 ]
<!EndOfComponent> 
</Nnet> 
"""


def test_hand_written_kaldi_text_reads_and_writes_back_identically(tmp_path):
    p = tmp_path / "hand.nnet"
    p.write_text(HAND_BLSTM)
    net = read_nnet(str(p))
    (c,) = net.components
    assert isinstance(c, BlstmProjected) and (c.cell_dim, c.proj_dim) == (1, 1)
    assert c.bias_learn_rate_coef == np.float32(0.1)
    h = net.host_params()[0]
    np.testing.assert_array_equal(h["f_w_gifo_x"].ravel(), np.float32([0.1, 0.2, 0.3, 0.4]))
    np.testing.assert_array_equal(h["b_bias"], np.float32([0.25, 0.5, 1.25, 0.75]))
    assert h["b_w_r_m"][0, 0] == -2 and h["f_peephole_o_c"][0] == np.float32(0.7)
    assert net.to_bytes(binary=False).decode() == HAND_BLSTM
    # the older marker, tokens in another order and Kaldi's old <ClipGradient>
    old = HAND_BLSTM.replace("<BlstmProjected>", "<BlstmProjectedStreams>").replace(
        "<CellDim> 1 <LearnRateCoef> 1", "<LearnRateCoef> 1 <CellDim> 1").replace(
        "<GradClip>", "<ClipGradient>")
    p.write_text(old)
    assert read_nnet(str(p)).to_bytes(binary=False).decode() == HAND_BLSTM
    x = np.array([[1.0], [-1.0], [0.5]])
    np.testing.assert_allclose(_run(_net(c), x), ref_blstm(c, x, [3]), rtol=1e-6)


@pytest.mark.parametrize("edit, what", [
    (("<CellDim> 1", "<CellDim> 2"), "bad f_w_gifo_x"),        # blocks too small for CellDim 2
    ((" [ 0 0 1 0 ]", " [ 0 0 1 ]"), "bad f_bias"),
    (("<GradClip> 250", "<GradClip> 250 <Bogus> 1"), "unknown token"),
    (("<CellDim> 1 ", ""), "bad <CellDim>"),
    (("<BlstmProjected> 2 1", "<BlstmProjected> 3 1"), "odd"),
])
def test_bad_files_give_one_line_naming_file_and_component(tmp_path, capsys, edit, what):
    p = tmp_path / "bad.nnet"
    p.write_text(HAND_BLSTM.replace(*edit))
    with pytest.raises(FormatError, match=what) as e:
        read_nnet(str(p))
    assert str(p) in str(e.value) and "<BlstmProjected>" in str(e.value)
    assert load_bin("nnet-info.py").main([str(p)]) != 0
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("ERROR")]
    assert len(err) == 1 and str(p) in err[0] and what in err[0]


def test_initialize_from_a_proto_line(tmp_path, capsys):
    proto = ("<LstmProjected> <InputDim> 20 <OutputDim> 16 <CellDim> 64 <ParamRange> 0.05 "
             "<LearnRateCoef> 0.5 <BiasLearnRateCoef> 0.25 <CellClip> 10 <DiffClip> 2 "
             "<CellDiffClip> 3 <GradClip> 4\n"
             "<BlstmProjected> <InputDim> 16 <OutputDim> 32 <CellDim> 48\n")
    lstm, blstm = init_components(proto, seed=5)
    assert (lstm.cell_dim, lstm.proj_dim, lstm.learn_rate_coef, lstm.bias_learn_rate_coef) == \
        (64, 16, 0.5, 0.25)
    assert (lstm.cell_clip, lstm.diff_clip, lstm.cell_diff_clip, lstm.grad_clip) == (10, 2, 3, 4)
    w = lstm.params["w_gifo_x"]
    assert -0.05 <= w.min() < -0.049 and 0.049 < w.max() <= 0.05
    assert (blstm.cell_dim, blstm.proj_dim, blstm.grad_clip, blstm.diff_clip) == (48, 16, 250, 1)
    fb = blstm.params["f_bias"]
    assert 0.9 <= fb[96:144].min() and fb[96:144].max() <= 1.1   # Kaldi's +1 on forget gates
    assert np.abs(np.delete(fb, np.s_[96:144])).max() <= 0.1
    # the tools: nnet-initialize, nnet-copy to text, nnet-info
    (tmp_path / "p").write_text(proto)
    assert load_bin("nnet-initialize.py").main([str(tmp_path / "p"), str(tmp_path / "n")]) == 0
    assert load_bin("nnet-copy.py").main(["--binary=false", str(tmp_path / "n"),
                                          str(tmp_path / "t")]) == 0
    assert (tmp_path / "t").read_text().startswith("<Nnet> \n<LstmProjected> 16 20 \n<CellDim> 64 ")
    assert load_bin("nnet-info.py").main([str(tmp_path / "t")]) == 0
    out = capsys.readouterr().out
    assert ("component 1 : <LstmProjected>, input-dim 20, output-dim 16, cell-dim 64 "
            "( learn_rate_coef_ 0.5, bias_learn_rate_coef_ 0.25, cell_clip_ 10, diff_clip_ 2, "
            "grad_clip_ 4 )\n  w_gifo_x_   ( min ") in out
    assert "cell-dim 2x48 " in out and "\n  Backward Direction weights:\n  b_w_gifo_x_ " in out
    for bad, what in (("<CellDim> 64", "<CellDim>"), ("<GradClip> 4", "<GradClip> 4 <Typo> 1")):
        with pytest.raises(FormatError, match="CellDim|unknown token <Typo>"):
            init_components(proto.replace("<CellDim> 64", "") if what == "<CellDim>"
                            else proto.replace(bad, what))


def test_nnet_forward_runs_a_recurrent_model_per_utterance(tmp_path):
    """nnet-forward: each utterance from a zero state (no seq lengths: one stream per call)."""
    rng = np.random.default_rng(12)
    comp = _lstm(rng, I=3)
    Nnet([comp]).write(str(tmp_path / "m"))
    feats = {"u1": rng.standard_normal((5, 3)).astype(np.float32),
             "u2": rng.standard_normal((3, 3)).astype(np.float32)}
    with TableWriter(f"ark:{tmp_path / 'f.ark'}") as w:
        for k, v in feats.items():
            w[k] = v
    tool = load_bin("nnet-forward.py")
    assert tool.main([str(tmp_path / "m"), f"ark:{tmp_path / 'f.ark'}",
                      f"ark,t:{tmp_path / 'o.ark'}"]) == 0
    with SequentialReader(f"ark:{tmp_path / 'o.ark'}") as r:
        out = dict(r)
    for k, v in feats.items():
        np.testing.assert_allclose(out[k], ref_lstm(comp, v.astype(np.float64), [len(v)])[0],
                                   rtol=1e-4, atol=1e-6)


@pytest.mark.slow
def test_cuda_backend_on_simulator():
    run_cuda_checks(Path(__file__).resolve().parent / "lstm_cuda_checks.py")
