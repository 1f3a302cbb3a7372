#!/usr/bin/env bash
# Copyright 2026 nnetmix authors. Apache 2.0.
# spk2utt_to_utt2spk.pl: spk2utt to utt2spk, as Kaldi's utils/spk2utt_to_utt2spk.pl.
# Kaldi recipes call this tool by its Perl name; the work is bin/spk2utt-to-utt2spk.py, which it runs.

# bin/ of this checkout (recipes reach utils/ through a symlink); --prog: messages name $0
bin=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bin" && pwd)
exec "$bin/spk2utt-to-utt2spk.py" --prog="$0" "$@"
