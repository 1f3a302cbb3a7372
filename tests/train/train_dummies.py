"""Synthetic training data and tiny networks for the nnetmix.train tests (built in code)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from dummies import class_run_utts

from nnetmix.kaldi import TableWriter
from nnetmix.nnet import AffineTransform, Nnet, Sigmoid, Softmax


def separable_utts(rng: np.random.Generator, num_utts: int = 40, dim: int = 6,
                   num_classes: int = 5, min_len: int = 20, max_len: int = 60,
                   noise: float = 0.6):
    """Utterances of class runs (like alignments); feats = class mean + noise."""
    return class_run_utts(rng, num_utts, dim, num_classes, min_len, max_len, noise)

def tiny_net(rng: np.random.Generator, dim: int = 6, hid: int = 8, num_classes: int = 5,
             max_norm: float = 0.0, coefs=(1.0, 1.0)) -> Nnet:
    return Nnet([
        AffineTransform(dim, hid, rng.standard_normal((hid, dim)) * 0.3,
                        rng.uniform(-1, 1, hid), coefs[0], coefs[1], max_norm),
        Sigmoid(hid, hid),
        AffineTransform(hid, num_classes, rng.standard_normal((num_classes, hid)) * 0.3,
                        np.zeros(num_classes), 1.0, 0.1),
        Softmax(num_classes, num_classes),
    ])


def write_tables(tmp: Path, utts, name: str = "data", post: bool = True,
                 drop_targets: tuple = ()) -> tuple[str, str]:
    """feats ark/scp and targets (posteriors or pdf alignments) ark; returns rspecifiers."""
    tmp.mkdir(parents=True, exist_ok=True)
    fe = f"ark,scp:{tmp}/{name}.feats.ark,{tmp}/{name}.feats.scp"
    tg = tmp / f"{name}.{'post' if post else 'ali'}.ark"
    with TableWriter(fe, "mat") as w:
        for k, f, _ in utts:
            w[k] = f
    with TableWriter(f"ark:{tg}", "post" if post else "ivec") as w:
        for k, _, t in utts:
            if k in drop_targets:
                continue
            w[k] = [[(int(i), 1.0)] for i in t] if post else t
    return f"scp:{tmp}/{name}.feats.scp", f"ark:{tg}"
