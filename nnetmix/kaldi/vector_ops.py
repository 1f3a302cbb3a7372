"""Small value edits the copy tools offer: Kaldi's ScalePosterior and copy-vector's options."""
from __future__ import annotations

import numpy as np

__all__ = ["scale_posterior", "change_dim_and_scale"]


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
