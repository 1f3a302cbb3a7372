"""The digits recipe gives the same corpus, features, alignments and models, byte for byte,
whatever --nj and however many numba/OpenMP threads (BLAS runs one thread per process, see
nnetmix/kernel_pin.py): run at a small size twice, at the same time in two directories, and
compare every model file and the recipes' fingerprints. Every stage runs, tri1 (stage 8: tree,
models, alignments) included; it adds about 3.5 minutes to the pair of runs on 2 loaded cores."""
import os
import shutil
import signal
import subprocess

import pytest

from helpers import ROOT, script_env

S5 = ROOT / "egs" / "digits" / "s5"
# two DNN epochs and three LM weights in scoring: each is a deterministic step whatever its count
SMALL = ["--num-train-utts", "120", "--num-test-utts", "30", "--dnn-hid-dim", "64",
         "--dnn-num-workers", "2", "--dnn-opts", "--max-iters 2",
         "--scoring-opts", "--min-lmwt 9 --max-lmwt 11 --word-ins-penalty 0.0"]
MODELS = ("*.mdl", "*.occs", "*.nnet", "*.dbn", "final.feature_transform", "tree")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (shutil.which("espeak-ng") and shutil.which("sox")),
                       reason="espeak-ng and sox synthesise the corpus (make install)"),
]


def _start(dest, nj: int, threads: int) -> subprocess.Popen:
    """A copy of the recipe (run.sh copied, the rest linked) started with --nj nj and ``threads``
    numba and OpenMP threads; its output goes to <dest>/run.log."""
    dest.mkdir()
    for name in ("steps", "utils", "bin", "conf", "local", "path.sh", "cmd.sh"):
        os.symlink(os.path.realpath(S5 / name), dest / name)
    shutil.copy(S5 / "run.sh", dest / "run.sh")
    env = {k: v for k, v in script_env().items() if k != "OPENBLAS_NUM_THREADS"}
    env.update(NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    with open(dest / "run.log", "w") as log:
        return subprocess.Popen(["./run.sh", "--nj", str(nj), "--corpus", str(dest / "corpus"),
                                 *SMALL], cwd=dest, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)


def test_nj_and_threads_do_not_change_any_model(tmp_path):
    # The two runs go at the same time (on 2 cores the suite waits for one run's length, not
    # two): their jobs interleave however the scheduler likes, which the result must not see.
    a, b = tmp_path / "a", tmp_path / "b"
    runs = [(d, _start(d, nj, threads)) for d, nj, threads in ((a, 1, 1), (b, 3, 2))]
    try:
        for _, p in runs:
            p.wait(timeout=1500)
    finally:
        for _, p in runs:           # a run past its time: it and its jobs (its own session)
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
    for d, p in runs:
        assert p.returncode == 0, (d / "run.log").read_text()[-4000:]
    models = sorted(p.relative_to(a) for pattern in MODELS for p in (a / "exp").rglob(pattern))
    assert len(models) > 50 and any(p.name == "final.nnet" for p in models)
    differ = [str(p) for p in models if (a / p).read_bytes() != (b / p).read_bytes()]
    assert not differ, f"{len(differ)} of {len(models)} model files differ: {differ[:10]}"
    # run.sh's fingerprint: corpus, features and alignments too (tables by content)
    fa, fb = ((d / "exp" / "fingerprint.md").read_text().splitlines() for d in (a, b))
    rows = [r for r in fa if r.startswith("| `")]
    assert len(rows) > 20 and rows == [r for r in fb if r.startswith("| `")]
    assert "pin=pinned" in (a / "exp" / "fingerprint.md").read_text()
