"""Kaldi lattices in Python: the raw state-level lattice a decoder leaves, and the
CompactLattice that gmm-latgen-faster writes (src/lat/kaldi-lattice.h).

A *Lattice* has transition-ids on the input side, words on the output side and a
LatticeWeight (graph cost, acoustic cost) on each arc. A *CompactLattice* is an acceptor on
words whose weights are (graph cost, acoustic cost, transition-id string). Costs are negated
log-probabilities; a path's total is graph + acoustic, and the lattice semiring's "plus" keeps
the better path (Kaldi's LatticeWeight: ordered by the sum, then by the graph cost).

What the bindings lack and is written here (kaldifst 1.7.17 / kaldi-decoder 0.2.11 bind no
CompactLattice and no lattice determinization):

* :func:`determinize_lattice_pruned` -- DeterminizeLatticePruned (src/lat/determinize-lattice-
  pruned.cc) on the word labels, written here in Python (``impl="python"``, the reference) and
  compiled with numba in :mod:`nnetmix.decode.detlat` (the default; the same lattices): subset
  construction whose subsets carry residual weights and transition-id strings, word-epsilon
  closure keeping the best path into each state, output arcs carrying the common weight and the
  longest common string prefix, and pruning of subsets whose best path is more than ``beam``
  worse than the lattice's best; Kaldi's --max-mem, --max-states and --max-arcs and its
  effective-beam retries. The result has one path per word sequence within the beam, carrying
  that sequence's best alignment -- what Kaldi's decoders write after
  DeterminizeLatticePhonePruned, whose phone pass (:mod:`nnetmix.decode.phonedet`) changes how
  the lattice is reached, not those paths.
* lattice-scale, lattice-add-penalty and lattice-best-path on CompactLattices.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from nnetmix.errors import NnetmixError
from nnetmix.log import vlog

__all__ = ["RawLattice", "CompactLattice", "LatticeError", "determinize_lattice_pruned",
           "determinize_lattice_pruned_status", "pruned_with_retries",
           "determinize_compiled_arrays", "determinize_reference", "IMPLS",
           "prune_raw_lattice", "prune_compact_lattice", "best_path", "connect"]

INF = math.inf
_QUANT = 1024.0  # Kaldi's kDelta = 1/1024, used to decide that two subsets are the same


class LatticeError(NnetmixError):
    """A lattice that cannot be processed (cyclic where it must be acyclic, empty, ...)."""


# -- raw (state-level) lattice ------------------------------------------------------------------
@dataclass
class RawLattice:
    """A kaldifst.Lattice as arrays: arc i goes src[i] -> dst[i] with ilabel (transition-id),
    olabel (word), graph cost g and acoustic cost a; ``final_g/final_a`` are inf where not
    final."""

    num_states: int
    start: int
    src: np.ndarray
    dst: np.ndarray
    ilabel: np.ndarray
    olabel: np.ndarray
    g: np.ndarray
    a: np.ndarray
    final_g: np.ndarray
    final_a: np.ndarray

    @classmethod
    def from_kaldifst(cls, lat) -> "RawLattice":
        """Through ``to_str`` (one call into C++ instead of one per arc)."""
        n = lat.num_states
        start = lat.start if n else -1
        arcs, final_g, final_a = [], np.full(n, INF), np.full(n, INF)
        for line in lat.to_str(show_weight_one=True).splitlines():
            p = line.split()
            if len(p) == 5:
                w1, w2 = p[4].split(",")
                arcs.append((int(p[0]), int(p[1]), int(p[2]), int(p[3]), float(w1), float(w2)))
            elif len(p) == 2:
                w1, w2 = p[1].split(",")
                final_g[int(p[0])], final_a[int(p[0])] = float(w1), float(w2)
            elif p:
                raise LatticeError(f"unexpected line in a printed lattice: {line!r}")
        arr = np.array(arcs, dtype=np.float64).reshape(-1, 6)
        return cls(n, start, arr[:, 0].astype(np.int64), arr[:, 1].astype(np.int64),
                   arr[:, 2].astype(np.int64), arr[:, 3].astype(np.int64), arr[:, 4], arr[:, 5],
                   final_g, final_a)

    def topo_order(self) -> np.ndarray:
        """States in topological order (Kahn); raises LatticeError on a cycle."""
        n = self.num_states
        indeg = np.bincount(self.dst, minlength=n)
        out: list[list[int]] = [[] for _ in range(n)]
        for i, s in enumerate(self.src.tolist()):
            out[s].append(i)
        stack = [s for s in range(n) if indeg[s] == 0]
        order = []
        dst = self.dst.tolist()
        while stack:
            s = stack.pop()
            order.append(s)
            for i in out[s]:
                d = dst[i]
                indeg[d] -= 1
                if indeg[d] == 0:
                    stack.append(d)
        if len(order) != n:
            raise LatticeError("the raw lattice has a cycle (epsilon loop in the graph?)")
        return np.array(order, dtype=np.int64)

    def forward_backward(self, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Best (lowest) total cost from the start to each state, and from each state to the
        end (final weight included)."""
        n = self.num_states
        by_src: list[list[int]] = [[] for _ in range(n)]
        for i, s in enumerate(self.src.tolist()):
            by_src[s].append(i)
        cost = (self.g + self.a).tolist()
        dst = self.dst.tolist()
        alpha = [INF] * n
        if self.start >= 0:
            alpha[self.start] = 0.0
        for s in order.tolist():
            a0 = alpha[s]
            if a0 == INF:
                continue
            for i in by_src[s]:
                c = a0 + cost[i]
                if c < alpha[dst[i]]:
                    alpha[dst[i]] = c
        beta = (self.final_g + self.final_a).tolist()
        for s in order[::-1].tolist():
            b = beta[s]
            for i in by_src[s]:
                c = cost[i] + beta[dst[i]]
                if c < b:
                    b = c
            beta[s] = b
        return np.array(alpha), np.array(beta)


def prune_raw_lattice(lat: RawLattice, beam: float) -> tuple[RawLattice, np.ndarray, np.ndarray]:
    """Kaldi's PruneLattice: drop arcs and final weights not on a path within ``beam`` of the
    best. Returns the pruned lattice (same state numbering) with its forward/backward costs."""
    order = lat.topo_order()
    alpha, beta = lat.forward_backward(order)
    best = beta[lat.start] if lat.start >= 0 else INF
    if not np.isfinite(best):
        raise LatticeError("the lattice has no successful path")
    cutoff = best + beam
    keep = alpha[lat.src] + lat.g + lat.a + beta[lat.dst] <= cutoff
    fin = alpha + lat.final_g + lat.final_a <= cutoff
    pruned = RawLattice(lat.num_states, lat.start, lat.src[keep], lat.dst[keep],
                        lat.ilabel[keep], lat.olabel[keep], lat.g[keep], lat.a[keep],
                        np.where(fin, lat.final_g, INF), np.where(fin, lat.final_a, INF))
    return pruned, alpha, beta


# -- compact lattice -----------------------------------------------------------------------------
CArc = tuple  # (label, graph cost, acoustic cost, transition-id tuple, next state)


@dataclass
class CompactLattice:
    """Kaldi's CompactLattice: an acceptor on words with (graph, acoustic, tids) weights."""

    start: int = -1
    arcs: list = field(default_factory=list)     #: per state: list of CArc
    finals: list = field(default_factory=list)   #: per state: None or (g, a, tids)

    @property
    def num_states(self) -> int:
        return len(self.arcs)

    def add_state(self) -> int:
        self.arcs.append([])
        self.finals.append(None)
        return len(self.arcs) - 1

    def add_arc(self, s: int, label: int, g: float, a: float, tids: Sequence[int], nxt: int) -> None:
        self.arcs[s].append((int(label), float(g), float(a), tuple(int(t) for t in tids), int(nxt)))

    def set_final(self, s: int, g: float, a: float, tids: Sequence[int] = ()) -> None:
        self.finals[s] = (float(g), float(a), tuple(int(t) for t in tids))

    def num_arcs(self) -> int:
        return sum(len(a) for a in self.arcs)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, CompactLattice) and self.start == other.start
                and self.arcs == other.arcs and self.finals == other.finals)

    def approx_equal(self, other: "CompactLattice", tol: float = 1e-4) -> bool:
        if self.start != other.start or self.num_states != other.num_states:
            return False
        for s in range(self.num_states):
            if len(self.arcs[s]) != len(other.arcs[s]):
                return False
            for x, y in zip(self.arcs[s], other.arcs[s]):
                if (x[0], x[3], x[4]) != (y[0], y[3], y[4]) or abs(x[1] - y[1]) > tol \
                        or abs(x[2] - y[2]) > tol:
                    return False
            fx, fy = self.finals[s], other.finals[s]
            if (fx is None) != (fy is None):
                return False
            if fx is not None and (fx[2] != fy[2] or abs(fx[0] - fy[0]) > tol
                                   or abs(fx[1] - fy[1]) > tol):
                return False
        return True

    # -- transformations (in place) ----------------------------------------------------------
    def scale(self, lm_scale: float = 1.0, acoustic_scale: float = 1.0,
              acoustic2lm_scale: float = 0.0, lm2acoustic_scale: float = 0.0) -> "CompactLattice":
        """ScaleLattice with [[lm, ac2lm], [lm2ac, ac]] (lattice-scale). Kaldi maps infinite
        products with a zero scale to zero; so do we (0 * inf is taken as 0)."""
        def f(g: float, a: float) -> tuple[float, float]:
            def mul(x: float, y: float) -> float:
                return 0.0 if x == 0.0 else x * y
            return (mul(lm_scale, g) + mul(acoustic2lm_scale, a),
                    mul(lm2acoustic_scale, g) + mul(acoustic_scale, a))
        for s in range(self.num_states):
            self.arcs[s] = [(lab, *f(g, a), t, n) for lab, g, a, t, n in self.arcs[s]]
            if self.finals[s] is not None:
                g, a, t = self.finals[s]
                self.finals[s] = (*f(g, a), t)
        return self

    def add_word_ins_penalty(self, penalty: float) -> "CompactLattice":
        """AddWordInsPenToCompactLattice: graph cost += penalty on every arc with a word."""
        for s in range(self.num_states):
            self.arcs[s] = [(lab, g + penalty if lab != 0 else g, a, t, n)
                            for lab, g, a, t, n in self.arcs[s]]
        return self

    def topo_order(self) -> list[int]:
        n = self.num_states
        indeg = [0] * n
        for arcs in self.arcs:
            for arc in arcs:
                indeg[arc[4]] += 1
        stack = [s for s in range(n) if indeg[s] == 0]
        order = []
        while stack:
            s = stack.pop()
            order.append(s)
            for arc in self.arcs[s]:
                indeg[arc[4]] -= 1
                if indeg[arc[4]] == 0:
                    stack.append(arc[4])
        if len(order) != n:
            raise LatticeError("the compact lattice has a cycle")
        return order


def best_path(clat: CompactLattice, lm_scale: float = 1.0, acoustic_scale: float = 1.0,
              order: Optional[Sequence[int]] = None
              ) -> Optional[tuple[list[int], list[int], float, float]]:
    """The best path of an acyclic CompactLattice under lm_scale*g + acoustic_scale*a:
    (words, alignment, graph cost, acoustic cost) with UNSCALED costs, or None if it has no
    successful path (lattice-best-path's CompactLatticeShortestPath + GetLinearSymbolSequence).
    ``order``: the lattice's :meth:`~CompactLattice.topo_order`, when the caller searches the
    same topology under many weights (it decides which of equal-cost paths wins)."""
    if clat.start < 0 or clat.num_states == 0:
        return None
    if order is None:
        order = clat.topo_order()
    n = clat.num_states
    cost = [INF] * n
    back: list[Optional[tuple[int, int]]] = [None] * n
    cost[clat.start] = 0.0
    best_final, best_state = INF, -1
    for s in order:
        c = cost[s]
        if c == INF:
            continue
        fin = clat.finals[s]
        if fin is not None:
            fc = c + lm_scale * fin[0] + acoustic_scale * fin[1]
            if fc < best_final:
                best_final, best_state = fc, s
        for k, (lab, g, a, t, nxt) in enumerate(clat.arcs[s]):
            nc = c + lm_scale * g + acoustic_scale * a
            if nc < cost[nxt]:
                cost[nxt] = nc
                back[nxt] = (s, k)
    if best_state < 0:
        return None
    words: list[int] = []
    pieces: list[tuple] = []
    fin = clat.finals[best_state]
    tot_g, tot_a = fin[0], fin[1]
    pieces.append(fin[2])
    s = best_state
    while back[s] is not None:
        p, k = back[s]
        lab, g, a, t, _ = clat.arcs[p][k]
        tot_g += g
        tot_a += a
        pieces.append(t)
        if lab != 0:
            words.append(lab)
        s = p
    words.reverse()
    ali = [x for piece in reversed(pieces) for x in piece]
    return words, ali, tot_g, tot_a


# -- determinization ------------------------------------------------------------------------------
def _better(x: tuple, y: tuple) -> bool:
    """x = (g, a, tids) strictly better than y in Kaldi's lattice order (total cost, then graph
    cost, then the string, so ties are broken the same way every run)."""
    tx, ty = x[0] + x[1], y[0] + y[1]
    if tx != ty:
        return tx < ty
    if x[0] != y[0]:
        return x[0] < y[0]
    return x[2] < y[2]


_RETRY_CUTOFF = 0.5     # Kaldi's DeterminizeLatticePrunedOptions::retry_cutoff
_MAX_ITERS = 10         # DeterminizeLatticePruned's max_num_iters
IMPLS = ("compiled", "python")


def determinize_lattice_pruned(raw: RawLattice, beam: float, max_states: int = -1,
                               max_mem: int = 50_000_000, key: str = "",
                               impl: str = "compiled", max_arcs: int = -1) -> CompactLattice:
    """Word-level pruned determinization of a raw (acyclic) lattice into a CompactLattice
    (:func:`determinize_lattice_pruned_status` without the status)."""
    return determinize_lattice_pruned_status(raw, beam, max_states, max_mem, key, impl,
                                             max_arcs)[0]


def determinize_lattice_pruned_status(raw: RawLattice, beam: float, max_states: int = -1,
                                      max_mem: int = 50_000_000, key: str = "",
                                      impl: str = "compiled",
                                      max_arcs: int = -1) -> tuple[CompactLattice, bool]:
    """Word-level pruned determinization; returns (lattice, reached the requested beam).

    The costs keep the scale they have in ``raw`` (scaled acoustics when they come from a
    decoder); see the module docstring for the algorithm. ``impl`` is "compiled"
    (:mod:`nnetmix.decode.detlat`, numba) or "python" (the reference,
    :func:`determinize_reference`); both give the same lattice. ``max_mem`` (bytes, <= 0: no
    limit) is Kaldi's --max-mem, counted as Kaldi counts it: when determinization stops early on
    it and the effective beam is below half the beam, the raw lattice is pruned with a smaller
    beam and determinized again, with Kaldi's warning (DeterminizeLatticePruned's retry loop, at
    most 10 tries). ``max_states`` and ``max_arcs`` (<= 0: no limit) stop it as Kaldi's
    Determinize does: once there are more output states, or output arcs and final weights, than
    that, it stops and keeps what it has expanded (the best part: states are expanded best
    first), with no warning of its own; the status is False and, as for --max-mem, a small
    effective beam prunes and retries."""
    if impl not in IMPLS:
        raise LatticeError(f"determinization implementation {impl!r}: expected one of {IMPLS}")
    if raw.start < 0 or raw.num_states == 0:
        return CompactLattice(), True
    run = _determinize_compiled if impl == "compiled" else determinize_reference
    return pruned_with_retries(
        lambda b: run(raw, b, max_states, max_mem, max_arcs), beam, max_mem, max_states,
        max_arcs, key)


def pruned_with_retries(run, beam: float, max_mem: int, max_states: int = -1,
                        max_arcs: int = -1, key: str = "") -> tuple[object, bool]:
    """DeterminizeLatticePruned's loop around one determinizer: ``run(beam)`` gives (output,
    None) when it finished within ``beam``, or (partial output, info) when a budget stopped it,
    info being ("memory", effective beam, repo, arcs, elems, repo after rebuild) or ("limit",
    effective beam, states, arcs). Below half the beam the raw lattice is pruned with a smaller
    beam (the determinizer prunes its input with the beam it is given) and determinized again,
    at most 10 times. Returns (output, reached the requested beam)."""
    import logging
    log = logging.getLogger(__name__)
    b = float(beam)
    for it in range(_MAX_ITERS):
        out, info = run(b)
        if info is None:
            return out, True
        eff = info[1]
        if info[0] == "memory":
            _kind, eff, repo, arcs, elems, new_repo = info
            log.warning("Did not reach requested beam in determinize-lattice: size exceeds "
                        "maximum %d bytes; (repo,arcs,elems) = (%d,%d,%d), after rebuilding, "
                        "repo size was %d, effective beam was %g vs. requested beam %g%s",
                        max_mem, repo, arcs, elems, new_repo, eff, b,
                        f" (utterance {key})" if key else "")
        else:
            vlog(log, 1, "Lattice determinization terminated but not  because of "
                 "lattice-beam.  (#states, #arcs) is ( %d, %d ), versus limits ( %d, %d ) "
                 "(else, may be memory limit).", info[2], info[3], max_states, max_arcs)
        if eff >= b * _RETRY_CUTOFF or b == INF or it + 1 == _MAX_ITERS:
            return out, False
        new_beam = max(b * math.sqrt(max(eff, 0.0) / b), 0.5 * b)
        log.warning("Effective beam %g was less than beam %g * cutoff %g, pruning raw lattice "
                    "with new beam %g and retrying.", max(eff, 0.0), b, _RETRY_CUTOFF, new_beam)
        b = new_beam
    raise AssertionError("unreachable")


_REPO_BYTES, _ARC_BYTES, _ELEM_BYTES = 32, 32, 24   # as nnetmix.decode.detlat counts


def determinize_compiled_arrays(raw: RawLattice, beam: float, max_states: int, max_mem: int,
                                max_arcs: int):
    """:func:`nnetmix.decode.detlat.determinize_arrays` on ``raw``: (its arrays, status info
    as :func:`pruned_with_retries` takes it, or None); LatticeError on a cycle or no path."""
    from nnetmix.decode import detlat  # optional: numba loads only when determinizing
    f64 = np.float64
    status, arcs, w, fstr, fw, start, tpar, tlab, info = detlat.determinize_arrays(
        int(raw.num_states), int(raw.start), np.asarray(raw.src, np.int64),
        np.asarray(raw.dst, np.int64), np.asarray(raw.ilabel, np.int64),
        np.asarray(raw.olabel, np.int64), np.asarray(raw.g, f64), np.asarray(raw.a, f64),
        np.asarray(raw.g + raw.a, f64), np.asarray(raw.final_g + raw.final_a, f64),
        np.asarray(raw.final_g, f64), np.asarray(raw.final_a, f64), float(beam),
        int(max_states), int(max_mem), int(max_arcs))
    if status == detlat.STATUS_CYCLE:
        raise LatticeError("the raw lattice has a cycle (epsilon loop in the graph?)")
    if status == detlat.STATUS_NO_PATH:
        raise LatticeError("the lattice has no successful path")
    out = None
    if status == detlat.STATUS_MEMORY:
        eff, repo, arcb, elemb, new_repo = info.tolist()
        out = ("memory", eff, int(repo), int(arcb), int(elemb), int(new_repo))
    elif status == detlat.STATUS_MAX_STATES:
        out = ("limit", float(info[0]), len(fstr), len(arcs) + int((fstr >= 0).sum()))
    return (arcs, w, fstr, fw, start, tpar, tlab), out


def _determinize_compiled(raw: RawLattice, beam: float, max_states: int, max_mem: int,
                          max_arcs: int):
    """The numba determinizer on ``raw``: (lattice, None) or, stopped by a budget, (partial
    lattice, info as :func:`pruned_with_retries` takes it)."""
    from nnetmix.decode import detlat  # optional: numba loads only when determinizing
    (arcs, w, fstr, fw, start, tpar, tlab), info = determinize_compiled_arrays(
        raw, beam, max_states, max_mem, max_arcs)
    # trimmed and pruned on arrays first (prune_compact_lattice(_connect_and_sort(...)) on the
    # same floats), so that tuples are made once, for the kept arcs only
    start, arcs, w, fstr, fw = detlat.connect_prune(len(fstr), start, arcs, w, fstr, fw,
                                                    float(beam))
    return compact_from_arrays(start, arcs, w, fstr, fw, tpar, tlab), info


def compact_from_arrays(start: int, arcs: np.ndarray, w: np.ndarray, fstr: np.ndarray,
                        fw: np.ndarray, tpar: np.ndarray, tlab: np.ndarray) -> CompactLattice:
    """The CompactLattice of :func:`nnetmix.decode.detlat.determinize_arrays`' (or
    ``connect_prune``'s) arrays: arcs (source, word, string node, next) with weights w (g, a) in
    the order of their source states' arcs, final string nodes (-1: not final) and weights;
    strings are the trie's (tpar, tlab) nodes. Empty when start < 0."""
    from nnetmix.decode import detlat  # optional: numba loads only when determinizing
    if start < 0:
        return CompactLattice()
    flat, offs = detlat.strings_to_flat(np.concatenate([arcs[:, 2], fstr]), tpar, tlab)
    flat, offs = flat.tolist(), offs.tolist()
    strs = [tuple(flat[offs[j]:offs[j + 1]]) for j in range(len(offs) - 1)]
    n = len(fstr)
    out = CompactLattice(int(start), [[] for _ in range(n)], [None] * n)
    for j, ((s, lab, _sid, nxt), (g, a)) in enumerate(zip(arcs.tolist(), w.tolist())):
        out.arcs[s].append((lab, g, a, strs[j], nxt))
    k = len(arcs)
    for s, (fs, (g, a)) in enumerate(zip(fstr.tolist(), fw.tolist())):
        if fs >= 0:
            out.finals[s] = (g, a, strs[k + s])
    return out


def determinize_reference(raw: RawLattice, beam: float, max_states: int, max_mem: int,
                          max_arcs: int):
    """The reference (Python) determinizer; returns what :func:`_determinize_compiled` does.

    The memory count mirrors Kaldi's: ``repo`` is the set of (non-empty) transition-id strings
    kept so far in subsets and on output arcs, with all their prefixes (the trie entries of
    Kaldi's LatticeStringRepository; the strings of a closure's paths live only during the
    closure), rebuilt to those still needed when the total passes ``max_mem``."""
    lat, _alpha, beta_arr = prune_raw_lattice(raw, beam)
    order = lat.topo_order()
    n = lat.num_states
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    rank_l = rank.tolist()
    beta = beta_arr.tolist()
    best_total = beta[lat.start]
    cutoff = best_total + beam
    eps_out: list[list[tuple]] = [[] for _ in range(n)]
    word_out: list[list[tuple]] = [[] for _ in range(n)]
    for s, d, il, ol, g, a in zip(lat.src.tolist(), lat.dst.tolist(), lat.ilabel.tolist(),
                                  lat.olabel.tolist(), lat.g.tolist(), lat.a.tolist()):
        (word_out if ol != 0 else eps_out)[s].append((il, ol, g, a, d))
    fin_g, fin_a = lat.final_g.tolist(), lat.final_a.tolist()

    repo: set = set()
    counts = [0, 0]     # output arcs (with final weights), subset elements

    def keep_strings(strings: list) -> None:
        repo.update(t[:j] for t in strings for j in range(1, len(t) + 1))

    def closure(elems: dict[int, tuple], base: float) -> dict[int, tuple]:
        """Follow word-epsilon arcs in topological order, keeping the best path per state and
        dropping paths that cannot finish within the beam (``base`` is the forward cost the
        elements' weights are relative to); then keep only states with a word arc out or a
        final weight (Kaldi's minimal subset)."""
        heap = [(rank_l[s], s) for s in elems]
        heapq.heapify(heap)
        done = set()
        limit = cutoff - base + 1e-6 * abs(cutoff)
        while heap:
            _, s = heapq.heappop(heap)
            if s in done:
                continue
            done.add(s)
            g0, a0, t0 = elems[s]
            for il, _ol, g, a, d in eps_out[s]:
                if g0 + g + a0 + a + beta[d] > limit:
                    continue
                cand = (g0 + g, a0 + a, t0 + (il,) if il else t0)
                old = elems.get(d)
                if old is None or _better(cand, old):
                    elems[d] = cand
                    heapq.heappush(heap, (rank_l[d], d))
        return {s: e for s, e in elems.items() if word_out[s] or fin_g[s] != INF}

    def normalize(elems: dict[int, tuple]) -> tuple[tuple, dict[int, tuple]]:
        best = None
        for e in elems.values():
            if best is None or _better(e, best):
                best = e
        strings = [e[2] for e in elems.values()]
        k = 0
        shortest = min(len(t) for t in strings)
        while k < shortest and all(t[k] == strings[0][k] for t in strings):
            k += 1
        cg, ca = best[0], best[1]
        prefix = strings[0][:k]
        keep_strings([prefix] + [t[k:] for t in strings])
        return (cg, ca, prefix), {s: (g - cg, a - ca, t[k:]) for s, (g, a, t) in elems.items()}

    def key(elems: dict[int, tuple]) -> tuple:
        return tuple(sorted((s, round(g * _QUANT), round(a * _QUANT), t)
                            for s, (g, a, t) in elems.items()))

    def future(elems: dict[int, tuple]) -> float:
        return min(g + a + beta[s] for s, (g, a, t) in elems.items())

    out = CompactLattice()
    start_elems = closure({lat.start: (0.0, 0.0, ())}, 0.0)
    keep_strings([t for _g, _a, t in start_elems.values()])
    ids: dict[tuple, int] = {}
    subsets: list[dict[int, tuple]] = []
    fwd: list[float] = []

    def state_for(elems: dict[int, tuple], f: float) -> int:
        k = key(elems)
        sid = ids.get(k)
        if sid is None:
            sid = out.add_state()
            ids[k] = sid
            subsets.append(elems)
            counts[1] += len(elems)
            fwd.append(f)
            heapq.heappush(queue, (f + future(elems), sid))
        elif f < fwd[sid]:
            fwd[sid] = f
            if not (sid < len(expanded) and expanded[sid]):
                # a better path into a state not expanded yet: queue it again at its new
                # priority (the old entry is skipped), so that it is expanded from its best
                # forward cost and its successors are pruned against that, as Kaldi's queue
                # of transitions ensures
                heapq.heappush(queue, (f + future(subsets[sid]), sid))
        return sid

    queue: list[tuple[float, int]] = []
    out.start = state_for(start_elems, 0.0)
    expanded = [False]
    while queue:
        if (max_states > 0 and out.num_states > max_states) or (max_arcs > 0
                                                                and counts[0] > max_arcs):
            info = ("limit", queue[0][0] - best_total, out.num_states, counts[0])
            return prune_compact_lattice(_connect_and_sort(out), beam), info
        if max_mem > 0 and out.num_states % 10 == 0:
            total = len(repo) * _REPO_BYTES + counts[0] * _ARC_BYTES + counts[1] * _ELEM_BYTES
            if total > max_mem:
                before = len(repo)
                needed = [t for e in subsets for _g, _a, t in e.values()]
                needed += [arc[3] for arcs in out.arcs for arc in arcs]
                needed += [f[2] for f in out.finals if f is not None]
                repo = {t[:j] for t in needed for j in range(1, len(t) + 1)}
                new_total = len(repo) * _REPO_BYTES + counts[0] * _ARC_BYTES \
                    + counts[1] * _ELEM_BYTES
                if new_total > int(max_mem * 0.8):
                    info = ("memory", queue[0][0] - best_total, before * _REPO_BYTES,
                            counts[0] * _ARC_BYTES, counts[1] * _ELEM_BYTES,
                            len(repo) * _REPO_BYTES)
                    return prune_compact_lattice(_connect_and_sort(out), beam), info
        prio, sid = heapq.heappop(queue)
        if sid < len(expanded) and expanded[sid]:
            continue
        while len(expanded) <= sid:
            expanded.append(False)
        expanded[sid] = True
        if fwd[sid] + future(subsets[sid]) > cutoff + 1e-6 * abs(cutoff):
            continue
        elems = subsets[sid]
        best_fin = None
        by_word: dict[int, dict[int, tuple]] = {}
        for s in sorted(elems):
            g0, a0, t0 = elems[s]
            if fin_g[s] != INF:
                cand = (g0 + fin_g[s], a0 + fin_a[s], t0)
                if best_fin is None or _better(cand, best_fin):
                    best_fin = cand
            for il, ol, g, a, d in word_out[s]:
                if fwd[sid] + g0 + g + a0 + a + beta[d] > cutoff + 1e-6 * abs(cutoff):
                    continue
                cand = (g0 + g, a0 + a, t0 + (il,) if il else t0)
                group = by_word.setdefault(ol, {})
                old = group.get(d)
                if old is None or _better(cand, old):
                    group[d] = cand
        if best_fin is not None:
            out.set_final(sid, *best_fin)
            counts[0] += 1
        for word in sorted(by_word):
            new = closure(by_word[word], fwd[sid])
            if not new:
                continue
            (cg, ca, prefix), norm = normalize(new)
            f = fwd[sid] + cg + ca
            if f + future(norm) > cutoff + 1e-6 * abs(cutoff):
                continue
            nxt = state_for(norm, f)
            out.add_arc(sid, word, cg, ca, prefix, nxt)
            counts[0] += 1
    return prune_compact_lattice(_connect_and_sort(out), beam), None


def prune_compact_lattice(clat: CompactLattice, beam: float) -> CompactLattice:
    """PruneLattice on a CompactLattice: drop arcs and final weights whose best path is more
    than ``beam`` worse than the best path (cost = graph + acoustic as stored), then trim."""
    if clat.start < 0 or clat.num_states == 0:
        return clat
    order = clat.topo_order()
    n = clat.num_states
    alpha, beta = [INF] * n, [INF] * n
    alpha[clat.start] = 0.0
    for s in order:
        if alpha[s] == INF:
            continue
        for _lab, g, a, _t, nxt in clat.arcs[s]:
            alpha[nxt] = min(alpha[nxt], alpha[s] + g + a)
    for s in reversed(order):
        fin = clat.finals[s]
        b = fin[0] + fin[1] if fin is not None else INF
        for _lab, g, a, _t, nxt in clat.arcs[s]:
            b = min(b, g + a + beta[nxt])
        beta[s] = b
    cutoff = beta[clat.start] + beam
    cutoff += 1e-6 * abs(cutoff)
    for s in range(n):
        clat.arcs[s] = [arc for arc in clat.arcs[s]
                        if alpha[s] + arc[1] + arc[2] + beta[arc[4]] <= cutoff]
        fin = clat.finals[s]
        if fin is not None and alpha[s] + fin[0] + fin[1] > cutoff:
            clat.finals[s] = None
    return _connect_and_sort(clat)


def connect(clat: CompactLattice) -> CompactLattice:
    """OpenFst's Connect on a CompactLattice: only the states on a successful path are kept
    (renumbered in topological order, as every CompactLattice here is)."""
    return _connect_and_sort(clat)


def _connect_and_sort(clat: CompactLattice) -> CompactLattice:
    """Trim states not on a successful path and renumber in topological order."""
    n = clat.num_states
    if n == 0 or clat.start < 0:
        return CompactLattice()
    coacc = [clat.finals[s] is not None for s in range(n)]
    order = clat.topo_order()
    for s in reversed(order):
        if not coacc[s] and any(coacc[a[4]] for a in clat.arcs[s]):
            coacc[s] = True
    acc = [False] * n
    acc[clat.start] = True
    for s in order:
        if acc[s]:
            for a in clat.arcs[s]:
                acc[a[4]] = True
    keep = [s for s in order if acc[s] and coacc[s]]
    if clat.start not in keep:
        return CompactLattice()
    new_id = {s: i for i, s in enumerate(keep)}
    out = CompactLattice()
    for s in keep:
        out.add_state()
    out.start = new_id[clat.start]
    for s in keep:
        i = new_id[s]
        out.arcs[i] = [(lab, g, a, t, new_id[nx]) for lab, g, a, t, nx in clat.arcs[s]
                       if nx in new_id]
        out.finals[i] = clat.finals[s]
    return out
