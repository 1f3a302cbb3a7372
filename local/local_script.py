# Copyright 2026 nnetmix authors. Apache 2.0.
"""What the recipes' local/*.py scripts share: the argument parser and the run under __main__.

Each script is icefall's shape (get_args, one typed function, __main__); the calling local/*.sh
passes its ``$0`` as ``--prog`` so output lines start with the name the user typed, as the shell
scripts' own ``$0: ...`` lines do, and bad input is one such line and exit code 1, no traceback.
"""
from __future__ import annotations

import argparse
import logging
import sys
from typing import Callable

from nnetmix.errors import NnetmixError

__all__ = ["LOG_FORMAT", "script_parser", "run_script"]

#: icefall's log format.
LOG_FORMAT = "%(asctime)s %(levelname)s [%(filename)s:%(lineno)d] %(message)s"


def script_parser(doc: str) -> argparse.ArgumentParser:
    """An argparse parser whose help is the script's docstring, with --prog."""
    parser = argparse.ArgumentParser(description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prog", default=sys.argv[0],
                        help="name that starts each output line (the calling script's $0)")
    return parser


def run_script(args: argparse.Namespace, work: Callable[[argparse.Namespace], None]) -> None:
    """Log the arguments and run ``work(args)``; a NnetmixError exits 1 with one line."""
    logging.basicConfig(format=LOG_FORMAT, level=logging.INFO)
    logging.info(vars(args), stacklevel=2)  # the calling script's file and line
    try:
        work(args)
    except NnetmixError as e:
        sys.exit(f"{args.prog}: {e}")
