#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""make-lstm-proto.py: Kaldi's utils/nnet/make_lstm_proto.py (steps/nnet/train.sh
--network-type lstm). The work is nnetmix.nnet.make_lstm_proto."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.rnn_proto import rnn_proto_main

USAGE = """Generate the prototype of an LSTM network (<LstmProjected> layers, <Tanh>, an affine
layer and <Softmax>), to be initialized by nnet-initialize.py, on stdout.

Usage: make-lstm-proto.py [options] <feat-dim> <num-leaves> >nnet-proto-file
 e.g.: make-lstm-proto.py --cell-dim=640 --proj-dim=400 --num-layers=2 40 1502 >nnet.proto"""


def main(argv=None) -> int:
    return rnn_proto_main(False, USAGE, argv)


if __name__ == "__main__":
    sys.exit(main())
