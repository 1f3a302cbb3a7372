"""Small value edits the copy tools offer: Kaldi's ScalePosterior, copy-vector's and
copy-matrix's options."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nnetmix.errors import UsageError

__all__ = ["scale_posterior", "change_dim_and_scale", "MatrixEdits"]


def scale_posterior(post: list, scale: float) -> list:
    """Kaldi's ScalePosterior (hmm/posterior.cc): every weight times ``scale``, in float32."""
    s = np.float32(scale)
    return [[(i, float(np.float32(w) * s)) for i, w in frame] for frame in post]


def change_dim_and_scale(vec: np.ndarray, dim: int, scale: float) -> np.ndarray:
    """copy-vector's --change-dim (truncate or zero-pad; -1 keeps it) then --scale."""
    out = np.asarray(vec)
    if dim >= 0 and dim != out.size:
        padded = np.zeros(dim, dtype=out.dtype)
        n = min(dim, out.size)
        padded[:n] = out[:n]
        out = padded
    if scale != 1.0:
        out = out * out.dtype.type(scale)
    return out


@dataclass(frozen=True)
class MatrixEdits:
    """copy-matrix's options (src/bin/copy-matrix.cc), applied in its order: --scale, then
    --apply-log (values floored at 1e-20 first), --apply-exp, --apply-softmax-per-row,
    --apply-power. Arithmetic in float32, Kaldi's BaseFloat: a double matrix (CMVN stats) comes
    out as float, as Kaldi's copy-matrix writes it. Kaldi writes what the arithmetic gives: a
    fractional power of a negative value is NaN, an exp that overflows is inf."""

    scale: float = 1.0
    apply_log: bool = False
    apply_exp: bool = False
    apply_power: float = 1.0
    apply_softmax_per_row: bool = False

    def __post_init__(self) -> None:
        if sum((self.apply_log, self.apply_exp, self.apply_softmax_per_row)) > 1:
            raise UsageError("Only one of apply-log, apply-exp and apply-softmax-per-row can be "
                             "given")

    def __call__(self, mat: np.ndarray) -> np.ndarray:
        m = np.array(mat, dtype=np.float32)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if self.scale != 1.0:
                m *= np.float32(self.scale)
            if self.apply_log:
                m = np.log(np.maximum(m, np.float32(1e-20)))
            if self.apply_exp:
                m = np.exp(m)
            if self.apply_softmax_per_row and m.size:
                m = np.exp(m - m.max(axis=1, keepdims=True))
                m *= (1.0 / m.sum(axis=1, dtype=np.float32, keepdims=True).astype(np.float64)
                      ).astype(np.float32)
            if self.apply_power != 1.0:
                m = np.power(m, np.float32(self.apply_power))
        return m
