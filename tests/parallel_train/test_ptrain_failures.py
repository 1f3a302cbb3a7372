"""bin/nnet-train-mpi.py refuses ranks that differ, and a rank that fails ends the job fast."""
import sys
import time

import numpy as np
import pytest
from helpers import (MPI_TOOL, mpi_env, mpi_net, mpi_utts, mpiexec, run_mpi, run_mpiexec,
                     write_data)

from nnetmix.parallel import partition_utterances


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("ptrain_fail")
    rng = np.random.default_rng(7)
    utts = mpi_utts(rng, num_utts=16)
    init = d / "init.nnet"
    mpi_net(rng).write(str(init))
    return d, utts, write_data(d, utts), init


def _mpmd(groups, timeout=120):
    """mpiexec -n a python tool ARGS_A : -n b python tool ARGS_B ..."""
    cmd = [mpiexec(), "--oversubscribe"]
    for i, (n, args) in enumerate(groups):
        cmd += ([":"] if i else []) + ["-n", str(n), sys.executable, str(MPI_TOOL),
                                       *map(str, args)]
    t0 = time.monotonic()
    p = run_mpiexec(cmd, env=mpi_env(), timeout=timeout)
    return p, time.monotonic() - t0


def test_options_differing_between_ranks_refused_8_ranks(task):
    d, _, data, init = task
    base = [f"--utt2num-frames={data['u2nf']}", "--minibatch-size=8", data["feats"],
            data["targets"], init, d / "x.nnet"]
    p, _ = _mpmd([(7, ["--learn-rate=0.01", *base]), (1, ["--learn-rate=0.02", *base])])
    assert p.returncode != 0
    assert "check_same: options: rank 7 differs from rank 0" in p.stderr
    assert not (d / "x.nnet").exists()


def test_different_initial_models_refused(task):
    """The same command line on both ranks, but each rank's working directory holds another
    model.nnet: check_same_model refuses before any training."""
    d, _, data, init = task
    for sub, seed in (("a", 1), ("b", 2)):
        (d / sub).mkdir()
        mpi_net(np.random.default_rng(seed)).write(str(d / sub / "model.nnet"))
    args = [f"--utt2num-frames={data['u2nf']}", "--minibatch-size=8", data["feats"],
            data["targets"], "model.nnet", "out.nnet"]
    cmd = [mpiexec(), "--oversubscribe", "-n", "1", "--wdir", str(d / "a"), sys.executable,
           str(MPI_TOOL), *args, ":", "-n", "1", "--wdir", str(d / "b"), sys.executable,
           str(MPI_TOOL), *args]
    p = run_mpiexec(cmd, env=mpi_env(), timeout=120)
    assert p.returncode != 0
    assert "the initial model (sha256 of the flat parameter buffer): rank 1 differs" in p.stderr
    assert not (d / "a" / "out.nnet").exists()


def test_rank_raising_ends_the_job_fast_naming_it(task):
    """A bad target in an utterance of rank 1's shard: rank 1 raises mid-epoch while rank 0
    waits at the next mix; run_ranks aborts the job, exit non-zero, naming rank 1."""
    d, utts, _, init = task
    part = partition_utterances({k: f.shape[0] for k, f, _ in utts}, 2, 0, 777)
    bad = part.parts[1][-1]
    broken = [(k, f, np.full_like(t, 9) if k == bad else t) for k, f, t in utts]
    data = write_data(d / "broken", broken)
    p, secs = run_mpi(2, [f"--utt2num-frames={data['u2nf']}", "--minibatch-size=8",
                          "--average-every=1", "--randomize=false", "--prefetch=false",
                          data["feats"], data["targets"], init, d / "z.nnet"], timeout=60)
    assert p.returncode != 0
    assert "rank 1:" in p.stderr and f"utterance {bad}: target 9" in p.stderr
    assert secs < 30
    assert not (d / "z.nnet").exists()


def test_butterfly_needs_power_of_two(task):
    d, _, data, init = task
    p, _ = run_mpi(3, [f"--utt2num-frames={data['u2nf']}", "--minibatch-size=8",
                       "--mixing=butterfly", data["feats"], data["targets"], init, d / "b.nnet"])
    assert p.returncode != 0 and "power-of-two" in p.stderr
    q, _ = run_mpi(2, [f"--utt2num-frames={data['u2nf']}", "--minibatch-size=8",
                       "--mixing=butterfly", "--average-every=2", data["feats"], data["targets"],
                       init, d / "b.nnet"])
    assert q.returncode == 0, q.stderr
