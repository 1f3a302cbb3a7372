"""Kaldi-compatible features: MFCC and fbank (through kaldi-native-fbank), CMVN, deltas, splice.

Modules: options (Kaldi's option names and defaults), wav (wav.scp entries on Kaldi's int16
scale), compute (the extractor), extract (the compute-*-feats table loop), cmvn, deltas,
textio (spk2utt and ark,t: number tables), tables (one driver per feature bin/ tool).
"""
from nnetmix.feat.cmvn import CmvnError, acc_cmvn_stats, apply_cmvn, cmvn_transform
from nnetmix.feat.compute import Extractor, TooShortError, compute_fbank, compute_mfcc
from nnetmix.feat.deltas import add_deltas, delta_scales, splice_frames
from nnetmix.feat.extract import ExtractOptions, ExtractResult, compute_feats_table
from nnetmix.feat.options import (FbankOptions, FeatureConfig, FrameOptions, MelOptions,
                                  MfccOptions, config_from_options, read_feature_config)
from nnetmix.feat.tables import (Counts, add_deltas_table, apply_cmvn_table, compute_cmvn_stats,
                                 copy_feats, feat_to_dim, feat_to_len, splice_feats_table)
from nnetmix.feat.wav import Audio, AudioReadError, SampleRateError, read_audio, read_wav_scp

__all__ = [
    "FrameOptions", "MelOptions", "MfccOptions", "FbankOptions", "FeatureConfig",
    "read_feature_config", "config_from_options",
    "Extractor", "TooShortError", "compute_mfcc", "compute_fbank",
    "ExtractOptions", "ExtractResult", "compute_feats_table",
    "Audio", "AudioReadError", "SampleRateError", "read_audio", "read_wav_scp",
    "CmvnError", "acc_cmvn_stats", "apply_cmvn", "cmvn_transform",
    "add_deltas", "delta_scales", "splice_frames",
    "Counts", "copy_feats", "add_deltas_table", "splice_feats_table", "feat_to_dim",
    "feat_to_len", "compute_cmvn_stats", "apply_cmvn_table",
]
