# Copyright 2026 nnetmix authors. Apache 2.0.
"""Every bin/ tool's first import: one line on stderr, not a ModuleNotFoundError traceback, when
the tool is started by a Python that cannot import nnetmix or numpy (path.sh not sourced, so the
venv is not active; or no venv made yet).

It sits in bin/ because that is the one directory a tool's Python always searches (a script's
own directory is sys.path[0]); a package, not a bin/*.py file, so that it is not taken for a
tool. Only import specs are looked up here, so it costs no import time. Loaders that import the
tools in-process (tests/helpers.py load_bin, docs/gen_tools.py) put bin/ on sys.path.
"""
import importlib.util
import os
import sys
from pathlib import Path

#: what every tool needs before its first line runs: the package and its array library
REQUIRED = ("nnetmix", "numpy")


def missing_module() -> str | None:
    """The first of REQUIRED this Python cannot find, or None."""
    return next((name for name in REQUIRED if importlib.util.find_spec(name) is None), None)


def advice(root: Path) -> str:
    """What to do, for the checkout at ``root``: activate its venv, or make it first."""
    if (root / ".venv" / "bin" / "python").exists():
        return (f"the venv is not active: run `. ./path.sh` in a recipe directory first, "
                f"or `. {root}/.venv/bin/activate`")
    return f"there is no venv yet: run `make install` in {root}, then `. ./path.sh`"


def check() -> None:
    name = missing_module()
    if name is None:
        return
    # utils/*.sh exec their tool with --prog=$0, so the message names the script that was run
    prog = next((a[len("--prog="):] for a in sys.argv[1:] if a.startswith("--prog=")),
                os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "nnetmix")
    root = Path(__file__).resolve().parent.parent.parent
    sys.stderr.write(f"{prog}: cannot import {name} with {sys.executable} ({advice(root)})\n")
    sys.exit(1)


check()
