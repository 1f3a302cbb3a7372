#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""make-feature-pipeline.py: writes the feature chain of a data directory (utterance list,
per-speaker CMVN, deltas or splicing, an LDA/MLLT transform, per-speaker fMLLR transforms) as a JSON file that any feature-reading tool opens as
``pipeline:<file>`` (nnetmix.feat.FeaturePipeline); steps/nnet/*.sh describe their chain once
with it instead of building ``apply-cmvn.py ... | add-deltas.py ... |`` text."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Write a feature pipeline: <data-dir>/feats.scp (or --utt-list), then apply-cmvn.py with
--cmvn-opts and <data-dir>/cmvn.scp, <data-dir>/utt2spk (when --cmvn-opts is not empty), then
add-deltas.py with --delta-opts (when not empty), splice-feats.py with --splice-opts, then
transform-feats.py with --transform (e.g. final.mat), then transform-feats.py --utt2spk with
--spk-transforms (e.g. fMLLR's ark:exp/tri3/trans.1, by speaker through <data-dir>/utt2spk).
Tools read it as pipeline:<pipeline-out>.
Usage: make-feature-pipeline.py [options] <data-dir> <pipeline-out>
 e.g.: make-feature-pipeline.py --cmvn-opts="--norm-means=true --norm-vars=false" \\
         --utt-list=exp/dnn/train.scp data/train exp/dnn/feats_tr.json
       make-feature-pipeline.py --opts-from=exp/dnn data/test/split4/1 exp/dnn/decode/feats.1.json
       make-feature-pipeline.py --opts-from=exp/tri3 --spk-transforms=ark:exp/tri3/trans.1 \
         data/train/split4/1 exp/tri3/feats.1.json"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="make-feature-pipeline.py")
    parser.register("cmvn-opts", "", "Options of apply-cmvn.py (empty: no CMVN)")
    parser.register("delta-opts", "", "Options of add-deltas.py (empty: no deltas)")
    parser.register("splice-opts", "", "Options of splice-feats.py (empty: no splicing)")
    parser.register("transform", "", "Global transform applied after splicing (transform-feats.py "
                    "<transform>, e.g. exp/tri2/final.mat); empty: none")
    parser.register("spk-transforms", "", "Table of per-speaker transforms applied last "
                    "(transform-feats.py --utt2spk=ark:<data-dir>/utt2spk), e.g. "
                    "ark:exp/tri3/trans.1; empty: none")
    parser.register("utt-list", "", "Feats scp whose utterances, in its order, are the table "
                    "(default: <data-dir>/feats.scp)")
    parser.register("gmm-dir", "", "As --opts-from, read as Kaldi's GMM scripts read a model "
                    "directory: an empty option file means the tool's defaults (CMVN "
                    "--norm-means=true, splicing +/-4, deltas --delta-order=2)")
    parser.register("opts-from", "", "Take --cmvn-opts, --delta-opts, --splice-opts and "
                    "--transform from the files cmvn_opts, delta_opts, splice_opts and final.mat "
                    "of this (model) directory instead (a missing file means empty; with "
                    "final.mat, delta_opts is not used, as in Kaldi)")

    def body(opts, args) -> int:
        import logging

        from nnetmix.feat import FeaturePipeline
        from nnetmix.feat.pipeline import opts_from_dir

        chain = {"cmvn_opts": opts.cmvn_opts, "delta_opts": opts.delta_opts,
                 "splice_opts": opts.splice_opts, "transform": opts.transform}
        if opts.opts_from or opts.gmm_dir:
            chain = opts_from_dir(opts.gmm_dir or opts.opts_from, gmm=bool(opts.gmm_dir))
        pipe = FeaturePipeline.for_data_dir(args[0], utt_list=opts.utt_list,
                                            spk_transforms=opts.spk_transforms, **chain)
        pipe.write(args[1])
        extra = "".join(f", {k} '{v}'" for k, v in (("splice_opts", pipe.splice_opts),
                                                     ("transform", pipe.transform),
                                                     ("spk_transforms", pipe.spk_transforms)) if v)
        logging.getLogger("make-feature-pipeline").info(
            "Wrote the feature pipeline of %s (utterances %s, cmvn_opts '%s', delta_opts '%s'%s) "
            "to %s", args[0], pipe.utt_list, pipe.cmvn_opts, pipe.delta_opts, extra, args[1])
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
