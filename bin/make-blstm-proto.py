#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""make-blstm-proto.py: Kaldi's utils/nnet/make_blstm_proto.py (steps/nnet/train.sh
--network-type blstm). The work is nnetmix.nnet.make_blstm_proto."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.rnn_proto import rnn_proto_main

USAGE = """Generate the prototype of a bidirectional LSTM network (<BlstmProjected> layers, <Tanh>,
an affine layer and <Softmax>), to be initialized by nnet-initialize.py, on stdout.

Usage: make-blstm-proto.py [options] <feat-dim> <num-leaves> >nnet-proto-file
 e.g.: make-blstm-proto.py --cell-dim=320 --proj-dim=200 --num-layers=2 40 1502 >nnet.proto"""


def main(argv=None) -> int:
    return rnn_proto_main(True, USAGE, argv)


if __name__ == "__main__":
    sys.exit(main())
