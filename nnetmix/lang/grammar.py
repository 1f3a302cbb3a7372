"""G.fst from an ARPA language model, as Kaldi's arpa2fst and utils/format_lm.sh make it.

The conversion is kaldilm's (a packaging of Kaldi's own arpa2fst code): with ``#0`` as the
disambiguation symbol, backoff arcs carry ``#0`` on the input side and epsilon on the output,
``<s>`` and ``</s>`` become epsilons (the start state is the ``<s>`` history, and ``</s>``
becomes a final weight), and with a symbol table read from words.txt an n-gram holding a word
the table lacks is skipped with a warning, as Kaldi does. format_lm.sh then checks the result the
way Kaldi's does: G's per-state probability sums (fstisstochastic) are reported, and G must not
contain a cycle of arcs that produce no phones (#0 and words with empty pronunciations), which
would make LG non-determinizable.
"""
from __future__ import annotations

import gzip
import logging
import math
import os
import shutil
import tempfile
from dataclasses import dataclass

from nnetmix.data.io import ENCODING, split_fields
from nnetmix.lang.arpa import read_arpa
from nnetmix.lang.symbols import LangError, SymbolTable, read_symbol_table
from nnetmix.options import option
from nnetmix.outfile import commit_temp, discard_temp, temp_name

__all__ = ["Arpa2FstOptions", "arpa2fst", "stochasticity", "empty_word_cycle", "check_g"]

logger = logging.getLogger(__name__)


@dataclass
class Arpa2FstOptions:
    """Kaldi arpa2fst's options (src/lmbin/arpa2fst.cc), same names and defaults."""

    bos_symbol: str = option("<s>", "Beginning of sentence symbol")
    eos_symbol: str = option("</s>", "End of sentence symbol")
    disambig_symbol: str = option("", "Disambiguator. If provided (e. g. #0), used on input side "
                                  "of backoff links, and <s> and </s> are replaced with epsilons")
    ilabel_sort: bool = option(True, "Ilabel-sort the output FST")
    keep_symbols: bool = option(False, "Store symbol table with FST. Symbols always saved to FST "
                                       "if symbol tables are neither read or written")
    max_arpa_warnings: int = option(30, "Maximum warnings to report on ARPA parsing, 0 to "
                                        "disable, -1 to show all")
    read_symbol_table: str = option("", "Use existing symbol table")
    write_symbol_table: str = option("", "Write generated symbol table to a file")
    max_order: int = option(-1, "Highest n-gram order used from the ARPA file, -1 for all")


def _plain_arpa(path: str, tmpdir: str) -> str:
    """kaldilm reads a plain file: gunzip a .gz into ``tmpdir`` first."""
    if not os.path.isfile(path):
        raise LangError(f"no such file {path}")
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic != b"\x1f\x8b":
        return path
    out = os.path.join(tmpdir, "lm.arpa")
    with gzip.open(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def arpa2fst(arpa: str, fst_out: str, opts: Arpa2FstOptions | None = None) -> int:
    """Convert ``arpa`` (plain or gzipped) to an OpenFst binary G at ``fst_out``; return #states.

    With a symbol table, words of the LM that the table lacks are counted and named in one
    warning (their n-grams are skipped, as Kaldi skips them).
    """
    import kaldi_hmm_gmm  # noqa: F401  (before kaldifst, see docs/design.md)
    import kaldifst
    import kaldilm

    opts = opts or Arpa2FstOptions()
    with tempfile.TemporaryDirectory(prefix="arpa2fst.") as tmp:
        plain = _plain_arpa(arpa, tmp)
        lm = read_arpa(plain)  # our own reader first: it names the line of a malformed file
        if opts.read_symbol_table:
            table = read_symbol_table(opts.read_symbol_table)
            specials = {opts.bos_symbol, opts.eos_symbol}
            oov = [w for w in lm.vocab if w not in table and w not in specials]
            if oov:
                logger.warning("%s: %d words are not in %s; their n-grams are skipped: %s",
                               arpa, len(oov), opts.read_symbol_table, " ".join(oov[:10])
                               + (" ..." if len(oov) > 10 else ""))
            if opts.disambig_symbol and opts.disambig_symbol not in table:
                raise LangError(f"disambiguation symbol '{opts.disambig_symbol}' is not in "
                                f"{opts.read_symbol_table}")
        tmp_out = temp_name(fst_out)
        try:
            kaldilm.arpa2fst(plain, tmp_out, bos_symbol=opts.bos_symbol,
                             disambig_symbol=opts.disambig_symbol, eos_symbol=opts.eos_symbol,
                             ilabel_sort=opts.ilabel_sort, keep_symbols=opts.keep_symbols,
                             max_arpa_warnings=opts.max_arpa_warnings,
                             read_symbol_table=opts.read_symbol_table,
                             write_symbol_table=opts.write_symbol_table,
                             max_order=opts.max_order)
            g = kaldifst.StdVectorFst.read(tmp_out)
            if g is None or g.num_states == 0:
                raise LangError(f"arpa2fst made an empty G from {arpa}")
        except BaseException:
            discard_temp(tmp_out)
            raise
        commit_temp(tmp_out, fst_out)
    return g.num_states


def _arcs(fst):
    import kaldifst
    for s in kaldifst.StateIterator(fst):
        yield s, list(kaldifst.ArcIterator(fst, s))


def stochasticity(fst) -> tuple[float, float]:
    """(min, max) over states of -log(sum of arc and final probabilities), fstisstochastic's view.

    For a backoff LM the minimum is near 0 and the maximum negative: backoff arcs add mass.
    """
    lo, hi = math.inf, -math.inf
    for s, arcs in _arcs(fst):
        total = sum(math.exp(-a.weight.value) for a in arcs)
        fw = fst.final(s).value
        if not math.isinf(fw):
            total += math.exp(-fw)
        cost = -math.log(total) if total > 0 else math.inf
        lo, hi = min(lo, cost), max(hi, cost)
    return lo, hi


def empty_word_cycle(fst, empty_labels: set[int]) -> list[int] | None:
    """A cycle (list of states) made only of arcs whose input label is in ``empty_labels``."""
    graph = {s: [a.nextstate for a in arcs if a.ilabel in empty_labels] for s, arcs in _arcs(fst)}
    colour: dict[int, int] = {}
    for root in graph:
        if root in colour:
            continue
        stack = [(root, iter(graph[root]))]
        path = [root]
        colour[root] = 1
        while stack:
            s, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                colour[s] = 2
                stack.pop()
                path.pop()
            elif colour.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in colour:
                colour[nxt] = 1
                stack.append((nxt, iter(graph[nxt])))
                path.append(nxt)
    return None


def check_g(g_fst: str, lexicon: str, words: SymbolTable) -> tuple[float, float]:
    """format_lm.sh's checks on G; LangError on an empty-word cycle. Returns stochasticity()."""
    from nnetmix.kaldi.fstfile import FstFormatError, read_checked_fst

    try:
        g = read_checked_fst(g_fst)
    except FstFormatError as e:
        raise LangError(str(e)) from None
    empty = {words.id("#0")}
    if not os.path.isfile(lexicon):
        raise LangError(f"no such file {lexicon}")
    with open(lexicon, **ENCODING) as fh:
        for line in fh:
            f = split_fields(line.rstrip("\n"))
            if len(f) == 1 and f[0] in words:
                empty.add(words.id(f[0]))
    cycle = empty_word_cycle(g, empty)
    if cycle is not None:
        raise LangError(f"{g_fst}: the language model has a cycle of empty words (#0 or words "
                        f"with no phones) through states {' '.join(map(str, cycle))}")
    return stochasticity(g)
