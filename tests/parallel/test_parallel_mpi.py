"""Every MPI check of parallel_mpi_checks.py under mpiexec with 2, 3, 4 and 8 ranks.

One launch per N runs all checks (8 oversubscribed ranks on 2 cores start slowly). N = 3 is
the non-power-of-two case (recursive-doubling's fold-in steps, butterfly's refusal).
"""
import pytest

from parallel_testutil import HERE, run_mpi


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_parallel_checks_under_mpiexec(n):
    proc, secs = run_mpi(n, [str(HERE / "parallel_mpi_checks.py")], timeout=300)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
    assert proc.returncode == 0, f"mpiexec -n {n} failed ({proc.returncode}, {secs:.0f} s):\n{tail}"
    assert f"{n} ranks: all " in proc.stdout, tail
