"""Kaldi-format log lines through the standard logging module.

Kaldi prints ``LOG (prog[version]:func():file.cc:line) message``, and ``WARNING``, ``ERROR``
and ``VLOG[n]`` in the same shape (src/base/kaldi-error.cc). Scripts and people grep these
lines, so every nnetmix tool logs through this one formatter.
"""
from __future__ import annotations

import logging
import sys

from nnetmix import __version__

__all__ = ["KaldiFormatter", "setup_logging", "vlog", "get_logger", "log_vector"]

_LEVEL_NAMES = {logging.INFO: "LOG", logging.WARNING: "WARNING", logging.ERROR: "ERROR",
                logging.CRITICAL: "ERROR"}


class KaldiFormatter(logging.Formatter):
    """Formats a record as Kaldi does; DEBUG-n levels print as VLOG[n]."""

    def __init__(self, prog: str):
        super().__init__()
        self.prog = prog

    def format(self, record: logging.LogRecord) -> str:
        if record.levelno in _LEVEL_NAMES:
            level = _LEVEL_NAMES[record.levelno]
        else:
            level = f"VLOG[{max(1, logging.INFO - record.levelno)}]"
        where = f"{self.prog}[{__version__}]:{record.funcName}():{record.filename}:{record.lineno}"
        text = f"{level} ({where}) {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def setup_logging(prog: str, verbose: int = 0, stream=None) -> None:
    """Send every nnetmix logger to ``stream`` (stderr) in Kaldi's format; --verbose=N shows VLOG[N]."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(KaldiFormatter(prog))
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(logging.INFO - max(0, int(verbose)))


def vlog(logger: logging.Logger, n: int, msg: str, *args) -> None:
    """Kaldi's KALDI_VLOG(n): shown when --verbose >= n."""
    logger.log(logging.INFO - n, msg, *args, stacklevel=2)


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(name)


def log_vector(values) -> str:
    """A vector as Kaldi's ``KALDI_LOG << vec`` prints it (operator<<, the log stream's default
    precision 6): `` [ a b c ]``."""
    return " [ " + " ".join("{:.6g}".format(float(x)) for x in values) + " ]"
