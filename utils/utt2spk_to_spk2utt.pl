#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# utt2spk_to_spk2utt.pl: utt2spk to spk2utt, speakers in order of first appearance, as Kaldi's utils/utt2spk_to_spk2utt.pl.
# Kaldi recipes call this tool by its Perl name; the work is bin/utt2spk-to-spk2utt.py, which it runs.

# bin/ of this checkout (recipes reach utils/ through a symlink); --prog: messages name $0
bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bin" && pwd)
exec "$bin/utt2spk-to-spk2utt.py" --prog="$0" "$@"
