"""Command lines in the style of Kaldi's utils/ scripts (validate_data_dir.sh, prepare_lang.sh, ...).

Kaldi's utils/ scripts take ``--name value`` options (not the ``--name=value`` of binaries) and
report a mistake as one ``prog: message`` line on stderr, exit code 1, never a traceback. The bin/
tools behind them (bin/validate-data-dir.py, bin/prepare-lang.py, ...; utils/*.sh exec them)
parse their options and run with that convention through this module, so the behaviour is the
same everywhere. Progress and success lines go to stdout.
"""
from __future__ import annotations

import os
import sys
from typing import Callable, Sequence, TextIO

from nnetmix.data.io import ENCODING
from nnetmix.errors import NnetmixError, UsageError
from nnetmix.log import setup_logging

__all__ = ["ScriptUsage", "parse_script_options", "run_command", "script_main", "say", "warn",
           "open_input", "open_stdout", "parse_int", "parse_float"]


class ScriptUsage(Exception):
    """Wrong command line: print the reason (if any) and the usage, and exit 1."""


def parse_script_options(argv: Sequence[str], switches: Sequence[str] = (),
                         valued: dict[str, str | None] | None = None,
                         nargs: tuple[int, int] = (0, 1 << 30)
                         ) -> tuple[dict[str, object], list[str]]:
    """Leading options, Kaldi-script style; returns ({name: value}, positional arguments).

    ``switches`` are booleans (``--name`` or ``--name=true|false``); ``valued`` maps option names
    to defaults and takes ``--name value`` or ``--name=value``; ``--`` ends the options.
    """
    opts: dict[str, object] = {s: False for s in switches}
    opts.update(valued or {})
    args = list(argv)
    while args and args[0].startswith("--") and args[0] != "--":
        name, eq, value = args.pop(0)[2:].partition("=")
        if name in ("help", "h"):
            raise ScriptUsage("")
        if name in switches:
            if eq:
                if value not in ("true", "false"):
                    raise ScriptUsage(f"--{name} takes true or false, got '{value}'")
                opts[name] = value == "true"
            else:
                opts[name] = True
        elif valued is not None and name in valued:
            if not eq:
                if not args:
                    raise ScriptUsage(f"option --{name} needs a value")
                value = args.pop(0)
            opts[name] = value
        else:
            raise ScriptUsage(f"invalid option --{name}")
    if args[:1] == ["--"]:
        args = args[1:]
    if not nargs[0] <= len(args) <= nargs[1]:
        raise ScriptUsage("")
    return opts, args


def run_command(func: Callable[[str, Sequence[str]], int], usage: str, prog: str,
                argv: Sequence[str]) -> int:
    """Run one command; every user mistake becomes one line on stderr and exit code 1.

    An error with a ``detail`` attribute (a list of lines, e.g. a partial diff of two key lists)
    prints those lines after its message, as Kaldi's validate_data_dir.sh does.
    """
    try:
        return func(prog, argv)
    except ScriptUsage as e:
        if str(e):
            print(f"{prog}: {e}", file=sys.stderr)
        print(usage.format(prog=prog), file=sys.stderr)
        return 1
    except NnetmixError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        for line in getattr(e, "detail", None) or ():
            print(line, file=sys.stderr)
        return 1
    except BrokenPipeError:
        # the reader went away (e.g. "| head"): stop quietly, as a perl script would
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 1
    except OSError as e:
        where = f" {e.filename}" if e.filename else ""
        print(f"{prog}: cannot access{where}: {e.strerror or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


def script_main(func: Callable[[str, Sequence[str]], int], usage: str, name: str,
                argv: Sequence[str] | None = None, log: bool = False) -> int:
    """A bin/ tool's ``main``: run ``func(prog, args)`` with the script conventions above.

    ``prog`` (the name messages start with) is ``name``, the tool's own, unless the command line
    starts with ``--prog=NAME``: the utils/ wrappers pass their ``$0`` that way, so that a user
    who typed ``utils/validate_data_dir.sh`` reads ``utils/validate_data_dir.sh: ...`` lines as
    with Kaldi. ``log`` sets up Kaldi's log format for tools whose library code logs.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    prog = name
    if args and args[0].startswith("--prog="):
        prog = args.pop(0).partition("=")[2]
    if log:
        setup_logging(os.path.basename(prog))
    return run_command(func, usage, prog, args)


def say(prog: str, msg: str) -> None:
    """A progress or result line on stdout: ``prog: msg``."""
    print(f"{prog}: {msg}", flush=True)


def warn(prog: str, lines: Sequence[str]) -> None:
    """Warning lines on stderr, each ``prog: line``."""
    for line in lines:
        print(f"{prog}: {line}", file=sys.stderr, flush=True)


def open_input(args: Sequence[str]) -> TextIO:
    """The one optional input file of a filter-style tool (utf-8), or stdin for none or ``-``."""
    if not args or list(args) == ["-"]:
        return open(sys.stdin.fileno(), closefd=False, **ENCODING)
    return open(args[0], **ENCODING)


def open_stdout() -> TextIO:
    """stdout as utf-8 text, whatever the locale (recipes run with LC_ALL=C)."""
    return open(sys.stdout.fileno(), "w", closefd=False, **ENCODING)


def parse_int(text: str, what: str) -> int:
    """``int(text)``, or a UsageError naming the argument."""
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{what} must be an integer, got '{text}'") from None


def parse_float(text: str, what: str) -> float:
    """``float(text)``, or a UsageError naming the argument."""
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"{what} must be a number, got '{text}'") from None
