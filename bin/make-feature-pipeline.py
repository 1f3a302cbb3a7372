#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""make-feature-pipeline.py: writes the feature chain of a data directory (utterance list,
per-speaker CMVN, deltas) as a JSON file that any feature-reading tool opens as
``pipeline:<file>`` (nnetmix.feat.FeaturePipeline); steps/nnet/*.sh describe their chain once
with it instead of building ``apply-cmvn.py ... | add-deltas.py ... |`` text."""
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Write a feature pipeline: <data-dir>/feats.scp (or --utt-list), then apply-cmvn.py with
--cmvn-opts and <data-dir>/cmvn.scp, <data-dir>/utt2spk (when --cmvn-opts is not empty), then
add-deltas.py with --delta-opts (when not empty). Tools read it as pipeline:<pipeline-out>.
Usage: make-feature-pipeline.py [options] <data-dir> <pipeline-out>
 e.g.: make-feature-pipeline.py --cmvn-opts="--norm-means=true --norm-vars=false" \\
         --utt-list=exp/dnn/train.scp data/train exp/dnn/feats_tr.json
       make-feature-pipeline.py --opts-from=exp/dnn data/test/split4/1 exp/dnn/decode/feats.1.json"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="make-feature-pipeline.py")
    parser.register("cmvn-opts", "", "Options of apply-cmvn.py (empty: no CMVN)")
    parser.register("delta-opts", "", "Options of add-deltas.py (empty: no deltas)")
    parser.register("utt-list", "", "Feats scp whose utterances, in its order, are the table "
                    "(default: <data-dir>/feats.scp)")
    parser.register("opts-from", "", "Take --cmvn-opts and --delta-opts from the files "
                    "cmvn_opts and delta_opts of this (model) directory instead; a missing file "
                    "means empty")

    def body(opts, args) -> int:
        import logging

        from nnetmix.feat import FeaturePipeline
        from nnetmix.feat.pipeline import opts_from_dir

        cmvn_opts, delta_opts = opts.cmvn_opts, opts.delta_opts
        if opts.opts_from:
            cmvn_opts, delta_opts = opts_from_dir(opts.opts_from)
        pipe = FeaturePipeline.for_data_dir(args[0], cmvn_opts, delta_opts, opts.utt_list)
        pipe.write(args[1])
        logging.getLogger("make-feature-pipeline").info(
            "Wrote the feature pipeline of %s (utterances %s, cmvn_opts '%s', delta_opts '%s') "
            "to %s", args[0], pipe.utt_list, cmvn_opts, delta_opts, args[1])
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
