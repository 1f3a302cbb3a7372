#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""nnet-train-multistream.py: Kaldi's nnet-train-multistream
(src/nnetbin/nnet-train-multistream.cc).


One epoch of truncated BPTT for recurrent networks (<LstmProjected>): --num-streams utterances
are trained in parallel, --batch-size frames of each per update, the LSTM state carried from
one update to the next within an utterance and reset when a stream starts a new one; frames
past an utterance's end are padding, left out of the loss. --cross-validate=true evaluates only.
Through nnetmix.driver.multistream_epoch, on one worker. The log's summary, AvgLoss and
FRAME_ACCURACY lines are nnet-train-frmshuff.py's (the summary says NOT-RANDOMIZED), and
--result-file writes the same result file, so nnet-train-scheduler.py runs it as its
--train-tool. It takes nnet-train-frmshuff.py's options too, so a scheduler can pass them all:
--minibatch-size, --randomizer-size, --randomizer-seed (only <Dropout>'s seed) and --randomize
(Kaldi's dummy option) do not change what it does. Only --objective-function=xent."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.streams import run_stream_tool, stream_tool_parser
from nnetmix.train.streams import StreamOptions

USAGE = """Perform one iteration of Multi-stream training, truncated BPTT for LSTMs.
The training targets are pdf-posteriors, usually prepared by ali-to-post.
The updates are per-utterance.

Usage: nnet-train-multistream.py [options] <feature-rspecifier> <targets-rspecifier> <model-in> [<model-out>]
e.g.: nnet-train-multistream.py scp:feature.scp ark:posterior.ark nnet.init nnet.iter1"""


def make_parser():
    return stream_tool_parser(USAGE, "nnet-train-multistream.py", StreamOptions)


def main(argv=None) -> int:
    return run_stream_tool(make_parser(), StreamOptions, argv)


if __name__ == "__main__":
    sys.exit(main())
