"""Pick the best (lowest) error rate from WER lines, as Kaldi's utils/best_wer.sh does.

Input lines are usually ``grep WER exp/x/decode/wer_*``, i.e. ``<file>:%WER 7.52 [ ... ]``;
sclite ``Sum/Avg`` lines are understood too. The first line with the lowest rate wins, and is
printed with the rate first and the file name last: ``%WER 7.52 [ ... ] exp/x/decode/wer_10_0.0``.
"""
from __future__ import annotations

import re
from typing import Iterable, Optional

__all__ = ["best_wer_line", "parse_wer_line"]

_KALDI = re.compile(r"[WS]ER (\S+)")
_SCLITE = re.compile(r" (Mean|Sum/Avg|)\s*\|\s*\S+\s+\S+\s+\|"
                     r"\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S+)\s+\S+\s+\|")


def _number(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def parse_wer_line(line: str) -> Optional[float]:
    """The error rate a best_wer.sh input line carries, or None (not a WER line)."""
    line = re.sub(r"\|(\d)", r"| \1", line)
    line = re.sub(r"(\d)\|", r"\1 |", line)
    m = _KALDI.search(line)
    if m:
        return _number(m.group(1))
    m = _SCLITE.search(line)
    if m:
        return _number(m.group(2))
    return None


def _reorder(line: str) -> str:
    """best_wer.sh's awk steps: move the file name after the rate, drop its trailing colon."""
    parts = line.split("%WER")
    if len(parts) == 2:
        line = "%WER" + parts[1] + " " + parts[0]
    parts = line.split("Sum/Avg")
    if len(parts) == 2:
        line = parts[1] + " " + parts[0]
    fields = line.split()
    if fields and len(fields[-1]) > 1 and fields[-1].endswith(":"):
        fields[-1] = fields[-1][:-1]
        return " ".join(fields)
    return line


def best_wer_line(lines: Iterable[str]) -> Optional[str]:
    """The best line, reordered as best_wer.sh prints it; None when no line has a rate."""
    best, best_line = None, None
    for raw in lines:
        line = raw.rstrip("\n")
        value = parse_wer_line(line)
        if value is not None and (best is None or best > value):
            best, best_line = value, re.sub(r"(\d)\|", r"\1 |", re.sub(r"\|(\d)", r"| \1", line))
    return None if best_line is None else _reorder(best_line)
