# Copyright 2026 nnetmix authors. Apache 2.0.
"""Markdown pieces shared by the tables: numbers, tables, and writing a file through a
temporary name."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Sequence

__all__ = ["num", "table", "write_atomic"]


def num(x: Optional[float], fmt: str = "{:.2f}", missing: str = "-") -> str:
    return missing if x is None else fmt.format(x)


def table(head: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    """A markdown table; columns listed in ``right`` are right-aligned."""
    align = ["---:" if i in right else "---" for i in range(len(head))]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
