"""nnet-train-mpi.py across two hosts: network namespaces of this machine (netns_hosts.py), two
ranks on each, Open MPI over TCP between them.

- A training epoch with ``--mixing=hierarchical`` (model averaging, and BMUF) on 2 hosts x 2
  ranks writes the same model file, byte for byte, as the same epoch on 4 ranks of one host
  (where hierarchical mixing is the plain all-reduce, itself checked against
  ``--mixing=allreduce``). Bitwise, not to a tolerance, because ``--allreduce=recursive-doubling``
  brackets the 4-rank sum as (t0 + t1) + (t2 + t3), which is exactly the hierarchical sum (each
  host's two ranks, then the two leaders), every rank reads the same shard and seeds its
  randomizer the same in both runs, and ``--bind-to none`` in both keeps OpenBLAS's rounding
  the same (tests/parallel_train/test_ptrain_semantics.py). With ``--allreduce=mpi`` the two
  runs would agree only to float32 rounding per mix (Open MPI picks its own bracketing).
- Killing one host's ranks ends the job within 60 s, and mpiexec's banner and the job's first
  error line name a killed rank and its host; the epoch is then resumed on the surviving host
  alone, at 2 ranks, from the BMUF checkpoint the 4 ranks of both hosts wrote
  (``--resume-workers=any``, nnetmix.parallel.elastic).

Skipped with the reason where namespaces cannot be made (not root, no ip/unshare: the Debian
packages iproute2 and util-linux, which `make test` installs). In CI as root they must run.
"""
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from helpers import (MPI_TOOL, ROOT, mpi_env, mpi_task, mpi_utts, mpiexec, run_mpiexec,
                     write_data)
from netns_hosts import NetnsHosts, NetnsUnavailable

from nnetmix.utils.rankstatus import summarise_mpi_failure

pytestmark = [pytest.mark.xdist_group("netns"), pytest.mark.slow]

HOSTS = ("hosta", "hostb")
BOUND_S = 60
#: a survivor's TCP transport sees the dead peer's socket close and aborts at once, which, when
#: it comes first, makes mpiexec's banner name the survivor ("rank 1 on node hosta calling
#: abort"); a few seconds' delay lets hostb's daemon report its killed ranks first
ABORT_DELAY = ("--mca", "mpi_abort_delay", "5")
MB = ["--minibatch-size=16", "--randomizer-size=64", "--average-every=4",
      "--mixing=hierarchical", "--allreduce=recursive-doubling"]


@pytest.fixture(scope="module")
def hosts():
    try:
        with NetnsHosts(HOSTS) as h:
            yield h
    except NetnsUnavailable as e:
        reason = f"no namespace hosts here: {e}"
        if os.environ.get("CI", "").lower() == "true" and os.geteuid() == 0:
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("multihost")
    return (d, *mpi_task(d, 11, num_utts=32))


def _tool(data, init, out, *extra):
    return [sys.executable, str(MPI_TOOL), *MB, f"--utt2num-frames={data['u2nf']}", *extra,
            data["feats"], data["targets"], str(init), str(out)]


@pytest.mark.parametrize("extra", [(), ("--bmuf=true",)], ids=["averaging", "bmuf"])
def test_two_hosts_equal_one_host(hosts, task, extra):
    d, data, init = task
    mpi, name = mpiexec(), "bmuf" if extra else "avg"
    one = run_mpiexec([mpi, "-n", "4", "--oversubscribe", "--bind-to", "none",
                       *_tool(data, init, d / f"{name}.one.nnet", *extra)], cwd=ROOT,
                      env=mpi_env(), timeout=180)
    assert one.returncode == 0, one.stderr[-3000:]
    assert "--mixing=hierarchical: one host (" in one.stderr, one.stderr[-3000:]
    two = run_mpiexec(hosts.mpiexec(mpi, 2, _tool(data, init, d / f"{name}.two.nnet", *extra)),
                      cwd=ROOT, env=mpi_env(), timeout=180)
    assert two.returncode == 0, two.stderr[-3000:]
    assert ("--mixing=hierarchical: 2 hosts (hosta: 2 ranks, hostb: 2 ranks): sum inside each "
            "host, --allreduce=recursive-doubling among the 2 leaders") in two.stderr, two.stderr
    what = "BMUF (hierarchical averages)" if extra else "hierarchical mixing"
    assert f"MPI summary: 4 ranks, {what} every 4" in two.stderr, two.stderr
    assert (d / f"{name}.two.nnet").read_bytes() == (d / f"{name}.one.nnet").read_bytes()
    assert (d / f"{name}.two.nnet").read_bytes() != init.read_bytes()
    if not extra:  # and on one host, hierarchical mixing is allreduce mixing
        flat = run_mpiexec([mpi, "-n", "4", "--oversubscribe", "--bind-to", "none",
                            *_tool(data, init, d / "avg.flat.nnet", "--mixing=allreduce")],
                           cwd=ROOT, env=mpi_env(), timeout=180)
        assert flat.returncode == 0, flat.stderr[-3000:]
        assert (d / "avg.flat.nnet").read_bytes() == (d / "avg.one.nnet").read_bytes()


def _wait_for(path, text, proc, timeout):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout and proc.poll() is None:
        if path.exists() and text in path.read_text(errors="replace"):
            return True
        time.sleep(0.2)
    return False


def test_killed_host_ends_job_naming_it(hosts, task, tmp_path):
    """Epoch 1 with BMUF on both hosts (4 ranks) leaves its checkpoint; epoch 2, SIGKILL both
    ranks of hostb mid-epoch: mpiexec ends the job, non-zero, within BOUND_S, its banner names a
    killed rank on hostb, and the job's first error line (what utils/run.py and the scheduler
    print, summarise_mpi_failure) names that rank, its host and its pid. Epoch 2 then runs
    again on hosta alone, 2 ranks, from the 4 ranks' checkpoint: refused without
    --resume-workers=any, resumed with it (each change logged)."""
    d, data, init = task
    mpi, state = mpiexec(), tmp_path / "b.npz"
    bmuf = ["--bmuf=true", f"--bmuf-state={state}"]
    first = run_mpiexec(hosts.mpiexec(mpi, 2, _tool(data, init, tmp_path / "m1.nnet", *bmuf)),
                        cwd=ROOT, env=mpi_env(), timeout=180)
    assert first.returncode == 0, first.stderr[-3000:]
    epoch1 = state.read_bytes()
    big = write_data(tmp_path, mpi_utts(np.random.default_rng(12), num_utts=1200), "big")
    job_log = tmp_path / "job.log"
    cmd = hosts.mpiexec(mpi, 2, _tool(big, tmp_path / "m1.nnet", tmp_path / "out.nnet",
                                      *bmuf, f"--rank-log={tmp_path}/job.rank%d.log"),
                        extra=ABORT_DELAY)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=mpi_env(), text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        started = _wait_for(tmp_path / "job.rank3.log", "minibatches agreed", proc, 120)
        assert started, f"rank 3 never started training:\n{proc.communicate()[0][-3000:]}"
        victims = [p for p in hosts.pids("hostb") if str(MPI_TOOL) in _cmdline(p)]
        assert len(victims) == 2, victims
        t0 = time.monotonic()
        for p in victims:
            os.kill(p, signal.SIGKILL)
        out, _ = proc.communicate(timeout=BOUND_S)
        secs = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    job_log.write_text(out)
    assert proc.returncode != 0, out[-3000:]
    assert secs < BOUND_S
    assert not (tmp_path / "out.nnet").exists()
    banner = re.search(r"process rank (\d+) with PID (\d+) on node (\S+) exited on\s+signal 9",
                       out)
    assert banner, out[-3000:]
    rank, pid, node = int(banner.group(1)), int(banner.group(2)), banner.group(3)
    assert rank in (2, 3) and pid in victims and node == "hostb", banner.group(0)
    line = summarise_mpi_failure(str(job_log), proc.returncode).line
    assert line.startswith(f"MPI rank {rank} on host hostb (pid {pid}) was killed by signal 9 "
                           "(SIGKILL)"), line
    assert state.read_bytes() == epoch1  # the killed epoch wrote nothing

    # the survivor: hosta alone, 2 ranks, from the checkpoint of 4
    def again(*extra):
        return run_mpiexec(hosts.run_in("hosta", [
            mpi, "-n", "2", "--oversubscribe", "--bind-to", "none",
            *_tool(data, tmp_path / "m1.nnet", tmp_path / "out.nnet", *bmuf, *extra)]),
            cwd=ROOT, env=mpi_env(), timeout=180)
    refused = again()
    assert refused.returncode != 0 and not (tmp_path / "out.nnet").exists()
    assert f"{state}: BMUF state written by 4 ranks, this run has 2" in refused.stderr, \
        refused.stderr[-3000:]
    resumed = again("--resume-workers=any")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"elastic resume: BMUF state {state} of 4 ranks: W, W_g and Delta kept" in \
        resumed.stderr, resumed.stderr[-3000:]
    assert "--mixing=hierarchical: one host (" in resumed.stderr
    assert (tmp_path / "out.nnet").exists() and state.read_bytes() != epoch1


def _cmdline(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/cmdline").read().replace("\0", " ")
    except OSError:  # gone meanwhile
        return ""
