"""A plain-numpy float64 NG-SGD step written from the paper's equations (arXiv 1410.7455,
appendix C), not from nnetmix.train.ngsgd: the backend code is checked against it."""
from __future__ import annotations

import math

import numpy as np


class ReferenceFisher:
    """F = R^T diag(d) R + rho I, started from a given R (rows orthonormal), d, rho."""

    def __init__(self, R, d, rho, t, update_period=4, num_samples_history=2000.0, alpha=4.0):
        self.R = np.array(R, np.float64)
        self.d = np.array(d, np.float64)
        self.rho, self.t = float(rho), int(t)
        self.period, self.hist, self.alpha = update_period, num_samples_history, alpha

    def dense(self) -> np.ndarray:
        return self.R.T @ np.diag(self.d) @ self.R + self.rho * np.eye(self.R.shape[1])

    def step(self, X: np.ndarray) -> np.ndarray:
        """gamma * X F_smoothed^-1 rescaled to X's norm; updates F with X when it is due."""
        X = np.array(X, np.float64)
        n, dim = X.shape
        r = self.R.shape[0]
        F = self.dense()
        Fs = F + self.alpha * np.trace(F) / dim * np.eye(dim)
        Xh = X @ np.linalg.inv(Fs)
        Xh *= np.linalg.norm(X) / np.linalg.norm(Xh)
        if self.t < 10 or self.t % self.period == 0:
            eta = 1.0 - math.exp(-n / self.hist)
            Fn = eta / n * X.T @ X + (1 - eta) * F
            Y = self.R @ Fn
            c, U = np.linalg.eigh(Y @ Y.T)
            c, U = c[::-1], U[:, ::-1]
            sc = np.sqrt(c)
            rho = max((np.trace(Fn) - sc.sum()) / (dim - r), 1e-10, 5e-4 * sc[0])
            self.R = (U / sc[None, :]).T @ Y
            self.d = np.maximum(sc - rho, max(1e-10, 5e-4 * sc[0]))
            self.rho = rho
        self.t += 1
        return Xh
