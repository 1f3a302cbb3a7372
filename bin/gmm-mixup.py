#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-mixup.py: Kaldi's gmm-mixup (src/gmmbin/gmm-mixup.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Does GMM mixing up (and Gaussian merging)
Usage:  gmm-mixup.py [options] <model-in> <state-occs-in> <model-out>
e.g. of mixing up:
 gmm-mixup.py --mix-up=4000 1.mdl 1.occs 2.mdl
e.g. of merging:
 gmm-mixup.py --mix-down=2000 1.mdl 1.occs 2.mdl
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="gmm-mixup.py")
    parser.register("binary", True, "Write output in binary mode")
    parser.register("mix-up", 0, "Increase number of mixture components to this overall target.")
    parser.register("min-count", 20.0, "Minimum count enforced while mixing up.")
    parser.register("mix-down", 0, "If nonzero, merge mixture components to this target.")
    parser.register("power", 0.2, "If mixing up, power to allocate Gaussians to states.")
    parser.register("perturb-factor", 0.01, "While mixing up, perturb means by standard "
                    "deviation times this factor.")
    parser.register("srand", 0, "nnetmix: seed of the perturbation (Kaldi uses RandGauss())")

    def body(opts, args):
        from nnetmix.hmm.tree_build import run_gmm_mixup

        run_gmm_mixup(args[0], args[1], args[2], opts.mix_up, opts.mix_down, opts.power,
                      opts.min_count, opts.perturb_factor, opts.srand, opts.binary)
        return 0

    return run_tool(parser, (3, 3), body, argv)


if __name__ == "__main__":
    sys.exit(main())
