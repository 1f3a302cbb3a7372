#!/usr/bin/env python3
"""spk2utt_to_utt2spk.pl [<spk2utt>] > <utt2spk>: invert spk2utt (file or stdin), in input order.

Kaldi recipes call this tool by its Perl name; it is Python, reaching nnetmix.data.cli.
"""
import os
import sys

# the nnetmix tree this script lives in (recipes reach utils/ through a symlink)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from nnetmix.data.cli import run  # noqa: E402

if __name__ == "__main__":
    sys.exit(run("spk2utt_to_utt2spk", sys.argv[0], sys.argv[1:]))
