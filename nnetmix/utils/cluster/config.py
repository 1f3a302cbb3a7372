"""Kaldi's queue configuration files (conf/slurm.conf, conf/queue.conf): parsing them, and
mapping a wrapper's ``--name value`` options to scheduler options through one.

A config holds the submit command (``command sbatch --export=PATH``) and one line per option:
``option mem=* --mem-per-cpu $0`` ($0 is the value), ``option gpu=0`` (for that exact value:
nothing), ``default gpu=0`` (the value when the option is not given).
"""
from __future__ import annotations

import dataclasses
import re
import shlex
import sys
from typing import TYPE_CHECKING

from nnetmix.errors import UsageError

if TYPE_CHECKING:  # annotations only: the scheduler module needs QueueConfig from here
    from nnetmix.utils.cluster.scheduler import Scheduler

__all__ = ["QueueConfig", "parse_config", "read_config", "scheduler_options"]


@dataclasses.dataclass
class QueueConfig:
    """A parsed conf/slurm.conf or conf/queue.conf."""

    source: str
    command: list[str]
    with_value: dict[str, str] = dataclasses.field(default_factory=dict)
    """``option mem=* ARGS``: option name -> ARGS, where $0 stands for the value."""
    exact: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)
    """``option gpu=0 ARGS``: (option, value) -> ARGS."""
    defaults: dict[str, str] = dataclasses.field(default_factory=dict)


def parse_config(text: str, source: str, dollar_zero_required: bool = False,
                 prog: str = "slurm.py") -> QueueConfig:
    """Parse Kaldi's queue config lines (``command``, ``option``, ``default``, # comments)."""
    command, with_value, exact, defaults = None, {}, {}, {}
    for n, line in enumerate(text.splitlines(), 1):
        s = re.sub(r"\s*#.*", "", line)
        if not s.strip():
            continue
        m = re.match(r"^command (.+)", s)
        if m:
            command = shlex.split(m.group(1))
            continue
        m = re.match(r"^option ([^=]+)=\* (.+)$", s)
        if m:
            if "$0" not in m.group(2):
                msg = f"{source}:{n}: '{line}' has no substitution variable $0"
                if dollar_zero_required:
                    raise UsageError(msg)
                sys.stderr.write(f"{prog}: WARNING: {msg}\n")
            with_value[m.group(1)] = m.group(2)
            continue
        m = re.match(r"^option ([^=]+)=(\S+)\s?(.*)$", s)
        if m:
            exact[(m.group(1), m.group(2))] = m.group(3)
            continue
        m = re.match(r"^default (\S+)=(\S+)", s)
        if m:
            defaults[m.group(1)] = m.group(2)
            continue
        raise UsageError(f"{source}:{n}: unable to parse line '{line}' (expected 'command ...', "
                         "'option name=value ...' or 'default name=value')")
    if command is None:
        raise UsageError(f'config file ({source}) does not contain the line "command ..."')
    return QueueConfig(source, command, with_value, exact, defaults)


def read_config(path: str | None, sched: Scheduler, prog: str) -> QueueConfig:
    """``--config FILE`` (must exist), else conf/<name>.conf when present, else the default."""
    name = path or sched.config_path
    try:
        with open(name, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as e:
        if path:
            raise UsageError(f"could not open config file {path}: {e.strerror}") from None
        return parse_config(sched.default_config, "default config file",
                            not sched.unknown_option_is_error, prog)
    return parse_config(text, name, not sched.unknown_option_is_error, prog)


def scheduler_options(cfg: QueueConfig, given: dict[str, str], array_job: bool,
                      sched: Scheduler, prog: str) -> tuple[list[str], int | None]:
    """The scheduler options for the command line's ``--name value`` options, and the array
    throttle (Slurm's --max-jobs-run); raises UsageError for an option slurm.pl refuses."""
    cli = dict(given)
    for name, value in cfg.defaults.items():
        cli.setdefault(name, value)
    opts: list[str] = []
    throttle = None
    for name, value in cli.items():
        if name == "config":
            continue
        if name == "max_jobs_run":
            if not array_job:
                if sched.throttle_in_array:
                    sys.stderr.write(f"{prog}: ignoring max_jobs_run since this is not an "
                                     "array task\n")
                continue
            if sched.throttle_in_array:
                throttle = int(value)
                continue
        if (name, value) in cfg.exact:
            args = cfg.exact[(name, value)]
        elif name in cfg.with_value:
            args = cfg.with_value[name].replace("$0", value)
        elif (name, "*") in cfg.exact:
            args = cfg.exact[(name, "*")]
        elif sched.unknown_option_is_error:
            raise UsageError(f"command line option {name} not described in {cfg.source} "
                             f"(or value '{value}' not allowed)")
        else:
            continue
        opts += shlex.split(args)
    return opts, throttle
