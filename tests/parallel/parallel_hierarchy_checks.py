"""MPI checks of hierarchical mixing (nnetmix/parallel/hierarchy.py), written to pass at ANY world
size: imported by test_parallel_hierarchy.py (COMM_WORLD, size 1 under plain pytest) and run as
a script under ``mpiexec -n N --oversubscribe`` for N = 2, 3, 4:

    mpiexec -n 3 --oversubscribe .venv/bin/python tests/parallel/parallel_hierarchy_checks.py

One machine is one host, so ``--mixing=hierarchical`` must be the flat all-reduce bit for bit;
the two-level path is driven by handing the reducer a split of COMM_WORLD by rank parity as its
"hosts" (an honest host split for the arithmetic: MPI does not know the difference), and
compared with a float64 numpy reference. tests/cluster/test_multihost.py runs it across real
(namespace) hosts.
"""
from __future__ import annotations

import sys

import numpy as np

from nnetmix.parallel import ALGORITHMS, BMUF, BmufOptions, HierarchicalReducer, Mixer
from parallel_mpi_checks import _bound, main, rank_data, same_on_all_ranks

N_PARAMS = 1001


def check_one_host_is_allreduce(comm) -> None:
    """One host: every mix and the end-of-epoch average equal allreduce mixing's bytes."""
    r = comm.Get_rank()
    for alg in ALGORITHMS:
        x, y = rank_data(r, N_PARAMS), rank_data(r, N_PARAMS)
        with Mixer(comm, "hierarchical", alg, x) as h, Mixer(comm, "allreduce", alg, y) as a:
            assert isinstance(h.reducer, HierarchicalReducer) and h.reducer.flat, alg
            assert h.reducer.describe().startswith("one host ("), h.reducer.describe()
            h.mix(0)
            a.mix(0)
            assert np.array_equal(x, y), alg
            x += rank_data(r, N_PARAMS, seed=1)
            y += rank_data(r, N_PARAMS, seed=1)
            h.exact_average()
            a.exact_average()
            assert np.array_equal(x, y) and same_on_all_ranks(comm, x), alg


def check_parity_split(comm) -> None:
    """Two "hosts" (even and odd ranks): the exact average of all ranks against float64, the
    same bytes on every rank, for every leaders' algorithm; sum() too."""
    N, r = comm.Get_size(), comm.Get_rank()
    parts = np.array([rank_data(j, N_PARAMS).astype(np.float64) for j in range(N)])
    tol = _bound(N, np.sum(np.abs(parts), axis=0))
    node = comm.Split(r % 2, key=r)
    try:
        for alg in ALGORITHMS:
            with HierarchicalReducer(comm, alg, N_PARAMS, np.float32, node_comm=node) as red:
                assert red.flat == (N <= 2), (N, red.describe())
                assert red.leader == (r < 2), r
                x = rank_data(r, N_PARAMS)
                red.average(x)
                assert (np.abs(x - parts.mean(axis=0)) <= tol / N).all(), alg
                assert same_on_all_ranks(comm, x), alg
                x = rank_data(r, N_PARAMS)
                red.sum(x)
                assert (np.abs(x - parts.sum(axis=0)) <= tol).all(), alg
                assert same_on_all_ranks(comm, x), alg
                if not red.flat:
                    assert red.describe().startswith("2 hosts ("), red.describe()
    finally:
        node.Free()


def check_parity_split_bracketing(comm) -> None:
    """The brackets of the two levels: at 4 ranks split {0, 2} / {1, 3}, the leaders' two-rank
    sum of the host sums is (t0 + t2) + (t1 + t3), computed here in float32 in that order: the
    reducer gives exactly those bytes (MPI's in-host sum of two terms is commutative)."""
    N, r = comm.Get_size(), comm.Get_rank()
    if N != 4:
        return
    t = [rank_data(j, N_PARAMS) for j in range(N)]
    want = ((t[0] + t[2]) + (t[1] + t[3])) * np.float32(0.25)
    node = comm.Split(r % 2, key=r)
    try:
        with HierarchicalReducer(comm, "recursive-doubling", N_PARAMS, np.float32,
                                 node_comm=node) as red:
            x = rank_data(r, N_PARAMS)
            red.average(x)
            assert np.array_equal(x, want)
    finally:
        node.Free()


def check_bmuf_over_hierarchy(comm) -> None:
    """BMUF with mixing="hierarchical" (one host) is BMUF over the flat all-reduce, bit for bit."""
    r = comm.Get_rank()
    a, b = rank_data(0, N_PARAMS), rank_data(0, N_PARAMS)
    f1 = BMUF(comm, a, BmufOptions(), "ring", mixing="hierarchical")
    f2 = BMUF(comm, b, BmufOptions(), "ring")
    try:
        for t in range(3):
            step = rank_data(r, N_PARAMS, seed=10 + t) * np.float32(0.01)
            a += step
            b += step
            f1.sync()
            f2.sync()
            assert np.array_equal(a, b) and np.array_equal(f1.model, f2.model), t
    finally:
        f1.free()
        f2.free()


def check_reducer_errors(comm) -> None:
    """A wrong buffer is one error naming the hierarchical all-reduce (the two-level path)."""
    from nnetmix.parallel import ParallelError
    r = comm.Get_rank()
    node = comm.Split(r % 2, key=r)
    try:
        with HierarchicalReducer(comm, "mpi", 5, np.float32, node_comm=node) as red:
            try:
                red.average(np.zeros(4, np.float32))
            except ParallelError as e:
                assert "expected a flat buffer of 5 float32" in str(e), e
            else:
                raise AssertionError("a buffer of the wrong size was reduced")
    finally:
        node.Free()


CHECKS = [check_one_host_is_allreduce, check_parity_split, check_parity_split_bracketing,
          check_bmuf_over_hierarchy, check_reducer_errors]


if __name__ == "__main__":
    sys.exit(main(CHECKS, "hierarchical mixing checks"))
