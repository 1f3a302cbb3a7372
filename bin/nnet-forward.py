#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""nnet-forward.py: Kaldi's nnet-forward (src/nnetbin/nnet-forward.cc) with PdfPrior.

--prior-floor is accepted as another name for Kaldi's --prior-cutoff (whichever is not left at
its default wins). Recurrent networks run per utterance from a reset state (Kaldi's), or with
--chunk-size (and --chunk-left-context, --chunk-right-context, --chunk-overlap) in
context-sensitive chunks, as seed 002 decodes its CSC-BPTT models. The work is
nnetmix.nnet.forward_table."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Perform forward pass through Neural Network.
Usage: nnet-forward.py [options] <nnet1-in> <feature-rspecifier> <feature-wspecifier>
e.g.: nnet-forward.py final.nnet ark:input.ark ark:output.ark
 decoding: nnet-forward.py --feature-transform=exp/dnn/final.feature_transform \
   --no-softmax=true --class-frame-counts=exp/dnn/ali_train_pdf.counts \
   exp/dnn/final.nnet scp:feats.scp ark:- | latgen-faster-mapped.py ...
 CSC-BPTT model (seed 002's "21-64+21", 32-frame overlap): --chunk-size=64 \
   --chunk-left-context=21 --chunk-right-context=21 --chunk-overlap=32"""


def make_parser() -> OptionParser:
    from nnetmix.nnet import ChunkOptions, ForwardOptions

    p = OptionParser(USAGE, prog="nnet-forward.py")
    p.register_group(ForwardOptions)
    p.register_group(ChunkOptions)
    p.register("prior-floor", 1e-10, "Same as --prior-cutoff")
    p.register("backend", "cpu", "Compute backend: cpu, cuda or auto")
    return p


def main(argv=None) -> int:
    parser = make_parser()

    def body(opts, args) -> int:
        from nnetmix.nnet import ChunkOptions, ForwardOptions, forward_table

        fo = parser.group(ForwardOptions, opts)
        if opts.prior_floor != 1e-10:
            fo.prior_cutoff = opts.prior_floor
        done = forward_table(args[0], args[1], args[2], fo, backend=opts.backend,
                             chunk=parser.group(ChunkOptions, opts))
        return 0 if done else 1

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
