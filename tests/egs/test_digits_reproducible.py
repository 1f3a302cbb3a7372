"""The digits recipe gives the same corpus, features, alignments and models, byte for byte,
whatever --nj and however many numba/OpenMP threads (BLAS runs one thread per process, see
nnetmix/kernel_pin.py): run at a small size twice, in two directories, and compare every model
file and the recipes' fingerprints."""
import os
import shutil
import subprocess

import pytest

from helpers import ROOT, script_env

S5 = ROOT / "egs" / "digits" / "s5"
SMALL = ["--num-train-utts", "120", "--num-test-utts", "30", "--dnn-hid-dim", "64",
         "--dnn-num-workers", "2"]
MODELS = ("*.mdl", "*.occs", "*.nnet", "*.dbn", "final.feature_transform", "tree")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (shutil.which("espeak-ng") and shutil.which("sox")),
                       reason="espeak-ng and sox synthesise the corpus (make install)"),
]


def _run(dest, nj: int, threads: int):
    """A copy of the recipe (run.sh copied, the rest linked) run with --nj nj and ``threads``
    numba and OpenMP threads; returns its directory."""
    dest.mkdir()
    for name in ("steps", "utils", "bin", "conf", "local", "path.sh", "cmd.sh"):
        os.symlink(os.path.realpath(S5 / name), dest / name)
    shutil.copy(S5 / "run.sh", dest / "run.sh")
    env = {k: v for k, v in script_env().items() if k != "OPENBLAS_NUM_THREADS"}
    env.update(NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    p = subprocess.run(["./run.sh", "--nj", str(nj), "--corpus", str(dest / "corpus"), *SMALL],
                       cwd=dest, env=env, text=True, capture_output=True, timeout=1500)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return dest, p.stdout


def test_nj_and_threads_do_not_change_any_model(tmp_path):
    a, out_a = _run(tmp_path / "a", nj=1, threads=1)
    b, out_b = _run(tmp_path / "b", nj=3, threads=2)
    models = sorted(p.relative_to(a) for pattern in MODELS for p in (a / "exp").rglob(pattern))
    assert len(models) > 50 and any(p.name == "final.nnet" for p in models)
    differ = [str(p) for p in models if (a / p).read_bytes() != (b / p).read_bytes()]
    assert not differ, f"{len(differ)} of {len(models)} model files differ: {differ[:10]}"
    # run.sh's fingerprint: corpus, features and alignments too (tables by content)
    fa, fb = ((d / "exp" / "fingerprint.md").read_text().splitlines() for d in (a, b))
    rows = [r for r in fa if r.startswith("| `")]
    assert len(rows) > 20 and rows == [r for r in fb if r.startswith("| `")]
    assert "pin=pinned" in (a / "exp" / "fingerprint.md").read_text()
