"""Kaldi-compatible features: MFCC, fbank (through kaldi-native-fbank) and PLP, CMVN, deltas, splice.

Modules: options (Kaldi's option names and defaults), audio (the recording type, Kaldi's int16
scale), wav (one wav.scp entry), sphere and sph2pipe (NIST SPHERE files and Kaldi's
``sph2pipe ... |`` entries without the binary), riff and wavetable (Kaldi wave objects and wave
tables), segments (extract-segments), duration (wav-to-duration), compute (the extractor), plp
(PLP cepstra from mel power spectra), extract (the compute-*-feats table loop), cmvn, deltas, stages (apply-cmvn and add-deltas per
utterance), pipeline (a feature chain described once as JSON, ``pipeline:<file>``, and
open_features, the one reader of feature tables), textio (spk2utt and ark,t: number tables),
tables (one driver per feature bin/ tool), sliding (apply-cmvn-sliding), compare (compare-feats),
featsegments (extract-feature-segments).
"""
from nnetmix.feat.audio import Audio, AudioReadError, SampleRateError
from nnetmix.feat.cmvn import CmvnError, acc_cmvn_stats, apply_cmvn, cmvn_transform
from nnetmix.feat.compare import CompareOptions, FeatureSimilarity, compare_feats
from nnetmix.feat.compute import (Extractor, TooShortError, compute_fbank, compute_mfcc,
                                  compute_plp)
from nnetmix.feat.deltas import add_deltas, delta_scales, splice_frames
from nnetmix.feat.extract import ExtractOptions, ExtractResult, compute_feats_table
from nnetmix.feat.featsegments import (FeatureSegmentOptions, FeatureSegmentsError,
                                      extract_feature_segments)
from nnetmix.feat.options import (FbankOptions, FeatureConfig, FrameOptions, MelOptions,
                                  MfccOptions, PlpOptions, config_from_options,
                                  read_feature_config)
from nnetmix.feat.pipeline import (PIPELINE_PREFIX, FeaturePipeline, FeatureReader,
                                   PipelineError, first_keys, is_pipeline, open_features,
                                   table_keys)
from nnetmix.feat.segments import SegmentOptions, SegmentsError, extract_segments
from nnetmix.feat.sliding import SlidingCmnOptions, apply_cmvn_sliding, sliding_cmn
from nnetmix.feat.sphere import SphereError, SphereFile, SphereHeader
from nnetmix.feat.tables import (Counts, add_deltas_table, apply_cmvn_table, compute_cmvn_stats,
                                 copy_feats, feat_to_dim, feat_to_len, splice_feats_table)
from nnetmix.feat.wav import read_audio
from nnetmix.feat.wavetable import WaveEntry, WaveRandomAccess, WaveWriter, iter_wave_table

__all__ = [
    "FrameOptions", "MelOptions", "MfccOptions", "FbankOptions", "PlpOptions", "FeatureConfig",
    "read_feature_config", "config_from_options",
    "Extractor", "TooShortError", "compute_mfcc", "compute_fbank", "compute_plp",
    "ExtractOptions", "ExtractResult", "compute_feats_table",
    "Audio", "AudioReadError", "SampleRateError", "read_audio",
    "SphereError", "SphereFile", "SphereHeader",
    "WaveEntry", "WaveRandomAccess", "WaveWriter", "iter_wave_table",
    "SegmentOptions", "SegmentsError", "extract_segments",
    "CmvnError", "acc_cmvn_stats", "apply_cmvn", "cmvn_transform",
    "add_deltas", "delta_scales", "splice_frames",
    "PIPELINE_PREFIX", "FeaturePipeline", "FeatureReader", "PipelineError", "open_features",
    "table_keys", "first_keys", "is_pipeline",
    "Counts", "copy_feats", "add_deltas_table", "splice_feats_table", "feat_to_dim",
    "feat_to_len", "compute_cmvn_stats", "apply_cmvn_table",
    "SlidingCmnOptions", "apply_cmvn_sliding", "sliding_cmn",
    "CompareOptions", "FeatureSimilarity", "compare_feats",
    "FeatureSegmentOptions", "FeatureSegmentsError", "extract_feature_segments",
]
