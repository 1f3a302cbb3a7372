"""One kind of entry point: command lines live in bin/ (utils/ wraps them), the library never
imports the command-line layer (nnetmix/cli/) or bin/, and every bin/ tool has the same header."""
import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, load_bin

CLI_LAYER = "nnetmix.cli"
#: Library files that still import the CLI layer, being rewritten in other branches of issue 14
#: (their main() moves to bin/); shrink this list, never grow it.
EXCEPTED_IMPORTERS = {"nnetmix/rbm/pretrain.py"}
#: bin/ tools being rewritten in other branches; they get the header when they land.
EXCEPTED_TOOLS: set[str] = set()
BIN_TOOLS = sorted(p for p in (ROOT / "bin").glob("*.py"))
SHIMS = sorted(p for p in (ROOT / "utils").rglob("*") if p.suffix in (".sh", ".pl"))


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any level (function-level imports included), and every
    module named to importlib.import_module / __import__ as a constant."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                names.add(node.args[0].value)
    return names


def is_cli_or_bin(module: str) -> bool:
    return (module == CLI_LAYER or module.startswith(CLI_LAYER + ".") or module == "bin"
            or module.startswith("bin."))


def test_import_scan_sees_function_level_and_dynamic_imports(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from nnetmix.cli import run_tool\n"
                   "import importlib\nimportlib.import_module('nnetmix.cli.script')\n"
                   "from nnetmix import cli\n")
    assert {m for m in imported_modules(src) if is_cli_or_bin(m)} == \
        {"nnetmix.cli", "nnetmix.cli.run_tool", "nnetmix.cli.script"}


def test_library_never_imports_the_cli_layer_or_bin():
    offenders = {}
    for path in sorted((ROOT / "nnetmix").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("nnetmix/cli/") or rel in EXCEPTED_IMPORTERS:
            continue
        bad = sorted(m for m in imported_modules(path) if is_cli_or_bin(m))
        if bad:
            offenders[rel] = bad
    assert not offenders, f"library modules import the command-line layer: {offenders}"


def test_no_cli_modules_left_in_library_packages():
    """The old per-package command lines (data/cli.py, ...) are gone: commands are bin/ tools."""
    stray = [p.relative_to(ROOT).as_posix() for p in (ROOT / "nnetmix").rglob("*cli*.py")
             if "nnetmix/cli/" not in p.as_posix()]
    assert not stray


@pytest.mark.parametrize("path", [p for p in BIN_TOOLS if p.name not in EXCEPTED_TOOLS],
                         ids=lambda p: p.name)
def test_bin_tool_header(path):
    text = path.read_text()
    lines = text.splitlines()
    assert lines[0] == "#!/usr/bin/env python3"
    assert re.fullmatch(r"# Copyright 20\d\d nnetmix authors\. Apache 2\.0\.", lines[1])
    assert lines[2].startswith(f'"""{path.name}: '), "the docstring names the tool first"
    first_import = next(line for line in lines if re.match(r"(import|from) ", line))
    assert first_import.startswith("import _require_nnetmix "), \
        "the first import is the guard (one line, not a traceback, without the venv)"
    # nnetmix is found as an installed package (path.sh activates the venv; tests run in it),
    # never through a path of the tool's own
    assert "sys.path" not in text and "PYTHONPATH" not in text
    assert re.search(r"^def main\(argv=None\)", text, re.M)
    assert text.rstrip().endswith('if __name__ == "__main__":\n    sys.exit(main())')
    assert path.stat().st_mode & 0o111, "executable"


def test_bin_tools_load_as_modules():
    """Tests call main(argv) on each tool; loading one runs its imports."""
    for path in BIN_TOOLS:
        assert callable(load_bin(path.name).main), path.name


@pytest.mark.parametrize("path", SHIMS, ids=lambda p: p.relative_to(ROOT / "utils").as_posix())
def test_utils_shims_run_existing_bin_tools(path):
    """A utils/ script reaches Python only through bin/ tools (or the job wrappers' modules)."""
    text = path.read_text()
    assert "python3 -m" not in text
    for tool in re.findall(r'"\$bin/([\w.-]+)"', text):
        assert (ROOT / "bin" / tool).is_file(), tool


def no_nnetmix_env() -> dict:
    """An environment as a new shell's, before path.sh: no venv on PATH, no PYTHONPATH."""
    return {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "LC_ALL": "C"}


#: a tool with its imports at the top, one that imports inside main(), one with an option group
GUARDED = ("compute-wer.py", "gmm-est-fmllr.py", "nnet-train-mpi.py")


@pytest.mark.parametrize("tool", GUARDED)
def test_tool_without_the_venv_says_so_in_one_line(tool):
    """-S: this venv's Python without its site-packages, so nnetmix is not importable, as with
    a system python3 before `. ./path.sh`."""
    proc = subprocess.run([sys.executable, "-S", str(ROOT / "bin" / tool), "--help"],
                          env=no_nnetmix_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"{tool}: cannot import nnetmix with ")
    assert "Traceback" not in proc.stderr
    assert "path.sh" in lines[0] or "make install" in lines[0]


def test_guard_advice_names_the_fix(tmp_path):
    """With a venv in the checkout the fix is path.sh (or activating it); without, make install."""
    load_bin("compute-wer.py")  # puts bin/ on sys.path, as for every tool
    from _require_nnetmix import advice, missing_module

    assert missing_module() is None  # this process has both
    assert "make install" in advice(tmp_path) and str(tmp_path) in advice(tmp_path)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").touch()
    assert ". ./path.sh" in advice(tmp_path)


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="no /usr/bin/python3")
def test_utils_script_without_the_venv_says_so_in_one_line(tmp_path):
    """utils/best_wer.sh runs bin/best-wer.py through PATH's python3: without path.sh that is
    the system's, which has no nnetmix (unless nnetmix is installed there: then it just works)."""
    env = no_nnetmix_env()
    has = subprocess.run(["/usr/bin/python3", "-c", "import nnetmix, numpy"], env=env,
                         cwd=tmp_path, capture_output=True).returncode == 0
    if has:
        pytest.skip("/usr/bin/python3 imports nnetmix")
    proc = subprocess.run([str(ROOT / "utils" / "best_wer.sh")], input="%WER 1.0 [ 1 / 100 ] x\n",
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith(f"{ROOT / 'utils' / 'best_wer.sh'}: cannot import nnetmix ")
