"""steps/nnet/train.sh builds a ReLU DNN with dropout from --proto-opts (Kaldi's
make_nnet_proto.py options) and a dropout schedule from --scheduler-opts; steps/nnet/decode.sh
decodes with it (nnet-forward never drops). The Kaldi yesno model, alignments and graph, with
features synthesised along the alignments."""
import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst

import pytest

from nnetmix.nnet import Dropout, ParametricRelu, read_nnet

from helpers import run_script, yesno_recipe


@pytest.mark.slow
def test_train_sh_relu_dropout_network_trains_and_decodes(kaldi_fixtures, tmp_path):
    yesno_recipe(tmp_path, kaldi_fixtures, num_utts=8, noise=0.5)
    proc = run_script(["steps/nnet/train.sh", "--hid-layers", "2", "--hid-dim", "16", "--splice",
                       "2", "--max-iters", "2", "--minibatch-size", "64", "--proto-opts",
                       "--activation-type=<ParametricRelu> --with-dropout "
                       "--dropout-opts=<DropoutRate>_0.1 --hid-bias-mean=0 --hid-bias-range=0",
                       "--scheduler-opts", "--dropout-schedule=0.1,0.0",
                       "data", "data", "lang", "mono", "mono", "exp/dnn"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dnn = tmp_path / "exp" / "dnn"
    proto = (dnn / "nnet.proto").read_text().splitlines()
    assert [ln.split()[0] for ln in proto].count("<ParametricRelu>") == 2
    assert "<Dropout> <InputDim> 16 <OutputDim> 16 <DropoutRate> 0.1" in proto
    final = read_nnet(str(dnn / "final.nnet"))
    kinds = [type(c) for c in final.components]
    assert kinds.count(ParametricRelu) == 2 and kinds.count(Dropout) == 2
    assert all(c.dropout_rate == 0.0 for c in final.components if isinstance(c, Dropout))
    assert (dnn / "nnet.init.dropout_rate0.1").exists()
    proc = run_script(["steps/nnet/decode.sh", "--nj", "1", "--scoring-opts",
                       "--min-lmwt 10 --max-lmwt 10", "mono/graph", "data", "exp/dnn/decode"],
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (dnn / "decode" / "wer_10_0.0").read_text().startswith("%WER")
