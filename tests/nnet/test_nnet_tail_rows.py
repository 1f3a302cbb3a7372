"""Nnet.propagate(x, rows=...): the row-wise tail after the last recurrent layer runs on the
trained rows only (CSC-BPTT's context frames and padding are left out of the output layer), with
the same outputs, parameter gradients and input derivative as running every row and zeroing
the derivative of the others; and a CSC-BPTT epoch trains the same model either way."""
import numpy as np
import pytest
from helpers import memory_blstm, memory_utts

from nnetmix.kernels import get_backend
from nnetmix.nnet import (AffineTransform, BlstmProjected, LstmProjected, Nnet, NnetError,
                          NnetTrainOptions, init_components)
from nnetmix.train import PerUttOptions, TrainOptions, train_streams_epoch

#: networks by the place where the tail starts: after a BLSTM, with a fused affine + sigmoid
#: pair inside the tail; the tail empty (the last layer is recurrent); no recurrent layer at all
#: (the whole network is the tail); an affine layer below the recurrent ones
PROTOS = {
    "blstm-tail": ("<BlstmProjected> <InputDim> 3 <OutputDim> 4 <CellDim> 3 <ParamRange> 0.5\n"
                   "<AffineTransform> <InputDim> 4 <OutputDim> 5 <ParamStddev> 0.5\n"
                   "<Sigmoid> <InputDim> 5 <OutputDim> 5\n"
                   "<AffineTransform> <InputDim> 5 <OutputDim> 6 <ParamStddev> 0.5\n"
                   "<Softmax> <InputDim> 6 <OutputDim> 6\n", 1),
    "no-tail": ("<AffineTransform> <InputDim> 3 <OutputDim> 4 <ParamStddev> 0.5\n"
                "<LstmProjected> <InputDim> 4 <OutputDim> 3 <CellDim> 4 <ParamRange> 0.5\n", 2),
    "all-tail": ("<AffineTransform> <InputDim> 3 <OutputDim> 5 <ParamStddev> 0.5\n"
                 "<Tanh> <InputDim> 5 <OutputDim> 5\n"
                 "<AffineTransform> <InputDim> 5 <OutputDim> 4 <ParamStddev> 0.5\n", 0),
    "affine-lstm-blstm": ("<AffineTransform> <InputDim> 3 <OutputDim> 4 <ParamStddev> 0.5\n"
                          "<LstmProjected> <InputDim> 4 <OutputDim> 3 <CellDim> 4 "
                          "<ParamRange> 0.5\n"
                          "<BlstmProjected> <InputDim> 3 <OutputDim> 4 <CellDim> 2 "
                          "<ParamRange> 0.5\n"
                          "<AffineTransform> <InputDim> 4 <OutputDim> 6 <ParamStddev> 0.5\n"
                          "<Softmax> <InputDim> 6 <OutputDim> 6\n", 3),
}


def _csc_rows(T: int, S: int, left: int, right: int, lengths) -> np.ndarray:
    """The trained rows of S interleaved chunks (row t*S + s): not context, not padding."""
    t = np.arange(T)[:, None]
    keep = (t >= left) & (t < np.asarray(lengths)[None, :] - right)
    return np.flatnonzero(keep.ravel())


def _run(net, x, rows, dy, lengths):
    """(output, flat grads, input derivative) of one forward/backward from zeroed grads."""
    net.set_seq_lengths(lengths)
    net.reset_streams([1] * len(lengths))
    out = np.array(net.propagate(x, through_softmax=False, rows=rows))
    net.grads[...] = 0
    dx = net.backpropagate(dy, input_diff=True)
    return out, np.array(net.grads), np.array(dx)


@pytest.mark.parametrize("name", list(PROTOS))
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_tail_on_trained_rows_gives_the_masked_gradients(name, dtype, tol):
    """Every row computed with a derivative zeroed on the context and padding rows (what the
    trainer did before), against the tail on the trained rows: the same output rows, every
    parameter gradient and the input derivative (float64: to rounding; float32: 2e-5)."""
    proto, start = PROTOS[name]
    net = Nnet(init_components(proto, seed=5), backend=get_backend("cpu"), dtype=dtype)
    assert net.tail_start() == start
    rng = np.random.default_rng(1)
    S, T, lengths = 3, 9, [9, 7, 5]   # chunks of 2 + up to 5 + 2 frames, two of them padded
    x = rng.standard_normal((T * S, net.input_dim)).astype(dtype)
    rows = _csc_rows(T, S, 2, 2, lengths)
    assert 0 < len(rows) < T * S
    dy_rows = rng.standard_normal((len(rows), net.output_dim)).astype(dtype)
    dy_full = np.zeros((T * S, net.output_dim), dtype)
    dy_full[rows] = dy_rows
    out_f, g_f, dx_f = _run(net, x, None, dy_full, lengths)
    out_t, g_t, dx_t = _run(net, x, rows, dy_rows, lengths)
    assert out_t.shape == (len(rows), net.output_dim)
    scale = max(1.0, float(np.abs(g_f).max()))
    np.testing.assert_allclose(out_t, out_f[rows], rtol=tol, atol=tol)
    np.testing.assert_allclose(g_t, g_f, rtol=tol, atol=tol * scale)
    np.testing.assert_allclose(dx_t, dx_f, rtol=tol, atol=tol)
    assert np.all(dx_t[np.setdiff1d(np.arange(T * S), rows)] == 0) or start > 0
    # and again: the buffers sized for the tail's rows do not leak into a full pass
    out_f2, g_f2, _ = _run(net, x, None, dy_full, lengths)
    assert np.array_equal(out_f2, out_f) and np.array_equal(g_f2, g_f)


def test_rows_out_of_range_are_refused():
    net = Nnet(init_components(PROTOS["blstm-tail"][0], seed=5), backend=get_backend("cpu"))
    x = np.zeros((4, 3), np.float32)
    with pytest.raises(NnetError, match="rows must be indices of the input's 4 rows"):
        net.propagate(x, rows=np.array([0, 4]))


def test_a_non_rowwise_layer_keeps_the_tail_after_it():
    """The tail starts after the last layer that is not row by row (<Splice> mixes rows)."""
    proto = ("<Splice> <InputDim> 3 <OutputDim> 9 <BuildVector> -1:1 </BuildVector>\n"
             "<AffineTransform> <InputDim> 9 <OutputDim> 4 <ParamStddev> 0.5\n"
             "<Softmax> <InputDim> 4 <OutputDim> 4\n")
    assert Nnet(init_components(proto, seed=1)).tail_start() == 1
    assert isinstance(init_components(PROTOS["no-tail"][0])[1], LstmProjected)
    assert isinstance(init_components(PROTOS["blstm-tail"][0])[0], BlstmProjected)
    assert isinstance(init_components(PROTOS["all-tail"][0])[0], AffineTransform)


def test_csc_epoch_trains_the_same_model_as_every_row(monkeypatch):
    """Two CSC-BPTT epochs (4-10+4, padded short chunks) of the look-ahead BLSTM: the tail on
    the trained rows, against the tail started at the network's end (every row through the
    output layer, the logits of the trained rows taken, as the trainer did before): the same
    loss, accuracy and, to float32 rounding, the same parameters."""
    rng = np.random.default_rng(2)
    utts = memory_utts(rng, 20, k=-3, min_len=8, max_len=40)
    copts = PerUttOptions(num_streams=5, chunk_size=10, chunk_left_context=4,
                          chunk_right_context=4)
    upd = NnetTrainOptions(learn_rate=0.02, momentum=0.5)

    def train():
        net = memory_blstm()
        stats = [train_streams_epoch(net, utts, TrainOptions(), copts, upd) for _ in range(2)]
        return np.array(net.params), stats

    p_tail, s_tail = train()
    monkeypatch.setattr(Nnet, "tail_start", lambda self: len(self.components))
    p_all, s_all = train()
    assert not np.array_equal(p_tail, np.array(memory_blstm().params))
    np.testing.assert_allclose(p_tail, p_all, rtol=1e-4, atol=1e-5)
    for a, b in zip(s_tail, s_all):
        assert a.frames == b.frames and a.correct == b.correct
        assert a.xent_sum == pytest.approx(b.xent_sum, rel=1e-5)
