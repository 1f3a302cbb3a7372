"""Pushing and minimizing a determinized CompactLattice: what Kaldi's --minimize does after
determinization (PushCompactLatticeStrings, PushCompactLatticeWeights, MinimizeCompactLattice;
src/lat/push-lattice.cc, src/lat/minimize-lattice.cc).

Why: a determinized lattice is deterministic on words but not minimal; states whose futures
are the same (same words, weights and transition-id strings to the end) can be merged. Two
states' futures can only compare equal once the strings and weights sit in the same place on
both, hence the pushes first: transition-ids are moved as far towards the start as they go, and
weights so that the best way out of every state but the start costs nothing. The paths (words,
alignment, total cost) do not change.

All three work on an acyclic lattice in topological order (every CompactLattice here is, start
state 0).
"""
from __future__ import annotations

import math

from nnetmix.decode.lattice import CompactLattice, connect

__all__ = ["push_strings", "push_weights", "minimize", "push_and_minimize"]

_DELTA = 1.0 / 1024     # Kaldi's kDelta


def _string(clat: CompactLattice, s: int, arc: int, n: int) -> tuple:
    """GetString: the first ``n`` transition-ids from state ``s`` taking arc ``arc`` (-1: any
    way on, the final weight's string when there is one, else the first arc)."""
    out: tuple = ()
    while len(out) < n:
        fin = clat.finals[s]
        if arc == -1 and fin is not None:
            return out + fin[2][:n - len(out)]
        a = clat.arcs[s][max(arc, 0)]
        out += a[3][:n - len(out)]
        s, arc = a[4], -1
    return out


def push_strings(clat: CompactLattice) -> CompactLattice:
    """PushCompactLatticeStrings: every state but the start gives up the longest string that
    all its ways out (arcs and final weight, followed to the end) begin with; the arcs into it
    take it on. In place; returns ``clat``."""
    n = clat.num_states
    shift = [0] * n
    for s in range(n - 1, clat.start, -1):
        fin, arcs = clat.finals[s], clat.arcs[s]
        if not arcs:
            shift[s] = len(fin[2]) if fin is not None else 0
            continue
        k = min([shift[a[4]] + len(a[3]) for a in arcs]
                + ([len(fin[2])] if fin is not None else []))
        if len(arcs) + (fin is not None) > 1 and k > 0:
            first = fin[2][:k] if fin is not None else _string(clat, s, 0, k)
            for j in range(0 if fin is not None else 1, len(arcs)):
                other = _string(clat, s, j, k)
                m = 0
                while m < k and first[m] == other[m]:
                    m += 1
                k, first = m, first[:m]
        shift[s] = k
    new_arcs = []
    for s in range(n):
        row = []
        for lab, g, a, t, nxt in clat.arcs[s]:
            full = t + _string(clat, nxt, -1, shift[nxt])
            row.append((lab, g, a, full[shift[s]:], nxt))
        new_arcs.append(row)
    for s in range(n):
        clat.arcs[s] = new_arcs[s]
        fin = clat.finals[s]
        if fin is not None:
            clat.finals[s] = (fin[0], fin[1], fin[2][shift[s]:])
    return clat


def _plus(x: tuple, y: tuple) -> tuple:
    """LatticeWeight's Plus: the lower total cost, then the lower graph cost, then x."""
    tx, ty = x[0] + x[1], y[0] + y[1]
    if tx != ty:
        return x if tx < ty else y
    return x if x[0] <= y[0] else y


def push_weights(clat: CompactLattice) -> CompactLattice:
    """PushCompactLatticeWeights: each state's best weight to the end (graph and acoustic
    parts as one LatticeWeight) is moved onto the arcs into it, so that the best way out of
    every state but the start costs (0, 0); what is left stays on the start state's arcs. In
    place; returns ``clat``."""
    n = clat.num_states
    if n == 0:
        return clat
    inf = (math.inf, math.inf)
    to_end = [inf] * n
    for s in range(n - 1, -1, -1):
        fin = clat.finals[s]
        w = (fin[0], fin[1]) if fin is not None else inf
        for _lab, g, a, _t, nxt in clat.arcs[s]:
            w = _plus(w, (g + to_end[nxt][0], a + to_end[nxt][1]))
        to_end[s] = w
    to_end[0] = (0.0, 0.0)
    for s in range(n):
        ws = to_end[s]
        if ws == inf:
            continue
        row = []
        for lab, g, a, t, nxt in clat.arcs[s]:
            wn = to_end[nxt]
            if wn != inf:
                g, a = g + (wn[0] - ws[0]), a + (wn[1] - ws[1])
            row.append((lab, g, a, t, nxt))
        clat.arcs[s] = row
        fin = clat.finals[s]
        if fin is not None:
            clat.finals[s] = (fin[0] - ws[0], fin[1] - ws[1], fin[2])
    return clat


def _close(x: tuple, y: tuple, delta: float) -> bool:
    return abs(x[0] - y[0]) <= delta and abs(x[1] - y[1]) <= delta


def minimize(clat: CompactLattice, delta: float = _DELTA) -> CompactLattice:
    """MinimizeCompactLattice: from the end, a state is merged into a later one with the same
    final weight and the same arcs (label, string, weights within ``delta``, next state after
    merging); then Connect. Returns the new lattice."""
    n = clat.num_states
    if n == 0:
        return clat
    rep = list(range(n))
    groups: dict = {}
    for s in range(n - 1, -1, -1):
        fin = clat.finals[s]
        arcs = sorted((lab, rep[nxt], t, g, a) for lab, g, a, t, nxt in clat.arcs[s])
        key = (fin[2] if fin is not None else None, tuple((x[0], x[1], x[2]) for x in arcs))
        for t in groups.get(key, []):
            ft = clat.finals[t]
            if (fin is None) != (ft is None) or (fin is not None and not _close(fin, ft, delta)):
                continue
            other = sorted((lab, rep[nxt], tt, g, a) for lab, g, a, tt, nxt in clat.arcs[t])
            if all(_close(x[3:], y[3:], delta) for x, y in zip(arcs, other)):
                rep[s] = t
                break
        else:
            groups.setdefault(key, []).insert(0, s)    # candidates in increasing order
    out = CompactLattice(rep[clat.start], [[] for _ in range(n)], [None] * n)
    for s in range(n):
        if rep[s] == s:
            out.arcs[s] = [(lab, g, a, t, rep[nxt]) for lab, g, a, t, nxt in clat.arcs[s]]
            out.finals[s] = clat.finals[s]
    return connect(out)


def push_and_minimize(clat: CompactLattice, delta: float = _DELTA) -> CompactLattice:
    """--minimize: push_strings, push_weights, minimize (on a copy)."""
    copy = CompactLattice(clat.start, [list(a) for a in clat.arcs], list(clat.finals))
    return minimize(push_weights(push_strings(copy)), delta)
