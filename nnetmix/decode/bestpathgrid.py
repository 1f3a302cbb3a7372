"""lattice-best-path-grid: the 1-best transcripts of a whole scoring grid from one read of the
lattices.

local/score.sh (as Kaldi's steps/score_kaldi.sh) wants, for every LM weight LMWT and word
insertion penalty WIP, the output of::

    lattice-scale --inv-acoustic-scale=LMWT "ark:gunzip -c lat.*.gz|" ark:- |
      lattice-add-penalty --word-ins-penalty=WIP ark:- ark:- |
      lattice-best-path --word-symbol-table=words.txt ark:- ark,t:- |
      utils/int2sym.pl -f 2- words.txt > scoring/LMWT.WIP.tra

Run as 33 pipelines of Python tools, that is 99 process starts and 99 reads and writes of every
lattice for a few milliseconds of search. Here each lattice is read once and searched once per
grid point, with the float operations of those tools in their order: ``CompactLattice.scale``
with acoustic scale 1/LMWT (lattice-scale: graph ``g*1 + 0``, acoustic ``0 + a/LMWT``), the
float32 rounding of the binary archive between the tools, ``g + WIP`` on word arcs
(lattice-add-penalty), float32 again, then :func:`~nnetmix.decode.lattice.best_path` with both
scales 1 in the same topological order. So each output file is byte for byte what the pipeline
writes: ``key w1 w2`` lines as int2sym prints them (``key`` alone for an empty hypothesis), and
no line for a lattice without a successful path (the pipeline's lattice-best-path skips it with
a warning).

Memory: lattices are streamed, one in memory at a time, whatever the size of the decode
directory; the cost is one open output file per grid point (33 for score.sh's default grid).
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
from dataclasses import dataclass
from typing import Iterable, Optional

import numpy as np

from nnetmix.data.io import atomic_open
from nnetmix.decode.latio import iter_compact_lattices
from nnetmix.decode.lattice import CompactLattice, LatticeError, best_path
from nnetmix.errors import UsageError
from nnetmix.lang.symbols import read_symbol_table

__all__ = ["ScoringGrid", "GridSummary", "lattice_best_path_grid", "grid_best_paths"]

logger = logging.getLogger(__name__)

_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


@dataclass(frozen=True)
class ScoringGrid:
    """LM weights and word insertion penalties; a penalty keeps its spelling (``0.0``, ``.5``)
    because that is how it appears in score.sh's file names (scoring/10.0.5.tra)."""

    lmwts: tuple[int, ...]
    wips: tuple[str, ...]

    @classmethod
    def parse(cls, min_lmwt: int, max_lmwt: int, word_ins_penalty: str) -> "ScoringGrid":
        """From --min-lmwt, --max-lmwt and a comma list of penalties; UsageError if either is
        bad."""
        if min_lmwt < 1 or max_lmwt < min_lmwt:
            raise UsageError(f"--min-lmwt={min_lmwt} --max-lmwt={max_lmwt}: expected "
                             "1 <= min-lmwt <= max-lmwt")
        wips = tuple(word_ins_penalty.split(","))
        for w in wips:
            if not _NUMBER.match(w):
                raise UsageError(f"--word-ins-penalty={word_ins_penalty}: '{w}' is not a number "
                                 "(expected a comma-separated list, e.g. 0.0,0.5,1.0)")
        if len(set(wips)) != len(wips):
            raise UsageError(f"--word-ins-penalty={word_ins_penalty}: a penalty is repeated")
        return cls(tuple(range(min_lmwt, max_lmwt + 1)), wips)

    def points(self) -> list[tuple[int, str]]:
        """(LMWT, WIP) pairs, LM weight outermost."""
        return [(lmwt, wip) for lmwt in self.lmwts for wip in self.wips]

    def output_path(self, pattern: str, lmwt: int, wip: str) -> str:
        """The placeholders are replaced in the file name only: a directory may be called
        anything (exp/WIP/decode)."""
        head, tail = os.path.split(pattern)
        return os.path.join(head, tail.replace("LMWT", str(lmwt)).replace("WIP", wip))

    def check_pattern(self, pattern: str) -> None:
        """The pattern's file name must name each grid point's file differently."""
        for name in ("LMWT", "WIP"):
            if name not in os.path.basename(pattern):
                raise UsageError(f"output pattern '{pattern}' has no {name} placeholder in its "
                                 "file name (e.g. exp/mono/decode/scoring/LMWT.WIP.tra)")


@dataclass
class GridSummary:
    """Lattices read, and per grid point how many had no successful path."""

    lattices: int
    failed: dict[tuple[int, str], int]


def grid_best_paths(clat: CompactLattice, grid: ScoringGrid
                    ) -> Iterable[tuple[int, str, Optional[list[int]]]]:
    """(LMWT, WIP, words or None) for each grid point, words as the three-tool pipeline finds
    them (see the module docstring for the operations and their order)."""
    if clat.start < 0 or clat.num_states == 0:  # best_path's own first test: no path anywhere
        for lmwt, wip in grid.points():
            yield lmwt, wip, None
        return
    order = clat.topo_order()
    labels = np.array([arc[0] for arcs in clat.arcs for arc in arcs], dtype=np.int64)
    g = np.array([arc[1] for arcs in clat.arcs for arc in arcs], dtype=np.float64)
    a = np.array([arc[2] for arcs in clat.arcs for arc in arcs], dtype=np.float64)
    finals = [(s, f) for s, f in enumerate(clat.finals) if f is not None]
    fg = np.array([f[0] for _, f in finals], dtype=np.float64)
    fa = np.array([f[1] for _, f in finals], dtype=np.float64)
    words = labels != 0
    # lattice-scale with lm_scale 1, acoustic2lm and lm2acoustic 0 (CompactLattice.scale's
    # mul(): a zero scale gives 0.0, never 0*inf), then the archive's float32
    g_s, fg_s = _f32(g * 1.0 + 0.0), _f32(fg * 1.0 + 0.0)
    scales = 1.0 / np.array(grid.lmwts, dtype=np.float64)  # lattice-scale: 1.0 / inv scale
    a_s = _f32(0.0 + scales[:, None] * a[None, :])
    fa_s = _f32(0.0 + scales[:, None] * fa[None, :])
    # lattice-add-penalty: graph cost + penalty on word arcs, then float32 again
    pens = np.array([float(w) for w in grid.wips], dtype=np.float64)
    g_p = np.where(words[None, :], _f32(g_s[None, :] + pens[:, None]), g_s[None, :])
    for i, lmwt in enumerate(grid.lmwts):
        a_row = a_s[i].tolist()
        fin = [None] * clat.num_states
        for (s, f), x, y in zip(finals, fg_s.tolist(), fa_s[i].tolist()):
            fin[s] = (x, y, f[2])
        for j, wip in enumerate(grid.wips):
            weighted = iter(zip(g_p[j].tolist(), a_row))
            arcs = [[(lab, *next(weighted), t, nxt) for lab, _g, _a, t, nxt in state_arcs]
                    for state_arcs in clat.arcs]
            bp = best_path(CompactLattice(clat.start, arcs, fin), order=order)
            yield lmwt, wip, None if bp is None else bp[0]


def _f32(x: np.ndarray) -> np.ndarray:
    """The value a float64 takes through a float32 field of a binary archive and back."""
    return x.astype(np.float32).astype(np.float64)


def lattice_best_path_grid(rspecifier: str, grid: ScoringGrid, word_symbol_table: str,
                           output_pattern: str) -> GridSummary:
    """Write one transcript file per grid point (``output_pattern`` with LMWT and WIP
    replaced), each through a temporary name renamed at the end (an error leaves none
    half-written). Raises LangError for a word id the symbol table lacks, as int2sym does, and
    LatticeError for an archive without lattices (no file is written then)."""
    grid.check_pattern(output_pattern)
    table = read_symbol_table(word_symbol_table)
    syms = {i: s for s, i in table}
    failed = {p: 0 for p in grid.points()}
    n = 0
    with contextlib.ExitStack() as stack:
        out = {(lmwt, wip): stack.enter_context(atomic_open(grid.output_path(output_pattern,
                                                                             lmwt, wip)))
               for lmwt, wip in grid.points()}
        for key, clat in iter_compact_lattices(rspecifier):
            n += 1
            nfail = 0
            for lmwt, wip, words in grid_best_paths(clat, grid):
                if words is None:
                    failed[lmwt, wip] += 1
                    nfail += 1
                    continue
                try:
                    line = key + "".join(" " + syms[w] for w in words) + "\n"
                except KeyError as e:
                    raise LatticeError(f"{word_symbol_table}: no symbol for word id {e.args[0]} "
                                       f"in the best path of {key} (LMWT {lmwt}, WIP {wip})"
                                       ) from None
                out[lmwt, wip].write(line)
            if nfail:
                logger.warning("Best-path failed for key %s (at %d of %d grid points)", key,
                               nfail, len(failed))
        if n == 0:  # as lattice-best-path.py: no output at all, one line saying why
            raise LatticeError(f"{rspecifier}: no lattices, so no transcripts were written")
    for (lmwt, wip), k in failed.items():
        logger.info("LMWT %d, WIP %s: done %d lattices, failed for %d", lmwt, wip, n - k, k)
    return GridSummary(n, failed)
