"""Kaldi pitch (Ghahremani et al. 2014) through kaldi-native-fbank, with Kaldi's option names.

knf's compute_and_process_kaldi_pitch is a port of Kaldi's src/feat/pitch-functions.cc that
gives compute-and-process-kaldi-pitch-feats' numbers value for value (knf's documentation says
so; the delta-pitch noise comes from a fixed stream, so runs repeat). This module maps Kaldi's
PitchExtractionOptions and ProcessPitchOptions (names and defaults of the Kaldi tools) onto knf
and gives the extractor the interface feat/extract.py's table loop uses, so the pitch tool
shares compute-mfcc-feats' handling of bad audio and its summary line.

The features are by default (POV feature, normalized log-pitch, delta log-pitch), what Kaldi's
recipes paste after MFCC or PLP. Raw (NCCF, pitch in Hz), Kaldi's compute-kaldi-pitch-feats
output, is not offered: knf binds only the processed features (its OnlinePitch includes the
post-processing), and Kaldi's make_*_pitch.sh pipe the raw features straight into
process-kaldi-pitch-feats, which compute-and-process-kaldi-pitch-feats replaces.
"""
from __future__ import annotations

from dataclasses import dataclass

import kaldi_native_fbank as knf
import numpy as np

from nnetmix.errors import UsageError
from nnetmix.feat.audio import SampleRateError
from nnetmix.feat.compute import TooShortError
from nnetmix.options import option

__all__ = ["PitchOptions", "ProcessPitchOptions", "PitchExtractor"]


@dataclass
class PitchOptions:
    """Kaldi's PitchExtractionOptions (compute-kaldi-pitch-feats)."""

    sample_frequency: float = option(16000.0, "Waveform data sample frequency (must match the "
                                     "waveform file, if specified there)")
    frame_length: float = option(25.0, "Frame length in milliseconds")
    frame_shift: float = option(10.0, "Frame shift in milliseconds")
    preemphasis_coefficient: float = option(0.0, "Coefficient for use in signal "
                                            "preemphasis (deprecated)")
    min_f0: float = option(50.0, "min. F0 to search for (Hz)")
    max_f0: float = option(400.0, "max. F0 to search for (Hz)")
    soft_min_f0: float = option(10.0, "Minimum f0, applied in soft way, must not exceed min-f0")
    penalty_factor: float = option(0.1, "cost factor for FO change.")
    lowpass_cutoff: float = option(1000.0, "cutoff frequency for LowPass filter (Hz) ")
    resample_frequency: float = option(4000.0, "Frequency that we down-sample the signal to.  "
                                       "Must be more than twice lowpass-cutoff")
    delta_pitch: float = option(0.005, "Smallest relative change in pitch that our "
                                "algorithm measures")
    nccf_ballast: float = option(7000.0, "Increasing this factor reduces NCCF for quiet frames")
    nccf_ballast_online: bool = option(False, "This is useful mainly for debug; it affects how "
                                       "the NCCF ballast is computed.")
    lowpass_filter_width: int = option(1, "Integer that determines filter width of lowpass "
                                       "filter, more gives sharper filter")
    upsample_filter_width: int = option(5, "Integer that determines filter width when "
                                        "upsampling NCCF")
    max_frames_latency: int = option(0, "Maximum number of frames of latency that we allow "
                                     "pitch tracking to introduce into the feature "
                                     "processing (affects output only if --frames-per-chunk "
                                     "> 0 and --simulate-first-pass-online=true")
    frames_per_chunk: int = option(0, "Only relevant for offline pitch extraction (e.g. "
                                   "compute-kaldi-pitch-feats), you can set it to a small "
                                   "nonzero value, such as 10, for better feature "
                                   "compatibility with online decoding (affects energy "
                                   "normalization in the algorithm)")
    simulate_first_pass_online: bool = option(False, "If true, compute-kaldi-pitch-feats will "
                                              "output features that correspond to what an online "
                                              "decoder would see in the first pass of decoding "
                                              "-- not the final version of the features, which is "
                                              "the default.  Relevant if --frames-per-chunk > 0")
    recompute_frame: int = option(500, "Only relevant for online pitch extraction, or for "
                                  "compatibility with online pitch extraction.  A non-critical "
                                  "parameter; the frame at which we recompute some of the "
                                  "forward pointers, after revising our estimate of the signal "
                                  "energy.  Relevant if--frames-per-chunk > 0")
    snip_edges: bool = option(True, "If this is set to false, the incomplete frames near the "
                              "ending edge won't be snipped, so that the number of frames is the "
                              "file size divided by the frame-shift. This makes different types "
                              "of features give the same number of frames.")

    def to_knf(self) -> knf.PitchExtractionOptions:
        o = knf.PitchExtractionOptions()
        for ours, theirs in (("sample_frequency", "samp_freq"), ("frame_length", "frame_length_ms"),
                             ("frame_shift", "frame_shift_ms"),
                             ("preemphasis_coefficient", "preemph_coeff"),
                             ("resample_frequency", "resample_freq")):
            setattr(o, theirs, getattr(self, ours))
        for name in ("min_f0", "max_f0", "soft_min_f0", "penalty_factor", "lowpass_cutoff",
                     "delta_pitch", "nccf_ballast", "nccf_ballast_online",
                     "lowpass_filter_width", "upsample_filter_width", "max_frames_latency",
                     "frames_per_chunk", "simulate_first_pass_online", "recompute_frame",
                     "snip_edges"):
            setattr(o, name, getattr(self, name))
        return o


@dataclass
class ProcessPitchOptions:
    """Kaldi's ProcessPitchOptions (process-kaldi-pitch-feats)."""

    pitch_scale: float = option(2.0, "Scaling factor for the final normalized log-pitch value")
    pov_scale: float = option(2.0, "Scaling factor for final POV (probability of voicing) feature")
    pov_offset: float = option(0.0, "This can be used to add an offset to the POV feature. "
                               "Intended for use in online decoding as a substitute for  CMN.")
    delta_pitch_scale: float = option(10.0, "Term to scale the final delta log-pitch feature")
    delta_pitch_noise_stddev: float = option(0.005, "Standard deviation for noise we add to "
                                             "the delta log-pitch (before scaling); should be "
                                             "about the same as delta-pitch option to pitch "
                                             "creation.  The purpose is to get rid of peaks in "
                                             "the delta-pitch caused by discretization of "
                                             "pitch values.")
    normalization_left_context: int = option(75, "Left-context (in frames) for moving "
                                             "window normalization")
    normalization_right_context: int = option(75, "Right-context (in frames) for moving "
                                              "window normalization")
    delta_window: int = option(2, "Number of frames on each side of central frame, to use for "
                               "delta window.")
    delay: int = option(0, "Number of frames by which the pitch information is delayed.")
    add_pov_feature: bool = option(True, "If true, the warped NCCF is added to output features")
    add_normalized_log_pitch: bool = option(True, "If true, the log-pitch with POV-weighted mean "
                                            "subtraction over 1.5 second window is added to "
                                            "output features")
    add_delta_pitch: bool = option(True, "If true, time derivative of log-pitch is added to "
                                   "output features")
    add_raw_log_pitch: bool = option(False, "If true, log(pitch) is added to output features")

    def to_knf(self) -> knf.ProcessPitchOptions:
        o = knf.ProcessPitchOptions()
        for name in self.__dataclass_fields__:
            setattr(o, name, getattr(self, name))
        return o


class PitchExtractor:
    """Processed Kaldi pitch features of whole utterances; the interface of
    nnetmix.feat.compute.Extractor."""

    def __init__(self, opts: PitchOptions, process: ProcessPitchOptions):
        self.opts, self.process = opts, process
        self._knf, self._knf_process = opts.to_knf(), process.to_knf()
        self.dim = self._knf_process.dim
        if self.dim == 0:
            raise UsageError("no pitch feature selected: set one of --add-pov-feature, "
                             "--add-normalized-log-pitch, --add-delta-pitch, "
                             "--add-raw-log-pitch to true")

    @property
    def sample_frequency(self) -> float:
        return self.opts.sample_frequency

    def compute(self, samples: np.ndarray, sample_rate: float | None = None,
                key: str = "") -> np.ndarray:
        want = self.sample_frequency
        if sample_rate is not None and sample_rate != want:
            raise SampleRateError(f"utterance {key}: sample frequency mismatch: "
                                  f"--sample-frequency={want:g} but the audio is "
                                  f"{sample_rate:g} Hz")
        wave = np.ascontiguousarray(samples, dtype=np.float32)
        feats = np.asarray(knf.compute_and_process_kaldi_pitch(self._knf, self._knf_process,
                                                               wave), dtype=np.float32)
        if feats.shape[0] == 0:
            raise TooShortError(f"utterance {key} is too short: {len(samples)} samples give no "
                                "pitch frames")
        return feats
