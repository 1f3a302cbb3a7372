"""The Python steps of steps/nnet/pretrain_dbn.sh, as ``python3 -m nnetmix.rbm.pretrain CMD``.

* ``feature-transform [--splice=5] <feats-rspecifier> <nnet-out>``: splice +/-N and global CMVN
  of the spliced frames, estimated on the given (10k-utterance) features:
  :func:`nnetmix.nnet.feature_transform_from_table`, the same builder train.sh's transform
  matches, so a DBN's ``final.feature_transform`` is what train.sh would have built.
* ``activation-cmvn <nnet-in> <feats-rspecifier> <cmvn-nnet-out>``: the mean activation of
  ``nnet-in`` (feature transform + DBN so far) as cmvn-to-nnet writes it
  (:func:`nnetmix.rbm.activation_cmvn`), for the next RBM's ``<VisibleBiasCmvnFilename>``.

Options are Kaldi-binary style (``--name=value``); errors are one ERROR line, exit 1.
"""
from __future__ import annotations

import logging
import sys
from typing import Optional, Sequence

from nnetmix.cli import OptionParser, run_tool

__all__ = ["main"]

_FT_USAGE = """Build the nnet1 feature transform of RBM pretraining: splice +/-N frames, then
global CMVN of the spliced frames (<AddShift> + <Rescale>).
Usage: python3 -m nnetmix.rbm.pretrain feature-transform [options] <feats-rspecifier> <nnet-out>
 e.g.: python3 -m nnetmix.rbm.pretrain feature-transform --splice=5 scp:train.scp.10k tr.nnet"""

_AC_USAGE = """Mean activation of a network's outputs over a feature table, written as
cmvn-to-nnet writes it (<AddShift> of minus the mean, <Rescale>), for an <Rbm> prototype's
<VisibleBiasCmvnFilename>.
Usage: python3 -m nnetmix.rbm.pretrain activation-cmvn [options] <nnet-in> <feats-rspecifier> <nnet-out>
 e.g.: python3 -m nnetmix.rbm.pretrain activation-cmvn "nnet-concat.py ft 1.dbn - |" scp:train.scp.10k 2.cmvn"""


def _feature_transform(argv: Sequence[str]) -> int:
    p = OptionParser(_FT_USAGE, prog="pretrain.py feature-transform")
    p.register("splice", 5, "Splice features +/-N frames")
    p.register("max-utts", 10000, "Use at most this many utterances for the CMVN")
    p.register("binary", False, "Write output in binary mode")

    def body(opts, args) -> int:
        from nnetmix.nnet import feature_transform_from_table

        ft = feature_transform_from_table(args[0], splice=opts.splice, max_utts=opts.max_utts)
        ft.write(args[1], binary=opts.binary)
        logging.getLogger("pretrain").info("Written the feature transform (%d -> %d) to %s",
                                           ft.input_dim, ft.output_dim, args[1])
        return 0

    return run_tool(p, (2, 2), body, argv)


def _activation_cmvn(argv: Sequence[str]) -> int:
    p = OptionParser(_AC_USAGE, prog="pretrain.py activation-cmvn")
    p.register("max-utts", 10000, "Use at most this many utterances")
    p.register("binary", False, "Write output in binary mode")
    p.register("backend", "cpu", "Compute backend for the forward pass: cpu, cuda or auto")

    def body(opts, args) -> int:
        from nnetmix.kernels import get_backend
        from nnetmix.nnet import read_nnet
        from nnetmix.rbm.dbn import activation_cmvn
        from nnetmix.rbm.trainer import read_features

        net = read_nnet(args[0]).to_backend(get_backend(opts.backend))
        cmvn = activation_cmvn((m for _, m in read_features(args[1])), net, opts.max_utts)
        cmvn.write(args[2], binary=opts.binary)
        logging.getLogger("pretrain").info("Written the activation stats of %s (dim %d) to %s",
                                           args[0], cmvn.input_dim, args[2])
        return 0

    return run_tool(p, (3, 3), body, argv)


_COMMANDS = {"feature-transform": _feature_transform, "activation-cmvn": _activation_cmvn}


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in _COMMANDS:
        sys.stderr.write("Usage: python3 -m nnetmix.rbm.pretrain <command> [options] <args>\n"
                         f"  commands: {', '.join(_COMMANDS)} (--help for each)\n")
        return 1
    return _COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
