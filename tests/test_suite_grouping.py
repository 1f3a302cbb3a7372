"""`make test` runs the suite in two pytest-xdist processes with --dist loadgroup: every test of a
file (every file of tests/cluster) in one process, so that a module fixture (a trained model, a
recipe run, the one-node Slurm) is made once. pytest 9.2.0 drops the group xdist 3.8.0 puts in
a test's id, and then each file's tests spread over both processes, each making the fixtures
again; this test fails where that happens."""
import os

import pytest


def test_a_file_s_tests_are_one_group(request):
    if not os.environ.get("PYTEST_XDIST_WORKER") or not request.config.getvalue("loadgroup"):
        pytest.skip("not under pytest-xdist --dist loadgroup (make test)")
    assert request.node.nodeid.endswith("@tests/test_suite_grouping.py"), (
        f"{request.node.nodeid}: no xdist group in the test's id (pytest and pytest-xdist "
        f"versions that do not work together? setup.py pins them)")
