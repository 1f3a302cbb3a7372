"""RBM pre-training over MPI (bin/rbm-train-cd1-mpi.py, nnetmix.driver.rbm_train): N = 1 is the
single-worker tool byte for byte, N = 2 trains and reports once, mixing every minibatch keeps
the ranks on one model, and steps/nnet/pretrain_dbn.sh --num-workers 2 runs end to end."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import (ROOT, binary_prototype_utts, low_rank_gauss_utts, mpiexec, run_mpiexec,
                     run_script, script_env, tiny_rbm, write_feats)
from nnetmix.nnet import read_nnet

TOOL = ROOT / "bin" / "rbm-train-cd1-mpi.py"
SINGLE = ROOT / "bin" / "rbm-train-cd1-frmshuff.py"




def _env() -> dict:
    e = script_env()
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS", "MKL_NUM_THREADS"):
        e.setdefault(k, "1")
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT), e.get("PYTHONPATH", "")])
    e.pop("NNETMIX_TASK_LOG", None)
    return e


def _run(n: int, tool: Path, args) -> subprocess.CompletedProcess:
    cmd = [mpiexec(), "-n", str(n), "--oversubscribe", sys.executable, str(tool),
           *[str(a) for a in args]]
    return run_mpiexec(cmd, cwd=ROOT, env=_env(), timeout=120)


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(5)
    utts = binary_prototype_utts(rng, num_utts=24, dim=12, length=60)
    utts = [(k, m[:30 + 2 * i]) for i, (k, m) in enumerate(utts)]  # unequal lengths
    feats = write_feats(tmp_path, utts)
    (tmp_path / "u2nf").write_text("".join(f"{k} {m.shape[0]}\n" for k, m in utts))
    tiny_rbm(rng, vis=12, hid=8).write(str(tmp_path / "init.rbm"), binary=False)
    return tmp_path, feats


COMMON = ["--num-iters=2", "--minibatch-size=20", "--loss-report-frames=400"]


def _report(stderr: str) -> list:
    """The AvgLoss and progress lines, without the LOG (prog...) prefix."""
    return [re.sub(r"^LOG \(.*?\) ", "", ln) for ln in stderr.splitlines()
            if "AvgLoss:" in ln or ln.startswith("progress:")]


def test_one_rank_is_the_single_worker_tool(data):
    # Both under mpiexec: mpiexec binds a rank to a core, which changes the threading of the
    # float32 reductions, so a run under mpiexec and one outside can differ in the last bits
    # (at N = 1 with `mpiexec --bind-to none` the MPI tool matches a plain run too).
    d, feats = data
    p1 = _run(1, SINGLE, [*COMMON, d / "init.rbm", feats, d / "single.rbm"])
    assert p1.returncode == 0, p1.stderr
    p2 = _run(1, TOOL, [*COMMON, f"--utt2num-frames={d}/u2nf", d / "init.rbm", feats,
                        d / "mpi.rbm"])
    assert p2.returncode == 0, p2.stderr
    assert (d / "single.rbm").read_bytes() == (d / "mpi.rbm").read_bytes()
    assert _report(p1.stderr) == _report(p2.stderr) and len(_report(p2.stderr)) == 2


def test_two_ranks_train_and_report_once(data):
    d, feats = data
    p = _run(2, TOOL, [*COMMON, "--average-every=5", d / "init.rbm", feats, d / "out.rbm"])
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("AvgLoss:") == 1 and p.stderr.count(") Done 2 iterations") == 1
    assert ") Done 2 iterations, 48 files" in p.stderr  # 24 utterances x 2 iterations, all ranks
    assert p.stderr.count("rbm-train-cd1-mpi.py ") >= 1 and "2 ranks" in p.stderr
    prog = [float(x) for x in re.search(r"progress: \[([^\]]*)\]", p.stderr).group(1).split()]
    assert len(prog) >= 2 and prog[-1] < prog[0]
    out, init = read_nnet(str(d / "out.rbm")), read_nnet(str(d / "init.rbm"))
    assert out.components[0].__class__ is init.components[0].__class__
    assert not np.allclose(out._host(out.params), init._host(init.params))


def test_mix_every_minibatch_keeps_one_model(data):
    # --average-every=1: no end-of-run average is needed (agreed count % 1 == 0), so the final
    # check_same_model passing means the ranks held one model after the last mix
    d, feats = data
    p = _run(2, TOOL, [*COMMON, "--average-every=1", "--momentum=0", "--momentum-max=0",
                       "--mixing=allreduce", d / "init.rbm", feats, d / "out.rbm"])
    assert p.returncode == 0, p.stderr
    out, init = read_nnet(str(d / "out.rbm")), read_nnet(str(d / "init.rbm"))
    assert not np.allclose(out._host(out.params), init._host(init.params))


def test_pretrain_dbn_two_workers(tmp_path):
    mpiexec()
    rng = np.random.default_rng(8)
    data = tmp_path / "data"
    data.mkdir()
    utts = low_rank_gauss_utts(rng, num_utts=8, dim=13, length=80)
    write_feats(data, utts)
    (data / "utt2spk").write_text("".join(f"{k} {k}\n" for k, _ in utts))
    (data / "utt2num_frames").write_text("".join(f"{k} {m.shape[0]}\n" for k, m in utts))
    d = tmp_path / "exp"
    args = [ROOT / "steps/nnet/pretrain_dbn.sh", "--nn-depth", "2", "--hid-dim", "16",
            "--splice", "1", "--num-workers", "2", "--average-every", "4",
            "--rbm-extra-opts", "--loss-report-frames=200 --minibatch-size=20", data, d]
    proc = subprocess.run([str(a) for a in args], cwd=ROOT, env=_env(), text=True,
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 MPI ranks" in proc.stdout and "done, " in proc.stdout
    for f in ("1.rbm", "2.rbm", "1.dbn", "2.dbn"):
        assert (d / f).is_file(), f
    log1 = (d / "log/rbm.1.log").read_text()
    assert "rbm-train-cd1-mpi.py" in log1 and log1.count("AvgLoss:") == 1
    assert "2 ranks" in log1 and "Iteration 2/2" in log1
    assert (d / "log/rbm.1.rank1.log").is_file()
    info = run_script(["nnet-info.py", d / "2.dbn"], check=True).stdout
    assert "output-dim 16" in info
