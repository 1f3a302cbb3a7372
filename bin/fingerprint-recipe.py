#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""fingerprint-recipe.py: checksums of a recipe's corpus, features, alignments and models, and
of the numeric environment, as a Markdown table (nnetmix.utils.fingerprint): compare two runs'
tables to see at which stage they part. run.sh prints it at the end; RESULTS.md records it."""
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """Print checksums of <recipe-dir>/data/* (text, utt2spk, audio, feature and CMVN
matrices) and <recipe-dir>/exp/* (models, alignments as one table, WER files), and the kernel
settings and versions that decide the bits, as a Markdown table.
Usage: fingerprint-recipe.py [options] <recipe-dir>
 e.g.: fingerprint-recipe.py . | tee exp/fingerprint.md"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="fingerprint-recipe.py")

    def body(opts, args) -> int:
        from nnetmix.utils.fingerprint import environment, recipe_fingerprint

        table = ["| what | md5 |", "| --- | --- |"]
        table += [f"| `{what}` | {md5} |" for what, md5 in recipe_fingerprint(args[0])]
        table += [f"| {what} | {value} |" for what, value in environment()]
        sys.stdout.write("\n".join(table) + "\n")
        return 0

    return run_tool(parser, (1, 1), body, argv)


if __name__ == "__main__":
    sys.exit(main())
