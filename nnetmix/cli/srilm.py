"""SRILM's command-line syntax for ngram-count.py and ngram.py: ``-name value`` and ``-flag``.

The other bin/ tools take Kaldi's ``--name=value`` (:mod:`nnetmix.cli.binary`); these two take
SRILM's single-dash options (its Opt_Parse) because Kaldi recipes call ``ngram-count`` and
``ngram`` that way and people port those lines. The parser plugs into
:func:`nnetmix.cli.binary.run_tool`, so the tools still log in Kaldi's format and turn errors into one ``ERROR (...)`` line. SRILM options
these tools do not implement are refused by name, with the reason, rather than ignored.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from nnetmix.errors import UsageError
from nnetmix.options import OptionValues

__all__ = ["SrilmOptionParser"]

#: SRILM options we know and do not implement, with why (checked by prefix match on the name).
_NOT_IMPLEMENTED = [
    (r"gt\d*max$|gt\d*$|gt$", "Good-Turing discounting is not implemented"),
    (r"gt([5-9])min$", "orders above 4 are not supported"),
    (r"gtmin$", "it only sets the cutoff of orders above 9 in SRILM; use -gt1min..-gt4min"),
    (r"(wb|c|n)discount\d*$|addsmooth\d*$", "only Kneser-Ney discounting is implemented "
                                            "(-kndiscount, -ukndiscount)"),
    (r"(u?kndiscount|interpolate)\d$", "per-order discounting options are not implemented "
                                       "(the choice applies to all orders)"),
    (r"kn\d*$|kn-counts-modified$|kn-modify-counts-at-end$",
     "reading or writing discount files and modified-count options are not implemented"),
    (r"read.*|write\d*$|write-binary.*|intersect$|prune$|minprune$|float-counts$|tolower$|"
     r"no-sos$|no-eos$|text-has-weights.*|vocab-aliases$|nonevents$|meta-tag$|trust-totals$|"
     r"init-lm$|escape$|counts$|rescore.*|nbest.*|mix-lm.*|lambda$|bayes$|classes$|"
     r"skipoovs$|prune-lowprobs$|write-lm$|renorm$|expand-.*|unk-prob$|zeroprob-word$",
     "this SRILM option is not implemented by nnetmix"),
]


@dataclass
class _Opt:
    name: str
    default: Any
    help: str
    kind: type


class SrilmOptionParser:
    """Registers SRILM-style options, parses argv, prints the usage; works with run_tool."""

    def __init__(self, usage: str, prog: str):
        self.usage = usage.strip("\n")
        self.prog = prog
        self._options: dict[str, _Opt] = {}
        self.register("help", False, "Print this usage message")

    def register(self, name: str, default: Any, help: str, kind: type | None = None) -> None:
        self._options[name] = _Opt(name, default, help, kind or type(default))

    def format_usage(self) -> str:
        lines = [self.usage, "", "Options (SRILM's syntax: -name value, or -name for a flag):"]
        for o in self._options.values():
            kind = {bool: "flag", int: "int", float: "float"}.get(o.kind, "string")
            default = "" if o.kind is bool else f", default = {o.default!r}" \
                if o.default not in ("", None) else ""
            lines.append(f"  -{o.name:<16} {o.help} ({kind}{default})")
        return "\n".join(lines) + "\n"

    def _refuse(self, arg: str) -> UsageError:
        name = arg.lstrip("-")
        if arg.startswith("--"):
            return UsageError(f"Invalid option {arg}: {self.prog} takes SRILM's single-dash "
                              f"options (-{name.split('=')[0]} VALUE, not {arg})")
        for pattern, why in _NOT_IMPLEMENTED:
            if re.fullmatch(pattern, name):
                return UsageError(f"option {arg} is not supported: {why}")
        return UsageError(f"Invalid option {arg} (run {self.prog} -help for the options)")

    def parse(self, argv: Sequence[str], nargs: tuple[int, int] | None = None):
        """Return (namespace, []); UsageError on an unknown option, a missing or bad value."""
        values = {n.replace("-", "_"): o.default for n, o in self._options.items()}
        argv = list(argv)
        i = 0
        while i < len(argv):
            arg = argv[i]
            opt = self._options.get(arg[1:]) if arg.startswith("-") and \
                not arg.startswith("--") else None
            if opt is None:
                if not arg.startswith("-") or arg == "-":
                    raise UsageError(f"unexpected argument '{arg}' ({self.prog} takes only "
                                     "options)")
                raise self._refuse(arg)
            key = opt.name.replace("-", "_")
            if opt.kind is bool:
                values[key] = True
                i += 1
                continue
            if i + 1 >= len(argv):
                raise UsageError(f"option {arg} needs a value")
            text = argv[i + 1]
            try:
                values[key] = opt.kind(text)
            except ValueError:
                raise UsageError(f"Invalid value for option {arg}: '{text}' (expected "
                                 f"{opt.kind.__name__})") from None
            i += 2
        values.setdefault("print_args", True)
        values.setdefault("verbose", 0)  # SRILM's -debug is the tool's own, not Kaldi's --verbose
        return OptionValues(**values), []

