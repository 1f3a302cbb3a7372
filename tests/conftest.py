"""pytest's fixtures and hooks for the whole suite; the helpers the tests share live in
tests/helpers.py (``from helpers import ...``)."""
from pathlib import Path

import pytest
from helpers import FIXTURES, cuda_device_present


@pytest.fixture
def kaldi_fixtures() -> Path:
    """../shared/kaldi-fixtures (files written by Kaldi's own tools); skip where absent."""
    if not FIXTURES.is_dir():
        pytest.skip(f"{FIXTURES} not present (a user's own clone)")
    return FIXTURES


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda_device: needs the CUDA simulator or a real GPU")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    # `make test` runs the suite in two processes (pytest-xdist, --dist loadgroup): a file's tests
    # stay in one process so its module fixtures (a trained model, a built graph) are made once,
    # and tests/cluster is one group: its files share the one-node Slurm of cluster_fixtures.py.
    # tryfirst: xdist's worker turns the xdist_group marks into the tests' ids in its own hook
    # of this name, which otherwise runs before this one and finds none; and pytest 9.2.0
    # ignores the id xdist 3.8.0 sets, so setup.py pins pytest 9.1.1. Without either, every
    # file's tests spread over both processes, each making the module fixtures again
    # (tests/test_suite_grouping.py fails then).
    for item in items:
        path = Path(str(item.fspath))
        group = "cluster" if path.parent.name == "cluster" else f"{path.parent.name}/{path.name}"
        item.add_marker(pytest.mark.xdist_group(group))
    marked = [item for item in items if item.get_closest_marker("cuda_device")]
    if marked and not cuda_device_present():
        skip = pytest.mark.skip(reason="needs NUMBA_ENABLE_CUDASIM=1 before numba is imported, "
                                       "or a CUDA GPU")
        for item in marked:
            item.add_marker(skip)
