# Copyright 2026 nnetmix authors. Apache 2.0.
"""Markdown pieces shared by the group tables: cells, tables, the header every table opens with,
and writing a file through a temporary name."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Optional, Sequence

from bench.experiments.plan import Size

__all__ = ["wer_cell", "num", "table", "header", "write_atomic", "words_delta"]


def num(x: Optional[float], fmt: str = "{:.2f}", missing: str = "-") -> str:
    return missing if x is None else fmt.format(x)


def wer_cell(r) -> str:
    """'3.34 (40/1198)', or '-' for a run not finished."""
    if r is None or r.wer is None:
        return "-"
    return f"{r.wer:.2f} ({r.wer_errors}/{r.wer_words})"


def words_delta(a, b) -> str:
    """'+8 words' between two runs' error counts (same test set), '' when unknown."""
    if a is None or b is None or a.wer_errors is None or b.wer_errors is None:
        return ""
    d = a.wer_errors - b.wer_errors
    return f"{d:+d} word{'' if abs(d) == 1 else 's'}"


def table(head: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    """A markdown table; columns listed in ``right`` are right-aligned."""
    align = ["---:" if i in right else "---" for i in range(len(head))]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def header(title: str, size: Size, work: Path, tests: str, recipe: bool = True) -> str:
    """Title, what the table tests, and the setting (the recipe's, unless ``recipe`` is False)."""
    cores = os.cpu_count() or 1
    stamp = f"Written {time.strftime('%Y-%m-%d %H:%M')} by bench/run_experiments.sh."
    if not recipe:
        return f"## {title}\n\n{tests}\n\nMachine: {cores} cores, shared. {stamp}\n\n"
    epochs = ("to its own stopping rule" if size.max_iters == 20 else
              f"for at most {size.max_iters} epoch{'s' if size.max_iters > 1 else ''}")
    return (f"## {title}\n\n"
            f"{tests}\n\n"
            f"Size `{size.name}`: {size.train_utts} training / {size.test_utts} test utterances of "
            f"the digits corpus (run.sh stages 0-5 once, in `{work.name}/`), Newbob {epochs}, "
            f"143-2x512-67 DNN, RBM-initialised, NG-SGD, minibatch 256, averaging every 10 "
            f"minibatches with learning rate x N unless a column says otherwise. Machine: "
            f"{cores} cores, shared (load average before -> after each run is in its directory); "
            f"runs with more ranks than cores are oversubscribed. {stamp}\n\n")


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
