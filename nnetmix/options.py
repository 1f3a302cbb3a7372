"""Kaldi's option syntax: option groups as dataclasses, ``--name=value`` lists and config files.

A Kaldi config file (conf/mfcc.conf) is a list of ``--name=value`` lines, the same text a binary
takes on its command line, so reading one is library work (:func:`nnetmix.feat.read_feature_config`)
as well as a command line's. This module holds that syntax and nothing about command lines:
an option group is a dataclass whose fields carry ``metadata={"help": ...}`` (Kaldi's
``Register(&opts, name, help)``; :func:`option` makes such a field), :class:`OptionSet` turns
groups into named options and parses ``--name=value`` items and ``--config=FILE`` files into
them. Usage text, ``--help`` and exit codes belong to the command-line layer (the bin/ tools'
parser builds on this class).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from nnetmix.errors import UsageError

__all__ = ["Option", "OptionSet", "OptionValues", "env_number", "option", "str2bool"]


def str2bool(text: str) -> bool:
    """Kaldi's boolean spelling: true|false (also t|f|1|0)."""
    low = text.strip().lower()
    if low in ("true", "t", "1"):
        return True
    if low in ("false", "f", "0"):
        return False
    raise ValueError(f"expected true or false, got '{text}'")


def env_number(env: Mapping[str, str], name: str, default: float, kind: type = float,
               expected: str = "a number >= 0") -> Any:
    """The number in the environment variable ``name`` (``kind``: int or float, finite, >= 0),
    ``default`` when it is unset or blank; UsageError ``NAME=value: expected ...`` otherwise."""
    value = env.get(name, "").strip()
    if not value:
        return default
    try:
        n = kind(value)
    except ValueError:
        n = -1
    if not 0 <= n < float("inf"):
        raise UsageError(f"{name}={value}: expected {expected}")
    return n


def option(default: Any, help: str) -> Any:
    """A dataclass field that is an option, ``learn_rate: float = option(0.008, "Learning
    rate")``: its default and its one-line help, which :meth:`OptionSet.register_group` reads.
    ``dataclasses.MISSING`` as the default makes the field a required argument of the class."""
    return dataclasses.field(default=default, metadata={"help": help})


def _norm(name: str) -> str:
    return name.strip().lstrip("-").replace("_", "-")


@dataclasses.dataclass
class Option:
    """One registered option: its dashed name, default, one-line help and value type."""

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


class OptionValues:
    """Parsed options as attributes (``opts.learn_rate``), underscores for dashes."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self) -> str:
        return "Options(" + ", ".join(f"{k}={v!r}" for k, v in sorted(self.__dict__.items())) + ")"


class OptionSet:
    """Named options (single or from dataclass groups); parses ``--name=value`` and config files.

    ``--config=FILE`` is always known: its files are read first, so the other items override
    them, as Kaldi's ParseOptions does. Every mistake is a :class:`UsageError` naming the option
    (and the file and line for a config file).
    """

    def __init__(self) -> None:
        self.options: dict[str, Option] = {}
        self.register("config", "", "Configuration file to read (this option may be repeated)")

    def register(self, name: str, default: Any, help: str, kind: type | None = None) -> None:
        key = _norm(name)
        if key in self.options:
            raise ValueError(f"option --{key} registered twice")
        self.options[key] = Option(key, default, help, kind or type(default))

    def register_group(self, cls: type) -> None:
        """Register every field of the dataclass ``cls`` as --field-name."""
        for f in dataclasses.fields(cls):
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            kind = {"bool": bool, "int": int, "float": float, "str": str}.get(str(f.type), type(default))
            self.register(f.name, default, f.metadata.get("help", ""), kind)

    def group(self, cls: type, opts: Any) -> Any:
        """Build the dataclass ``cls`` from parsed options."""
        return cls(**{f.name: getattr(opts, f.name) for f in dataclasses.fields(cls)})

    def _set(self, values: dict[str, Any], raw: str, origin: str) -> None:
        body = raw[2:]
        name, eq, text = body.partition("=")
        key = _norm(name)
        opt = self.options.get(key)
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

    def parse(self, argv: Sequence[str]) -> tuple[OptionValues, list[str]]:
        """Return (options, positional arguments): options are the leading ``--`` items."""
        values = {k.replace("-", "_"): o.default for k, o in self.options.items()}
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
        return OptionValues(**values), positional
