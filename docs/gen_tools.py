#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""gen_tools.py: write the tools reference pages of the docs site from the tools themselves.

docs/reference/bin.md holds every ``bin/*.py`` tool's ``--help`` text; docs/reference/scripts.md
holds every ``steps/``, ``utils/`` and ``local/`` script's header comment, configuration block
(its options, as ``utils/parse_options.sh`` reads them) and usage heredoc. Nothing is written by
hand, so the pages say what the tools say. tests/docs/test_tools_reference.py regenerates both
pages and fails when the committed ones differ (run ``docs/gen_tools.py`` after changing a
tool's options or usage).

The ``--help`` texts are taken in this process: each tool is loaded from its file and its
``main(["--help"])`` called with stdout and stderr captured. bin/ tools import their heavy
modules inside the work function, so this costs a few seconds for all of them where 117
``--help`` processes cost minutes (numba's import alone is about a second each). SRILM-style
tools are asked with ``-help``; tools that parse Kaldi-script options refuse ``--help`` and
print their usage, which is what is taken for them.

bin.md ends with every tool of Kaldi's src/featbin and src/bin beside ours of the same name, or
"not provided" and why; the list is docs/kaldi_tools.txt (taken from a Kaldi checkout at the
commit its header names), so the page does not depend on one.

Usage: docs/gen_tools.py [--check] [<out-dir>]   (default out-dir: docs/reference)
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BIN_PAGE = "bin.md"
KALDI_TOOLS = ROOT / "docs" / "kaldi_tools.txt"
SCRIPTS_PAGE = "scripts.md"
SCRIPT_DIRS = ("steps", "utils", "local")

BIN_INTRO = """\
# bin/ tools

Every command-line tool in `bin/`, with the text its `--help` prints (SRILM's `-help` for the
two SRILM tools; the tools behind Kaldi's `utils/` scripts print their usage). Tools take
options as `--name=value`, booleans as `--name=true|false`, before the positional arguments; see
[Data and Kaldi interoperability](../kaldi.md) for rspecifiers and wspecifiers.

This page is written by `docs/gen_tools.py` from the tools themselves; do not edit it by hand.
"""

SCRIPTS_INTRO = """\
# steps/, utils/ and local/ scripts

Every stage script and utility, with its header comment, its configuration block (each line is
an option: `--foo-bar value` sets `foo_bar`, through `utils/parse_options.sh`) and the usage it
prints on a wrong argument count. Scripts take `--name value`; the [bin/ tools](bin.md) they run
take `--name=value`. A utility that only runs a bin/ tool links to that tool's entry.

This page is written by `docs/gen_tools.py` from the scripts themselves; do not edit it by hand.
"""


def anchor(title: str) -> str:
    """The id MkDocs' toc extension gives a heading (its default slugify, ASCII titles)."""
    slug = re.sub(r"[^\w\s-]", "", title).strip().lower()
    return re.sub(r"[-\s]+", "-", slug)


def fence(text: str) -> str:
    """``text`` as a fenced block that no backtick run inside it can end."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}text\n{text.rstrip()}\n{ticks}\n"


def _call(main, argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    stdin, sys.stdin = sys.stdin, io.StringIO()  # a tool that reads stdin reads nothing
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
        finally:
            sys.stdin = stdin
    return rc or 0, out.getvalue(), err.getvalue()


def tool_help(path: Path) -> tuple[str, str]:
    """(the docstring's first line, the help text) of the bin/ tool at ``path``."""
    name = path.name
    if str(path.parent) not in sys.path:  # each tool's first import, bin/_require_nnetmix
        sys.path.append(str(path.parent))
    spec = importlib.util.spec_from_file_location("nnetmix_doc_" + re.sub(r"\W", "_", path.stem),
                                                  path)
    module = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        spec.loader.exec_module(module)
    paragraph = (module.__doc__ or "").strip().split("\n\n")[0]
    purpose = " ".join(line.strip() for line in paragraph.splitlines())
    if purpose.startswith(name + ":"):
        purpose = purpose[len(name) + 1:].strip()
    rc, out, err = _call(module.main, ["--help"])
    text = out
    if rc != 0 or not out.strip():  # SRILM's single-dash options
        rc2, out2, _ = _call(module.main, ["-help"])
        text = out2 if rc2 == 0 and out2.strip() else ""
    if not text.strip():  # Kaldi-script options: the usage printed on refusing --help
        text = "\n".join(line for line in err.splitlines()
                         if "invalid option --help" not in line and line != f"{name} --help")
    if not text.strip():
        raise RuntimeError(f"{path}: --help printed no usage")
    return purpose, text


def script_header(lines: list[str]) -> list[str]:
    """The leading comment block, without the shebang and the copyright line."""
    header = []
    for line in lines[1 if lines and lines[0].startswith("#!") else 0:]:
        if not line.startswith("#"):
            break
        body = line[2:] if line.startswith("# ") else line[1:]
        if body.startswith("Copyright") or body.strip() == "Begin configuration section.":
            if body.strip() == "Begin configuration section.":
                break
            continue
        header.append(body.rstrip())
    while header and not header[-1].strip():
        header.pop()
    return header


def script_sections(path: Path) -> dict[str, object]:
    """Header, configuration block, usage heredoc and exec'd bin/ tool of one script."""
    lines = path.read_text().splitlines()
    config: list[str] = []
    inside = False
    for line in lines:
        if line.strip() == "# Begin configuration section.":
            inside = True
        elif line.strip() == "# End configuration section.":
            break
        elif inside:
            config.append(line.rstrip())
    usage: list[str] = []
    for i, line in enumerate(lines):
        m = re.search(r"<<-?\s*'?(\w+)'?\s*$", line)
        if m and "cat" in line:
            end = m.group(1)
            for body in lines[i + 1:]:
                if body.strip() == end:
                    break
                usage.append(body.rstrip())
            break
    execs = re.findall(r'exec\s+"\$bin/([\w.-]+\.py)"', path.read_text())
    python_doc = ""
    if path.suffix == ".py" and not path.read_text().startswith("#!"):
        m = re.search(r'"""(.*?)"""', path.read_text(), re.S)
        python_doc = m.group(1).strip() if m else ""
    return {"header": script_header(lines), "config": config, "usage": usage, "execs": execs,
            "python_doc": python_doc}


KALDI_INTRO = """\
## Kaldi's featbin and bin tools

Every tool of Kaldi's `src/featbin/` and `src/bin/`, beside the nnetmix tool of the same name
(plus `.py`; same options, defaults and table formats), or "not provided" with the reason where
there is one. Tools of Kaldi's other directories (`gmmbin/`, `nnetbin/`, `latbin/`, `fstbin/`,
...) are in the index above under their own names.
"""


def kaldi_tools(path: Path = KALDI_TOOLS) -> list[tuple[str, str, str]]:
    """(directory, tool, reason) of each line of docs/kaldi_tools.txt ('#' lines are comments)."""
    rows = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        entry, _, reason = line.partition("|")
        directory, tool = entry.split()
        rows.append((directory, tool, reason.strip()))
    return rows


def kaldi_section(root: Path, tools: list[Path]) -> str:
    ours = {p.name for p in tools}
    lines = [KALDI_INTRO, "| Kaldi tool | nnetmix |", "| --- | --- |"]
    for directory, tool, reason in kaldi_tools(root / "docs" / "kaldi_tools.txt"):
        name = tool + ".py"
        if name in ours:
            cell = f"[{name}](#{anchor(name)})"
        else:
            cell = "not provided" + (f": {reason}" if reason else "")
        lines.append(f"| `{directory}/{tool}` | {cell} |")
    return "\n".join(lines) + "\n"


def bin_page(root: Path) -> str:
    tools = sorted((root / "bin").glob("*.py"))
    entries, index = [], ["| tool | what it does |", "| --- | --- |"]
    for path in tools:
        purpose, text = tool_help(path)
        index.append(f"| [{path.name}](#{anchor(path.name)}) | {purpose.replace('|', '&#124;')} |")
        entries.append(f"## {path.name}\n\n{purpose}\n\n{fence(text)}")
    return (BIN_INTRO + "\n" + "\n".join(index) + "\n\n" + "\n".join(entries) + "\n"
            + kaldi_section(root, tools))


def scripts_page(root: Path) -> str:
    paths = sorted(p for d in SCRIPT_DIRS for p in (root / d).rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    links = sorted(p for d in SCRIPT_DIRS for p in (root / d).rglob("*") if p.is_symlink())
    parts = [SCRIPTS_INTRO]
    for directory in SCRIPT_DIRS:
        parts.append(f"## {directory}/\n")
        for path in (p for p in paths if p.relative_to(root).parts[0] == directory):
            if path.is_symlink():
                continue
            rel = path.relative_to(root).as_posix()
            s = script_sections(path)
            entry = [f"### {rel}\n"]
            names = [ln.relative_to(root).as_posix() for ln in links
                     if ln.resolve() == path.resolve()]
            if names:
                entry.append("Also run as " + ", ".join(f"`{n}`" for n in names) + ".\n")
            if s["header"]:
                entry.append(fence("\n".join(s["header"])))
            elif s["python_doc"]:
                entry.append(fence(s["python_doc"]))
            if s["config"]:
                entry.append("Options (the configuration block):\n\n" + fence("\n".join(s["config"])))
            if s["usage"]:
                entry.append("Usage (printed on a wrong argument count):\n\n"
                             + fence("\n".join(s["usage"])))
            for tool in s["execs"]:
                entry.append(f"Runs [{tool}](bin.md#{anchor(tool)}), whose help gives the options.\n")
            parts.append("\n".join(entry))
    return "\n".join(parts)


def generate(root: Path = ROOT) -> dict[str, str]:
    """The reference pages, {file name: text}."""
    return {BIN_PAGE: bin_page(root), SCRIPTS_PAGE: scripts_page(root)}


def get_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a committed page differs")
    parser.add_argument("out_dir", nargs="?", default=str(ROOT / "docs" / "reference"))
    return parser.parse_args()


def main() -> int:
    args = get_args()
    out = Path(args.out_dir)
    stale = []
    for name, text in generate().items():
        target = out / name
        if args.check:
            if not target.is_file() or target.read_text() != text:
                stale.append(str(target))
            continue
        out.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".md.tmp")
        tmp.write_text(text)
        tmp.replace(target)
        print(f"gen_tools.py: wrote {target}")
    if stale:
        print("gen_tools.py: stale: " + ", ".join(stale) + " (run docs/gen_tools.py)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
