"""Flat-start initialisation (gmm-init-mono) and steps/train_mono.sh's training schedule.

gmm-init-mono (src/gmmbin/gmm-init-mono.cc) gives every pdf ONE Gaussian with the global mean
and variance of the --train-feats, which train_mono.sh makes the first 10 utterances of job 1
(``subset-feats --n=10``): mean = E[x], var = E[x^2] - mean^2 accumulated in double, an error
if any variance is <= 0. Without features Kaldi uses mean 1 and variance 1.

The schedule is train_mono.sh's defaults: num_iters=40, max_iter_inc=30, totgauss=1000,
power=0.25, initial_beam=6 (iteration 1), regular_beam=10, retry_beam=40, boost_silence=1.0,
realign_iters "1 2 3 4 5 6 7 8 9 10 12 14 16 18 20 23 26 29 32 35 38", scale_opts
--transition-scale=1.0 --acoustic-scale=0.1 --self-loop-scale=0.1; numgauss starts at the number
of Gaussians of 0.mdl (one per pdf) and grows by (totgauss-numgauss)//max_iter_inc (bash integer
division) after each iteration x <= max_iter_inc; the update after the equal alignment (0) uses
--min-gaussian-occupancy=3 and --mix-up=numgauss.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.hmm.gmm_likelihood import GmmParams

__all__ = ["global_mean_var", "init_mono_gmms", "TrainMonoSchedule", "kaldi_string_hash"]

REALIGN_ITERS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 18, 20, 23, 26, 29, 32, 35, 38)


def global_mean_var(feats: Iterable[np.ndarray], source: str = "gmm-init-mono"
                    ) -> tuple[np.ndarray, np.ndarray, int]:
    """Mean, variance (float64) and frame count over feature matrices (gmm-init-mono)."""
    count, s1, s2 = 0, None, None
    for m in feats:
        m = np.asarray(m, dtype=np.float64)
        if s1 is None:
            s1, s2 = np.zeros(m.shape[1]), np.zeros(m.shape[1])
        s1 += m.sum(0)
        s2 += (m * m).sum(0)
        count += len(m)
    if count == 0:
        raise FormatError(f"{source}: no features were seen")
    mean = s1 / count
    var = s2 / count - mean * mean
    if var.min() <= 0.0:
        raise FormatError(f"gmm-init-mono: bad variance (min {var.min():g} over {count} frames)")
    return mean, var, count


def init_mono_gmms(num_pdfs: int, mean: np.ndarray, var: np.ndarray) -> list[GmmParams]:
    """One single-Gaussian GMM per pdf, all with the global mean and variance."""
    mean = np.asarray(mean, dtype=np.float64)
    var = np.asarray(var, dtype=np.float64)
    return [GmmParams(np.ones(1), mean[None].copy(), var[None].copy()) for _ in range(num_pdfs)]


def kaldi_string_hash(key: str) -> int:
    """Kaldi's StringHasher()(key) cast to int32: the rand seed align-equal-compiled uses."""
    ans = 0
    for c in key.encode():
        ans = (ans * 7853 + (c - 256 if c > 127 else c)) & 0xFFFFFFFFFFFFFFFF  # char is signed
    ans &= 0xFFFFFFFF
    return ans - (1 << 32) if ans >= (1 << 31) else ans


@dataclass
class TrainMonoSchedule:
    """steps/train_mono.sh's iteration plan; see the module docstring for the sources."""

    num_iters: int = 40
    max_iter_inc: int = 30
    totgauss: int = 1000
    power: float = 0.25
    initial_beam: float = 6.0
    regular_beam: float = 10.0
    retry_beam: float = 40.0
    boost_silence: float = 1.0
    first_min_gaussian_occupancy: float = 3.0
    realign_iters: tuple = field(default=REALIGN_ITERS)
    transition_scale: float = 1.0
    acoustic_scale: float = 0.1
    self_loop_scale: float = 0.1

    def numgauss(self, num_pdfs: int) -> list[int]:
        """--mix-up target of the update after iteration x, for x = 0..num_iters-1."""
        n = num_pdfs
        inc = (self.totgauss - n) // self.max_iter_inc if self.totgauss >= n else \
            -((n - self.totgauss) // self.max_iter_inc)  # bash $[...] truncates toward zero
        out = []
        for x in range(self.num_iters):
            out.append(n)
            if 1 <= x <= self.max_iter_inc:
                n += inc
        return out

    def realign(self, x: int) -> bool:
        return x in self.realign_iters

    def beam(self, x: int) -> float:
        return self.initial_beam if x <= 1 else self.regular_beam
