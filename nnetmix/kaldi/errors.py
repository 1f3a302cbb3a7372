"""Errors of the table layer, on top of :mod:`nnetmix.errors`.

A truncated ark or a bad token is a :class:`~nnetmix.errors.FormatError` (defined there). The
two below are table-specific: a missing key must still be a ``KeyError`` so ``dict``-style code
(``r.get(k)``, ``except KeyError``) works, and a file or pipe that cannot be opened is an I/O
problem, not a format one. Both are :class:`~nnetmix.errors.NnetmixError`, so a bin/ tool prints
them as one ERROR line.
"""
from __future__ import annotations

from nnetmix.errors import FormatError, NnetmixError

__all__ = ["FormatError", "KaldiIOError", "PipeClosedError", "TableKeyError"]


class KaldiIOError(NnetmixError):
    """A file, directory or pipe named by an rspecifier/wspecifier/extended filename failed."""


class PipeClosedError(KaldiIOError):
    """The reader of an output pipe closed it (it ended, or died) before we finished writing."""


class TableKeyError(NnetmixError, KeyError):
    """A key asked of a RandomAccessReader is not in its table."""

    def __str__(self) -> str:  # KeyError would repr() the message, quotes and all.
        return str(self.args[0]) if self.args else ""
