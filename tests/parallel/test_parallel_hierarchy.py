"""Hierarchical mixing (nnetmix/parallel/hierarchy.py) at the world size pytest runs with, and
under mpiexec with 2, 3 and 4 ranks on this one host (parallel_hierarchy_checks.py); across
hosts: tests/cluster/test_multihost.py."""
import pytest

import parallel_hierarchy_checks as H
from nnetmix.parallel import MpiTrainOptions, ParallelError
from parallel_testutil import run_checks, world


@pytest.mark.parametrize("check", H.CHECKS, ids=lambda c: c.__name__)
def test_hierarchy_check_at_world_size(check):
    check(world())


@pytest.mark.parametrize("n", [2, 3, 4])
def test_hierarchy_checks_under_mpiexec(n):
    run_checks("parallel_hierarchy_checks.py", n, len(H.CHECKS))


@pytest.mark.parametrize("opts, match", [
    (dict(mixing="hierarchical", mix_compression="1bit"),
     r"^--mix-compression=1bit with --mixing=hierarchical: compressed mixing is built for the "
     r"flat all-reduce only \(use --mixing=allreduce, or --mix-compression=none\)$"),
    (dict(mixing="hierarchical", bmuf=True, mix_compression="fp16"),
     r"^--mix-compression=fp16 with --mixing=hierarchical: "),
    (dict(mixing="hierarchical", allreduce="fast"), r"^--allreduce=fast: expected one of mpi, "),
])
def test_unsupported_combinations_one_line(opts, match):
    with pytest.raises(ParallelError, match=match):
        MpiTrainOptions(**opts).check()


def test_supported_combinations():
    MpiTrainOptions(mixing="hierarchical").check()
    MpiTrainOptions(mixing="hierarchical", bmuf=True, allreduce="ring").check()
