"""steps/nnet/pretrain_dbn.sh end to end on a tiny data dir: N.dbn readable by nnet-info.py,
final.* links, a rerun skips, and the DBN + a softmax layer trains with nnet-train-frmshuff.py
(what train.sh --dbn --hid-layers 0 does: nnet-concat of the DBN and a new output layer)."""
import re

import numpy as np

from helpers import ROOT, low_rank_gauss_utts, run_script, write_feats
from nnetmix.feat import FeaturePipeline
from nnetmix.kaldi import TableWriter
from nnetmix.kernels import get_backend
from nnetmix.nnet import AffineTransform, Sigmoid, Softmax, read_nnet


def _data_dir(path, rng):
    path.mkdir(parents=True)
    utts = low_rank_gauss_utts(rng, num_utts=6, dim=13, length=80)
    write_feats(path, utts)
    (path / "utt2spk").write_text("".join(f"{k} {k}\n" for k, _ in utts))
    (path / "spk2utt").write_text("".join(f"{k} {k}\n" for k, _ in utts))
    return utts


def test_pretrain_dbn_end_to_end(tmp_path):
    rng = np.random.default_rng(8)
    utts = _data_dir(tmp_path / "data", rng)
    d = tmp_path / "exp"
    script = ROOT / "steps/nnet/pretrain_dbn.sh"
    args = [script, "--nn-depth", "2", "--hid-dim", "32", "--splice", "2",
            "--rbm-extra-opts", "--loss-report-frames=200", tmp_path / "data", d]
    proc = run_script(args, cwd=ROOT, check=True)
    assert "done, " in proc.stdout and "progress: [" in proc.stdout
    for f in ("1.dbn", "2.dbn", "1.rbm", "2.rbm", "2.cmvn", "cmvn_opts", "delta_opts"):
        assert (d / f).is_file(), f
    assert (d / "final.dbn").resolve() == (d / "2.dbn").resolve()
    # the chain is described once, as the pipeline every tool read (no CMVN: none asked for)
    pipe = FeaturePipeline.read(str(d / "feats_tr.json"))
    assert (pipe.utt_list, pipe.cmvn, pipe.delta_opts) == (f"{d}/train.scp", "", "")
    ft = read_nnet(str(d / "final.feature_transform"))
    assert ft.input_dim == 13 and ft.output_dim == 65
    info = run_script(["nnet-info.py", d / "2.dbn"], check=True).stdout
    assert "num-components 4" in info and "input-dim 65" in info and "output-dim 32" in info
    dbn = read_nnet(str(d / "final.dbn"))
    assert [type(c) for c in dbn.components] == [AffineTransform, Sigmoid] * 2
    r1, r2 = read_nnet(str(d / "1.rbm")).components[0], read_nnet(str(d / "2.rbm")).components[0]
    assert (r1.vis_type, r2.vis_type) == ("gauss", "bern")
    # the 2nd RBM's visible bias starts at logit(mean activation of the 1st layer)
    be = get_backend("cpu")
    below = ft.concat(read_nnet(str(d / "1.dbn"))).to_backend(be)
    acts = np.concatenate([be.to_host(below.propagate(be.asarray(m))) for _, m in utts])
    p = np.clip(acts.mean(0), 1e-4, 1 - 1e-4)
    init_vb = read_nnet(str(d / "2.rbm.init")).host_params()[0]["vis_bias"]
    np.testing.assert_allclose(init_vb, np.log(p / (1 - p)), rtol=1e-4, atol=1e-4)
    log1 = (d / "log/rbm.1.log").read_text()
    assert "Iteration 2/2" in log1 and "--learn-rate=0.01" in log1   # Gaussian: 2x iters, low lr
    assert "--learn-rate=0.4" in (d / "log/rbm.2.log").read_text()
    prog = [float(x) for x in re.search(r"progress: \[([^\]]*)\]", log1).group(1).split()]
    assert prog[-1] < prog[0]
    # a second run skips
    again = run_script(args, cwd=ROOT, check=True)
    assert "2.dbn exists, skipping" in again.stdout

    # the DBN + a new softmax layer, trained one epoch (train.sh --dbn with --hid-layers 0)
    proto = run_script(["make-nnet-proto.py", "--print-args=false", "32", "4", "0", "32"],
                       check=True).stdout
    (tmp_path / "out.proto").write_text(proto)
    run_script(["nnet-initialize.py", tmp_path / "out.proto", tmp_path / "out.init"], check=True)
    run_script(["nnet-concat.py", d / "final.dbn", tmp_path / "out.init", tmp_path / "dnn.init"],
               check=True)
    with TableWriter(f"ark:{tmp_path}/ali.ark", "ivec") as w:
        for k, m in utts:
            w[k] = rng.integers(0, 4, size=m.shape[0]).astype(np.int32)
    tr = run_script(["nnet-train-frmshuff.py", "--targets-kind=ali", "--minibatch-size=64",
                     f"--feature-transform={d}/final.feature_transform",
                     f"scp:{tmp_path}/data/feats.scp", f"ark:{tmp_path}/ali.ark",
                     tmp_path / "dnn.init", tmp_path / "dnn.iter1"], check=True)
    assert "AvgLoss:" in tr.stderr
    dnn = read_nnet(str(tmp_path / "dnn.iter1"))
    assert [type(c) for c in dnn.components] == [AffineTransform, Sigmoid] * 2 + \
        [AffineTransform, Softmax]


def test_pretrain_dbn_usage_and_missing_input(tmp_path):
    script = ROOT / "steps/nnet/pretrain_dbn.sh"
    proc = run_script([script, tmp_path], cwd=ROOT)
    assert proc.returncode == 1 and "Usage:" in proc.stderr
    proc = run_script([script, tmp_path / "nodata", tmp_path / "exp"], cwd=ROOT)
    assert proc.returncode == 1 and "no such file" in proc.stderr
