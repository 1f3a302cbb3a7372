"""Every MPI check of parallel_mpi_checks.py under mpiexec with 2, 3, 4 and 8 ranks.

One launch per N runs all checks (8 oversubscribed ranks on 2 cores start slowly). N = 3 is
the non-power-of-two case (recursive-doubling's fold-in steps, butterfly's refusal).
"""
import pytest

from parallel_testutil import run_checks


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_parallel_checks_under_mpiexec(n):
    run_checks("parallel_mpi_checks.py", n)
