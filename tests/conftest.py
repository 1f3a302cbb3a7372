"""Shared test helpers: load bin/ tools as modules, run scripts with the recipe's PATH."""
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
