"""RBMs and DBNs written here read back identically (binary bit-exact, text stable), the
conversion to Affine + Sigmoid computes the RBM's forward pass, and the bin/ tools."""
import numpy as np
import pytest

from helpers import binary_prototype_utts, load_bin, low_rank_gauss_utts, tiny_rbm, write_feats
from nnetmix.kernels import get_backend
from nnetmix.nnet import AffineTransform, Nnet, Rbm, Sigmoid, read_nnet
from nnetmix.rbm import Cd1Options, RbmError, append_rbm, rbm_to_nnet, train_rbm


def _trained_rbm(vis_type):
    rng = np.random.default_rng(21)
    utts = (low_rank_gauss_utts if vis_type == "gauss" else binary_prototype_utts)(rng, 10)
    net = tiny_rbm(rng, 12, 8, vis_type, "bern").to_backend(get_backend("cpu"))
    train_rbm(net, lambda it: iter(utts), cd1_opts=Cd1Options(prefetch=False))
    return net


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "text"])
def test_rbm_and_dbn_round_trip(tmp_path, binary):
    rbm1, rbm2 = _trained_rbm("gauss"), _trained_rbm("bern")
    rbm2 = Nnet([Rbm(8, 8, *(rbm2.host_params()[0][k][:8, :8] if k == "W" else
                             rbm2.host_params()[0][k][:8] for k in ("W", "vis_bias", "hid_bias")),
                     "bern", "bern")])
    dbn = append_rbm(append_rbm(None, rbm1), rbm2)
    assert [type(c) for c in dbn.components] == [AffineTransform, Sigmoid] * 2
    for name, net in (("1.rbm", rbm1), ("2.dbn", dbn)):
        p = tmp_path / name
        net.write(str(p), binary=binary)
        back = read_nnet(str(p))
        assert [type(c) for c in back.components] == [type(c) for c in net.components]
        assert back.to_bytes(binary) == p.read_bytes()          # re-encodes byte for byte
        if binary:                                              # bit-exact parameters
            assert np.array_equal(back.params.view(np.uint32),
                                  np.asarray(net._host(net.params), np.float32).view(np.uint32))
        else:                                                   # 7 significant digits
            np.testing.assert_allclose(back.params, net._host(net.params), rtol=1e-6, atol=1e-7)
    r = read_nnet(str(tmp_path / "1.rbm")).components[0]
    assert (r.vis_type, r.hid_type) == ("gauss", "bern")


def test_conversion_computes_the_rbm_forward():
    be = get_backend("cpu")
    rbm = _trained_rbm("gauss")
    ff = rbm_to_nnet(rbm).to_backend(be)
    x = np.random.default_rng(0).standard_normal((7, 12)).astype(np.float32)
    np.testing.assert_allclose(ff.propagate(be.asarray(x)).copy(),
                               rbm.propagate(be.asarray(x)).copy(), rtol=1e-6, atol=1e-6)
    gauss_hidden = Nnet([Rbm(3, 2, np.ones((2, 3)), np.zeros(3), np.zeros(2), "bern", "gauss")])
    assert [type(c) for c in rbm_to_nnet(gauss_hidden).components] == [AffineTransform]
    with pytest.raises(RbmError, match="no <Rbm>"):
        rbm_to_nnet(ff)
    with pytest.raises(RbmError, match="output dim"):
        append_rbm(ff, Nnet([Rbm(5, 2)]))


def test_bin_tools(tmp_path, capsys):
    rng = np.random.default_rng(5)
    feats = write_feats(tmp_path, binary_prototype_utts(rng, 8))
    tiny_rbm(rng, 12, 6).write(str(tmp_path / "rbm.init"))
    train = load_bin("rbm-train-cd1-frmshuff.py")
    rc = train.main(["--learn-rate=0.4", "--num-iters=2", "--minibatch-size=50",
                     "--binary=true", str(tmp_path / "rbm.init"), feats, str(tmp_path / "rbm")])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "RBM TRAINING STARTED" in err and "Iteration 2/2" in err
    assert "Done 2 iterations, 16 files, skipped 0 files." in err
    assert "AvgLoss:" in err and "(Mse), [RMS" in err and "\nprogress: [" in err
    rbm = read_nnet(str(tmp_path / "rbm"))
    assert isinstance(rbm.components[0], Rbm)
    conv = load_bin("rbm-convert-to-nnet.py")
    assert conv.main(["--binary=false", str(tmp_path / "rbm"), str(tmp_path / "nnet")]) == 0
    text = (tmp_path / "nnet").read_text()
    assert "<AffineTransform> 6 12" in text and "<Sigmoid> 6 6" in text
    # wrong argument count: usage, exit 1; a non-RBM model: one ERROR line, exit 1
    assert train.main([feats, str(tmp_path / "rbm")]) == 1
    assert "Usage:  rbm-train-cd1-frmshuff.py" in capsys.readouterr().err
    assert train.main([str(tmp_path / "nnet"), feats, str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert "ERROR" in err and "exactly one <Rbm>" in err and "Traceback" not in err
    assert conv.main([str(tmp_path / "nnet"), str(tmp_path / "y")]) == 1
    assert "no <Rbm> to convert" in capsys.readouterr().err
