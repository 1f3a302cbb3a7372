"""The Python side of Kaldi-named shell utilities (utils/validate_data_dir.sh, prepare_lang.sh, ...).

Kaldi's utils/ scripts take ``--name value`` options (not the ``--name=value`` of binaries) and
report a mistake as one ``prog: message`` line on stderr. Each package that backs such scripts
(nnetmix.data, nnetmix.lang, nnetmix.score) keeps a table of commands; this module parses their
options and runs them with that error convention, so the behaviour is the same everywhere.
"""
from __future__ import annotations

import os
import sys
from typing import Callable, Sequence

from nnetmix.errors import NnetmixError

__all__ = ["ScriptUsage", "parse_script_options", "run_command", "dispatch", "Commands"]

Commands = dict[str, tuple[Callable[[str, Sequence[str]], int], str]]


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


def dispatch(commands: Commands, module: str, argv: Sequence[str] | None = None,
             setup: Callable[[str], None] | None = None) -> int:
    """``python3 -m <module> <command> <prog> [args...]``: run ``commands[command]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 2 or argv[0] not in commands:
        print(f"Usage: python3 -m {module} <{'|'.join(commands)}> <prog> [args...]",
              file=sys.stderr)
        return 1
    if setup is not None:
        setup(os.path.basename(argv[1]))
    func, usage = commands[argv[0]]
    return run_command(func, usage, argv[1], argv[2:])
