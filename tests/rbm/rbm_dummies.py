"""Tiny RBMs and structured synthetic data for the nnetmix.rbm tests (built in code)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from nnetmix.kaldi import TableWriter
from nnetmix.nnet import Nnet, Rbm


def tiny_rbm(rng: np.random.Generator, vis: int = 3, hid: int = 2, vis_type: str = "bern",
             hid_type: str = "bern", scale: float = 0.5) -> Nnet:
    return Nnet([Rbm(vis, hid, rng.standard_normal((hid, vis)) * scale,
                     rng.standard_normal(vis) * 0.3, rng.standard_normal(hid) * 0.3,
                     vis_type, hid_type)])


def binary_prototype_utts(rng: np.random.Generator, num_utts: int = 30, dim: int = 12,
                          num_protos: int = 4, length: int = 60, flip: float = 0.05):
    """Bernoulli data: each frame is one of a few binary prototypes with a few bits flipped."""
    protos = rng.random((num_protos, dim)) < 0.5
    out = []
    for u in range(num_utts):
        idx = rng.integers(0, num_protos, size=length)
        x = protos[idx] ^ (rng.random((length, dim)) < flip)
        out.append((f"utt{u:03d}", x.astype(np.float32)))
    return out


def low_rank_gauss_utts(rng: np.random.Generator, num_utts: int = 30, dim: int = 12,
                        rank: int = 3, length: int = 60, noise: float = 0.3):
    """Gaussian data: a few binary factors times fixed directions plus noise, standardised."""
    dirs = rng.standard_normal((rank, dim))
    out = []
    raw = []
    for _ in range(num_utts):
        z = (rng.random((length, rank)) < 0.5).astype(np.float64)
        raw.append(z @ dirs + noise * rng.standard_normal((length, dim)))
    allx = np.concatenate(raw)
    mean, std = allx.mean(0), allx.std(0)
    for u, x in enumerate(raw):
        out.append((f"utt{u:03d}", ((x - mean) / std).astype(np.float32)))
    return out


def write_feats(tmp: Path, utts, name: str = "feats") -> str:
    """An ark + scp of the (key, matrix) pairs; returns the scp rspecifier."""
    tmp.mkdir(parents=True, exist_ok=True)
    with TableWriter(f"ark,scp:{tmp}/{name}.ark,{tmp}/{name}.scp", "mat") as w:
        for k, m in utts:
            w[k] = m
    return f"scp:{tmp}/{name}.scp"
