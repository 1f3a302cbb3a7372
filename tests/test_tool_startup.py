"""A tool starts from nnetmix's bytecode, not its sources.

A recipe starts thousands of short tool processes. Where PYTHONDONTWRITEBYTECODE is set (many
containers and CI runners), Python writes no __pycache__/, so each process would compile every
nnetmix module it imports from source: about a third of a GMM tool's start-up, measured on the
yesno recipe as 128-138 s of user CPU against 95-98 s with the bytecode there. `make install`
(which `make test` and `make demo` run first) compiles them once (the Makefile's `bytecode`
target); Python reads existing bytecode whatever that variable says.
"""
import os
import subprocess
import sys

from helpers import ROOT

#: runs a tool as its #! line would, and lists on stderr the files Python compiled from source
SPY = """
import importlib.machinery, os, runpy, sys
compiled = []
to_code = importlib.machinery.SourceFileLoader.source_to_code
def spy(self, data, path, *args, **kwargs):
    compiled.append(str(path))
    return to_code(self, data, path, *args, **kwargs)
importlib.machinery.SourceFileLoader.source_to_code = spy
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(sys.argv[0]))
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as e:
    assert not e.code, e.code
print("compiled:", *compiled, sep="\\n", file=sys.stderr)
"""


def compiled_from_source(tmp_path, **env) -> list[str]:
    """The files of this checkout that a run of copy-int-vector.py compiles from source."""
    (tmp_path / "in.txt").write_text("a 1 2 3\nb 4\n")
    p = subprocess.run([sys.executable, "-c", SPY, str(ROOT / "bin" / "copy-int-vector.py"),
                        f"ark,t:{tmp_path / 'in.txt'}", f"ark,t:{tmp_path / 'out.txt'}"],
                       env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **env),
                       capture_output=True, text=True, check=True)
    assert (tmp_path / "out.txt").read_text() == "a 1 2 3 \nb 4 \n"
    listed = p.stderr.split("compiled:\n", 1)[1].splitlines()
    return [f for f in listed if f.startswith(str(ROOT))]


def test_a_tool_compiles_none_of_nnetmix_after_make_bytecode(tmp_path):
    # -o: the venv's install stamp is not remade (the suite may run from another environment)
    subprocess.run(["make", "-s", "-o", ".venv/.nnetmix-installed", "bytecode",
                    f"PY={sys.executable}"], cwd=ROOT, check=True)
    assert compiled_from_source(tmp_path) == []
    # without that bytecode (an empty cache folder instead) the same run compiles them
    missed = compiled_from_source(tmp_path, PYTHONPYCACHEPREFIX=str(tmp_path / "cache"))
    assert any("/nnetmix/cli/" in f for f in missed), missed
    assert any("_require_nnetmix" in f for f in missed), missed
