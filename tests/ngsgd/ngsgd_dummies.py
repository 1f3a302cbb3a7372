"""Synthetic data and tiny networks for the NG-SGD tests (built in code, seeded)."""
from __future__ import annotations

import numpy as np

from nnetmix.nnet import AffineTransform, Nnet, Sigmoid, Softmax


def gaussian_rows(rng: np.random.Generator, n: int, eigvals: np.ndarray, basis: np.ndarray,
                  dtype=np.float64) -> np.ndarray:
    """n rows from N(0, basis diag(eigvals) basis^T)."""
    z = rng.standard_normal((n, eigvals.size)) * np.sqrt(eigvals)[None, :]
    return (z @ basis.T).astype(dtype)


def random_basis(rng: np.random.Generator, dim: int) -> np.ndarray:
    q, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
    return q


def ill_conditioned_task(rng: np.random.Generator, num_utts: int = 60, dim: int = 16,
                         num_classes: int = 4, frames: int = 100, scales=(0.03, 3.0)):
    """Utterances whose features are a linear teacher's inputs seen through a badly scaled,
    rotated map (condition number (scales[1]/scales[0])^2): plain SGD crawls along the small
    directions, NG-SGD whitens them."""
    basis = random_basis(rng, dim)
    s = np.geomspace(scales[0], scales[1], dim)
    teacher = rng.standard_normal((num_classes, dim)) * 3.0
    out = []
    for u in range(num_utts):
        z = rng.standard_normal((frames, dim))
        labels = np.argmax(z @ teacher.T, axis=1).astype(np.int32)
        feats = ((z * s[None, :]) @ basis.T).astype(np.float32)
        out.append((f"utt{u:04d}", feats, labels))
    return out


def linear_net(dim: int, num_classes: int) -> Nnet:
    return Nnet([AffineTransform(dim, num_classes, np.zeros((num_classes, dim)),
                                 np.zeros(num_classes)),
                 Softmax(num_classes, num_classes)])


def tiny_mlp(rng: np.random.Generator, dim: int = 6, hid: int = 9, num_classes: int = 5) -> Nnet:
    return Nnet([
        AffineTransform(dim, hid, rng.standard_normal((hid, dim)) * 0.3, rng.uniform(-1, 1, hid)),
        Sigmoid(hid, hid),
        AffineTransform(hid, num_classes, rng.standard_normal((num_classes, hid)) * 0.3,
                        np.zeros(num_classes), 1.0, 0.5),
        Softmax(num_classes, num_classes),
    ])


def softmax_layer(rng: np.random.Generator, dim: int = 6, num_classes: int = 5) -> Nnet:
    return Nnet([AffineTransform(dim, num_classes, rng.standard_normal((num_classes, dim)) * 0.3,
                                 rng.standard_normal(num_classes) * 0.1),
                 Softmax(num_classes, num_classes)])
