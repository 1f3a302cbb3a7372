"""Deep belief networks: RBM -> feed-forward conversion, stacking, and the statistics a new
Bernoulli layer is initialised from.

* :func:`rbm_to_nnet` is rbm-convert-to-nnet (Kaldi's RbmBase::WriteAsNnet): every <Rbm> becomes
  <AffineTransform> (W, hidden bias) followed by <Sigmoid> when the hidden units are Bernoulli.
* :func:`append_rbm` is pretrain_dbn.sh's ``nnet-concat (d-1).dbn "rbm-convert-to-nnet d.rbm - |"
  d.dbn``: the DBN grows by one Affine + Sigmoid pair per layer. train.sh --dbn puts a new
  softmax layer on top with nnet-concat.
* :func:`activation_cmvn` is pretrain_dbn.sh's ``nnet-forward | compute-cmvn-stats |
  cmvn-to-nnet`` over the 10k-utterance subset: the mean activation p of the layer below, as
  an <AddShift> of -p, which the <Rbm> prototype's ``<VisibleBiasCmvnFilename>`` turns into the
  visible bias logit(p) (nnetmix.nnet.init, Kaldi's Rbm::InitData).
"""
from __future__ import annotations

from typing import Iterable, Optional

import numpy as np

from nnetmix.feat.cmvn import acc_cmvn_stats
from nnetmix.nnet import Nnet, Rbm, cmvn_to_nnet
from nnetmix.rbm.options import RbmError

__all__ = ["rbm_to_nnet", "append_rbm", "activation_cmvn", "rbm_proto"]


def rbm_to_nnet(nnet: Nnet) -> Nnet:
    """A copy of ``nnet`` with every <Rbm> as <AffineTransform> (+ <Sigmoid>); at least one
    <Rbm> is required."""
    if not any(isinstance(c, Rbm) for c in nnet.components):
        got = ", ".join(c.marker for c in nnet.components) or "nothing"
        raise RbmError(f"no <Rbm> to convert (the network holds {got})")
    return nnet.rbm_to_feedforward()


def append_rbm(dbn: Optional[Nnet], rbm: Nnet) -> Nnet:
    """The DBN with ``rbm`` converted and appended (a new DBN when ``dbn`` is None)."""
    ff = rbm_to_nnet(rbm)
    if dbn is None:
        return ff
    if dbn.output_dim != ff.input_dim:
        raise RbmError(f"the DBN's output dim is {dbn.output_dim}, the RBM's input dim is "
                       f"{ff.input_dim}")
    return dbn.concat(ff)


def activation_cmvn(feats: Iterable[np.ndarray], network: Optional[Nnet] = None,
                    max_utts: int = 10000, source: str = "activation_cmvn") -> Nnet:
    """cmvn-to-nnet of the global stats of ``network``'s outputs (the feature transform and the
    DBN so far) over up to ``max_utts`` utterances; its <AddShift> is minus the mean activation."""
    stats = None
    n = 0
    be = network._be() if network is not None else None
    for mat in feats:
        if n >= max_utts:
            break
        x = np.asarray(mat, dtype=np.float32)
        if x.ndim != 2 or x.shape[0] == 0:
            continue
        if network is not None:
            x = be.to_host(network.propagate(be.asarray(x, dtype=network.dtype)))
        stats = acc_cmvn_stats(x, stats)
        n += 1
    if stats is None:
        raise RbmError(f"{source}: no features to estimate the mean activation from")
    return cmvn_to_nnet(stats, name="activation stats")


def rbm_proto(input_dim: int, output_dim: int, vis_type: str = "gauss", hid_type: str = "bern",
              param_stddev: float = 0.1, vis_bias_cmvn: str = "") -> str:
    """The one-line <Rbm> prototype pretrain_dbn.sh hands to nnet-initialize."""
    line = (f"<Rbm> <InputDim> {input_dim} <OutputDim> {output_dim} <VisibleType> {vis_type} "
            f"<HiddenType> {hid_type} <ParamStddev> {param_stddev}")
    if vis_bias_cmvn:
        line += f" <VisibleBiasCmvnFilename> {vis_bias_cmvn}"
    return line + "\n"
