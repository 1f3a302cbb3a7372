#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""fingerprint-recipe.py: checksums of a recipe's corpus, features, alignments and models, and
of the numeric environment, as a Markdown table (nnetmix.utils.fingerprint): compare two runs'
tables to see at which stage they part. run.sh prints it at the end; RESULTS.md records it."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Print checksums of <recipe-dir>/data/* (text, utt2spk, audio, feature and CMVN
matrices) and <recipe-dir>/exp/* (models, alignments as one table, WER files), and the kernel
settings and versions that decide the bits, as a Markdown table.
With --compare=<file> (a fingerprint.md, or a RESULTS.md that holds one), print instead each
published row as same, differs or missing here (and this run's extra rows), name the first row
that differs (the stage where this run left the published one) and exit with status 1 when any
published row differs or is missing. The argument may then also be a fingerprint file already
made (exp/fingerprint.md), which is read instead of checksumming the recipe again.
Usage: fingerprint-recipe.py [options] <recipe-dir>
 e.g.: fingerprint-recipe.py . | tee exp/fingerprint.md
 e.g.: fingerprint-recipe.py --compare=RESULTS.md exp/fingerprint.md"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="fingerprint-recipe.py")
    parser.register("compare", "", "Compare with the fingerprint table in this file (a "
                    "fingerprint.md or RESULTS.md) instead of printing the table")

    def body(opts, args) -> int:
        import logging
        import os

        from nnetmix.utils.fingerprint import compare_fingerprints, environment, \
            format_fingerprint, read_fingerprint, recipe_fingerprint

        def read(path):
            try:
                with open(path) as f:
                    return read_fingerprint(f.read(), path)
            except OSError as e:
                from nnetmix.errors import UsageError
                raise UsageError(f"{path}: cannot read the fingerprint ({e.strerror})") from None

        if opts.compare and os.path.isfile(args[0]):
            here = read(args[0])
        else:
            rows = recipe_fingerprint(args[0])
            env = environment()
            if not opts.compare:
                sys.stdout.write(format_fingerprint(rows, env))
                return 0
            here = dict(rows), dict(env)
        cmp = compare_fingerprints(read(opts.compare), here)
        sys.stdout.write("".join(f"{st:8} {what}\n" for what, st in cmp.rows))
        log = logging.getLogger("fingerprint-recipe")
        for what, (want, got) in cmp.env_differ.items():
            log.warning("%s here is '%s', the published run's '%s': the bits may differ for "
                        "that reason", what, got, want)
        published = len(cmp.rows) - len(cmp.having("extra"))
        if cmp.identical:
            log.info("All %d rows of %s are the same here (%d rows more here)", published,
                     opts.compare, len(cmp.having("extra")))
            return 0
        if not cmp.having("differs"):   # a run that stopped early, or other experiments
            log.info("No row of %s that this run has differs, but %d of its %d rows are "
                     "missing here, the first '%s' (a stage not run, or run with other "
                     "options)", opts.compare, len(cmp.having("missing")), published,
                     cmp.first_difference)
            return 1
        log.info("%d of %d rows of %s differ here and %d are missing; the first, '%s', is "
                 "the stage where this run left the published one", len(cmp.having("differs")),
                 published, opts.compare, len(cmp.having("missing")), cmp.first_difference)
        return 1

    return run_tool(parser, (1, 1), body, argv)


if __name__ == "__main__":
    sys.exit(main())
