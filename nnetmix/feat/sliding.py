"""Sliding-window CMN: Kaldi's apply-cmvn-sliding (src/featbin/apply-cmvn-sliding.cc, the
SlidingWindowCmn of src/feat/feature-functions.cc).

Each frame has its mean (and with ``--norm-vars``, its variance) taken over a window of
``--cmn-window`` frames: centred on it with ``--center=true``, else the frames before it, where
the first frames use the first ``max(t + 1, --min-cmn-window)`` frames. The window is placed as
Kaldi places it (shifted right at the start, left at the end) and the statistics are in float64
as Kaldi's; here they come from cumulative sums rather than Kaldi's running sums, which differ
only in float64 rounding (well below the float32 output). A variance under 1e-10 is floored,
with Kaldi's warning (at most ``--max-warnings`` per utterance); a window of one frame gives
zeros when variances are normalised.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Optional

import numpy as np

from nnetmix.errors import UsageError
from nnetmix.feat.pipeline import open_features
from nnetmix.kaldi.copy import Counts, map_table
from nnetmix.options import option

__all__ = ["SlidingCmnOptions", "sliding_windows", "sliding_cmn", "apply_cmvn_sliding"]

logger = logging.getLogger(__name__)

_VAR_FLOOR = 1.0e-10  # Kaldi's ApplyFloor in SlidingWindowCmnInternal


@dataclass
class SlidingCmnOptions:
    """Kaldi's SlidingWindowCmnOptions (names, defaults and help as registered there)."""

    cmn_window: int = option(600, "Window in frames for running average CMN computation")
    min_cmn_window: int = option(100, "Minimum CMN window used at start of decoding (adds "
                                 "latency only at start). Only applicable if center == false, "
                                 "ignored if center==true")
    max_warnings: int = option(5, "Maximum warnings to report per utterance. 0 to disable, -1 "
                               "to show all.")
    norm_vars: bool = option(False, "If true, normalize variance to one.")
    center: bool = option(False, "If true, use a window centered on the current frame (to the "
                          "extent possible, modulo end effects). If false, window is to the "
                          "left.")

    def check(self) -> None:
        """Kaldi's SlidingWindowCmnOptions::Check, as one error naming the option."""
        if self.cmn_window <= 0:
            raise UsageError(f"--cmn-window={self.cmn_window}: expected a number of frames > 0")
        if self.center and not 0 < self.min_cmn_window <= self.cmn_window:
            raise UsageError(f"--min-cmn-window={self.min_cmn_window}: expected > 0 and at most "
                             f"--cmn-window={self.cmn_window} (Kaldi checks it with --center)")


def sliding_windows(num_frames: int, opts: SlidingCmnOptions) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of each frame's window, end one past its last frame, as Kaldi computes."""
    t = np.arange(num_frames, dtype=np.int64)
    if opts.center:
        start = t - opts.cmn_window // 2
        end = start + opts.cmn_window
    else:
        start = t - opts.cmn_window
        end = t + 1
    end = np.where(start < 0, end - start, end)
    start = np.maximum(start, 0)
    if not opts.center:
        end = np.where(end > t, np.maximum(t + 1, opts.min_cmn_window), end)
    over = np.maximum(end - num_frames, 0)
    start = np.maximum(start - over, 0)
    end = end - over
    return start, end


def sliding_cmn(feats: np.ndarray, opts: SlidingCmnOptions, key: str = "") -> np.ndarray:
    """One utterance's features (frames x dim, at least one frame) normalised; float32."""
    x = np.asarray(feats, dtype=np.float64)
    start, end = sliding_windows(x.shape[0], opts)
    n = (end - start).astype(np.float64)[:, None]
    zero = np.zeros((1, x.shape[1]))
    csum = np.concatenate([zero, np.cumsum(x, axis=0)])
    mean = (csum[end] - csum[start]) / n
    out = x - mean
    if opts.norm_vars:
        csq = np.concatenate([zero, np.cumsum(x * x, axis=0)])
        var = (csq[end] - csq[start]) / n - mean * mean
        floored = (var < _VAR_FLOOR).sum(axis=1)
        var = np.maximum(var, _VAR_FLOOR)
        out = out / np.sqrt(var)
        single = n[:, 0] == 1
        out[single] = 0.0
        _warn_floored(np.where(single, 0, floored), end - start, opts.max_warnings, x.shape[0],
                      key)
    return out.astype(np.float32)


def _warn_floored(floored: np.ndarray, window: np.ndarray, max_warnings: int,
                  num_frames: int, key: str) -> None:
    """Kaldi's variance-flooring warnings: one per frame that floored, up to max_warnings,
    then one saying the rest are suppressed."""
    if num_frames <= 1:
        return
    where = f" (utterance {key})" if key else ""
    for count, t in enumerate(np.flatnonzero(floored)):
        if count == max_warnings:
            logger.warning("Suppressing the remaining variance flooring warnings. Run program "
                           "with --max-warnings=-1 to see all warnings.%s", where)
            return
        logger.warning("Flooring when normalizing variance, floored %d elements; num-frames "
                       "was %d%s", floored[t], window[t], where)


def apply_cmvn_sliding(rspecifier: str, wspecifier: str,
                       opts: Optional[SlidingCmnOptions] = None) -> Counts:
    """Kaldi's apply-cmvn-sliding over a feature table; an empty matrix is warned about and
    skipped. Exit status as Kaldi's: 0 when at least one utterance was normalised."""
    opts = opts or SlidingCmnOptions()
    opts.check()

    def one(key: str, feats: np.ndarray) -> Optional[np.ndarray]:
        if feats.shape[0] == 0:
            logger.warning("Empty feature matrix for utterance %s", key)
            return None
        return sliding_cmn(feats, opts, key)

    what = "and variance " if opts.norm_vars else ""
    return map_table(rspecifier, wspecifier, one, reader=open_features(rspecifier),
                     summary=f"Applied sliding-window cepstral mean {what}normalization to "
                             "{done} utterances, {err} had errors.")
