#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gmm-init-model.py: Kaldi's gmm-init-model (src/gmmbin/gmm-init-model.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Initialize GMM from decision tree and tree stats
Usage:  gmm-init-model.py [options] <tree-in> <tree-stats-in> <topo-file> <model-out> [<old-tree> <old-model>]
e.g.:
  gmm-init-model.py tree treeacc topo 1.mdl
or (initializing GMMs with old model):
  gmm-init-model.py tree treeacc topo 1.mdl prev/tree prev/30.mdl
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="gmm-init-model.py")
    parser.register("binary", True, "Write output in binary mode")
    parser.register("write-occs", "", "File to write state occupancies to.")
    parser.register("var-floor", 0.01, "Variance floor used while initializing Gaussians")

    def body(opts, args):
        from nnetmix.errors import UsageError
        from nnetmix.hmm.tree_build import run_gmm_init_model

        if len(args) not in (4, 6):
            raise UsageError(f"wrong number of arguments: got {len(args)}")
        run_gmm_init_model(args[0], args[1], args[2], args[3], *(args[4:6] or ["", ""]),
                           var_floor=opts.var_floor, write_occs=opts.write_occs,
                           binary=opts.binary)
        return 0

    return run_tool(parser, (4, 6), body, argv)


if __name__ == "__main__":
    sys.exit(main())
