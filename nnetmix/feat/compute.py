"""MFCC and fbank through kaldi-native-fbank, which reproduces Kaldi's numbers; PLP on top of it.

We do not re-implement Kaldi's feature pipeline: knf's C++ is a line-by-line port of
src/feat/feature-{window,mfcc,fbank}.cc and mel-computations.cc, so handing it Kaldi's options
(see options.py) and Kaldi-scaled samples (see wav.py) gives Kaldi's features. The per-frame
work (framing, FFT, mel, DCT) runs inside knf in one call per utterance; Python only copies the
finished rows out. knf has no PLP; a PLP extractor runs knf's linear fbank (Kaldi's PLP front
end) and nnetmix.feat.plp turns its rows into cepstra.

--dither is the one departure. Kaldi adds ``dither * RandGauss()`` to every sample of every
window; knf does too, from C's unseeded rand(), so an utterance's noise depended on the utterances
the same process had computed before it (on --nj and the split). Here the noise is drawn once per
utterance, ``dither`` times a standard normal per sample, from a generator seeded by the
utterance's key (:func:`dither_seed`), and knf runs with dither 0: the same key and audio give the
same features in any job. Dither matters where audio has digital silence (runs of exact zeros,
as synthesized speech has): without it those frames are identical vectors, on which Gaussians
collapse to the variance floor (see egs/digits/s5/RESULTS.md, tri1).
"""
from __future__ import annotations

import logging
import zlib

import kaldi_native_fbank as knf
import numpy as np

from nnetmix.errors import NnetmixError
from nnetmix.feat.audio import SampleRateError
from nnetmix.feat.options import FbankOptions, FeatureConfig, PlpOptions
from nnetmix.feat.plp import PlpTransform

__all__ = ["Extractor", "TooShortError", "dither_seed", "compute_mfcc", "compute_fbank",
           "compute_plp"]

logger = logging.getLogger(__name__)


class TooShortError(NnetmixError):
    """The waveform is shorter than one frame, so it gives no feature vectors."""


def dither_seed(key: str) -> int:
    """The seed of an utterance's dither noise: CRC-32 of its key (stable across runs and
    platforms, unlike Python's hash())."""
    return zlib.crc32(key.encode("utf-8"))


class Extractor:
    """Computes one kind of feature (MFCC, fbank or PLP) for whole utterances."""
    def __init__(self, config: FeatureConfig):
        self.config = config
        self._opts = config.to_knf()
        self._dither = float(config.frame.dither)
        frame_opts = self._opts.frame_opts
        frame_opts.dither = 0.0  # ours instead, seeded per utterance (module docstring)
        self._opts.frame_opts = frame_opts
        self._cls = knf.OnlineMfcc if config.kind == "mfcc" else knf.OnlineFbank
        self._knf_dim = self._cls(self._opts).dim
        self._plp = (PlpTransform(config.frame, config.mel, config.feat)
                     if config.kind == "plp" else None)
        self.dim = self._plp.dim if self._plp else self._knf_dim

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
        samples = np.ascontiguousarray(samples, dtype=np.float32)
        if self._dither != 0.0:
            noise = np.random.default_rng(dither_seed(key)).standard_normal(len(samples))
            samples = (samples + self._dither * noise).astype(np.float32)
        comp.accept_waveform(want, samples)
        comp.input_finished()
        got = comp.num_frames_ready
        out = np.empty((got, self._knf_dim), dtype=np.float32)
        for i in range(got):  # copies finished rows only; all computation happened above
            out[i] = comp.get_frame(i)
        return self._to_plp(out, key) if self._plp else out

    def _to_plp(self, rows: np.ndarray, key: str) -> np.ndarray:
        """PLP from the front end's rows: [log energy,] mel power spectrum."""
        energy = rows[:, 0] if self.config.feat.use_energy else None
        feats, silent = self._plp(rows[:, 1:] if energy is not None else rows, energy)
        if silent:
            logger.warning("Zero energy in LPC computation: %d of %d frames of utterance %s "
                           "are digital silence; their cepstra are 0 (Kaldi's would be NaN; "
                           "--dither > 0 avoids this)", silent, len(rows), key)
        return feats


def compute_mfcc(samples: np.ndarray, config: FeatureConfig | None = None,
                 sample_rate: float | None = None) -> np.ndarray:
    """MFCCs of one waveform (Kaldi's defaults when ``config`` is None, dither included)."""
    return Extractor(config or FeatureConfig("mfcc")).compute(samples, sample_rate)


def compute_fbank(samples: np.ndarray, config: FeatureConfig | None = None,
                  sample_rate: float | None = None) -> np.ndarray:
    """Log mel filterbank energies of one waveform."""
    return Extractor(config or FeatureConfig("fbank", feat=FbankOptions())).compute(
        samples, sample_rate)


def compute_plp(samples: np.ndarray, config: FeatureConfig | None = None,
                sample_rate: float | None = None) -> np.ndarray:
    """Kaldi's PLP cepstra of one waveform."""
    return Extractor(config or FeatureConfig("plp", feat=PlpOptions())).compute(
        samples, sample_rate)
