#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""nnet-train-multistream-perutt.py: Kaldi's nnet-train-multistream-perutt
(src/nnetbin/nnet-train-multistream-perutt.cc), and seed 002's CSC-BPTT.

One epoch for (B)LSTMs on whole sequences: every update is --num-streams utterances side by
side (utterances of similar length, padded to the longest, padding left out of the loss; at
most --max-frames rows, longer utterances skipped with a warning), every stream starting from
a zero state, so a <BlstmProjected>'s backward direction starts at the utterance's end.
With --chunk-size=C (and --chunk-left-context=L, --chunk-right-context=R) it is context-
sensitive-chunk BPTT instead: each utterance is cut into chunks of C frames, each chunk with
up to L frames before it and R after it is an independent sequence, the context frames
computed but not trained on; the chunks of --randomizer-size frames of data are shuffled
(--randomizer-seed) and taken --num-streams per update; short chunks are padded and counted
in the log. CSC-BPTT is here and not in nnet-train-multistream.py because its chunks are
whole sequences, as utterances are here (state reset per sequence, both directions inside
it), where nnet-train-multistream carries the state across its --batch-size pieces.
--cross-validate=true evaluates only. Through nnetmix.driver.multistream_epoch, on one
worker; the log's summary, AvgLoss and FRAME_ACCURACY lines and --result-file are
nnet-train-frmshuff.py's, so nnet-train-scheduler.py runs it as its --train-tool, and it takes
nnet-train-frmshuff.py's options (--minibatch-size and --randomize change nothing here).
Only --objective-function=xent; no --frame-weights."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.streams import run_stream_tool, stream_tool_parser
from nnetmix.train.seqstreams import PerUttOptions

USAGE = """Perform one iteration of Multi-stream training, per-utterance BPTT for (B)LSTMs.
The updates are done per-utterance, while several utterances are
processed at the same time. With --chunk-size, context-sensitive-chunk BPTT.

Usage: nnet-train-multistream-perutt.py [options] <feature-rspecifier> <labels-rspecifier> <model-in> [<model-out>]
e.g.: nnet-train-multistream-perutt.py scp:feats.scp ark:targets.ark nnet.init nnet.iter1
e.g.: nnet-train-multistream-perutt.py --chunk-size=64 --chunk-left-context=21 --chunk-right-context=21 scp:feats.scp ark:targets.ark nnet.init nnet.iter1"""


def make_parser():
    return stream_tool_parser(USAGE, "nnet-train-multistream-perutt.py", PerUttOptions)


def main(argv=None) -> int:
    return run_stream_tool(make_parser(), PerUttOptions, argv)


if __name__ == "__main__":
    sys.exit(main())
