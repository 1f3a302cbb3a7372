"""The ``slurm`` fixture and helpers shared by the cluster wrapper tests.

Not a conftest.py: tests/ has no packages, so a second conftest would replace the top one in
sys.modules and break the ``from conftest import ...`` of other test folders. Test modules
import the fixture from here; every module gets the same cluster (slurm_cluster.shared_cluster).
Where the daemons cannot start (no root, no apt) the Slurm tests are skipped with the reason; in
CI (CI=true) as root they must run, so there the fixture fails instead.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from slurm_cluster import SlurmUnavailable, shared_cluster

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="session")
def slurm():
    """A running one-node Slurm (:class:`slurm_cluster.SlurmCluster`)."""
    try:
        return shared_cluster(ROOT)
    except SlurmUnavailable as e:
        reason = f"no one-node Slurm here: {e}"
        print(reason, file=sys.stderr)
        if os.environ.get("CI", "").lower() == "true" and os.geteuid() == 0:
            pytest.fail(reason)
        pytest.skip(reason)


def env(slurm) -> dict:
    """A recipe's environment (the venv, bin/ and utils/ on PATH) pointed at the test Slurm."""
    e = dict(os.environ)
    e["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), str(ROOT / "bin"),
                                 str(ROOT / "utils"), e.get("PATH", "")])
    e["LC_ALL"] = "C"
    for k in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
        e.setdefault(k, "1")
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        e.setdefault(k, "1")
    e.pop("NNETMIX_TASK_LOG", None)
    return slurm.env(e)


def run(slurm, args, cwd, timeout=120) -> subprocess.CompletedProcess:
    """Run a command (a wrapper, a steps/ script) in ``cwd`` with :func:`env`."""
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env(slurm), text=True,
                          capture_output=True, timeout=timeout)
