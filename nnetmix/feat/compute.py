"""MFCC and fbank through kaldi-native-fbank, which reproduces Kaldi's numbers.

We do not re-implement Kaldi's feature pipeline: knf's C++ is a line-by-line port of
src/feat/feature-{window,mfcc,fbank}.cc and mel-computations.cc, so handing it Kaldi's options
(see options.py) and Kaldi-scaled samples (see wav.py) gives Kaldi's features. The per-frame
work (framing, FFT, mel, DCT) runs inside knf in one call per utterance; Python only copies the
finished rows out.
"""
from __future__ import annotations

import kaldi_native_fbank as knf
import numpy as np

from nnetmix.errors import NnetmixError
from nnetmix.feat.audio import SampleRateError
from nnetmix.feat.options import FbankOptions, FeatureConfig

__all__ = ["Extractor", "TooShortError", "compute_mfcc", "compute_fbank"]


class TooShortError(NnetmixError):
    """The waveform is shorter than one frame, so it gives no feature vectors."""


class Extractor:
    """Computes one kind of feature (MFCC or fbank) for whole utterances."""
    def __init__(self, config: FeatureConfig):
        self.config = config
        self._opts = config.to_knf()
        self._cls = knf.OnlineMfcc if config.kind == "mfcc" else knf.OnlineFbank
        self.dim = self._cls(self._opts).dim

    @property
    def sample_frequency(self) -> float:
        return self.config.frame.sample_frequency

    def compute(self, samples: np.ndarray, sample_rate: float | None = None,
                key: str = "") -> np.ndarray:
        """Features (num_frames, dim) float32 of 1-D samples on Kaldi's int16 scale.

        Raises SampleRateError when ``sample_rate`` differs from --sample-frequency (Kaldi's
        OfflineFeatureTpl::Compute errors; it would only resample with --allow-downsample) and
        TooShortError when no frame fits.
        """
        want = self.sample_frequency
        if sample_rate is not None and sample_rate != want:
            raise SampleRateError(f"utterance {key}: sample frequency mismatch: "
                                  f"--sample-frequency={want:g} but the audio is "
                                  f"{sample_rate:g} Hz (resample the audio, e.g. sox ... -r "
                                  f"{want:g}, or set --sample-frequency={sample_rate:g})")
        n = self.config.frame.num_frames(len(samples))
        if n == 0:
            fr = self.config.frame
            raise TooShortError(f"utterance {key} is too short: {len(samples)} samples give no frames "
                                f"(frame length {fr.window_size()}, shift {fr.window_shift()}, "
                                f"--snip-edges={str(fr.snip_edges).lower()})")
        comp = self._cls(self._opts)
        comp.accept_waveform(want, np.ascontiguousarray(samples, dtype=np.float32))
        comp.input_finished()
        got = comp.num_frames_ready
        out = np.empty((got, self.dim), dtype=np.float32)
        for i in range(got):  # copies finished rows only; all computation happened above
            out[i] = comp.get_frame(i)
        return out


def compute_mfcc(samples: np.ndarray, config: FeatureConfig | None = None,
                 sample_rate: float | None = None) -> np.ndarray:
    """MFCCs of one waveform (Kaldi's defaults when ``config`` is None, dither included)."""
    return Extractor(config or FeatureConfig("mfcc")).compute(samples, sample_rate)


def compute_fbank(samples: np.ndarray, config: FeatureConfig | None = None,
                  sample_rate: float | None = None) -> np.ndarray:
    """Log mel filterbank energies of one waveform."""
    return Extractor(config or FeatureConfig("fbank", feat=FbankOptions())).compute(
        samples, sample_rate)
