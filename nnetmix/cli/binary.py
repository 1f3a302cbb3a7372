"""Command lines for bin/ tools in the style of Kaldi binaries (src/util/parse-options.cc).

Options are ``--name=value`` (``--name`` alone sets a boolean to true), dashes and underscores
are the same, options come before the positional arguments, ``--config=FILE`` reads more options
from a file, and the usage text lists every option with its type and default. A wrong argument
count prints the usage and exits 1; an :class:`~nnetmix.errors.NnetmixError` raised by the
library becomes one ``ERROR (...)`` line and exit code 1 (a traceback only with --verbose=2).

Option groups are library dataclasses whose fields carry ``metadata={"help": ...}``; the syntax
that reads them (``--name=value``, config files) is :class:`nnetmix.options.OptionSet`, which this
parser extends with the usage text, the standard options and the exit-code convention.
"""
from __future__ import annotations

import logging
import os
import shlex
import sys
import time
import traceback
from typing import Any, Callable, Sequence

from nnetmix.cli.interrupt import end_by_sigint, handling, interrupted
from nnetmix.errors import NnetmixError, UsageError
from nnetmix.kaldi.errors import PipeClosedError
from nnetmix.log import setup_logging
from nnetmix.options import Option, OptionSet, str2bool

__all__ = ["OptionParser", "run_tool", "str2bool"]

logger = logging.getLogger(__name__)


class OptionParser(OptionSet):
    """Registers options, parses a Kaldi-style argv, prints Kaldi-style usage."""

    STANDARD = ("config", "help", "print-args", "verbose")

    def __init__(self, usage: str, prog: str | None = None):
        super().__init__()
        self.usage = usage.strip("\n")
        self.prog = prog or (sys.argv[0].rsplit("/", 1)[-1] if sys.argv and sys.argv[0] else "nnetmix")
        self.register("help", False, "Print out usage message")
        self.register("print-args", True, "Print the command line arguments (to stderr)")
        self.register("verbose", 0, "Verbose level (higher->more logging)")

    def format_usage(self) -> str:
        lines = [self.usage, "", "Options:"]
        for key in sorted(self.options):
            if key not in self.STANDARD:
                lines.append(_describe(self.options[key]))
        lines += ["", "Standard options:"]
        for key in sorted(self.STANDARD):
            lines.append(_describe(self.options[key]))
        return "\n".join(lines) + "\n"

    def parse(self, argv: Sequence[str], nargs: tuple[int, int] | None = None):
        """Return (options namespace, positional args); raise UsageError on any mistake."""
        ns, positional = super().parse(argv)
        if not ns.help and nargs is not None and not (nargs[0] <= len(positional) <= nargs[1]):
            raise UsageError(f"wrong number of arguments: got {len(positional)}")
        return ns, positional


def _describe(opt: Option) -> str:
    kind = {bool: "bool", int: "int", float: "float"}.get(opt.kind, "string")
    default = opt.default
    if opt.kind is bool:
        default = "true" if default else "false"
    return f"  --{opt.name:<28} : {opt.help} ({kind}, default = {default})"


def _log_raise_site(e: BaseException, verbose: int) -> None:
    """One ERROR line that names the function, file and line that raised, as Kaldi's does."""
    frame = traceback.extract_tb(e.__traceback__)[-1]
    record = logger.makeRecord(logger.name, logging.ERROR, frame.filename, frame.lineno or 0,
                               "%s", (e,), sys.exc_info() if verbose >= 2 else None,
                               func=frame.name)
    logger.handle(record)


def run_tool(parser: OptionParser, nargs: tuple[int, int],
             body: Callable[[Any, list[str]], int | None], argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, set up Kaldi logging and call ``body(opts, args)``; return the exit code.

    bin/ tools are ``def main(argv=None): return run_tool(parser, (lo, hi), body, argv)``.
    """
    argv_given = argv is not None
    argv = list(sys.argv[1:] if argv is None else argv)
    prog = parser.prog
    verbose = 0
    try:
        opts, args = parser.parse(argv, nargs)
        verbose = opts.verbose
    except UsageError as e:
        sys.stderr.write(" ".join(shlex.quote(a) for a in [prog, *argv]) + "\n")
        setup_logging(prog)
        if str(e).startswith("wrong number"):
            sys.stderr.write(parser.format_usage())
        else:
            logger.error("%s", e)
        return 1
    if opts.help:
        sys.stdout.write(parser.format_usage())
        return 0
    if opts.print_args:
        sys.stderr.write(" ".join(shlex.quote(a) for a in [prog, *argv]) + "\n")
    setup_logging(prog, verbose)
    with handling():
        try:
            rc = body(opts, args)
        except KeyboardInterrupt as e:
            return _interrupted(e, argv_given)
        except Exception as e:
            if isinstance(e, (PipeClosedError, BrokenPipeError)) and not interrupted():
                _grace_for_ctrl_c()
            if interrupted():  # a consequence (a pipe killed by the same Ctrl-C)
                return _interrupted(e, argv_given, consequence=True)
            if not isinstance(e, (NnetmixError, BrokenPipeError)):
                raise
            if isinstance(e, NnetmixError):
                _log_raise_site(e, verbose)
            return 1
    return int(rc or 0)


def _grace_for_ctrl_c(seconds: float = 0.25) -> None:
    """A pipe's reader killed by the Ctrl-C that is on its way to us too can close the pipe
    before our SIGINT arrives; wait a moment for it, so the closed pipe is reported as the
    interrupt's consequence (a WARNING) rather than as an ERROR of its own."""
    try:
        time.sleep(seconds)
    except KeyboardInterrupt:
        pass


def _interrupted(e: BaseException, argv_given: bool, consequence: bool = False) -> int:
    """Ctrl-C: one ERROR line naming where the tool was, what failed because of it as a
    WARNING, status 130; a real command ends by SIGINT (nnetmix.cli.interrupt)."""
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if not f.filename.endswith(os.path.join("cli", "interrupt.py"))]
    frame = frames[-1] if frames else None
    logger.handle(logger.makeRecord(
        logger.name, logging.ERROR, frame.filename if frame else __file__,
        (frame.lineno or 0) if frame else 0, "interrupted (SIGINT)", (), None,
        func=frame.name if frame else "run_tool"))
    if consequence:
        logger.warning("after the interrupt: %s", e)
    if not argv_given:
        end_by_sigint()
    return 130
