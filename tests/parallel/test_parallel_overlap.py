"""Overlapped mixing (nnetmix/parallel/overlap.py): the refused option combinations, and the MPI
checks of the delayed-update rule at the world size and under mpiexec with 2, 3 and 4 ranks
(3: ranks need not be a power of two)."""
import pytest

import parallel_overlap_checks as C
from nnetmix.parallel import MpiTrainOptions, ParallelError
from parallel_testutil import run_checks


@pytest.mark.parametrize("opts, match", [
    ({"mixing": "butterfly"}, r"^--overlap-mixing=true with --mixing=butterfly: .*use "
                              r"--mixing=allreduce, or --overlap-mixing=false\)$"),
    ({"mixing": "ring"}, r"^--overlap-mixing=true with --mixing=ring: "),
    ({"mixing": "hierarchical", "bmuf": True}, r"^--overlap-mixing=true with "
                                               r"--mixing=hierarchical: "),
    ({"allreduce": "ring-async"}, r"^--overlap-mixing=true with --allreduce=ring-async: .*"
                                  r"MPI_Iallreduce \(use --allreduce=mpi"),
    ({"mix_compression": "1bit"}, r"^--overlap-mixing=true with --mix-compression=1bit: "),
    ({"mix_compression": "fp16", "bmuf": True}, r"--mix-compression=fp16"),
])
def test_bad_combinations_one_line(opts, match):
    with pytest.raises(ParallelError, match=match) as e:
        MpiTrainOptions(overlap_mixing=True, **opts).check()
    assert "\n" not in str(e.value)
    MpiTrainOptions(**opts).check()  # each is fine without overlap
    MpiTrainOptions(overlap_mixing=True).check()
    MpiTrainOptions(overlap_mixing=True, bmuf=True).check()


@pytest.mark.parametrize("check", C.CHECKS, ids=lambda c: c.__name__)
def test_checks_at_world_size(check):
    from mpi4py import MPI
    check(MPI.COMM_WORLD)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_overlap_checks_under_mpiexec(n):
    run_checks("parallel_overlap_checks.py", n, len(C.CHECKS))
