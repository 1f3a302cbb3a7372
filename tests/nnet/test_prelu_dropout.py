"""<ParametricRelu> and <Dropout>: gradients in float64, Kaldi's update, the dropout masks and
test-time identity, the file format (bytes, a hand-written Kaldi text file), prototypes and
nnet-copy --dropout-rate."""
import struct

import numpy as np
import pytest
from helpers import backends, central_differences, load_bin
from numpy_backend import NumpyBackend

from nnetmix.errors import FormatError
from nnetmix.kernels import get_backend
from nnetmix.nnet import (AffineTransform, Dropout, Nnet, NnetError, NnetTrainOptions,
                          ParametricRelu, ProtoOptions, Sigmoid, Softmax, make_nnet_proto,
                          read_nnet)
from nnetmix.nnet.init import init_components

EPS = 1e-6
TOL = 1e-6


def _prelu_net(rng, d=5, hid=7):
    """Affine -> ParametricRelu (random alpha, beta, both trained) -> Dropout -> Affine."""
    return Nnet([AffineTransform(d, hid, rng.standard_normal((hid, d)), rng.standard_normal(hid)),
                 ParametricRelu(hid, hid, rng.uniform(0.5, 1.5, hid), rng.uniform(-0.3, 0.3, hid),
                                1.0, 0.5),
                 Dropout(hid, hid, 0.3),
                 AffineTransform(hid, 3, rng.standard_normal((3, hid)), rng.standard_normal(3))])


def _loss(net, be, x, r, training):
    # restarting the mask stream gives every evaluation the same dropout mask
    net.set_training(training, seed=5)
    return float((be.to_host(net.propagate(be.asarray(x))) * r).sum())


@pytest.mark.parametrize("be", backends())
@pytest.mark.parametrize("training", [False, True], ids=["test", "train"])
def test_gradients_by_finite_differences(be, training):
    """dL/dx, dL/dalpha, dL/dbeta (and the affine layers') of L = sum(R * y) in float64."""
    rng = np.random.default_rng(11)
    net = _prelu_net(rng).to_backend(be, np.float64)
    x = rng.standard_normal((9, 5))
    r = rng.standard_normal((9, 3))
    _loss(net, be, x, r, training)
    dx = be.to_host(net.backpropagate(be.asarray(r)))
    grads = be.to_host(net.grads).copy()
    num_dx = central_differences(lambda v: _loss(net, be, v, r, training), x, EPS)
    np.testing.assert_allclose(dx, num_dx, rtol=TOL, atol=TOL * np.abs(num_dx).max())
    p0 = be.to_host(net.params).copy()

    def at(p):
        net.set_params(p)
        return _loss(net, be, x, r, training)

    num = central_differences(at, p0, EPS)
    net.set_params(p0)
    blocks = net.offsets(1)
    assert set(blocks) == {"alpha", "beta"}
    for name in ("alpha", "beta"):  # the PReLU blocks on their own, then everything
        s = slice(blocks[name].offset, blocks[name].offset + blocks[name].size)
        assert np.abs(num[s]).max() > 1e-3
        np.testing.assert_allclose(grads[s], num[s], rtol=TOL, atol=TOL * np.abs(num[s]).max())
    np.testing.assert_allclose(grads, num, rtol=TOL, atol=TOL * np.abs(num).max())
    if training:  # the mask really dropped something: the training gradient differs
        _loss(net, be, x, r, False)
        assert not np.allclose(be.to_host(net.backpropagate(be.asarray(r))), dx)


def test_plain_relu_is_the_default_and_kaldis_kernel():
    """alpha where x > 0, beta where x <= 0 (cu-kernels.cu _parametric_relu)."""
    be = get_backend("cpu")
    x = np.array([[-2.0, 0.0, 3.0], [1.0, -1.0, 0.5]], np.float32)
    relu = Nnet([ParametricRelu(3, 3)])
    np.testing.assert_array_equal(relu.propagate(x), np.maximum(x, 0))
    p = Nnet([ParametricRelu(3, 3, [1, 2, 3], [0.1, 0.2, 0.3])])
    np.testing.assert_allclose(p.propagate(x), [[-0.2, 0.0, 9.0], [1.0, -0.2, 1.5]], rtol=1e-6)
    dx = be.to_host(p.backpropagate(np.ones_like(x)))
    np.testing.assert_allclose(dx, [[0.1, 0.2, 3.0], [1.0, 0.2, 3.0]], rtol=1e-6)


@pytest.mark.parametrize("be", backends())
def test_update_is_kaldis_momentum_sgd(be):
    """corr = momentum * corr + grad; alpha -= lr * coef * corr; a coefficient 0 freezes."""
    rng = np.random.default_rng(3)
    # (a component stores its parameters as float32 until it is moved to a backend)
    a0, b0 = (rng.uniform(0.5, 1.5, 4).astype(np.float32).astype(np.float64),
              rng.uniform(-0.5, 0.5, 4).astype(np.float32).astype(np.float64))
    net = Nnet([ParametricRelu(4, 4, a0, b0, 0.5, 0.0)]).to_backend(be, np.float64)
    opts = NnetTrainOptions(learn_rate=0.1, momentum=0.9, l2_penalty=0.01)
    corr = np.zeros(4)
    alpha = a0.copy()
    for step in range(3):
        x, dy = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
        net.propagate(be.asarray(x))
        net.backpropagate(be.asarray(dy))
        net.update(opts)
        corr = 0.9 * corr + (np.maximum(x, 0) * dy).sum(0)  # no L2 on alpha, as Kaldi
        alpha -= 0.1 * 0.5 * corr
        host = net.host_params()[0]
        np.testing.assert_allclose(host["alpha"], alpha, rtol=1e-12)
        np.testing.assert_array_equal(host["beta"], b0)


@pytest.mark.parametrize("rate", [0.1, 0.5, 0.8])
def test_dropout_mask_statistics(rate):
    """Kept fraction 1 - rate (within 4 sigma), kept entries scaled by 1 / (1 - rate), the mask
    new at every step, not the same in every row or column, and the backward pass the same
    mask."""
    be = get_backend("cpu")
    n, d = 400, 50
    net = Nnet([Dropout(d, d, rate)])
    x = np.ones((n, d), np.float32)
    net.set_training(True, seed=1)
    masks = []
    for _ in range(5):
        y = be.to_host(net.propagate(x))
        kept = y != 0
        np.testing.assert_allclose(y[kept], 1.0 / (1.0 - rate), rtol=1e-6)
        sigma = np.sqrt(rate * (1 - rate) / kept.size)
        assert abs(kept.mean() - (1 - rate)) < 4 * sigma
        dx = be.to_host(net.backpropagate(np.full((n, d), 2.0, np.float32)))
        np.testing.assert_array_equal(dx != 0, kept)
        np.testing.assert_allclose(dx[kept], 2.0 / (1.0 - rate), rtol=1e-6)
        masks.append(kept)
    for a, b in zip(masks, masks[1:]):
        agree = (a == b).mean()  # independent masks agree with p^2 + (1-p)^2
        assert abs(agree - (rate ** 2 + (1 - rate) ** 2)) < 0.03
    cols, rows = masks[0].mean(0), masks[0].mean(1)
    assert cols.std() > 0 and rows.std() > 0
    # the same seed gives the same masks; another seed others
    net.set_training(True, seed=1)
    np.testing.assert_array_equal(be.to_host(net.propagate(x)) != 0, masks[0])
    net.set_training(True, seed=2)
    assert not np.array_equal(be.to_host(net.propagate(x)) != 0, masks[0])


def test_dropout_is_identity_at_test_time(tmp_path):
    """A network read from a file is in test mode (nnet-forward, decoders, cross-validation);
    set_training(False) after training switches dropout off again."""
    rng = np.random.default_rng(5)
    net = _prelu_net(rng)
    net.write(str(tmp_path / "m"))
    ref = Nnet(net.copy_components()[:2] + net.copy_components()[3:])  # without the Dropout
    x = rng.standard_normal((20, 5)).astype(np.float32)
    back = read_nnet(str(tmp_path / "m"))
    assert not back.training
    np.testing.assert_array_equal(back.propagate(x), ref.propagate(x))
    back.set_training(True)
    assert not np.array_equal(back.propagate(x), ref.propagate(x))
    back.set_training(False)
    np.testing.assert_array_equal(back.propagate(x), ref.propagate(x))
    forward = load_bin("nnet-forward.py")
    from helpers import write_feats
    feats = write_feats(tmp_path, [("u1", x)])
    assert forward.main([f"--no-softmax=true", str(tmp_path / "m"), feats,
                         f"ark,t:{tmp_path / 'out.ark'}"]) == 0
    out = (tmp_path / "out.ark").read_text().split("[")[1].split("]")[0]
    got = np.array([[float(v) for v in row.split()] for row in out.strip().splitlines()])
    np.testing.assert_allclose(got, ref.propagate(x), rtol=1e-5, atol=1e-5)


# -- files -----------------------------------------------------------------------------------
# written by hand from nnet-parametric-relu.h / nnet-activation.h WriteData and Component::Write
KALDI_TEXT = """<Nnet>
<ParametricRelu> 3 3
<AlphaLearnRateCoef> 0.5 <BetaLearnRateCoef> 0
 [ 1 2 0.5 ]
 [ 0 0.25 -1 ]
<!EndOfComponent>
<Dropout> 3 3
<DropoutRetention> 0.8 <!EndOfComponent>
<Dropout> 3 3
<DropoutRate> 0.1
<!EndOfComponent>
</Nnet>
"""


def test_hand_written_kaldi_text(tmp_path):
    (tmp_path / "k").write_text(KALDI_TEXT)
    net = read_nnet(str(tmp_path / "k"))
    p, d1, d2 = net.components
    assert isinstance(p, ParametricRelu) and isinstance(d1, Dropout)
    assert (p.alpha_learn_rate_coef, p.beta_learn_rate_coef) == (np.float32(0.5), 0)
    host = net.host_params()[0]
    np.testing.assert_array_equal(host["alpha"], [1, 2, 0.5])
    np.testing.assert_array_equal(host["beta"], [0, 0.25, -1])
    assert d1.dropout_rate == np.float32(1 - np.float32(0.8)) and d2.dropout_rate == np.float32(0.1)
    assert net.num_params == 6
    assert net.to_bytes(binary=False).decode() == (
        "<Nnet> \n<ParametricRelu> 3 3 \n<AlphaLearnRateCoef> 0.5 <BetaLearnRateCoef> 0 \n"
        " [ 1 2 0.5 ]\n [ 0 0.25 -1 ]\n<!EndOfComponent> \n"
        f"<Dropout> 3 3 \n<DropoutRate> {'{:.7g}'.format(d1.dropout_rate)} <!EndOfComponent> \n"
        "<Dropout> 3 3 \n<DropoutRate> 0.1 <!EndOfComponent> \n</Nnet> \n")
    lines = net.info().splitlines()
    assert lines[4] == "component 1 : <ParametricRelu>, input-dim 3, output-dim 3, "
    assert lines[5].startswith("  alpha ( min 0.5, max 2, mean 1.16667, ")
    assert lines[5].endswith(" ) , alpha-lr-coef 0.5")
    assert lines[6].startswith("  beta ( min -1, max 0.25, ") and lines[6].endswith("beta-lr-coef 0")
    assert lines[8] == "component 3 : <Dropout>, input-dim 3, output-dim 3, <DropoutRate> 0.1"


def test_binary_bytes(tmp_path):
    a, b = np.array([1, 2], np.float32), np.array([0, -0.5], np.float32)
    Nnet([ParametricRelu(2, 2, a, b, 0.0, 0.25), Dropout(2, 2, 0.2)]).write(str(tmp_path / "m"))

    def i32(v):
        return b"\x04" + struct.pack("<i", v)

    def f32(v):
        return b"\x04" + struct.pack("<f", v)

    assert (tmp_path / "m").read_bytes() == (
        b"\0B<Nnet> <ParametricRelu> " + i32(2) + i32(2) + b"<AlphaLearnRateCoef> " + f32(0.0)
        + b"<BetaLearnRateCoef> " + f32(0.25) + b"FV " + i32(2) + a.tobytes() + b"FV " + i32(2)
        + b.tobytes() + b"<!EndOfComponent> <Dropout> " + i32(2) + i32(2) + b"<DropoutRate> "
        + f32(0.2) + b"<!EndOfComponent> </Nnet> ")


@pytest.mark.parametrize("binary", [True, False])
def test_round_trip_byte_for_byte(tmp_path, binary):
    net = _prelu_net(np.random.default_rng(8))
    net.write(str(tmp_path / "a"), binary=binary)
    back = read_nnet(str(tmp_path / "a"))
    back.write(str(tmp_path / "b"), binary=binary)
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    if binary:
        assert back.params.tobytes() == net.params.tobytes()
    assert back.components[2].dropout_rate == np.float32(0.3)
    assert back.components[1].beta_learn_rate_coef == np.float32(0.5)


@pytest.mark.parametrize("text, what", [
    ("<Nnet> <ParametricRelu> 3 2 [ 1 1 ] [ 0 0 ] </Nnet>", "input dim 2 != output dim 3"),
    ("<Nnet> <ParametricRelu> 2 2 <Gamma> 1 [ 1 1 ] [ 0 0 ] </Nnet>", "<Gamma>"),
    ("<Nnet> <ParametricRelu> 2 2 [ 1 1 1 ] [ 0 0 ] </Nnet>", "bad alpha vector"),
    ("<Nnet> <Dropout> 2 2 <DropoutRate> 1 </Nnet>", "outside [0, 1)"),
    ("<Nnet> <Dropout> 2 2 <Rate> 0.1 </Nnet>", "<Rate>"),
])
def test_bad_files_name_file_and_component(tmp_path, text, what):
    (tmp_path / "bad").write_text(text)
    with pytest.raises(FormatError) as e:
        read_nnet(str(tmp_path / "bad"))
    assert what in str(e.value) and "bad" in str(e.value) and "component 1" in str(e.value)


# -- prototypes and tools --------------------------------------------------------------------
def test_relu_dropout_prototype_and_initialize():
    o = ProtoOptions(activation_type="<ParametricRelu>", with_dropout=True,
                     dropout_opts="<DropoutRate>_0.2", hid_bias_mean=0.0, hid_bias_range=0.0)
    text = make_nnet_proto(10, 4, 2, 8, o)
    lines = text.splitlines()
    assert lines[1] == "<ParametricRelu> <InputDim> 8 <OutputDim> 8 "
    assert lines[2] == "<Dropout> <InputDim> 8 <OutputDim> 8 <DropoutRate> 0.2"
    assert [ln.split()[0] for ln in lines] == [
        "<AffineTransform>", "<ParametricRelu>", "<Dropout>", "<AffineTransform>",
        "<ParametricRelu>", "<Dropout>", "<AffineTransform>", "<Softmax>"]
    comps = init_components(text)
    relu = comps[1]
    assert isinstance(relu, ParametricRelu) and relu.alpha_learn_rate_coef == 0
    np.testing.assert_array_equal(relu.params["alpha"], 1)
    np.testing.assert_array_equal(relu.params["beta"], 0)
    assert comps[2].dropout_rate == np.float32(0.2)
    c = init_components("<ParametricRelu> <InputDim> 2 <OutputDim> 2 <Alpha> 0.5 <Beta> 0.1 "
                        "<AlphaLearnRateCoef> 1 <BetaLearnRateCoef> 2\n"
                        "<Dropout> <InputDim> 2 <OutputDim> 2\n")
    np.testing.assert_array_equal(c[0].params["beta"], np.float32(0.1))
    assert (c[0].alpha_learn_rate_coef, c[0].beta_learn_rate_coef) == (1, 2)
    assert c[1].dropout_rate == np.float32(0.5)  # Kaldi's default
    with pytest.raises(FormatError, match="proto:1: .*<Gamma>"):
        init_components("<ParametricRelu> <InputDim> 2 <OutputDim> 2 <Gamma> 1\n", name="proto")
    with pytest.raises(FormatError, match="proto:1: .*input and output dims differ"):
        init_components("<ParametricRelu> <InputDim> 2 <OutputDim> 3\n", name="proto")
    with pytest.raises(FormatError, match="proto:1: .*outside"):
        init_components("<Dropout> <InputDim> 2 <OutputDim> 2 <DropoutRate> 1.5\n", name="proto")


def test_make_nnet_proto_tool_options(capsys):
    tool = load_bin("make-nnet-proto.py")
    assert tool.main(["--print-args=false", "--activation-type=<ParametricRelu>",
                      "--activation-opts=<AlphaLearnRateCoef>_0.1_<BetaLearnRateCoef>_0.1",
                      "--with-dropout", "--dropout-opts=<DropoutRate>_0.1", "6", "3", "1", "4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == ("<ParametricRelu> <InputDim> 4 <OutputDim> 4 <AlphaLearnRateCoef> 0.1 "
                      "<BetaLearnRateCoef> 0.1")
    assert out[2] == "<Dropout> <InputDim> 4 <OutputDim> 4 <DropoutRate> 0.1"


def test_nnet_copy_dropout_rate(tmp_path, capsys):
    rng = np.random.default_rng(1)
    _prelu_net(rng).write(str(tmp_path / "a"))
    copy = load_bin("nnet-copy.py")
    assert copy.main(["--dropout-rate=0.0", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert read_nnet(str(tmp_path / "b")).components[2].dropout_rate == 0
    assert "Setting dropout-rate in component 2 from 0.3 to 0\n" in capsys.readouterr().err
    assert copy.main([str(tmp_path / "a"), str(tmp_path / "c")]) == 0  # -1 keeps the rate
    assert read_nnet(str(tmp_path / "c")).components[2].dropout_rate == np.float32(0.3)
    assert copy.main(["--dropout-rate=1.0", str(tmp_path / "a"), str(tmp_path / "d")]) == 1


def test_component_errors():
    with pytest.raises(NnetError, match="outside"):
        Dropout(3, 3, -0.1)
    with pytest.raises(NnetError, match="dims differ"):
        ParametricRelu(3, 4)
    net = Nnet([AffineTransform(2, 2), ParametricRelu(2, 2), Sigmoid(2, 2), Softmax(2, 2)])
    assert net.num_params == 6 + 4
