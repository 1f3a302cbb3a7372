"""Prototypes, nnet-initialize, cmvn-to-nnet, the feature transform and the nnet bin/ tools."""
import numpy as np
import pytest
from helpers import load_bin
from numpy_backend import NumpyBackend

from nnetmix.errors import FormatError
from nnetmix.kaldi import TableWriter, write_object
from nnetmix.nnet import (AddShift, AffineTransform, Nnet, ProtoOptions, Rescale, Sigmoid, Splice,
                          build_feature_transform, cmvn_to_nnet, feature_transform_from_table, init_components, make_nnet_proto,
                          read_nnet)

# utils/nnet/make_nnet_proto.py 440 1502 2 1024, as Kaldi's script prints it
KALDI_PROTO = (
    "<AffineTransform> <InputDim> 440 <OutputDim> 1024 <BiasMean> -2.000000 <BiasRange> 4.000000"
    " <ParamStddev> 0.037344 <MaxNorm> 0.000000 \n"
    "<Sigmoid> <InputDim> 1024 <OutputDim> 1024 \n"
    "<AffineTransform> <InputDim> 1024 <OutputDim> 1024 <BiasMean> -2.000000 <BiasRange> 4.000000"
    " <ParamStddev> 0.109375 <MaxNorm> 0.000000 \n"
    "<Sigmoid> <InputDim> 1024 <OutputDim> 1024 \n"
    "<AffineTransform> <InputDim> 1024 <OutputDim> 1502 <BiasMean> 0.000000 <BiasRange> 0.000000"
    " <ParamStddev> 0.098484 <LearnRateCoef> 1.000000 <BiasLearnRateCoef> 0.100000\n"
    "<Softmax> <InputDim> 1502 <OutputDim> 1502\n")


def test_proto_is_kaldis_line_for_line(capsys):
    assert make_nnet_proto(440, 1502, 2, 1024) == KALDI_PROTO
    tool = load_bin("make-nnet-proto.py")
    assert tool.main(["--print-args=false", "440", "1502", "2", "1024"]) == 0
    assert capsys.readouterr().out == KALDI_PROTO
    text = make_nnet_proto(13, 5, 0, 64)
    assert text.endswith("<Softmax> <InputDim> 5 <OutputDim> 5\n</NnetProto>\n")
    assert "<ParamStddev> 1.166667\n" in text
    no_sm = make_nnet_proto(40, 10, 1, 64, ProtoOptions(with_softmax=False, max_norm=2.5))
    assert "<Softmax>" not in no_sm and "<MaxNorm> 2.500000 \n" in no_sm
    assert tool.main(["--print-args=false", "40", "10", "1"]) == 1


def test_initialize_statistics_and_reproducibility(tmp_path):
    proto = make_nnet_proto(440, 300, 2, 512)
    comps = init_components(proto, seed=777)
    assert [c.marker for c in comps] == ["<AffineTransform>", "<Sigmoid>"] * 2 + [
        "<AffineTransform>", "<Softmax>"]
    W0, b0 = comps[0].params["W"], comps[0].params["b"]
    glorot = 0.1 * 35 * np.sqrt(2 / (440 + 512))
    assert W0.std() == pytest.approx(glorot * np.sqrt(1 / 12), rel=0.02)   # smaller input weights
    assert abs(W0.mean()) < 0.002
    assert comps[2].params["W"].std() == pytest.approx(0.1 * 35 * np.sqrt(2 / 1024), rel=0.02)
    for b in (b0, comps[2].params["b"]):                                    # U[-4, 0]
        assert -4.0 <= b.min() < -3.9 and -0.1 < b.max() <= 0.0
        assert b.mean() == pytest.approx(-2.0, abs=0.15)
    out = comps[4]
    assert (out.params["b"] == 0).all() and out.bias_learn_rate_coef == np.float32(0.1)
    assert out.learn_rate_coef == 1 and comps[0].max_norm == 0
    again = init_components(proto, seed=777)
    other = init_components(proto, seed=778)
    assert (again[0].params["W"] == W0).all()
    assert not (other[0].params["W"] == W0).all()
    # the tool, twice: identical files
    (tmp_path / "nnet.proto").write_text(proto)
    tool = load_bin("nnet-initialize.py")
    for name in ("a", "b"):
        assert tool.main([str(tmp_path / "nnet.proto"), str(tmp_path / name)]) == 0
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    assert (tmp_path / "a").read_bytes()[:2] == b"\0B"
    assert read_nnet(str(tmp_path / "a")).to_bytes() == Nnet(again).to_bytes()


def test_proto_of_other_components(tmp_path):
    write_object(str(tmp_path / "m.mat"), np.arange(6, dtype=np.float32).reshape(2, 3), "mat")
    shift = Nnet([AddShift(3, 3, [-0.2, -0.5, -0.9])])
    shift.write(str(tmp_path / "cmvn.nnet"))
    proto = (f"<NnetProto>\n<Splice> <InputDim> 3 <OutputDim> 9 <BuildVector> -2:2:2 </BuildVector>\n"
             f"<LinearTransform> <InputDim> 9 <OutputDim> 3 <ParamStddev> 0.5\n"
             f"<LinearTransform> <InputDim> 3 <OutputDim> 2 <ReadMatrix> {tmp_path}/m.mat\n"
             f"<AddShift> <InputDim> 2 <OutputDim> 2 <InitParam> 1.5\n"
             f"<Rescale> <InputDim> 2 <OutputDim> 2 <InitParam> 2 <LearnRateCoef> 0\n"
             f"<Splice> <InputDim> 2 <OutputDim> 4 <ReadVector> [ -1 1 ]\n"
             f"<Rbm> <InputDim> 4 <OutputDim> 3 <VisibleType> gauss <HiddenType> bern\n"
             f"<Rbm> <InputDim> 3 <OutputDim> 3 <VisibleType> bern <HiddenType> bern "
             f"<VisibleBiasCmvnFilename> {tmp_path}/cmvn.nnet\n"
             f"<Tanh> <InputDim> 3 <OutputDim> 3\n</NnetProto>\n")
    c = init_components(proto)
    np.testing.assert_array_equal(c[0].offsets, [-2, 0, 2])
    np.testing.assert_array_equal(c[2].params["W"], [[0, 1, 2], [3, 4, 5]])
    assert (c[3].params["shift"] == 1.5).all() and c[4].learn_rate_coef == 0
    np.testing.assert_array_equal(c[5].offsets, [-1, 1])
    p = np.float32([0.2, 0.5, 0.9])
    np.testing.assert_allclose(c[7].params["vis_bias"], np.log(p / (1 - p)), rtol=1e-5)
    assert c[6].vis_type == "gauss"
    with pytest.raises(FormatError, match=r"prototype:1: unknown token <Bias>"):
        init_components("<AffineTransform> <InputDim> 2 <OutputDim> 2 <Bias> 1\n")
    with pytest.raises(FormatError, match=r"prototype:2: .*<InputDim> 3.*<OutputDim> is 2"):
        init_components("<Sigmoid> <InputDim> 2 <OutputDim> 2\n<Tanh> <InputDim> 3 <OutputDim> 3\n")


def test_cmvn_to_nnet_against_numpy(tmp_path):
    rng = np.random.default_rng(5)
    feats = rng.standard_normal((500, 6)) * [1, 2, 3, 4, 5, 1e-7] + [10, -3, 0, 1, 2, 0]
    stats = np.zeros((2, 7))
    stats[0, :6], stats[1, :6], stats[0, 6] = feats.sum(0), (feats ** 2).sum(0), len(feats)
    write_object(str(tmp_path / "cmvn.stats"), stats, "mat")
    tool = load_bin("cmvn-to-nnet.py")
    assert tool.main(["--std-dev=2.0", "--binary=true", str(tmp_path / "cmvn.stats"),
                      str(tmp_path / "cmvn.nnet")]) == 0
    net = read_nnet(str(tmp_path / "cmvn.nnet"))
    assert [type(c) for c in net.components] == [AddShift, Rescale]
    assert net.components[0].learn_rate_coef == 0 and net.components[1].learn_rate_coef == 0
    h = net.host_params()
    mean = feats.mean(0)
    var = np.maximum(feats.var(0), 1e-10)
    np.testing.assert_allclose(h[0]["shift"], -mean, rtol=1e-6)
    np.testing.assert_allclose(h[1]["scale"][:5], 2.0 / np.sqrt(var[:5]), rtol=1e-4)
    assert h[1]["scale"][5] == pytest.approx(2.0 / np.sqrt(1e-10), rel=1e-4)  # floored (float32)
    y = net.to_backend(NumpyBackend(), np.float64).propagate(feats)
    np.testing.assert_allclose(y[:, :5].std(0), 2.0, rtol=1e-4)
    np.testing.assert_allclose(y[:, :5].mean(0), 0.0, atol=1e-4)
    assert tool.main([str(tmp_path / "cmvn.stats"), str(tmp_path / "cmvn.txt")]) == 0
    assert (tmp_path / "cmvn.txt").read_bytes().startswith(b"<Nnet> \n<AddShift> 6 6 \n")  # Kaldi: text
    with pytest.raises(Exception, match=r"2 x \(dim\+1\)"):
        cmvn_to_nnet(np.zeros((3, 4)))


def test_feature_transform_as_train_sh_builds_it(tmp_path):
    rng = np.random.default_rng(9)
    utts = [rng.standard_normal((n, 13)) * 3 + 1 for n in (40, 7, 25)]
    ft = build_feature_transform(utts, splice=5)
    with TableWriter(f"ark:{tmp_path}/feats.ark") as w:
        for i, u in enumerate(utts):
            w[f"utt{i}"] = u.astype(np.float32)
    from_table = feature_transform_from_table(f"ark:{tmp_path}/feats.ark", splice=5)
    np.testing.assert_allclose(from_table.params, ft.params, rtol=1e-5)
    assert [type(c) for c in ft.components] == [Splice, AddShift, Rescale]
    assert (ft.input_dim, ft.output_dim) == (13, 143)
    np.testing.assert_array_equal(ft.components[0].offsets, np.arange(-5, 6))
    be = NumpyBackend()
    ft.to_backend(be, np.float64)
    out = np.vstack([be.to_host(ft.propagate(u)).copy() for u in utts])
    np.testing.assert_allclose(out.mean(0), 0.0, atol=1e-5)
    np.testing.assert_allclose(out.std(0), 1.0, rtol=1e-4)
    text = ft.to_bytes(binary=False).decode()
    assert text.startswith("<Nnet> \n<Splice> 143 13 \n[ -5 -4 -3 -2 -1 0 1 2 3 4 5 ]\n")


def test_copy_concat_info_tools(tmp_path, capsys):
    rng = np.random.default_rng(3)
    a = Nnet([AffineTransform(4, 3, rng.standard_normal((3, 4)), np.ones(3)), Sigmoid(3, 3)])
    b = Nnet([AffineTransform(3, 2), Sigmoid(2, 2)])
    a.write(str(tmp_path / "a"))
    b.write(str(tmp_path / "b"), binary=False)
    concat = load_bin("nnet-concat.py")
    assert concat.main(["--binary=false", str(tmp_path / "a"), str(tmp_path / "b"),
                        str(tmp_path / "ab")]) == 0
    ab = read_nnet(str(tmp_path / "ab"))
    assert len(ab) == 4 and ab.num_params == a.num_params + b.num_params
    assert (tmp_path / "ab").read_bytes()[:6] == b"<Nnet>"
    copy = load_bin("nnet-copy.py")
    assert copy.main(["--remove-last-components=2", str(tmp_path / "ab"), str(tmp_path / "c")]) == 0
    c = read_nnet(str(tmp_path / "c"))  # (went through text: equal to 7 digits)
    assert [x.marker for x in c.components] == ["<AffineTransform>", "<Sigmoid>"]
    np.testing.assert_allclose(c.params, a.params, rtol=1e-6)
    assert copy.main(["--remove-first-layers=1", str(tmp_path / "a"), str(tmp_path / "d")]) == 0
    assert [c.marker for c in read_nnet(str(tmp_path / "d")).components] == ["<Sigmoid>"]
    assert copy.main(["--remove-first-components=5", str(tmp_path / "a"), str(tmp_path / "e")]) == 1
    capsys.readouterr()
    info = load_bin("nnet-info.py")
    assert info.main([str(tmp_path / "ab")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:4] == ["num-components 4", "input-dim 4", "output-dim 2",
                       "number-of-parameters 2.3e-05 millions"]
    assert out[4].startswith("component 1 : <AffineTransform>, input-dim 4, output-dim 3, ")
    assert out[5].startswith("  linearity ( min ") and out[5].endswith(", lr-coef 1, max-norm 0")
    assert out[6].startswith("  bias ( min 1, max 1, mean 1, stddev 0, ")
    assert out[7] == "component 2 : <Sigmoid>, input-dim 3, output-dim 3, "
    (tmp_path / "bad").write_bytes(b"\0B<Nnet> <Foo> ")
    assert info.main([str(tmp_path / "bad")]) == 1
    assert "ERROR" in capsys.readouterr().err
