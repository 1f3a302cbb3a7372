"""Pruned lattice determinization compiled with numba: the same algorithm, step for step and
float operation for float operation, as the Python reference in
:func:`nnetmix.decode.lattice.determinize_lattice_pruned` (``impl="python"``), so that both give
the same CompactLattice.

Why a second copy: the Python version spends its time in per-arc dictionaries and tuples (on
harbour's tri1 lattices it took longer than the search that made them; bench/determinize_speed.py).
Here everything is arrays:

* transition-id strings are interned in a trie (Kaldi's LatticeStringRepository): a string is a
  node id, its parent the string without its last element, so two strings are equal exactly when
  their ids are, appending a label looks through the node's few children (the root's are indexed
  by label), and the longest common prefix of a subset's strings is the lowest common ancestor
  of their nodes;
* a subset (determinized state) is stored sorted by raw state with quantized weights (Kaldi's
  delta, 1/1024) and string ids, hashed, and compared element by element on a hash hit;
* the word-epsilon closure runs on scratch arrays indexed by raw state, stamped per call; a
  state's string there is its predecessor's plus the arc's label (pointers, no interning), and
  only the states kept in the subset get theirs written out, split into the common prefix (the
  output arc's) and the residuals, which are interned.

Hot loops hold no numba lists, heapq or typed-dict operations per element and call no helper
per label or per state: numba takes an atomic reference-count increment and decrement
(NRT_incref / NRT_decref) per list method call and per heap push or pop, and a helper whose
array arguments live past one of its loops keeps a pair per such array per call, which its
pruning pass does not remove and LLVM cannot (perf put a quarter of the time on harbour's
monophone lattices there). So the tables are growable arrays with counts, the closure's heap is
an int64 array, and strings are written and interned by one call per closure
(:func:`_write_paths`, :func:`_intern_strings`). Inspect a change with ``NUMBA_DEBUGINFO=1`` and
``inspect_llvm()``: the calls to NRT_incref in a function's body should be outside its loops.

Memory is counted as Kaldi's CheckMemoryUsage counts it (repository entries, output arcs and
subset elements at 32, 32 and 24 bytes; checked every time the number of output states is a
multiple of 10): past ``max_mem`` the repository is rebuilt to the strings still needed, and if
that does not bring the total under 80% of ``max_mem`` determinization stops and reports the
effective beam (the priority of the next state minus the best cost), from which the caller
prunes and retries as Kaldi's DeterminizeLatticePruned does.
"""
from __future__ import annotations

import heapq

import numpy as np
from numba import njit, types
from numba.typed import Dict

__all__ = ["determinize_arrays", "connect_prune", "strings_to_flat", "output_lattice", "STATUS_OK",
           "STATUS_MEMORY", "STATUS_MAX_STATES", "STATUS_CYCLE", "STATUS_NO_PATH", "REPO_ENTRY_BYTES",
           "ARC_BYTES", "ELEM_BYTES"]

_JIT = dict(cache=True, nogil=True)   # no fastmath: the reference's float operations, in order
_QUANT = 1024.0
REPO_ENTRY_BYTES, ARC_BYTES, ELEM_BYTES = 32, 32, 24   # Kaldi's sizeof(Entry) * 2, TempArc, Element
STATUS_OK, STATUS_MEMORY, STATUS_MAX_STATES, STATUS_CYCLE, STATUS_NO_PATH = 0, 1, 2, 3, 4
# columns of determinize_arrays' tables: subset elements (el_i, el_f), output states (sub_i,
# sub_f), output arcs (arc_i; arc_w is g, a)
_E_STATE, _E_STR = 0, 1
_E_G, _E_A, _E_QG, _E_QA = 0, 1, 2, 3
_S_START, _S_LEN, _S_CHAIN, _S_FIN, _S_DONE = 0, 1, 2, 3, 4
_S_FWD, _S_FG, _S_FA = 0, 1, 2
_O_SRC, _O_WORD, _O_STR, _O_NEXT = 0, 1, 2, 3


# -- string repository (trie) -------------------------------------------------------------------
# tr[node] = parent, last label, length, first child, next sibling; node 0 is the empty string,
# whose children are looked up by label in ``root`` (a node has few children, the root many)
_PAR, _LAB, _DEP, _CHILD, _SIB = 0, 1, 2, 3, 4


@njit(**_JIT)
def _intern_strings(lb, starts, ends, cnt, tr, alive, root, meta, out):
    """out[x] = the node of string lb[starts[x]:ends[x]] for x < cnt, interned from the root in
    that order; the caller grows the trie first so that it has room for every label. A node
    created, or revived after a rebuild dropped it, counts in meta[1] (the repository size, as
    the reference's set of strings counts it); meta[0] is the number of nodes. One call per
    closure, the per-label step written out in the loop: a helper per label cost a
    reference-count pair per array per label (see the module docstring)."""
    for x in range(cnt):
        node = np.int64(0)
        for i in range(starts[x], ends[x]):
            label = lb[i]
            if node == 0:
                c = root[label]
            else:
                c = tr[node, _CHILD]
                while c >= 0 and tr[c, _LAB] != label:
                    c = tr[c, _SIB]
            if c >= 0:
                if not alive[c]:
                    alive[c] = True
                    meta[1] += 1
            else:
                c = meta[0]
                tr[c, _PAR] = node
                tr[c, _LAB] = label
                tr[c, _DEP] = tr[node, _DEP] + 1
                tr[c, _CHILD] = -1
                if node == 0:
                    tr[c, _SIB] = -1
                    root[label] = c
                else:
                    tr[c, _SIB] = tr[node, _CHILD]
                    tr[node, _CHILD] = c
                alive[c] = True
                meta[0] += 1
                meta[1] += 1
            node = c
        out[x] = node


@njit(**_JIT)
def _grow_trie(tr, alive):
    t2 = np.empty((tr.shape[0] * 2, tr.shape[1]), np.int64)
    t2[:tr.shape[0]] = tr
    a2 = np.zeros(tr.shape[0] * 2, np.bool_)
    a2[:tr.shape[0]] = alive
    return t2, a2


@njit(**_JIT)
def _labels(x, extra, tr):
    """The string of node x, followed by ``extra`` unless it is 0 (an epsilon input)."""
    n = tr[x, _DEP]
    out = np.empty(n + (1 if extra != 0 else 0), np.int64)
    if extra != 0:
        out[n] = extra
    for i in range(n - 1, -1, -1):
        out[i] = tr[x, _LAB]
        x = tr[x, _PAR]
    return out


@njit(**_JIT)
def _str_less(x, lx, y, ly, tr):
    """Python's tuple order on the strings node x (+ lx) and node y (+ ly)."""
    if x == y and lx == ly:
        return False
    bx = _labels(x, lx, tr)
    by = _labels(y, ly, tr)
    for i in range(min(bx.shape[0], by.shape[0])):
        if bx[i] != by[i]:
            return bx[i] < by[i]
    return bx.shape[0] < by.shape[0]


@njit(**_JIT)
def _better(g1, a1, s1, l1, g2, a2, s2, l2, tr):
    """The reference's _better: total cost, then graph cost, then the string."""
    t1 = g1 + a1
    t2 = g2 + a2
    if t1 != t2:
        return t1 < t2
    if g1 != g2:
        return g1 < g2
    return _str_less(s1, l1, s2, l2, tr)


@njit(**_JIT)
def _path_len(x, w_pred, w_il, w_base, tr):
    """Length of the string of closure state x (see determinize_arrays)."""
    n = 0
    while w_pred[x] >= 0:
        if w_il[x] != 0:
            n += 1
        x = w_pred[x]
    return n + (1 if w_il[x] != 0 else 0) + tr[w_base[x], _DEP]


@njit(**_JIT)
def _write_paths(nl, cnt, lo, w_pred, w_il, w_base, tr, lb):
    """Write the string of closure state nl[x] into lb[lo[x]:lo[x + 1]] for x < cnt: one call
    per closure, not one per state (see _intern_strings)."""
    for q in range(cnt):
        x = nl[q]
        b = lo[q]
        p = lo[q + 1] - 1
        while w_pred[x] >= 0:
            if w_il[x] != 0:
                lb[p] = w_il[x]
                p -= 1
            x = w_pred[x]
        if w_il[x] != 0:
            lb[p] = w_il[x]
            p -= 1
        s = w_base[x]
        while p >= b:
            lb[p] = tr[s, _LAB]
            s = tr[s, _PAR]
            p -= 1


@njit(**_JIT)
def _seq_less(lb, b1, e1, b2, e2):
    """Python's tuple order on lb[b1:e1] and lb[b2:e2]."""
    for i in range(min(e1 - b1, e2 - b2)):
        if lb[b1 + i] != lb[b2 + i]:
            return lb[b1 + i] < lb[b2 + i]
    return e1 - b1 < e2 - b2


@njit(**_JIT)
def _path_less(s, il, d, w_pred, w_il, w_base, tr):
    """String of closure state s plus label il (0: none) before the string of state d?"""
    n1 = _path_len(s, w_pred, w_il, w_base, tr) + (1 if il != 0 else 0)
    n2 = _path_len(d, w_pred, w_il, w_base, tr)
    lb = np.empty(n1 + n2, np.int64)
    k1 = n1 - 1 if il != 0 else n1
    if il != 0:
        lb[n1 - 1] = il
    # s's string into lb[0:k1], d's into lb[n1:n1 + n2] (exact ties only: not a hot path)
    nl = np.array([s, d])
    _write_paths(nl[:1], 1, np.array([0, k1]), w_pred, w_il, w_base, tr, lb)
    _write_paths(nl[1:], 1, np.array([n1, n1 + n2]), w_pred, w_il, w_base, tr, lb)
    return _seq_less(lb, 0, n1, n1, n1 + n2)


@njit(**_JIT)
def _mark_needed(x, tr, alive):
    """Revive x and its prefixes after a rebuild; returns how many were revived."""
    c = 0
    while x != 0 and not alive[x]:
        alive[x] = True
        c += 1
        x = tr[x, _PAR]
    return c


# -- growable arrays and a heap of int64 (numba's lists and heapq took an atomic reference-count
# increment and decrement per append, push and pop: see the module docstring) -----------------
@njit(**_JIT)
def _grown(x, need):
    """x (rows along the first axis) copied into an array of at least ``need`` rows."""
    shape = (max(need, 2 * x.shape[0]),) + x.shape[1:]
    y = np.empty(shape, x.dtype)
    y[:x.shape[0]] = x
    return y


@njit(**_JIT)
def _heap_push(hp, k, v):
    """Push v on the binary min-heap hp[:k]; returns k + 1 (hp has room)."""
    i = k
    while i > 0:
        p = (i - 1) >> 1
        if hp[p] <= v:
            break
        hp[i] = hp[p]
        i = p
    hp[i] = v
    return k + 1


@njit(**_JIT)
def _heap_pop(hp, k):
    """Remove the minimum hp[0] of the heap hp[:k]; returns k - 1."""
    k -= 1
    v = hp[k]
    i = 0
    c = 1
    while c < k:
        if c + 1 < k and hp[c + 1] < hp[c]:
            c += 1
        if v <= hp[c]:
            break
        hp[i] = hp[c]
        i = c
        c = 2 * i + 1
    hp[i] = v       # k == 0: hp[0] = hp[0]
    return k


# -- the raw lattice: topological order, forward/backward costs ---------------------------------
@njit(**_JIT)
def _kahn(n, csr, by, dst, arc_ok):
    """(order, m): the first m entries of order are the states reachable in a topological order
    over the arcs with arc_ok (m < n: a cycle, or states only a cycle reaches), as the reference's
    RawLattice.topo_order and lattice.py's topo_order number them: Kahn's algorithm with a stack,
    the arcs of state s in order (by[csr[s]:csr[s + 1]])."""
    indeg = np.zeros(n, np.int64)
    for j in range(csr[n]):
        i = by[j]
        if arc_ok[i]:
            indeg[dst[i]] += 1
    stack = np.empty(n, np.int64)
    top = 0
    for s in range(n):
        if indeg[s] == 0:
            stack[top] = s
            top += 1
    order = np.empty(n, np.int64)
    m = 0
    while top > 0:
        top -= 1
        s = stack[top]
        order[m] = s
        m += 1
        for j in range(csr[s], csr[s + 1]):
            i = by[j]
            if arc_ok[i]:
                d = dst[i]
                indeg[d] -= 1
                if indeg[d] == 0:
                    stack[top] = d
                    top += 1
    return order, m


@njit(**_JIT)
def _by_source(n, src):
    """(csr, by): the arcs' indices grouped by source state, in order within a state."""
    k = src.shape[0]
    by = np.argsort(src, kind="mergesort")
    csr = np.zeros(n + 1, np.int64)
    for i in range(k):
        csr[src[i] + 1] += 1
    for s in range(n):
        csr[s + 1] += csr[s]
    return csr, by


@njit(**_JIT)
def _topo(n, src, dst, keep):
    """The reference's RawLattice.topo_order on the arcs with keep[i]; returns (order, ok)."""
    csr, by = _by_source(n, src)
    order, m = _kahn(n, csr, by, dst, keep)
    return order, m == n


# -- the determinizer ------------------------------------------------------------------------------
@njit(**_JIT)
def determinize_arrays(n, start, src, dst, ilabel, olabel, g, a, cost, final_cost, final_g,
                       final_a, beam, max_states, max_mem, max_arcs):
    """Pruned determinization of a raw lattice given as arrays (g, a, final_g, final_a as
    float64; ``cost`` and ``final_cost`` the per-arc and final g + a summed in the lattice's own
    dtype, as the reference sums them).

    Returns (status, out_arcs (k x 4 int64: source, word, string node, next),
    out_arc_w (k x 2: g, a), final_str (per output state, -1 where not final), final_w
    (per output state: g, a), start_state, trie parents, trie labels, info) with info =
    (effective beam, repository bytes, arc bytes, element bytes, repository bytes after the
    rebuild) when status is STATUS_MEMORY, and info[0] the effective beam when it is
    STATUS_MAX_STATES (more than ``max_states`` output states or ``max_arcs`` output arcs and
    final weights: Kaldi's Determinize checks both before each step and stops, keeping what it
    has)."""
    info = np.zeros(5)
    empty_i = np.zeros((0, 4), np.int64)
    empty_f = np.zeros((0, 2))
    e1 = np.zeros(0, np.int64)
    m = src.shape[0]
    all_arcs = np.ones(m, np.bool_)
    order0, ok = _topo(n, src, dst, all_arcs)
    if not ok:
        return STATUS_CYCLE, empty_i, empty_f, e1, empty_f, -1, e1, e1, info
    # forward / backward (PruneLattice)
    alpha = np.full(n, np.inf)
    alpha[start] = 0.0
    cnt = np.zeros(n + 1, np.int64)
    for i in range(m):
        cnt[src[i] + 1] += 1
    for s in range(n):
        cnt[s + 1] += cnt[s]
    by_src = np.empty(m, np.int64)
    pos = cnt[:n].copy()
    for i in range(m):
        by_src[pos[src[i]]] = i
        pos[src[i]] += 1
    for s in order0:
        a0 = alpha[s]
        if a0 == np.inf:
            continue
        for j in range(cnt[s], cnt[s + 1]):
            i = by_src[j]
            c = a0 + cost[i]
            if c < alpha[dst[i]]:
                alpha[dst[i]] = c
    beta = final_cost.copy()
    for r in range(n - 1, -1, -1):
        s = order0[r]
        b = beta[s]
        for j in range(cnt[s], cnt[s + 1]):
            i = by_src[j]
            c = cost[i] + beta[dst[i]]
            if c < b:
                b = c
        beta[s] = b
    best_total = beta[start]
    if not np.isfinite(best_total):
        return STATUS_NO_PATH, empty_i, empty_f, e1, empty_f, -1, e1, e1, info
    cutoff = best_total + beam
    keep = np.empty(m, np.bool_)
    for i in range(m):
        keep[i] = alpha[src[i]] + g[i] + a[i] + beta[dst[i]] <= cutoff
    fin_g = np.full(n, np.inf)
    fin_a = np.full(n, np.inf)
    for s in range(n):
        if alpha[s] + final_g[s] + final_a[s] <= cutoff:
            fin_g[s] = final_g[s]
            fin_a[s] = final_a[s]
    order, ok = _topo(n, src, dst, keep)
    rank = np.empty(n, np.int64)
    for r in range(n):
        rank[order[r]] = r
    # kept arcs by source, epsilon (no word) and word arcs apart, each in arc order
    ecnt = np.zeros(n + 1, np.int64)
    wcnt = np.zeros(n + 1, np.int64)
    for i in range(m):
        if keep[i]:
            if olabel[i] != 0:
                wcnt[src[i] + 1] += 1
            else:
                ecnt[src[i] + 1] += 1
    for s in range(n):
        ecnt[s + 1] += ecnt[s]
        wcnt[s + 1] += wcnt[s]
    eps_arcs = np.empty(ecnt[n], np.int64)
    word_arcs = np.empty(wcnt[n], np.int64)
    epos = ecnt[:n].copy()
    wpos = wcnt[:n].copy()
    for j in range(m):
        i = by_src[j]
        if keep[i]:
            s = src[i]
            if olabel[i] != 0:
                word_arcs[wpos[s]] = i
                wpos[s] += 1
            else:
                eps_arcs[epos[s]] = i
                epos[s] += 1
    minimal = np.empty(n, np.bool_)
    for s in range(n):
        minimal[s] = wcnt[s + 1] > wcnt[s] or fin_g[s] != np.inf
    tol = cutoff + 1e-6 * abs(cutoff)

    # the string repository; node 0 is the empty string
    num_labels = max(1, ilabel.max() if m else 1) + 1
    tr = np.empty((1024, 5), np.int64)
    tr[0, _PAR], tr[0, _LAB], tr[0, _DEP], tr[0, _CHILD], tr[0, _SIB] = -1, 0, 0, -1, -1
    alive = np.zeros(1024, np.bool_)
    alive[0] = True
    root = np.full(num_labels, -1, np.int64)
    meta = np.zeros(2, np.int64)
    meta[0] = 1

    # scratch: the working subset of a closure
    w_gen = np.zeros(n, np.int64)
    w_done = np.zeros(n, np.int64)
    w_g = np.zeros(n)
    w_a = np.zeros(n)
    gen = 0

    # output states: subsets sorted by raw state
    # (growable arrays with counts, not numba lists: see the module docstring)
    el_i = np.empty((256, 2), np.int64)     # elements: raw state, string
    el_f = np.empty((256, 4))               # g, a, quantized g, quantized a
    n_el = 0
    sub_i = np.empty((64, 5), np.int64)     # subsets: first element, size, hash chain, final
    sub_f = np.empty((64, 3))               # string (-1: not final), expanded; fwd, final g, a
    n_sub = 0
    sub_map = Dict.empty(key_type=types.int64, value_type=types.int64)
    arc_i = np.empty((64, 4), np.int64)     # output arcs: source, word, string, next
    arc_w = np.empty((64, 2))               # g, a
    n_arc = 0
    num_elems = 0
    num_arcs = 0
    queue = [(0.0, np.int64(0))][:0]

    w_pred = np.zeros(n, np.int64)  # closure: predecessor state (-1: an initial element)
    w_il = np.zeros(n, np.int64)    # label of the arc from it (initial: the word arc's)
    w_base = np.zeros(n, np.int64)  # initial elements: the string before that label
    lb = np.empty(1024, np.int64)   # the kept states' strings, flat
    lo = np.empty(n + 1, np.int64)
    wl = np.empty(n, np.int64)      # working subset's states in insertion order (n_wl)
    n_wl = 0
    hp = np.empty(n + m + 1, np.int64)  # the closure's heap of ranks: a push per state or arc
    nl = np.empty(n, np.int64)      # minimal (normalized) subset, scratch
    ng = np.empty(n)
    na = np.empty(n)
    ns = np.empty(n, np.int64)
    is_ = np.empty(n, np.int64)     # the strings to intern: lb[is_[x]:ie_[x]]
    ie_ = np.empty(n, np.int64)
    status = STATUS_OK
    # an expansion's word-arc candidates (at most one per kept word arc: a subset's states
    # differ): word, next state, the string before the arc's input label, that label; g, a
    c_i = np.empty((max(wcnt[n], 1), 4), np.int64)
    c_f = np.empty((max(wcnt[n], 1), 2))
    pre = np.int64(0)
    cg0 = 0.0
    ca0 = 0.0

    for it in range(-1, 1 << 62):
        if it == -1:
            # the start subset: closure of {start} with base 0, not normalized
            gen += 1
            w_gen[start] = gen
            w_g[start] = 0.0
            w_a[start] = 0.0
            w_pred[start], w_base[start], w_il[start] = -1, 0, 0
            wl[0] = start
            n_wl = 1
            base = 0.0
            cur = -1
            words = np.zeros(1, np.int64)
            cand_order = np.zeros(0, np.int64)
            cw = np.zeros(0, np.int64)
        else:
            if len(queue) == 0:
                break
            nstates = n_sub
            if (max_states > 0 and nstates > max_states) or (max_arcs > 0
                                                             and num_arcs > max_arcs):
                info[0] = queue[0][0] - best_total
                status = STATUS_MAX_STATES
                break
            if max_mem > 0 and nstates % 10 == 0:
                total = (meta[1] * REPO_ENTRY_BYTES + num_arcs * ARC_BYTES
                         + num_elems * ELEM_BYTES)
                if total > max_mem:
                    repo_before = meta[1]
                    alive[:] = False
                    alive[0] = True
                    c = 0
                    for x in range(n_el):
                        c += _mark_needed(el_i[x, _E_STR], tr, alive)
                    for x in range(n_arc):
                        c += _mark_needed(arc_i[x, _O_STR], tr, alive)
                    for x in range(n_sub):
                        if sub_i[x, _S_FIN] >= 0:
                            c += _mark_needed(sub_i[x, _S_FIN], tr, alive)
                    meta[1] = c
                    new_total = c * REPO_ENTRY_BYTES + num_arcs * ARC_BYTES \
                        + num_elems * ELEM_BYTES
                    if new_total > np.int64(max_mem * 0.8):
                        info[0] = queue[0][0] - best_total
                        info[1] = repo_before * REPO_ENTRY_BYTES
                        info[2] = num_arcs * ARC_BYTES
                        info[3] = num_elems * ELEM_BYTES
                        info[4] = c * REPO_ENTRY_BYTES
                        status = STATUS_MEMORY
                        break
            prio, cur = heapq.heappop(queue)
            if sub_i[cur, _S_DONE]:
                continue
            sub_i[cur, _S_DONE] = 1
            base = sub_f[cur, _S_FWD]
            st, ln = sub_i[cur, _S_START], sub_i[cur, _S_LEN]
            fut = np.inf
            for x in range(st, st + ln):
                v = el_f[x, _E_G] + el_f[x, _E_A] + beta[el_i[x, _E_STATE]]
                if v < fut:
                    fut = v
            if base + fut > tol:
                continue
            # final weight and word arcs out of the subset
            have_fin = False
            bfg = 0.0
            bfa = 0.0
            bfs = np.int64(0)
            k = 0
            for x in range(st, st + ln):
                s = el_i[x, _E_STATE]
                g0, a0, t0 = el_f[x, _E_G], el_f[x, _E_A], el_i[x, _E_STR]
                if fin_g[s] != np.inf:
                    fg = g0 + fin_g[s]
                    fa = a0 + fin_a[s]
                    if not have_fin or _better(fg, fa, t0, 0, bfg, bfa, bfs, 0, tr):
                        have_fin = True
                        bfg, bfa, bfs = fg, fa, t0
                for j in range(wcnt[s], wcnt[s + 1]):
                    i = word_arcs[j]
                    d = dst[i]
                    if base + g0 + g[i] + a0 + a[i] + beta[d] > tol:
                        continue
                    c_i[k, 0], c_i[k, 1], c_i[k, 2], c_i[k, 3] = olabel[i], d, t0, ilabel[i]
                    c_f[k, 0], c_f[k, 1] = g0 + g[i], a0 + a[i]
                    k += 1
            if have_fin:
                sub_i[cur, _S_FIN] = bfs
                sub_f[cur, _S_FG] = bfg
                sub_f[cur, _S_FA] = bfa
                num_arcs += 1
            cw = np.empty(k, np.int64)
            for x in range(k):
                cw[x] = c_i[x, 0]
            cand_order = np.argsort(cw, kind="mergesort")
            nw = 0
            words = np.empty(k, np.int64)
            for x in range(k):
                w = cw[cand_order[x]]
                if nw == 0 or words[nw - 1] != w:
                    words[nw] = w
                    nw += 1
            words = words[:nw]
        # one closure per word (the start: one closure)
        p = 0
        for wi in range(words.shape[0]):
            if cur >= 0:
                word = words[wi]
                gen += 1
                n_wl = 0
                while p < cand_order.shape[0] and cw[cand_order[p]] == word:
                    x = cand_order[p]
                    p += 1
                    d = c_i[x, 1]
                    if w_gen[d] == gen and not _better(c_f[x, 0], c_f[x, 1], c_i[x, 2],
                                                       c_i[x, 3], w_g[d], w_a[d], w_base[d],
                                                       w_il[d], tr):
                        continue
                    if w_gen[d] != gen:
                        w_gen[d] = gen
                        wl[n_wl] = d
                        n_wl += 1
                    w_g[d], w_a[d] = c_f[x, 0], c_f[x, 1]
                    w_pred[d], w_base[d], w_il[d] = -1, c_i[x, 2], c_i[x, 3]
            # word-epsilon closure in topological order; a state's string is its predecessor's
            # plus the arc's label (w_pred, w_il), made into a string only for the states kept
            limit = cutoff - base + 1e-6 * abs(cutoff)
            n_hp = 0
            for q in range(n_wl):
                n_hp = _heap_push(hp, n_hp, rank[wl[q]])
            while n_hp > 0:
                s = order[hp[0]]
                n_hp = _heap_pop(hp, n_hp)
                if w_done[s] == gen:
                    continue
                w_done[s] = gen
                g0, a0 = w_g[s], w_a[s]
                for j in range(ecnt[s], ecnt[s + 1]):
                    i = eps_arcs[j]
                    d = dst[i]
                    if g0 + g[i] + a0 + a[i] + beta[d] > limit:
                        continue
                    cg_ = g0 + g[i]
                    ca_ = a0 + a[i]
                    if w_gen[d] == gen:
                        t1 = cg_ + ca_
                        t2 = w_g[d] + w_a[d]
                        if t1 > t2 or (t1 == t2 and (cg_ > w_g[d] or (
                                cg_ == w_g[d] and not _path_less(s, ilabel[i], d, w_pred, w_il,
                                                                 w_base, tr)))):
                            continue
                    else:
                        w_gen[d] = gen
                        wl[n_wl] = d
                        n_wl += 1
                    w_g[d], w_a[d] = cg_, ca_
                    w_pred[d], w_il[d] = s, ilabel[i]
                    n_hp = _heap_push(hp, n_hp, rank[d])
            # keep the states with a word arc out or a final weight, with their strings
            cnt_n = 0
            tot = 0
            for q in range(n_wl):
                s = wl[q]
                if minimal[s]:
                    nl[cnt_n] = s
                    ng[cnt_n] = w_g[s]
                    na[cnt_n] = w_a[s]
                    ln = _path_len(s, w_pred, w_il, w_base, tr)
                    lo[cnt_n] = tot
                    lo[cnt_n + 1] = tot + ln
                    tot += ln
                    cnt_n += 1
            if cnt_n == 0:
                continue
            if lb.shape[0] < tot:
                lb = np.empty(2 * tot, np.int64)
            _write_paths(nl, cnt_n, lo, w_pred, w_il, w_base, tr, lb)
            kpre = 0
            if cur >= 0:
                # normalize: the best element's weight and the common string prefix go out
                b = 0
                for x in range(1, cnt_n):
                    t1 = ng[x] + na[x]
                    t2 = ng[b] + na[b]
                    if t1 < t2 or (t1 == t2 and (ng[x] < ng[b] or (
                            ng[x] == ng[b] and _seq_less(lb, lo[x], lo[x + 1], lo[b],
                                                         lo[b + 1])))):
                        b = x
                kpre = lo[1] - lo[0]
                for x in range(1, cnt_n):
                    k = 0
                    while k < kpre and k < lo[x + 1] - lo[x] and lb[lo[x] + k] == lb[lo[0] + k]:
                        k += 1
                    kpre = k
                while meta[0] + kpre > tr.shape[0]:
                    tr, alive = _grow_trie(tr, alive)
                is_[0], ie_[0] = lo[0], lo[0] + kpre
                _intern_strings(lb, is_, ie_, 1, tr, alive, root, meta, ns)
                pre = ns[0]
                cg0, ca0 = ng[b], na[b]
                for x in range(cnt_n):
                    ng[x] = ng[x] - cg0
                    na[x] = na[x] - ca0
            for x in range(cnt_n):
                is_[x], ie_[x] = lo[x] + kpre, lo[x + 1]
            while meta[0] + tot - cnt_n * kpre > tr.shape[0]:
                tr, alive = _grow_trie(tr, alive)
            _intern_strings(lb, is_, ie_, cnt_n, tr, alive, root, meta, ns)
            if cur >= 0:
                f = base + cg0 + ca0
            else:
                f = 0.0
            fut = np.inf
            for x in range(cnt_n):
                v = ng[x] + na[x] + beta[nl[x]]
                if v < fut:
                    fut = v
            if cur >= 0 and f + fut > tol:
                continue
            # sort by raw state (insertion sort: subsets are small), then hash
            for x in range(1, cnt_n):
                y = x
                while y > 0 and nl[y - 1] > nl[y]:
                    nl[y - 1], nl[y] = nl[y], nl[y - 1]
                    ng[y - 1], ng[y] = ng[y], ng[y - 1]
                    na[y - 1], na[y] = na[y], na[y - 1]
                    ns[y - 1], ns[y] = ns[y], ns[y - 1]
                    y -= 1
            h = np.int64(cnt_n)
            for x in range(cnt_n):
                qg = np.rint(ng[x] * _QUANT)
                qa = np.rint(na[x] * _QUANT)
                h = h * np.int64(1000003) + nl[x]
                h = h * np.int64(1000003) + np.int64(qg) if np.isfinite(qg) else h
                h = h * np.int64(1000003) + np.int64(qa) if np.isfinite(qa) else h
                h = h * np.int64(1000003) + ns[x]
            sid = sub_map[h] if h in sub_map else np.int64(-1)
            while sid >= 0:
                st2 = sub_i[sid, _S_START]
                if sub_i[sid, _S_LEN] == cnt_n:
                    same = True
                    for x in range(cnt_n):
                        if (el_i[st2 + x, _E_STATE] != nl[x] or el_i[st2 + x, _E_STR] != ns[x]
                                or el_f[st2 + x, _E_QG] != np.rint(ng[x] * _QUANT)
                                or el_f[st2 + x, _E_QA] != np.rint(na[x] * _QUANT)):
                            same = False
                            break
                    if same:
                        break
                sid = sub_i[sid, _S_CHAIN]
            if sid < 0:
                sid = n_sub
                if n_sub == sub_i.shape[0]:
                    sub_i = _grown(sub_i, n_sub + 1)
                    sub_f = _grown(sub_f, n_sub + 1)
                n_sub += 1
                sub_i[sid, _S_CHAIN] = sub_map[h] if h in sub_map else np.int64(-1)
                sub_map[h] = sid
                sub_i[sid, _S_START] = n_el
                sub_i[sid, _S_LEN] = cnt_n
                if n_el + cnt_n > el_i.shape[0]:
                    el_i = _grown(el_i, n_el + cnt_n)
                    el_f = _grown(el_f, n_el + cnt_n)
                for x in range(cnt_n):
                    el_i[n_el, _E_STATE], el_i[n_el, _E_STR] = nl[x], ns[x]
                    el_f[n_el, _E_G], el_f[n_el, _E_A] = ng[x], na[x]
                    el_f[n_el, _E_QG] = np.rint(ng[x] * _QUANT)
                    el_f[n_el, _E_QA] = np.rint(na[x] * _QUANT)
                    n_el += 1
                num_elems += cnt_n
                sub_i[sid, _S_FIN] = -1
                sub_i[sid, _S_DONE] = 0
                sub_f[sid, _S_FWD], sub_f[sid, _S_FG], sub_f[sid, _S_FA] = f, 0.0, 0.0
                heapq.heappush(queue, (f + fut, sid))
            elif f < sub_f[sid, _S_FWD]:
                sub_f[sid, _S_FWD] = f
                if not sub_i[sid, _S_DONE]:
                    # not expanded yet: queue it again at its better priority (the reference's
                    # comment says why)
                    fut2 = np.inf
                    st2 = sub_i[sid, _S_START]
                    for x in range(st2, st2 + sub_i[sid, _S_LEN]):
                        v = el_f[x, _E_G] + el_f[x, _E_A] + beta[el_i[x, _E_STATE]]
                        if v < fut2:
                            fut2 = v
                    heapq.heappush(queue, (f + fut2, sid))
            if cur >= 0:
                if n_arc == arc_i.shape[0]:
                    arc_i = _grown(arc_i, n_arc + 1)
                    arc_w = _grown(arc_w, n_arc + 1)
                arc_i[n_arc, _O_SRC], arc_i[n_arc, _O_WORD] = cur, words[wi]
                arc_i[n_arc, _O_STR], arc_i[n_arc, _O_NEXT] = pre, sid
                arc_w[n_arc, 0], arc_w[n_arc, 1] = cg0, ca0
                n_arc += 1
                num_arcs += 1

    out_arcs = arc_i[:n_arc].copy()
    out_w = arc_w[:n_arc].copy()
    ns_out = n_sub
    f_str = sub_i[:n_sub, _S_FIN].copy()
    f_w = sub_f[:n_sub, _S_FG:].copy()
    t_par = tr[:meta[0], _PAR].copy()
    t_lab = tr[:meta[0], _LAB].copy()
    return status, out_arcs, out_w, f_str, f_w, 0 if ns_out else -1, t_par, t_lab, info


@njit(**_JIT)
def _topo_connect(n, start, csr, by, dst, arc_ok, final_ok):
    """(new id per state, -1 where dropped; the kept states by new id): the states on a
    successful path over the arcs with arc_ok, numbered as lattice.py's _connect_and_sort
    numbers them (in _kahn's order; arcs of state s are by[csr[s]:csr[s + 1]])."""
    order, m = _kahn(n, csr, by, dst, arc_ok)
    coacc = final_ok.copy()
    for r in range(m - 1, -1, -1):
        s = order[r]
        if not coacc[s]:
            for j in range(csr[s], csr[s + 1]):
                i = by[j]
                if arc_ok[i] and coacc[dst[i]]:
                    coacc[s] = True
                    break
    acc = np.zeros(n, np.bool_)
    acc[start] = True
    new_id = np.full(n, -1, np.int64)
    kept = np.empty(m, np.int64)
    k = 0
    for r in range(m):
        s = order[r]
        if acc[s]:
            for j in range(csr[s], csr[s + 1]):
                i = by[j]
                if arc_ok[i]:
                    acc[dst[i]] = True
            if coacc[s]:
                new_id[s] = k
                kept[k] = s
                k += 1
    return new_id, kept[:k]


@njit(**_JIT)
def connect_prune(n, start, out_arcs, out_w, f_str, f_w, beam):
    """determinize_arrays' output as lattice.py's ``prune_compact_lattice(_connect_and_sort(
    lattice), beam)`` leaves it, on arrays, so that Python objects are made for the kept arcs
    only, once: trim to the states on a successful path (numbered in topological order),
    drop the arcs and final weights more than ``beam`` worse than the best path (the same float
    operations in the same order as lattice.py), trim again. Returns (start, per kept arc in
    order of source state: source, word, string node, next, g, a; per kept state: final string
    node (-1: not final), final g, a); start is -1 and everything empty when no path is left."""
    k = out_arcs.shape[0]
    src = out_arcs[:, 0].copy()
    dst = out_arcs[:, 3].copy()
    csr, by = _by_source(n, src)
    e_i = np.zeros((0, 4), np.int64)
    e_f = np.zeros((0, 2))
    e_s = np.zeros(0, np.int64)
    if n == 0 or start < 0:
        return -1, e_i, e_f, e_s, e_f
    id1, old = _topo_connect(n, start, csr, by, dst, np.ones(k, np.bool_), f_str >= 0)
    if id1[start] < 0:
        return -1, e_i, e_f, e_s, e_f
    # the trimmed lattice: state q (old state old[q]) holds its arcs to kept states, in order
    n1 = old.shape[0]
    b_arc = np.empty(k, np.int64)      # original arc index
    b_dst = np.empty(k, np.int64)
    b_csr = np.zeros(n1 + 1, np.int64)
    m = 0
    for q in range(n1):
        s = old[q]
        for j in range(csr[s], csr[s + 1]):
            i = by[j]
            if id1[dst[i]] >= 0:
                b_arc[m] = i
                b_dst[m] = id1[dst[i]]
                m += 1
        b_csr[q + 1] = m
    start1 = id1[start]
    # prune (states are numbered in topological order; min over the same sums in any
    # topological order gives the same values)
    alpha = np.full(n1, np.inf)
    alpha[start1] = 0.0
    for q in range(n1):
        if alpha[q] == np.inf:
            continue
        for j in range(b_csr[q], b_csr[q + 1]):
            i = b_arc[j]
            v = alpha[q] + out_w[i, 0] + out_w[i, 1]
            if v < alpha[b_dst[j]]:
                alpha[b_dst[j]] = v
    beta = np.empty(n1)
    for q in range(n1 - 1, -1, -1):
        s = old[q]
        b = f_w[s, 0] + f_w[s, 1] if f_str[s] >= 0 else np.inf
        for j in range(b_csr[q], b_csr[q + 1]):
            i = b_arc[j]
            v = out_w[i, 0] + out_w[i, 1] + beta[b_dst[j]]
            if v < b:
                b = v
        beta[q] = b
    cutoff = beta[start1] + beam
    cutoff += 1e-6 * abs(cutoff)
    ident = np.arange(m)
    arc_ok = np.empty(m, np.bool_)
    for q in range(n1):
        for j in range(b_csr[q], b_csr[q + 1]):
            i = b_arc[j]
            arc_ok[j] = alpha[q] + out_w[i, 0] + out_w[i, 1] + beta[b_dst[j]] <= cutoff
    fin_ok = np.zeros(n1, np.bool_)
    for q in range(n1):
        s = old[q]
        fin_ok[q] = f_str[s] >= 0 and not (alpha[q] + f_w[s, 0] + f_w[s, 1] > cutoff)
    id2, old2 = _topo_connect(n1, start1, b_csr, ident, b_dst, arc_ok, fin_ok)
    if id2[start1] < 0:
        return -1, e_i, e_f, e_s, e_f
    n2 = old2.shape[0]
    res_i = np.empty((m, 4), np.int64)
    res_w = np.empty((m, 2))
    fin_s = np.full(n2, -1, np.int64)
    fin_w = np.zeros((n2, 2))
    r = 0
    for t in range(n2):
        q = old2[t]
        s = old[q]
        if fin_ok[q]:
            fin_s[t] = f_str[s]
            fin_w[t, 0], fin_w[t, 1] = f_w[s, 0], f_w[s, 1]
        for j in range(b_csr[q], b_csr[q + 1]):
            if arc_ok[j] and id2[b_dst[j]] >= 0:
                i = b_arc[j]
                res_i[r, 0], res_i[r, 1] = t, out_arcs[i, 1]
                res_i[r, 2], res_i[r, 3] = out_arcs[i, 2], id2[b_dst[j]]
                res_w[r, 0], res_w[r, 1] = out_w[i, 0], out_w[i, 1]
                r += 1
    return id2[start1], res_i[:r].copy(), res_w[:r].copy(), fin_s, fin_w


@njit(**_JIT)
def strings_to_flat(ids, t_par, t_lab):
    """The strings of trie nodes ``ids`` as one flat array and offsets (len(ids) + 1)."""
    offs = np.zeros(ids.shape[0] + 1, np.int64)
    depth = np.zeros(t_par.shape[0], np.int64)
    for x in range(1, t_par.shape[0]):
        depth[x] = depth[t_par[x]] + 1        # parents are created before their children
    for j in range(ids.shape[0]):
        offs[j + 1] = offs[j] + (depth[ids[j]] if ids[j] >= 0 else 0)
    flat = np.empty(offs[-1], np.int64)
    for j in range(ids.shape[0]):
        s = ids[j]
        if s < 0:
            continue
        for p in range(offs[j + 1] - 1, offs[j] - 1, -1):
            flat[p] = t_lab[s]
            s = t_par[s]
    return flat, offs


@njit(**_JIT)
def output_lattice(out_arcs, out_w, f_str, f_w, t_par, t_lab, zero_from):
    """The determinized arrays as a raw lattice, Kaldi's Output(MutableFst<Arc>*): each output
    arc becomes a chain with one transition-id per arc, the word and the whole weight on its
    first arc (an empty string: one arc without a transition-id); a final weight with a string
    becomes a chain of word-epsilon arcs to a new final state. Word labels >= ``zero_from`` (> 0)
    become 0 on the way (DeterminizeLatticeDeletePhones). New states are numbered after the
    determinized ones in the order Kaldi adds them. Returns (num_states, src, dst, ilabel,
    olabel, g, a, final_g, final_a)."""
    depth = np.zeros(t_par.shape[0], np.int64)
    for x in range(1, t_par.shape[0]):
        depth[x] = depth[t_par[x]] + 1        # parents are created before their children
    ns = f_str.shape[0]
    k = out_arcs.shape[0]
    # arcs grouped by source state, in the order they were made (Kaldi's per-state arc lists)
    by = np.argsort(out_arcs[:, 0], kind="mergesort")
    m = 0
    extra = 0
    for j in range(k):
        d = depth[out_arcs[j, 2]]
        m += max(d, 1)
        extra += max(d - 1, 0)
    for s in range(ns):
        if f_str[s] >= 0:
            m += depth[f_str[s]]
            extra += depth[f_str[s]]
    n = ns + extra
    src = np.empty(m, np.int64)
    dst = np.empty(m, np.int64)
    il = np.zeros(m, np.int64)
    ol = np.zeros(m, np.int64)
    g = np.zeros(m)
    a = np.zeros(m)
    fg = np.full(n, np.inf)
    fa = np.full(n, np.inf)
    seq = np.empty(t_par.shape[0], np.int64)
    p = 0
    nxt_state = ns
    j = 0
    for s in range(ns):
        # Kaldi keeps the final weight among the state's arcs, in the order it was made; it is
        # made before the state's word arcs (ProcessFinal, then ProcessTransitions)
        if f_str[s] >= 0:
            x = f_str[s]
            d = depth[x]
            for i in range(d - 1, -1, -1):
                seq[i] = t_lab[x]
                x = t_par[x]
            cur = s
            for i in range(d):
                src[p], dst[p], il[p] = cur, nxt_state, seq[i]
                if i == 0:
                    g[p], a[p] = f_w[s, 0], f_w[s, 1]
                cur = nxt_state
                nxt_state += 1
                p += 1
            if d == 0:
                fg[s], fa[s] = f_w[s, 0], f_w[s, 1]
            else:
                fg[cur], fa[cur] = 0.0, 0.0
        while j < k and out_arcs[by[j], 0] == s:
            r = by[j]
            j += 1
            x = out_arcs[r, 2]
            d = depth[x]
            for i in range(d - 1, -1, -1):
                seq[i] = t_lab[x]
                x = t_par[x]
            word = out_arcs[r, 1]
            if word >= zero_from:
                word = 0
            cur = s
            for i in range(max(d, 1)):
                src[p] = cur
                if i + 1 < d:
                    dst[p] = nxt_state
                    cur = nxt_state
                    nxt_state += 1
                else:
                    dst[p] = out_arcs[r, 3]
                il[p] = seq[i] if d > 0 else 0
                if i == 0:
                    ol[p] = word
                    g[p], a[p] = out_w[r, 0], out_w[r, 1]
                p += 1
    return n, src, dst, il, ol, g, a, fg, fa
