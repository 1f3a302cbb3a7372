"""compute-mfcc-feats / compute-fbank-feats over a wave table: the table loop and its accounting.

Follows Kaldi's src/featbin/compute-mfcc-feats.cc: each utterance that cannot be used gets a
WARNING naming its key and is skipped (missing or unreadable audio, fewer samples than one
frame, shorter than --min-duration, a channel it does not have); the run ends with
``Done N out of M utterances.`` and fails only when nothing succeeded. A sample rate that
differs from --sample-frequency is a configuration mistake, not a bad utterance, so it stops
the run with an error naming the key and both rates (as Kaldi's OfflineFeatureTpl does).

The input is a wav.scp (``scp:``) or an archive of Kaldi wave objects (``ark:-`` from
extract-segments, for data directories with a segments file); see wavetable.py.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.feat.audio import AudioReadError
from nnetmix.feat.compute import Extractor, TooShortError
from nnetmix.feat.options import FeatureConfig
from nnetmix.feat.textio import TextTableWriter
from nnetmix.feat.wavetable import WaveEntry, iter_wave_table
from nnetmix.log import vlog
from nnetmix.kaldi import TableWriter
from nnetmix.options import option

__all__ = ["ExtractOptions", "ExtractResult", "compute_feats_table"]

logger = logging.getLogger(__name__)


@dataclass
class ExtractOptions:
    """Options of compute-{mfcc,fbank}-feats beyond the feature options themselves."""
    channel: int = option(-1, "Channel to extract (-1 -> expect mono, 0 -> left, 1 -> right)")
    min_duration: float = option(0.0, "Minimum duration of segments to process (in seconds).")
    subtract_mean: bool = option(False, "Subtract mean of each feature file [CMS]; not recommended "
                                 "to do it this way.")
    write_utt2dur: str = option("", "Wspecifier to write duration of each utterance in seconds, "
                                "e.g. 'ark,t:utt2dur'.")
    write_num_frames: str = option("", "Wspecifier to write length in frames of each utterance, "
                                   "e.g. 'ark,t:utt2num_frames' (as copy-feats's option; an "
                                   "nnetmix addition here)")


@dataclass
class ExtractResult:
    num_done: int
    num_utts: int
    num_frames: int

    @property
    def ok(self) -> bool:
        return self.num_done > 0


def compute_feats_table(config, wav_rspecifier: str, feats_wspecifier: str,
                        opts: ExtractOptions | None = None) -> ExtractResult:
    """Compute features for every entry of a wave table (``scp:wav.scp``, ``ark:-``) and write
    them to ``feats_wspecifier``. ``config`` is a FeatureConfig (MFCC, fbank) or an extractor
    with the same ``compute`` (e.g. nnetmix.feat.pitch.PitchExtractor)."""

    opts = opts or ExtractOptions()
    extractor = Extractor(config) if isinstance(config, FeatureConfig) else config
    num_done = num_utts = num_frames = 0
    dur_writer = TextTableWriter(opts.write_utt2dur) if opts.write_utt2dur else None
    len_writer = TextTableWriter(opts.write_num_frames) if opts.write_num_frames else None
    ok = False
    try:
        with TableWriter(feats_wspecifier, "mat") as writer:
            for entry in iter_wave_table(wav_rspecifier):
                key = entry.key
                num_utts += 1
                feats, duration = _one(extractor, entry, opts)
                if feats is None:
                    continue
                writer.write(key, feats)
                if dur_writer:
                    dur_writer.write(key, duration)
                if len_writer:
                    len_writer.write(key, feats.shape[0])
                num_done += 1
                num_frames += feats.shape[0]
                if num_utts % 10 == 0:
                    logger.info("Processed %d utterances", num_utts)
                vlog(logger, 2, "Processed features for key %s", key)
            # before the writer closes: it refuses an empty table, after this line
            logger.info(" Done %d out of %d utterances.", num_done, num_utts)
            if num_utts and not num_done:  # name the input, not only the empty output
                raise FormatError(f"{wav_rspecifier}: none of its {num_utts} utterances could "
                                  "be read (see the warnings above), so no output was made")
        ok = True
    finally:
        for w in (dur_writer, len_writer):
            if w:
                w.close(ok)
    return ExtractResult(num_done, num_utts, num_frames)


def _one(extractor: Extractor, entry: WaveEntry,
         opts: ExtractOptions) -> tuple[np.ndarray | None, float]:
    """Features of one entry, or (None, 0) after a WARNING naming the key."""
    key = entry.key
    try:
        audio = entry.load()
    except AudioReadError as e:
        logger.warning("Failed to read audio for utterance %s: %s", key, e)
        return None, 0.0
    if audio.samples.shape[1] == 0:
        logger.warning("File: %s is empty (0 samples): producing no output.", key)
        return None, 0.0
    if audio.duration < opts.min_duration:
        logger.warning("File: %s is too short (%g sec): producing no output.", key,
                       audio.duration)
        return None, 0.0
    channel = opts.channel
    if channel == -1:
        channel = 0
        if audio.num_channels != 1:
            logger.warning("Channel not specified but you have data with %d channels; "
                           "defaulting to zero", audio.num_channels)
    elif channel >= audio.num_channels:
        logger.warning("File with id %s has %d channels but you specified channel %d, "
                       "producing no output.", key, audio.num_channels, channel)
        return None, 0.0
    try:
        feats = extractor.compute(audio.samples[channel], audio.sample_rate, key)
    except TooShortError as e:
        logger.warning("%s: producing no output.", e)
        return None, 0.0
    if opts.subtract_mean:
        feats -= feats.mean(axis=0, dtype=np.float64).astype(np.float32)
    return feats, audio.duration
