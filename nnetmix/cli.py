"""Command lines for bin/ tools in the style of Kaldi binaries (src/util/parse-options.cc).

Options are ``--name=value`` (``--name`` alone sets a boolean to true), dashes and underscores
are the same, options come before the positional arguments, ``--config=FILE`` reads more options
from a file, and the usage text lists every option with its type and default. A wrong argument
count prints the usage and exits 1; an :class:`~nnetmix.errors.NnetmixError` raised by the
library becomes one ``ERROR (...)`` line and exit code 1 (a traceback only with --verbose=2).

Option groups are dataclasses whose fields carry ``metadata={"help": ...}``; register them with
:meth:`OptionParser.register_group` and get an instance back with :meth:`OptionParser.group`.
"""
from __future__ import annotations

import dataclasses
import logging
import shlex
import sys
import traceback
from typing import Any, Callable, Sequence

from nnetmix.errors import NnetmixError, UsageError
from nnetmix.log import setup_logging

__all__ = ["OptionParser", "run_tool", "str2bool"]

logger = logging.getLogger(__name__)


def str2bool(text: str) -> bool:
    """Kaldi's boolean spelling: true|false (also t|f|1|0)."""
    low = text.strip().lower()
    if low in ("true", "t", "1"):
        return True
    if low in ("false", "f", "0"):
        return False
    raise ValueError(f"expected true or false, got '{text}'")


def _norm(name: str) -> str:
    return name.strip().lstrip("-").replace("_", "-")


@dataclasses.dataclass
class _Option:
    name: str
    default: Any
    help: str
    kind: type

    def convert(self, text: str) -> Any:
        if self.kind is bool:
            return str2bool(text)
        if self.kind is int:
            return int(text)
        if self.kind is float:
            return float(text)
        return text

    def describe(self) -> str:
        kind = {bool: "bool", int: "int", float: "float"}.get(self.kind, "string")
        default = self.default
        if self.kind is bool:
            default = "true" if default else "false"
        return f"  --{self.name:<28} : {self.help} ({kind}, default = {default})"


class OptionParser:
    """Registers options, parses a Kaldi-style argv, prints Kaldi-style usage."""

    def __init__(self, usage: str, prog: str | None = None):
        self.usage = usage.strip("\n")
        self.prog = prog or (sys.argv[0].rsplit("/", 1)[-1] if sys.argv and sys.argv[0] else "nnetmix")
        self._options: dict[str, _Option] = {}
        self._groups: list[type] = []
        self.register("config", "", "Configuration file to read (this option may be repeated)")
        self.register("help", False, "Print out usage message")
        self.register("print-args", True, "Print the command line arguments (to stderr)")
        self.register("verbose", 0, "Verbose level (higher->more logging)")

    def register(self, name: str, default: Any, help: str, kind: type | None = None) -> None:
        key = _norm(name)
        if key in self._options:
            raise ValueError(f"option --{key} registered twice")
        self._options[key] = _Option(key, default, help, kind or type(default))

    def register_group(self, cls: type) -> None:
        """Register every field of the dataclass ``cls`` as --field-name."""
        for f in dataclasses.fields(cls):
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            kind = {"bool": bool, "int": int, "float": float, "str": str}.get(str(f.type), type(default))
            self.register(f.name, default, f.metadata.get("help", ""), kind)
        self._groups.append(cls)

    def group(self, cls: type, opts: Any) -> Any:
        """Build the dataclass ``cls`` from parsed options."""
        return cls(**{f.name: getattr(opts, f.name) for f in dataclasses.fields(cls)})

    def format_usage(self) -> str:
        lines = [self.usage, "", "Options:"]
        standard = {"config", "help", "print-args", "verbose"}
        for key in sorted(self._options):
            if key not in standard:
                lines.append(self._options[key].describe())
        lines += ["", "Standard options:"]
        for key in sorted(standard):
            lines.append(self._options[key].describe())
        return "\n".join(lines) + "\n"

    def _set(self, values: dict[str, Any], raw: str, origin: str) -> None:
        body = raw[2:]
        name, eq, text = body.partition("=")
        key = _norm(name)
        opt = self._options.get(key)
        if opt is None:
            raise UsageError(f"Invalid option {raw}{origin}")
        if not eq:
            if opt.kind is not bool:
                raise UsageError(f"Invalid option {raw}{origin} (options take the form --{key}=value)")
            values[key.replace("-", "_")] = True
            return
        try:
            values[key.replace("-", "_")] = opt.convert(text)
        except ValueError as e:
            raise UsageError(f"Invalid value for option --{key}{origin}: {e}") from None

    def _read_config(self, path: str, values: dict[str, Any]) -> None:
        try:
            with open(path, encoding="utf-8") as fh:
                lines = fh.readlines()
        except OSError as e:
            raise UsageError(f"Cannot open config file {path}: {e.strerror}") from None
        for n, line in enumerate(lines, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if not line.startswith("--"):
                raise UsageError(f"{path}:{n}: expected an option --name=value, got '{line}'")
            self._set(values, line, f" (in {path}:{n})")

    def parse(self, argv: Sequence[str], nargs: tuple[int, int] | None = None):
        """Return (options namespace, positional args); raise UsageError on any mistake."""
        values = {k.replace("-", "_"): o.default for k, o in self._options.items()}
        argv = list(argv)
        split = len(argv)
        for i, a in enumerate(argv):
            if not a.startswith("--") or a == "--":
                split = i
                break
        options, positional = argv[:split], argv[split:]
        if positional[:1] == ["--"]:
            positional = positional[1:]
        for a in options:  # config files first, so the command line overrides them
            if _norm(a.partition("=")[0]) == "config":
                self._read_config(a.partition("=")[2], values)
        for a in options:
            if _norm(a.partition("=")[0]) != "config":
                self._set(values, a, "")
        ns = _Namespace(**values)
        if not ns.help and nargs is not None and not (nargs[0] <= len(positional) <= nargs[1]):
            raise UsageError(f"wrong number of arguments: got {len(positional)}")
        return ns, positional


class _Namespace:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self) -> str:
        return "Options(" + ", ".join(f"{k}={v!r}" for k, v in sorted(self.__dict__.items())) + ")"


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
    try:
        rc = body(opts, args)
    except NnetmixError as e:
        _log_raise_site(e, verbose)
        return 1
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        logger.error("interrupted")
        return 130
    return int(rc or 0)
