"""Which files a Kaldi data directory holds and what each is indexed by.

Kaldi's scripts (utils/fix_data_dir.sh, split_data.sh, subset_data_dir.sh) each carry their own
copy of these lists; here they live once. wav.scp is indexed by utterance when there is no
segments file, and by recording when there is one.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["UTT_FILES", "SPK_FILES", "RECO_FILES", "ALL_FILES", "utt_files", "reco_files",
           "has_segments"]

#: Files with one line per utterance (wav.scp joins them when there is no segments file).
UTT_FILES = ("utt2spk", "text", "segments", "feats.scp", "utt2num_frames", "utt2dur", "vad.scp",
             "utt2lang", "utt2uniq", "utt2warp")
#: Files with one line per speaker (spk2utt is always derived from utt2spk when written).
SPK_FILES = ("spk2utt", "cmvn.scp", "spk2gender", "spk2warp")
#: Files with one line per recording, when there is a segments file.
RECO_FILES = ("wav.scp", "reco2file_and_channel", "reco2dur")
#: Everything fix_data_dir.sh sorts and backs up.
ALL_FILES = tuple(dict.fromkeys(UTT_FILES + SPK_FILES + RECO_FILES))


def has_segments(data: Path) -> bool:
    return (Path(data) / "segments").is_file()


def utt_files(data: Path) -> tuple[str, ...]:
    """The per-utterance files this directory's layout has (present or not)."""
    return UTT_FILES if has_segments(data) else UTT_FILES + ("wav.scp",)


def reco_files(data: Path) -> tuple[str, ...]:
    """The per-recording files (none without segments: wav.scp is then per utterance)."""
    return RECO_FILES if has_segments(data) else ()
