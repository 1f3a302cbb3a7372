"""Kaldi's PLP (src/feat/feature-plp.cc), from mel power spectra to cepstra, for all frames at once.

kaldi-native-fbank has no PLP: its Python API binds MFCC, fbank (Kaldi's, Whisper's, NeMo's),
pitch, mel banks and an FFT, nothing with LPC. But Kaldi's PLP begins exactly where its linear
fbank ends: the same framing, dither, DC removal, pre-emphasis, window, FFT, power spectrum, mel
banks (MelBanks) and raw or windowed log energy. So compute.Extractor runs knf's fbank with
``use_log_fbank=false`` (the same C++ front end as MFCC, dithered the same way) and hands the
mel power spectra to :class:`PlpTransform`, which does the rest of Kaldi's PlpComputer::Compute:

1. equal-loudness weights on the mel bins (GetEqualLoudnessVector, from the bins' centres),
2. cube-root compression (``--compress-factor``),
3. first and last bin duplicated, then autocorrelation by the inverse DFT (InitIdftBases),
4. Durbin's recursion to ``--lpc-order`` LPC coefficients and the residual energy (ComputeLpc),
5. LPC to cepstrum (Lpc2Cepstrum); C0 is the log residual energy, floored as Kaldi does,
6. liftering, ``--cepstral-scale``, the log energy in place of C0 (``--use-energy``), and C0 last
   with ``--htk-compat``.

Each step is a matrix product or a loop over the LPC order with every frame at once; no
Python runs per frame. Kaldi computes in float32; this module in float64, then rounds.

Two departures from Kaldi, both for frames of digital silence: a frame whose mel spectrum is all
zero (possible only with ``--dither=0``) gives NaN in Kaldi (Durbin divides 0 by 0); here its
LPC and cepstra are 0 and a warning counts such frames. And knf floors the windowed energy
(``--raw-energy=false``) at FLT_EPSILON as Kaldi's MFCC and fbank do, where Kaldi's PLP floors it
at FLT_MIN.
"""
from __future__ import annotations

import math

import numpy as np

from nnetmix.feat.options import FrameOptions, MelOptions, PlpOptions

__all__ = ["PlpTransform", "mel_center_freqs", "equal_loudness", "idft_bases", "durbin",
           "lpc_to_cepstrum", "lifter_coeffs"]

FLT_MIN = float(np.finfo(np.float32).tiny)  # Kaldi's floor on the log residual energy


def mel_scale(freq):
    return 1127.0 * np.log(1.0 + np.asarray(freq, dtype=np.float64) / 700.0)


def inverse_mel_scale(mel):
    return 700.0 * (np.exp(np.asarray(mel, dtype=np.float64) / 1127.0) - 1.0)


def mel_center_freqs(mel: MelOptions, frame: FrameOptions) -> np.ndarray:
    """Centre frequencies (Hz) of the mel bins, as MelBanks::GetCenterFreqs (no VTLN warp)."""
    nyquist = 0.5 * frame.sample_frequency
    high = mel.high_freq if mel.high_freq > 0.0 else nyquist + mel.high_freq
    lo, hi = mel_scale(mel.low_freq), mel_scale(high)
    delta = (hi - lo) / (mel.num_mel_bins + 1)
    return inverse_mel_scale(lo + delta * np.arange(1, mel.num_mel_bins + 1))


def equal_loudness(center_freqs: np.ndarray) -> np.ndarray:
    """Hermansky's equal-loudness curve at each bin's centre (GetEqualLoudnessVector)."""
    fsq = np.asarray(center_freqs, dtype=np.float64) ** 2
    fsub = fsq / (fsq + 1.6e5)
    return fsub * fsub * ((fsq + 1.44e6) / (fsq + 9.61e6))


def idft_bases(num_bases: int, dim: int) -> np.ndarray:
    """(num_bases, dim): row i maps a real, even spectrum sampled at dim points from 0 to pi to
    the autocorrelation at lag i (Kaldi's InitIdftBases: end points weighted 1/2)."""
    j = np.arange(dim, dtype=np.float64)
    weights = np.full(dim, 2.0)
    weights[[0, -1]] = 1.0
    angle = math.pi / (dim - 1)
    return (weights / (2.0 * (dim - 1))) * np.cos(angle * np.outer(np.arange(num_bases), j))


def durbin(autocorr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Durbin's recursion on rows of (T, p+1) autocorrelations: (LPC (T, p), residual (T,)).

    Kaldi's sign convention (predicted s[n] = -sum a[k] s[n-k-1]); the prediction-error factor
    1 - k^2 is floored at 1e-5 as in Kaldi. Rows with r[0] <= 0 must be removed first.
    """
    r = np.asarray(autocorr, dtype=np.float64)
    frames, p = r.shape[0], r.shape[1] - 1
    lpc = np.zeros((frames, p))
    err = r[:, 0].copy()
    for i in range(p):
        k = (r[:, i + 1] + np.einsum("tj,tj->t", lpc[:, :i], r[:, i:0:-1])) / err
        err *= np.maximum(1.0 - k * k, 1.0e-5)
        if i:
            lpc[:, :i] -= k[:, None] * lpc[:, i - 1::-1]
        lpc[:, i] = -k
    return lpc, err


def lpc_to_cepstrum(lpc: np.ndarray) -> np.ndarray:
    """Cepstra c_1..c_p of the all-pole model, rows of (T, p) LPC (Kaldi's Lpc2Cepstrum)."""
    a = np.asarray(lpc, dtype=np.float64)
    c = np.zeros_like(a)
    for i in range(a.shape[1]):
        weights = np.arange(i, 0, -1, dtype=np.float64)  # (i - j) for j = 0 .. i-1
        acc = np.einsum("j,tj,tj->t", weights, a[:, :i], c[:, i - 1::-1]) if i else 0.0
        c[:, i] = -a[:, i] - acc / (i + 1)
    return c


def lifter_coeffs(q: float, n: int) -> np.ndarray:
    """1 + q/2 sin(pi i / q) for i < n (ComputeLifterCoeffs; C0 is left as it is)."""
    return 1.0 + 0.5 * q * np.sin(math.pi * np.arange(n) / q)


class PlpTransform:
    """Mel power spectra (and log energies) of an utterance to its PLP cepstra."""

    def __init__(self, frame: FrameOptions, mel: MelOptions, plp: PlpOptions):
        self.opts = plp
        self.num_bins = mel.num_mel_bins
        self.weights = equal_loudness(mel_center_freqs(mel, frame))
        self.bases_t = idft_bases(plp.lpc_order + 1, mel.num_mel_bins + 2).T
        self.lifter = (lifter_coeffs(plp.cepstral_lifter, plp.num_ceps)
                       if plp.cepstral_lifter != 0 else None)

    @property
    def dim(self) -> int:
        return self.opts.num_ceps

    def __call__(self, mel_power: np.ndarray,
                 log_energy: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        """(features (T, num_ceps) float32, number of zero-energy frames).

        ``mel_power`` is (T, num_mel_bins); ``log_energy`` (T,) is required with --use-energy.
        """
        o = self.opts
        compressed = (np.asarray(mel_power, dtype=np.float64) * self.weights) ** o.compress_factor
        padded = np.concatenate([compressed[:, :1], compressed, compressed[:, -1:]], axis=1)
        autocorr = padded @ self.bases_t
        silent = ~(autocorr[:, 0] > 0.0)
        autocorr[silent] = 0.0
        autocorr[silent, 0] = 1.0  # a flat model for them: LPC 0; the residual is set below
        lpc, err = durbin(autocorr)
        with np.errstate(divide="ignore"):
            c0 = np.maximum(np.log(np.where(silent, 0.0, err)), FLT_MIN)
        feats = np.empty((len(lpc), o.num_ceps))
        feats[:, 0] = c0
        feats[:, 1:] = lpc_to_cepstrum(lpc)[:, :o.num_ceps - 1]
        if self.lifter is not None:
            feats *= self.lifter
        if o.cepstral_scale != 1.0:
            feats *= o.cepstral_scale
        if o.use_energy:
            feats[:, 0] = log_energy  # floored by --energy-floor in the front end
        if o.htk_compat:
            feats = np.roll(feats, -1, axis=1)
        return feats.astype(np.float32), int(silent.sum())
