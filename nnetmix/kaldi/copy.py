"""What Kaldi's copy-* binaries do: copy a table (or one object), optionally changing values.

Kaldi's copy-int-vector, copy-vector, copy-matrix and copy-post (src/bin/) accept either an rspecifier and a
wspecifier (a table copy) or, except copy-post, an rxfilename and a wxfilename (one object);
mixing the two is an error. A table copy that copied nothing is a failure (exit status 1 there).
:func:`map_table` is the loop most of Kaldi's table binaries share: read one table in order,
write each key's result or skip the key (a warning, counted), log the summary line.
"""
from __future__ import annotations

import logging
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from nnetmix.errors import UsageError
from nnetmix.kaldi.objects import read_object, write_object
from nnetmix.kaldi.specifier import parse_rspecifier, parse_wspecifier
from nnetmix.kaldi.table import SequentialReader
from nnetmix.kaldi.writer import TableWriter

__all__ = ["is_rspecifier", "is_wspecifier", "copy_table", "copy_object", "copy_any", "Counts",
           "map_table"]

logger = logging.getLogger(__name__)

Transform = Optional[Callable[[Any], Any]]


def is_rspecifier(s: str) -> bool:
    """True when ``s`` reads as a table (``ark:``/``scp:``), as Kaldi's ClassifyRspecifier."""
    try:
        parse_rspecifier(s)
    except UsageError:
        return False
    return True


def is_wspecifier(s: str) -> bool:
    try:
        parse_wspecifier(s)
    except UsageError:
        return False
    return True


@dataclass
class Counts:
    """How many items a tool finished and how many it skipped; ok when at least one finished."""

    done: int = 0
    err: int = 0

    @property
    def ok(self) -> bool:
        return self.done > 0


def map_table(rspecifier: str, wspecifier: str, fn: Callable[[str, Any], Any], kind: str = "mat",
              out_kind: Optional[str] = None, summary: str | Callable[[Counts], None] = "",
              reader: Optional[AbstractContextManager[Iterable[tuple[str, Any]]]] = None) -> Counts:
    """Write ``fn(key, value)`` for every entry of ``rspecifier`` (``kind``) to ``wspecifier``
    (``out_kind``, default ``kind``); None from fn means 'skip this key' (fn warns), counted as
    an error. ``reader`` replaces the plain table reader (the feature tools pass
    nnetmix.feat.pipeline.open_features). ``summary`` (``{done}``, ``{err}`` filled in, or a
    function of the counts that logs) is logged before the output is closed, so it precedes the error of a table with nothing
    written (Kaldi logs it, then exits 1)."""
    counts = Counts()
    src = reader if reader is not None else SequentialReader(rspecifier, kind)
    with src as entries, TableWriter(wspecifier, out_kind or kind) as writer:
        for key, value in entries:
            out = fn(key, value)
            if out is None:
                counts.err += 1
                continue
            writer.write(key, out)
            counts.done += 1
        if callable(summary):
            summary(counts)
        elif summary:
            logger.info(summary.format(done=counts.done, err=counts.err))
    return counts


def copy_table(rspecifier: str, wspecifier: str, kind: str, transform: Transform = None,
               what: Optional[str] = None) -> int:
    """Copy every (key, value) of ``kind``; return how many were copied (logged when ``what``)."""
    done = 0
    with SequentialReader(rspecifier, kind) as reader, TableWriter(wspecifier, kind) as writer:
        for key, value in reader:
            writer.write(key, transform(value) if transform else value)
            done += 1
    if what:
        logger.info("Copied %d %s.", done, what)
    return done


def copy_object(rxfilename: str, wxfilename: str, kind: str, binary: bool = True,
                transform: Transform = None) -> None:
    value = read_object(rxfilename, kind)
    write_object(wxfilename, transform(value) if transform else value, kind, binary)


def copy_any(src: str, dst: str, kind: str, binary: bool = True, transform: Transform = None,
             what: str = "objects", one: Optional[str] = None) -> int:
    """Table copy or object copy, refusing a mix; returns the number copied (1 for an object).

    The log says "Copied <what>." for a table and "Copied <one> to <dst>" for an object (``one``
    defaults to ``what`` without its plural s); nothing when ``what`` is empty."""
    src_table, dst_table = is_rspecifier(src), is_wspecifier(dst)
    if src_table != dst_table:
        raise UsageError(f"cannot mix archives with regular files ('{src}' -> '{dst}')")
    if not src_table:
        copy_object(src, dst, kind, binary, transform)
        if what:
            logger.info("Copied %s to %s", one or what.rstrip("s"), dst)
        return 1
    return copy_table(src, dst, kind, transform, what)
