#!/usr/bin/env python3
"""int2sym.pl: map fields of text lines through a symbol table, as Kaldi's utils/int2sym.pl.

Kaldi recipes call this tool by its Perl name; it is Python, reaching nnetmix.lang.cli.
"""
import os
import sys

# the nnetmix tree this script lives in (recipes reach utils/ through a symlink)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from nnetmix.lang.cli import run  # noqa: E402

if __name__ == "__main__":
    sys.exit(run("int2sym", sys.argv[0], sys.argv[1:]))
