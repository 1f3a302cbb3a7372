#!/usr/bin/env python3
"""filter_scp.pl [--exclude] [-f <field>] <id-list> [<in.scp>] > <out.scp>: keep the lines whose field is (or is not) in the list.

Kaldi recipes call this tool by its Perl name; it is Python, reaching nnetmix.data.cli.
"""
import os
import sys

# the nnetmix tree this script lives in (recipes reach utils/ through a symlink)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from nnetmix.data.cli import run  # noqa: E402

if __name__ == "__main__":
    sys.exit(run("filter_scp", sys.argv[0], sys.argv[1:]))
