#!/usr/bin/env python3
"""utt2spk_to_spk2utt.pl [<utt2spk>] > <spk2utt>: invert utt2spk (file or stdin), speakers in order of first appearance.

Kaldi recipes call this tool by its Perl name; it is Python, reaching nnetmix.data.cli.
"""
import os
import sys

# the nnetmix tree this script lives in (recipes reach utils/ through a symlink)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from nnetmix.data.cli import run  # noqa: E402

if __name__ == "__main__":
    sys.exit(run("utt2spk_to_spk2utt", sys.argv[0], sys.argv[1:]))
