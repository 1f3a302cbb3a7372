"""Shared test helpers: load bin/ tools as modules, run scripts with the recipe's PATH, run the
CUDA checks on numba's simulator or a real GPU."""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "kaldi-fixtures"


def load_bin(name: str):
    """Import bin/<name> (e.g. 'copy-feats.py') as a module so tests can call its main(argv)."""
    path = ROOT / "bin" / name
    spec = importlib.util.spec_from_file_location(name.replace("-", "_").removesuffix(".py"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def script_env() -> dict:
    """The environment a recipe's path.sh gives: this Python's venv, bin/ and utils/ on PATH."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), str(ROOT / "bin"),
                                   str(ROOT / "utils"), env.get("PATH", "")])
    env["LC_ALL"] = "C"
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def run_script(args, cwd=None, check=False, **kw) -> subprocess.CompletedProcess:
    """Run a shell script or bin/ tool the way a recipe would; returns the completed process."""
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=script_env(), text=True,
                          capture_output=True, **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def kaldi_fixtures() -> Path:
    """../shared/kaldi-fixtures (files written by Kaldi's own tools); skip where absent."""
    if not FIXTURES.is_dir():
        pytest.skip(f"{FIXTURES} not present (a user's own clone)")
    return FIXTURES


def cuda_device_present() -> bool:
    """True on numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1) or with a real CUDA GPU."""
    from numba import config
    if config.ENABLE_CUDASIM:
        return True
    try:
        from numba import cuda
        return bool(cuda.is_available())
    except Exception:                                    # numba-cuda missing or driver broken
        return False


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda_device: needs the CUDA simulator or a real GPU")


def pytest_collection_modifyitems(config, items):
    marked = [item for item in items if item.get_closest_marker("cuda_device")]
    if marked and not cuda_device_present():
        skip = pytest.mark.skip(reason="needs NUMBA_ENABLE_CUDASIM=1 before numba is imported, "
                                       "or a CUDA GPU")
        for item in marked:
            item.add_marker(skip)


def run_cuda_checks(path: Path, timeout: int = 600) -> None:
    """Run the *_cuda_checks.py file ``path`` on numba's CUDA simulator in a fresh pytest.

    The simulator is chosen by NUMBA_ENABLE_CUDASIM=1 at numba's first import, which this pytest
    process may already have done for the cpu tests; hence the subprocess. The same files run
    on a real GPU with ``make test-gpu``.
    """
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           str(path)], cwd=ROOT, env=env, text=True, capture_output=True,
                          timeout=timeout)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
    assert proc.returncode == 0, f"cuda simulator checks in {path.name} failed:\n{tail}"
    assert " passed" in proc.stdout and " skipped" not in proc.stdout, tail
