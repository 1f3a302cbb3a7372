#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""filter-scp.py: utils/filter_scp.pl: keep (or with --exclude drop) the lines whose key is in a list."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import (ScriptUsage, open_input, open_stdout, parse_int,
                                parse_script_options, script_main)
from nnetmix.data.io import read_key_list, split_fields
from nnetmix.errors import UsageError

USAGE = """\
Usage: {prog} [--exclude] [-f <field>] <id-list> [<in.scp>] > <out.scp>
Prints the lines of in.scp (or stdin) whose <field>-th field (default 1) is, or with --exclude
is not, the first field of a line of <id-list>."""


def filter_scp(prog: str, argv) -> int:
    argv, field, exclude = list(argv), 1, False
    while argv and argv[0] in ("--exclude", "-f"):
        if argv.pop(0) == "--exclude":
            exclude = True
        elif not argv:
            raise ScriptUsage("-f needs a field number")
        else:
            field = parse_int(argv.pop(0), "-f")
            if field < 1:
                raise UsageError(f"-f must be a positive field number, got {field}")
    _, args = parse_script_options(argv, [], {}, (1, 2))
    ids = set(read_key_list(args[0]))
    with open_input(args[1:]) as fh, open_stdout() as out:
        for line in fh:
            f = split_fields(line.rstrip("\r\n"))
            if len(f) >= field and (f[field - 1] in ids) != exclude:
                out.write(line if line.endswith("\n") else line + "\n")
    return 0


def main(argv=None) -> int:
    return script_main(filter_scp, USAGE, "filter-scp.py", argv)


if __name__ == "__main__":
    sys.exit(main())
