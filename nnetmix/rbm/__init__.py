"""RBM pretraining as Kaldi's nnet1: CD-1 training of Gaussian-Bernoulli and Bernoulli-Bernoulli
RBMs (rbm-train-cd1-frmshuff), conversion to Affine + Sigmoid and DBN stacking
(rbm-convert-to-nnet, steps/nnet/pretrain_dbn.sh).

    from nnetmix.rbm import Cd1Options, RbmTrainOptions, read_features, train_rbm
    rbm = read_nnet("exp/dbn/1.rbm.init").to_backend(get_backend("cpu"))
    st = train_rbm(rbm, lambda it: read_features("scp:train.scp"), RbmTrainOptions(learn_rate=0.01),
                   Cd1Options(num_iters=2), feature_transform=transf, hook=after_minibatch)
    print(st.summary_line()); print(st.report())

The <Rbm> component itself (format, forward pass, prototype initialisation with
``<VisibleBiasCmvnFilename>``) lives in :mod:`nnetmix.nnet`; this package trains it.
"""
from nnetmix.rbm.cd1 import Cd1, Cd1Result, std_all
from nnetmix.rbm.dbn import activation_cmvn, append_rbm, rbm_proto, rbm_to_nnet
from nnetmix.rbm.options import Cd1Options, RbmError, RbmRandomizerOptions, RbmTrainOptions
from nnetmix.rbm.schedule import MomentumSchedule, RateChange
from nnetmix.rbm.stats import RbmStats
from nnetmix.rbm.trainer import RbmHook, read_features, train_rbm

__all__ = [
    "RbmError", "RbmTrainOptions", "RbmRandomizerOptions", "Cd1Options",
    "Cd1", "Cd1Result", "std_all", "MomentumSchedule", "RateChange", "RbmStats",
    "train_rbm", "read_features", "RbmHook",
    "rbm_to_nnet", "append_rbm", "activation_cmvn", "rbm_proto",
]
