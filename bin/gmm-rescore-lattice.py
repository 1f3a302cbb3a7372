#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-rescore-lattice.py: Kaldi's gmm-rescore-lattice (src/gmmbin/gmm-rescore-lattice.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Replace the acoustic scores on a lattice using a new model.
Usage: gmm-rescore-lattice.py [options] <model-in> <lattice-rspecifier> <feature-rspecifier> <lattice-wspecifier>
 e.g.: gmm-rescore-lattice.py 1.mdl ark:1.lats scp:trn.scp ark:2.lats
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="gmm-rescore-lattice.py")
    parser.register("old-acoustic-scale", 0.0, "Add the current acoustic scores with some scale.")

    def body(opts, args):
        import numpy as np
        from nnetmix.decode.decoder import DecodeError
        from nnetmix.decode.latrescore import rescore_lattices
        from nnetmix.feat.pipeline import open_features
        from nnetmix.hmm.gmm_likelihood import StackedGmms, pdf_loglikes
        from nnetmix.kaldi import read_gmm_model

        tm, am = read_gmm_model(args[0])
        stacked = StackedGmms.from_gmms(list(am))  # all Gaussians in one GEMM per utterance

        def loglikes_of(feats):
            if feats.shape[1] != am.dim:
                raise DecodeError(f"{args[2]}: features have dimension {feats.shape[1]}, the "
                                  f"model {args[0]} expects {am.dim}")
            return pdf_loglikes(stacked, feats, dtype=np.float32)

        with open_features(args[2]) as feats:
            done = rescore_lattices(args[1], feats, loglikes_of, tm.tid2pdf, args[3],
                                    opts.old_acoustic_scale)
        return 0 if done else 1

    return run_tool(parser, (4, 4), body, argv)


if __name__ == "__main__":
    sys.exit(main())
