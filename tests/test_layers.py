"""The library's layers: a package imports only packages of its own layer or below, modules
import each other without cycles, and a function-level import of nnetmix says why it is there.

The layers, bottom up (README "Layout"): the shared base, then Kaldi's formats and the data
directory, then what reads and computes on them, then training (the one minibatch loop, the
DNN and RBM update rules), the MPI pieces, the drivers that put training together on one
worker or N ranks, and last the command-line layer that only bin/ imports.
"""
import ast
from pathlib import Path

import pytest

from helpers import ROOT

LAYERS = [
    {"(root)", "errors", "options", "log", "kernel_pin", "exact_sum", "outfile"},
    {"kaldi", "data", "kernels", "utils"},
    {"feat", "hmm", "lang"},
    {"nnet", "decode", "lm", "score"},
    {"train"},
    {"rbm"},
    {"parallel"},
    {"driver"},
    {"cli"},
]
RANK = {p: i for i, layer in enumerate(LAYERS) for p in layer}
#: a function-level import of nnetmix is allowed only with one of these reasons beside it
REASONS = ("optional", "cycle")


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(root)"


def _library_files():
    return sorted((ROOT / "nnetmix").rglob("*.py"))


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path, top_level_only: bool, runtime_only: bool = False):
    """(line, module, names) of every absolute nnetmix import in ``path``; ``top_level_only``:
    those outside functions (module level, including ``if TYPE_CHECKING:`` blocks)."""
    tree = ast.parse(path.read_text(), str(path))
    nodes = list(ast.walk(tree))
    if top_level_only:
        inside = {id(n) for f in nodes if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for n in ast.walk(f)}
        nodes = [n for n in nodes if id(n) not in inside]
    if runtime_only:  # `if TYPE_CHECKING:` imports never run
        typing_only = {id(n) for f in nodes if isinstance(f, ast.If)
                       and getattr(f.test, "id", "") == "TYPE_CHECKING" for n in ast.walk(f)}
        nodes = [n for n in nodes if id(n) not in typing_only]
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("nnetmix"):
                yield node.lineno, node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("nnetmix"):
                    yield node.lineno, a.name, []


def test_every_package_has_a_layer():
    pkgs = {_package(_module_name(p)) for p in _library_files()}
    assert pkgs <= set(RANK), f"packages without a layer in tests/test_layers.py: {pkgs - set(RANK)}"


@pytest.mark.parametrize("path", _library_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_go_down_the_layers(path):
    src = _package(_module_name(path))
    for line, module, _ in _imports(path, top_level_only=False):
        dst = _package(module)
        assert RANK[dst] <= RANK[src], (f"{path.relative_to(ROOT)}:{line}: {src} (layer "
                                        f"{RANK[src]}) imports {module} (layer {RANK[dst]})")


@pytest.mark.parametrize("path", _library_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_function_level_imports_say_why(path):
    lines = path.read_text().splitlines()
    top = {ln for ln, _, _ in _imports(path, top_level_only=True)}
    for line, module, _ in _imports(path, top_level_only=False):
        if line in top:
            continue
        near = " ".join(lines[max(0, line - 3):line + 1]).lower()
        assert any(r in near for r in REASONS), (
            f"{path.relative_to(ROOT)}:{line}: function-level import of {module} without a "
            "comment saying it breaks a cycle or keeps an optional dependency optional")


def test_no_import_cycles():
    """Module-level imports between nnetmix modules form no cycle."""
    graph = {}
    names = {_module_name(p): p for p in _library_files()}
    for name, path in names.items():
        deps = set()
        for _, module, imported in _imports(path, top_level_only=True, runtime_only=True):
            for cand in [module] + [f"{module}.{n}" for n in imported]:
                if cand in names and cand != name:
                    deps.add(cand)
        graph[name] = deps
    state: dict = {}

    def visit(n, stack):
        state[n] = 1
        for d in graph[n]:
            if state.get(d) == 1:
                cyc = stack[stack.index(d):] + [d] if d in stack else [n, d]
                pytest.fail("import cycle: " + " -> ".join(cyc))
            if d not in state:
                visit(d, stack + [d])
        state[n] = 2

    for n in graph:
        if n not in state:
            visit(n, [n])
