"""Kaldi data directories: read, write, validate, fix, split and subset them.

A data directory (``data/train``) holds ``wav.scp text utt2spk spk2utt [segments] [feats.scp]
[cmvn.scp] [utt2num_frames] [utt2dur] [spk2gender] [reco2file_and_channel]``, each a table sorted
in C locale. The utils/ scripts with Kaldi's names (validate_data_dir.sh, fix_data_dir.sh,
split_data.sh, subset_data_dir.sh, subset_data_dir_tr_cv.sh, utt2spk_to_spk2utt.pl,
spk2utt_to_utt2spk.pl, filter_scp.pl, data/remove_dup_utts.sh) exec the bin/ tools that call
these functions (bin/validate-data-dir.py, ...).
"""
from nnetmix.data.dedup import KaldiDupRandom, select_dup_limited
from nnetmix.data.filter import filter_data_dir, filter_data_dir_parts, filter_file
from nnetmix.data.fix import FixReport, fix_data_dir
from nnetmix.data.io import (Entry, Segment, atomic_open, c_key, c_sorted, first_unsorted_key,
                             read_entries, read_key_list, read_reco2file_and_channel, read_scp,
                             read_segments, read_spk2gender, read_spk2utt, read_table, read_text,
                             read_utt2dur, read_utt2num_frames, read_utt2spk, read_wav_scp,
                             spk2utt_to_utt2spk, split_fields, utt2spk_to_spk2utt, write_lines,
                             write_spk2utt, write_table, write_utt2spk)
from nnetmix.data.prepare import Utterance, check_wav, data_dir_tables, write_data_dir
from nnetmix.data.split import (kaldi_partition, partition_counts, split_data, split_dir_name,
                                split_is_up_to_date)
from nnetmix.data.subset import spread_subset, subset_data_dir, utterance_lengths
from nnetmix.data.tr_cv import subset_tr_cv
from nnetmix.data.validate import KeyListMismatch, ValidateOptions, validate_data_dir

__all__ = [
    "Entry", "Segment", "atomic_open", "c_key", "c_sorted", "first_unsorted_key", "read_entries",
    "read_key_list", "read_reco2file_and_channel", "read_scp", "read_segments", "read_spk2gender",
    "read_spk2utt", "read_table", "read_text", "read_utt2dur", "read_utt2num_frames",
    "read_utt2spk", "read_wav_scp", "spk2utt_to_utt2spk", "split_fields", "utt2spk_to_spk2utt",
    "write_lines", "write_spk2utt", "write_table", "write_utt2spk",
    "filter_data_dir", "filter_data_dir_parts", "filter_file", "FixReport", "fix_data_dir",
    "kaldi_partition", "partition_counts", "split_data", "split_dir_name", "split_is_up_to_date",
    "spread_subset", "subset_data_dir", "utterance_lengths", "subset_tr_cv",
    "KeyListMismatch", "ValidateOptions", "validate_data_dir", "KaldiDupRandom",
    "select_dup_limited", "Utterance", "check_wav", "data_dir_tables", "write_data_dir",
]
