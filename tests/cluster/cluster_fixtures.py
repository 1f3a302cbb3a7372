"""The ``slurm`` fixture and helpers shared by the cluster wrapper tests.

Not a conftest.py: tests/ has no packages, so a second conftest would replace the top one in
sys.modules (both are named ``conftest``). Test modules import the fixture from here; every
module gets the same cluster (slurm_cluster.shared_cluster).
Where the daemons cannot start (no root, no apt) the Slurm tests are skipped with the reason; in
CI (CI=true) as root they must run, so there the fixture fails instead.
"""
import os
import subprocess
import sys

import pytest
from helpers import ROOT, worker_env
from slurm_cluster import SlurmUnavailable, shared_cluster


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
    """A recipe's environment (:func:`helpers.worker_env`) pointed at the test Slurm."""
    return slurm.env(worker_env())


def run(slurm, args, cwd, timeout=120) -> subprocess.CompletedProcess:
    """Run a command (a wrapper, a steps/ script) in ``cwd`` with :func:`env`."""
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env(slurm), text=True,
                          capture_output=True, timeout=timeout)
