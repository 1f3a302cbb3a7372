"""The nnet1 file format: round trips, a hand-written file, byte layout, corrupt files."""
import struct

import numpy as np
import pytest
from helpers import HAND_TEXT, every_component_net

from nnetmix.errors import FormatError
from nnetmix.nnet import (AddShift, AffineTransform, LinearTransform, Nnet, Rbm, Rescale, Sigmoid,
                          Softmax, Splice, Tanh, read_nnet)


def _rich_net() -> Nnet:
    rng = np.random.default_rng(777)
    net = every_component_net(rng)
    rbm = Rbm(6, 2, rng.standard_normal((2, 6)), rng.standard_normal(6), rng.standard_normal(2),
              "gauss", "bern")
    return net.concat(Nnet([rbm]))


@pytest.mark.parametrize("binary", [True, False])
def test_round_trip_is_bit_exact(tmp_path, binary):
    net = _rich_net()
    a = tmp_path / "a.nnet"
    net.write(str(a), binary=binary)
    back = read_nnet(str(a))
    if binary:  # binary keeps every bit of every float
        assert back.params.tobytes() == net.params.tobytes()
    b = tmp_path / "b.nnet"
    back.write(str(b), binary=binary)
    assert a.read_bytes() == b.read_bytes()
    if not binary:  # text -> binary -> text keeps the text (binary -> text rounds to 7 digits)
        c = tmp_path / "c.nnet"
        back.write(str(c), binary=True)
        read_nnet(str(c)).write(str(tmp_path / "d.nnet"), binary=False)
        assert (tmp_path / "d.nnet").read_bytes() == a.read_bytes()
    assert [type(c) for c in back.components] == [type(c) for c in net.components]
    assert back.components[3].bias_learn_rate_coef == np.float32(0.1)
    assert back.components[3].max_norm == np.float32(2.5)
    assert back.components[1].learn_rate_coef == np.float32(0.5)
    np.testing.assert_array_equal(back.components[0].offsets, [-1, 0, 2])
    assert (back.components[-1].vis_type, back.components[-1].hid_type) == ("gauss", "bern")


def test_text_layout_is_kaldis():
    net = Nnet([AffineTransform(2, 1, [[1.5, -2]], [0.25], 1, 0.1, 0), Sigmoid(1, 1),
                Splice(1, 2, [0, 1]), AddShift(2, 2, [1, 2], 0), Rescale(2, 2, [3, 4]),
                LinearTransform(2, 1, [[1, 2]], 0.5)])
    assert net.to_bytes(binary=False).decode() == (
        "<Nnet> \n"
        "<AffineTransform> 1 2 \n<LearnRateCoef> 1 <BiasLearnRateCoef> 0.1 <MaxNorm> 0 \n"
        " [\n  1.5 -2 ]\n [ 0.25 ]\n<!EndOfComponent> \n"
        "<Sigmoid> 1 1 \n<!EndOfComponent> \n"
        "<Splice> 2 1 \n[ 0 1 ]\n<!EndOfComponent> \n"
        "<AddShift> 2 2 \n<LearnRateCoef> 0  [ 1 2 ]\n<!EndOfComponent> \n"
        "<Rescale> 2 2 \n<LearnRateCoef> 1  [ 3 4 ]\n<!EndOfComponent> \n"
        "<LinearTransform> 1 2 \n<LearnRateCoef> 0.5 \n [\n  1 2 ]\n<!EndOfComponent> \n"
        "</Nnet> \n")


def test_binary_layout_of_one_affine_layer_byte_by_byte(tmp_path):
    W = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    b = np.array([0.5, -0.5], np.float32)
    Nnet([AffineTransform(3, 2, W, b, 1.0, 0.1, 0.0)]).write(str(tmp_path / "m"), binary=True)

    def i32(v):
        return b"\x04" + struct.pack("<i", v)

    def f32(v):
        return b"\x04" + struct.pack("<f", v)

    expected = (b"\0B" + b"<Nnet> " + b"<AffineTransform> " + i32(2) + i32(3)
                + b"<LearnRateCoef> " + f32(1.0) + b"<BiasLearnRateCoef> " + f32(0.1)
                + b"<MaxNorm> " + f32(0.0)
                + b"FM " + i32(2) + i32(3) + W.astype("<f4").tobytes()
                + b"FV " + i32(2) + b.astype("<f4").tobytes()
                + b"<!EndOfComponent> " + b"</Nnet> ")
    assert (tmp_path / "m").read_bytes() == expected


def test_hand_written_text_file_with_every_component(tmp_path):
    p = tmp_path / "hand.nnet"
    p.write_text(HAND_TEXT)
    net = read_nnet(str(p))
    assert [type(c) for c in net.components] == [Splice, AddShift, Rescale, AffineTransform,
                                                 Sigmoid, LinearTransform, Tanh, Rbm, Softmax]
    assert (net.input_dim, net.output_dim) == (2, 4)
    h = net.host_params()
    np.testing.assert_array_equal(net.components[0].offsets, [-1, 0, 1])
    np.testing.assert_array_equal(h[1]["shift"], [-1, -2, -3, -4, -5, -6])
    np.testing.assert_array_equal(h[2]["scale"], [0.5, 0.5, 2, 2, 1, 1])
    assert net.components[1].learn_rate_coef == 0
    np.testing.assert_array_equal(h[3]["W"][2], [1, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(h[3]["b"], np.float32([0.5, -0.5, 0]))
    assert net.components[3].bias_learn_rate_coef == np.float32(0.1)
    np.testing.assert_array_equal(h[5]["W"], [[1, 2, 3], [4, 5, 6]])
    assert net.components[5].learn_rate_coef == np.float32(0.5)
    np.testing.assert_array_equal(h[7]["W"], [[1, 0], [0, 1], [1, 1], [-1, 1]])
    np.testing.assert_array_equal(h[7]["vis_bias"], np.float32([0.1, 0.2]))
    np.testing.assert_array_equal(h[7]["hid_bias"], [0, 0.5, 1, -1])
    # what it computes, against numpy
    from numpy_backend import NumpyBackend
    x = np.array([[1, 2], [3, 4], [5, 6]], np.float64)
    y = net.to_backend(NumpyBackend(), np.float64).propagate(x)
    s = np.hstack([x[[0, 0, 1]], x, x[[1, 2, 2]]])
    s = (s + [-1, -2, -3, -4, -5, -6]) * [0.5, 0.5, 2, 2, 1, 1]
    a = 1 / (1 + np.exp(-(s @ h[3]["W"].T.astype(np.float64) + h[3]["b"])))
    a = np.tanh(a @ h[5]["W"].T)
    a = 1 / (1 + np.exp(-(a @ h[7]["W"].T + h[7]["hid_bias"])))
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-6)
    # the Rbm as AffineTransform + Sigmoid on load
    ff = read_nnet(str(p), rbm_to_affine=True)
    assert [c.marker for c in ff.components][7:] == ["<AffineTransform>", "<Sigmoid>", "<Softmax>"]
    np.testing.assert_array_equal(ff.host_params()[7]["b"], h[7]["hid_bias"])


def test_kaldi_variants_are_accepted(tmp_path):
    """Markers in any case, no <!EndOfComponent>, no <Nnet> header, no <LearnRateCoef> tokens."""
    p = tmp_path / "old.nnet"
    p.write_text("<affinetransform> 2 2\n [\n 1 0\n 0 1 ]\n [ 1 2 ]\n<SIGMOID> 2 2\n")
    net = read_nnet(str(p))
    assert [c.marker for c in net.components] == ["<AffineTransform>", "<Sigmoid>"]
    assert net.components[0].learn_rate_coef == 1 and net.components[0].max_norm == 0


def _corrupt_cases(good_bin: bytes):
    i = good_bin.index(b"FM ")
    return {
        "truncated in the weights": (good_bin[:i + 20], "truncated"),
        "truncated before </Nnet>": (good_bin[:good_bin.index(b"</Nnet>")], "</Nnet>"),
        "unknown component": (good_bin.replace(b"<Sigmoid>", b"<Sigmoix>"), "<Sigmoix>"),
        "bad token": (good_bin.replace(b"<MaxNorm>", b"<MaxNorX>"), "<MaxNorX>"),
        "matrix of wrong shape": (good_bin[:i + 3] + b"\x04" + struct.pack("<i", 3)
                                  + good_bin[i + 8:], "shape"),
    }


@pytest.mark.parametrize("case", ["truncated in the weights", "truncated before </Nnet>",
                                  "unknown component", "bad token", "matrix of wrong shape"])
def test_corrupt_binary_files_name_file_and_offset(tmp_path, case):
    net = Nnet([AffineTransform(3, 2), Sigmoid(2, 2)])
    data, what = _corrupt_cases(net.to_bytes(binary=True))[case]
    p = tmp_path / "bad.nnet"
    p.write_bytes(data)
    with pytest.raises(FormatError) as e:
        read_nnet(str(p))
    msg = str(e.value)
    assert msg.startswith(f"{p}: byte ") and what in msg, msg


@pytest.mark.parametrize("text, what", [
    ("<Nnet>\n<AffineTransform> 2 3\n<LearnRateCoef> x\n", "expected a number, got 'x'"),
    ("<Nnet>\n<AffineTransform> 2 3\n [\n 1 2 3\n 4 5 ]\n [ 1 2 ]\n</Nnet>\n", "row 1"),
    ("<Nnet>\n<AffineTransform> 2 3\n [\n 1 2 3\n 4 5 6 ]\n [ 1 2 3 ]\n</Nnet>\n", "shape"),
    ("<Nnet>\n<Sigmoid> 2 2\n<Tanh> 3 3\n</Nnet>\n", "dimension mismatch"),
    ("<Nnet>\n<Splice> 7 2\n[ -1 0 1 ]\n</Nnet>\n", "offsets"),
    ("<Nnet>\n<Rbm> 2 2\nbern poisson\n", "bern or gauss"),
    ("<Nnet>\n<Sigmoid> two 2\n", "integer"),
    ("<Nnet>\n<Sigmoid> 2 2\n", "</Nnet>"),
])
def test_corrupt_text_files(tmp_path, text, what):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(FormatError, match="bad.txt: byte") as e:
        read_nnet(str(p))
    assert what in str(e.value), str(e.value)


def test_error_names_the_component(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_text("<Nnet>\n<Sigmoid> 2 2\n<AffineTransform> 2 2\n<LearnRateCoef> q\n")
    with pytest.raises(FormatError, match=r"component 2 <AffineTransform>"):
        read_nnet(str(p))


def test_write_is_atomic(tmp_path, monkeypatch):
    p = tmp_path / "final.nnet"
    Nnet([Sigmoid(2, 2)]).write(str(p))
    before = p.read_bytes()
    import nnetmix.kaldi.stream as stream

    def boom(self, data):
        raise OSError("disk full")
    monkeypatch.setattr(stream.OutputSink, "write", boom)
    with pytest.raises(OSError):
        Nnet([Tanh(2, 2)]).write(str(p))
    assert p.read_bytes() == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["final.nnet"]


def test_pipes_and_stdout_specifiers(tmp_path):
    net = Nnet([Softmax(3, 3)])
    net.write(f"| gzip -c > {tmp_path}/n.gz", binary=True)
    back = read_nnet(f"gunzip -c {tmp_path}/n.gz |")
    assert back.to_bytes() == net.to_bytes()
