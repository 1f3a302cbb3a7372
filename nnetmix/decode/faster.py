"""Kaldi's LatticeFasterDecoder (src/decoder/lattice-faster-decoder.cc) compiled with numba:
a (frames x pdfs) matrix of scaled log-likelihoods and a graph as arrays -> the raw
state-level lattice and its best path.

Same search as Kaldi's, step by step:

* ``GetCutoff``: the cutoff of a frame is best + beam, tightened to the (max_active+1)-th best
  cost when more than max-active tokens are alive and loosened to the (min_active+1)-th best
  when fewer than min-active are within the beam (an in-place quickselect for nth_element); the
  *adaptive beam* (cutoff - best + beam-delta when max/min-active decided) prunes the next frame
  as it is built.
* ``ProcessEmitting``: the best token's arcs give a first bound for the next frame, then every
  token within the cutoff extends its emitting arcs; a new token is kept only below the running
  next-frame cutoff. Acoustic costs carry a per-frame offset (minus the best cost) that
  ``GetRawLattice`` takes off again, as Kaldi's ``cost_offsets_``.
* ``ProcessNonemitting``: epsilon arcs from a LIFO queue of states with input epsilons, a state
  re-queued when its cost improves (its old forward links deleted), as Kaldi's.
* Forward-link pruning (``PruneActiveTokens``) every prune-interval frames with delta
  lattice-beam * 0.1 (Kaldi's prune-scale), from the newest frame back while extra costs change;
  at the end ``PruneForwardLinksFinal`` with the final costs (all tokens final when none is),
  then every frame with delta 0 (``FinalizeDecoding``).
* ``GetRawLattice``: one state per surviving token, tokens of a frame topologically sorted on
  their epsilon links, start state first; final weights (final cost, 0), or One on every
  last-frame token when no final state was reached (Kaldi's partial output).

Best-path-only mode (``best_path_only=True``; what ``LatticeDecoder.decode(lattice=False)``
runs): the same search, each token keeping the arc that gave it its cost instead of forward
links; every prune-interval frames the tokens that no token of the newest frame traces back to
are freed. Its best path is the lattice mode's (LatticeFasterDecoder::GetBestPath).

Acoustic scores come from a (frames x pdfs) matrix, or, for a GMM model with many pdfs, from
the GMM kernel of :mod:`nnetmix.decode.gmmframes` for the pdfs the emitting arcs reach, cached
per frame (Kaldi's DecodableAmDiagGmmScaled); either way an arc's transition-id is mapped to
its pdf here (``tid2pdf``), with no (frames x transition-ids) matrix.

Data layout (no per-token Python objects): tokens and forward links live in growing arrays
with free lists (Kaldi's memory pools); each frame has a singly linked token list (new tokens at
the head, as Kaldi's); the per-frame hash from state to token is an array indexed by state
(reset through the frame's list of active states), so ``--hash-ratio`` has nothing to size and
is accepted only.

Hot loops: the helpers the loops call are plain ``njit`` functions, which LLVM inlines. A
function compiled with numba's ``inline="always"`` is inlined into numba's IR instead, and each
array argument then costs an atomic reference-count increment and decrement per call
(NRT_incref / NRT_decref) that numba's pruning pass left in place: the acoustic score read
through such a function (eight arrays, once per emitting arc) took most of the search's time
on the 20,000-word graph (perf, max-active 500); the search reads it in the loop itself now.

The arrays indexed by state (that map and the active lists) live in a :class:`SearchWorkspace`
made once per graph and thread and kept between utterances: filling an array over all graph
states for every utterance was a fixed cost of milliseconds on a graph of millions of states
(3.55M on the 20,000-word graph: 28 MB an array). The search leaves the map all -1 again by
resetting only the states of its last frame, as Kaldi's HashList frees only its active
elements; a workspace whose search raised is refilled before its next use.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Optional

import numpy as np
from numba import njit

from nnetmix.decode.fstarrays import GraphArrays
from nnetmix.decode.gmmframes import pdf_loglike_scaled
from nnetmix.decode.lattice import RawLattice
from nnetmix.errors import NnetmixError

__all__ = ["SearchOptions", "SearchOutput", "SearchWorkspace", "WorkspaceError",
           "lattice_search", "best_path_arcs", "INT32_MAX"]

INT32_MAX = 2147483647
PRUNE_SCALE = 0.1   # Kaldi's LatticeFasterDecoderConfig::prune_scale
_INF = np.inf
_JIT = dict(cache=True, nogil=True)   # no fastmath: costs are compared to cutoffs exactly;
# nogil: utterances can be decoded in parallel threads

# counters in ctr[]: tokens used (high-water), token free head, links used, link free head
_T_USED, _T_FREE, _L_USED, _L_FREE = 0, 1, 2, 3
# token columns -- toks_f: tot_cost, extra_cost, final cost; toks_i: first link, next token in
# its frame list (or in the free list), frame
# link columns -- links_i: next token, ilabel, olabel, next link; links_f: graph, acoustic cost


# the arguments of the mode not in use (one compiled signature for both)
_NO_MATRIX = np.zeros((0, 0), np.float32)
_PDF_RANGE = ("the graph reaches a pdf beyond the log-likelihood matrix's columns or the GMM's "
              "pdfs (graph, model and matrix do not match)")
_NO_GMM = (np.zeros((0, 0), np.float32), np.zeros((0, 0), np.float64), np.zeros(0, np.float64),
           np.zeros(0, np.int64), 0.0)


@dataclass
class SearchOptions:
    """The search options of Kaldi's LatticeFasterDecoderConfig (see decoder.py for help)."""

    beam: float = 16.0
    max_active: int = INT32_MAX
    min_active: int = 200
    lattice_beam: float = 10.0
    prune_interval: int = 25
    beam_delta: float = 0.5


@dataclass
class SearchOutput:
    """The raw lattice (states numbered in topological order, start 0, arcs sorted by source),
    whether a final state was reached, and per frame the number of tokens ProcessEmitting
    expanded (cost <= cutoff) and how many of them cost strictly less than the cutoff (at most
    max-active: the cutoff is the (max_active+1)-th best cost, and tokens tied with it are
    expanded too, as Kaldi's), and how many pdfs' GMM log-likelihoods the on-demand mode
    computed (0 with a matrix)."""

    lattice: RawLattice
    reached_final: bool
    expanded: np.ndarray      # (num_frames, 3)


class WorkspaceError(NnetmixError):
    """A workspace used by two searches at once, or with a graph of another size."""


class SearchWorkspace:
    """The search's arrays indexed by graph state, for one graph, reused by one search at a
    time: ``state2tok`` (the state-to-token map of the newest frame, -1 where no token; all -1
    between searches) and the scratch lists of active states, their tokens, the previous
    frame's, the cutoff's costs and the epsilon queue (sized by the graph: at most every state
    is active; pages never touched are never resident). Threads each need their own
    (``LatticeDecoder`` keeps one per thread); a second search entering a workspace in use
    raises :class:`WorkspaceError` rather than corrupting both."""

    def __init__(self, num_states: int):
        self.num_states = int(num_states)
        self.state2tok = np.full(self.num_states, -1, np.int64)
        self.lists = np.empty((5, self.num_states), np.int64)   # cur/prev states, tokens; queue
        self.costs = np.empty(self.num_states, np.float64)
        self._lock = threading.Lock()
        self._dirty = False    # a search raised before it could reset state2tok

    def _enter(self, num_states: int) -> None:
        if num_states != self.num_states:
            raise WorkspaceError(f"search workspace of {self.num_states} states used with a "
                                 f"graph of {num_states}")
        if not self._lock.acquire(blocking=False):
            raise WorkspaceError("search workspace already in use by another search (each "
                                 "thread needs its own)")
        if self._dirty:
            self.state2tok.fill(-1)
        self._dirty = True

    def _leave(self, clean: bool) -> None:
        self._dirty = not clean
        self._lock.release()


@njit(**_JIT)
def _grow(a):
    b = np.empty((a.shape[0] * 2, a.shape[1]), a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(**_JIT)
def _new_tok(toks_f, toks_i, ctr, cost, frame, frame_head):
    t = ctr[_T_FREE]
    if t >= 0:
        ctr[_T_FREE] = toks_i[t, 1]
    else:
        t = ctr[_T_USED]
        ctr[_T_USED] += 1
    toks_f[t, 0] = cost
    toks_f[t, 1] = 0.0
    toks_f[t, 2] = _INF
    toks_i[t, 0] = -1
    toks_i[t, 1] = frame_head[frame]
    toks_i[t, 2] = frame
    frame_head[frame] = t
    return t


@njit(**_JIT)
def _add_link(links_i, links_f, ctr, toks_i, tok, next_tok, il, ol, g, ac):
    k = ctr[_L_FREE]
    if k >= 0:
        ctr[_L_FREE] = links_i[k, 3]
    else:
        k = ctr[_L_USED]
        ctr[_L_USED] += 1
    links_i[k, 0] = next_tok
    links_i[k, 1] = il
    links_i[k, 2] = ol
    links_i[k, 3] = toks_i[tok, 0]
    links_f[k, 0] = g
    links_f[k, 1] = ac
    toks_i[tok, 0] = k


@njit(**_JIT)
def _set_backpointer(toks_f, toks_i, tok, prev, il, ol, g, ac):
    """Best-path mode: the arc that gave token ``tok`` its cost (ac without the frame's
    offset); the garbage-collection stamp is reset."""
    toks_i[tok, 3] = prev
    toks_i[tok, 4] = il
    toks_i[tok, 5] = ol
    toks_i[tok, 6] = -1
    toks_f[tok, 3] = g
    toks_f[tok, 4] = ac


@njit(**_JIT)
def _delete_links(links_i, ctr, toks_i, tok):
    k = toks_i[tok, 0]
    while k >= 0:
        nxt = links_i[k, 3]
        links_i[k, 3] = ctr[_L_FREE]
        ctr[_L_FREE] = k
        k = nxt
    toks_i[tok, 0] = -1


@njit(**_JIT)
def _nth_element(a, lo, hi, k):
    """std::nth_element on a[lo:hi] in place: a[k] becomes the value sorted order puts there,
    with nothing larger before it and nothing smaller after it (quickselect, median of three)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        x, y, z = a[lo], a[mid], a[hi - 1]
        pivot = max(min(x, y), min(max(x, y), z))
        i, j = lo, hi - 1
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if k <= j:
            hi = j + 1
        elif k >= i:
            lo = i
        else:
            return


@njit(**_JIT)
def _get_cutoff(cur_toks, n, toks_f, beam, max_active, min_active, beam_delta, tmp):
    """(cutoff, adaptive beam, index of the best token in cur_toks)."""
    best = _INF
    best_i = -1
    if max_active == INT32_MAX and min_active == 0:
        for i in range(n):
            w = toks_f[cur_toks[i], 0]
            if w < best:
                best = w
                best_i = i
        return best + beam, beam, best_i
    for i in range(n):
        w = toks_f[cur_toks[i], 0]
        tmp[i] = w
        if w < best:
            best = w
            best_i = i
    beam_cutoff = best + beam
    min_cut = _INF
    max_cut = _INF
    if n > max_active:
        _nth_element(tmp, 0, n, max_active)
        max_cut = tmp[max_active]
    if max_cut < beam_cutoff:          # max-active is tighter than the beam
        return max_cut, max_cut - best + beam_delta, best_i
    if n > min_active:
        if min_active == 0:
            min_cut = best
        else:
            # among the max_active best when there are more (Kaldi's nth_element range)
            end = max_active if n > max_active else n
            if min_active < end:
                _nth_element(tmp, 0, end, min_active)
                min_cut = tmp[min_active]
            else:
                min_cut = max_cut
    if min_cut > beam_cutoff:          # min-active is looser than the beam
        return min_cut, min_cut - best + beam_delta, best_i
    return beam_cutoff, beam, best_i


@njit(**_JIT)
def _prune_links_of(t, tok_extra, toks_f, toks_i, links_i, links_f, ctr, lattice_beam):
    """Drop token t's forward links whose extra cost (how much worse the best path through the
    link is than the best path through its destination) exceeds lattice_beam. Returns (the
    token's new extra cost: the least over its kept links and tok_extra, links pruned)."""
    pruned = False
    prev = -1
    k = toks_i[t, 0]
    while k >= 0:
        nt = links_i[k, 0]
        link_extra = toks_f[nt, 1] + ((toks_f[t, 0] + links_f[k, 1] + links_f[k, 0])
                                      - toks_f[nt, 0])
        nxt = links_i[k, 3]
        if link_extra > lattice_beam:
            if prev >= 0:
                links_i[prev, 3] = nxt
            else:
                toks_i[t, 0] = nxt
            links_i[k, 3] = ctr[_L_FREE]
            ctr[_L_FREE] = k
            pruned = True
        else:
            if link_extra < 0.0:
                link_extra = 0.0
            if link_extra < tok_extra:
                tok_extra = link_extra
            prev = k
        k = nxt
    return tok_extra, pruned


@njit(**_JIT)
def _prune_forward_links(f, frame_head, toks_f, toks_i, links_i, links_f, ctr, lattice_beam,
                         delta):
    """Kaldi's PruneForwardLinks on frame list f, repeated until no extra cost changes by more
    than delta: (extra costs changed, links pruned)."""
    extra_changed = False
    pruned = False
    changed = True
    while changed:
        changed = False
        t = frame_head[f]
        while t >= 0:
            tok_extra, p = _prune_links_of(t, _INF, toks_f, toks_i, links_i, links_f, ctr,
                                           lattice_beam)
            pruned = pruned or p
            if abs(tok_extra - toks_f[t, 1]) > delta:
                changed = True
            toks_f[t, 1] = tok_extra
            t = toks_i[t, 1]
        if changed:
            extra_changed = True
    return extra_changed, pruned


@njit(**_JIT)
def _prune_forward_links_final(f, frame_head, toks_f, toks_i, links_i, links_f, ctr,
                               lattice_beam, final_nonempty, final_best):
    """Kaldi's PruneForwardLinksFinal on the last frame list: a token's extra cost also counts
    its final cost (0 for every token when none is final); tokens beyond the lattice beam get
    an infinite one (deleted by _prune_tokens_for_frame)."""
    changed = True
    delta = 1.0e-05
    while changed:
        changed = False
        t = frame_head[f]
        while t >= 0:
            fc = (toks_f[t, 2] if final_nonempty else 0.0)
            tok_extra, _p = _prune_links_of(t, toks_f[t, 0] + fc - final_best, toks_f, toks_i,
                                            links_i, links_f, ctr, lattice_beam)
            if tok_extra > lattice_beam:
                tok_extra = _INF
            old = toks_f[t, 1]
            # Kaldi's ApproxEqual(a, b, delta): |a - b| <= delta * max(|a|, |b|), inf == inf
            if old != tok_extra:
                if not (abs(old - tok_extra) <= delta * max(abs(old), abs(tok_extra))):
                    changed = True
            toks_f[t, 1] = tok_extra
            t = toks_i[t, 1]


@njit(**_JIT)
def _prune_tokens_for_frame(f, frame_head, toks_f, toks_i, links_i, ctr, stamp=-1):
    """Kaldi's PruneTokensForFrame: free frame list f's tokens whose extra cost is infinite (no
    forward link survived); in best-path mode (stamp >= 0) those _collect_backpointers did not
    stamp."""
    prev = -1
    t = frame_head[f]
    while t >= 0:
        nxt = toks_i[t, 1]
        drop = toks_i[t, 6] != stamp if stamp >= 0 else toks_f[t, 1] == _INF
        if drop:
            if stamp < 0:
                _delete_links(links_i, ctr, toks_i, t)
            if prev >= 0:
                toks_i[prev, 1] = nxt
            else:
                frame_head[f] = nxt
            toks_i[t, 1] = ctr[_T_FREE]
            ctr[_T_FREE] = t
        else:
            prev = t
        t = nxt


@njit(**_JIT)
def _prune_active_tokens(cur_frame_plus_one, frame_head, must_fl, must_tok, toks_f, toks_i,
                         links_i, links_f, ctr, lattice_beam, delta):
    for f in range(cur_frame_plus_one - 1, -1, -1):
        if must_fl[f]:
            extra_changed, pruned = _prune_forward_links(f, frame_head, toks_f, toks_i,
                                                         links_i, links_f, ctr, lattice_beam,
                                                         delta)
            if extra_changed and f > 0:
                must_fl[f - 1] = True
            if pruned:
                must_tok[f] = True
            must_fl[f] = False
        if f + 1 < cur_frame_plus_one and must_tok[f + 1]:
            _prune_tokens_for_frame(f + 1, frame_head, toks_f, toks_i, links_i, ctr)
            must_tok[f + 1] = False


@njit(**_JIT)
def _process_nonemitting(frame, cutoff, arc_start, arc_il, arc_ol, arc_w, arc_next, n_eps,
                         state2tok, cur_states, cur_toks, n_cur, queue, nq, toks_f, toks_i,
                         links_i, links_f, ctr, frame_head, keep_links):
    """Kaldi's ProcessNonemitting from a queue of nq states. Returns (n_cur, nq, status):
    status 0 when the queue is empty, 1 when the token or link arrays, 2 when the queue must
    grow before the next state (the caller grows them and calls again). The arrays are never
    reassigned here: growing them inside the loop makes numba reload them on every access."""
    while nq > 0:
        s = queue[nq - 1]
        a0 = arc_start[s]
        a1 = arc_start[s + 1]
        if (ctr[_T_USED] + (a1 - a0) > toks_f.shape[0]
                or (keep_links and ctr[_L_USED] + (a1 - a0) > links_f.shape[0])):
            return n_cur, nq, 1
        if nq - 1 + (a1 - a0) > queue.shape[0]:
            return n_cur, nq, 2
        nq -= 1
        tok = state2tok[s]
        cur_cost = toks_f[tok, 0]
        if cur_cost >= cutoff:
            continue
        if keep_links:
            _delete_links(links_i, ctr, toks_i, tok)
        for a in range(a0, a1):
            if arc_il[a] != 0:
                continue
            g = np.float64(arc_w[a])
            tot = cur_cost + g
            if tot < cutoff:
                ns = arc_next[a]
                nt = state2tok[ns]
                changed = False
                if nt < 0:
                    nt = _new_tok(toks_f, toks_i, ctr, tot, frame, frame_head)
                    state2tok[ns] = nt
                    cur_states[n_cur] = ns
                    cur_toks[n_cur] = nt
                    n_cur += 1
                    changed = True
                elif toks_f[nt, 0] > tot:
                    toks_f[nt, 0] = tot
                    changed = True
                if keep_links:
                    _add_link(links_i, links_f, ctr, toks_i, tok, nt, 0, arc_ol[a], g, 0.0)
                elif changed:
                    _set_backpointer(toks_f, toks_i, nt, tok, 0, arc_ol[a], g, 0.0)
                if changed and n_eps[ns] != 0:
                    queue[nq] = ns
                    nq += 1
    return n_cur, 0, 0


@njit(**_JIT)
def _fill_cache(frame, pdf, gmm_x2, gmm_proj, gmm_gconst, gmm_off, acwt, cache, cache_frame,
                n_eval):
    """On-demand mode: the scaled log-likelihood of ``pdf`` on ``frame`` computed by the GMM
    kernel into the per-frame cache, the first time the frame asks for it, as Kaldi's
    DecodableAmDiagGmmScaled (``n_eval[0]`` counts the pdfs computed).

    The search reads an arc's acoustic score in its own loop (``cache[pdf]`` or
    ``ac[frame, pdf]``); only a cache miss calls this (see the module's note on hot loops)."""
    cache[pdf] = pdf_loglike_scaled(gmm_x2, frame, gmm_proj, gmm_gconst, gmm_off, pdf, acwt)
    cache_frame[pdf] = frame
    n_eval[0] += 1


@njit(**_JIT)
def _process_emitting(frame, cur_cutoff, adaptive_beam, next_cutoff, cost_offset, arc_start,
                      arc_il, arc_ol, arc_w, arc_next, ac, tid2pdf, prev_states, prev_toks,
                      n_prev, state2tok, cur_states, cur_toks, toks_f, toks_i, links_i,
                      links_f, ctr, frame_head, keep_links, gmm_x2, gmm_proj, gmm_gconst,
                      gmm_off, acwt, cache, cache_frame, n_eval):
    """The main loop of Kaldi's ProcessEmitting (the caller has reserved room for one token and
    one link per emitting arc). Returns (n_cur, next_cutoff, tokens expanded, of those below
    the cutoff)."""
    on_demand = cache_frame.shape[0] > 0
    num_pdfs = cache_frame.shape[0] if on_demand else ac.shape[1]
    n_cur = 0
    n_exp = 0
    n_below = 0
    for i in range(n_prev):
        tok = prev_toks[i]
        cur_cost = toks_f[tok, 0]
        if cur_cost > cur_cutoff:
            continue
        n_exp += 1
        if cur_cost < cur_cutoff:
            n_below += 1
        s = prev_states[i]
        for a in range(arc_start[s], arc_start[s + 1]):
            il = arc_il[a]
            if il == 0:
                continue
            pdf = tid2pdf[il]                      # the arc's acoustic score (_fill_cache)
            if pdf >= num_pdfs:
                raise ValueError(_PDF_RANGE)
            if on_demand and cache_frame[pdf] != frame:
                _fill_cache(frame, pdf, gmm_x2, gmm_proj, gmm_gconst, gmm_off, acwt, cache,
                            cache_frame, n_eval)
            acost = cost_offset - (np.float64(cache[pdf]) if on_demand
                                   else np.float64(ac[frame, pdf]))
            g = np.float64(arc_w[a])
            tot = cur_cost + acost + g
            if tot >= next_cutoff:
                continue
            if tot + adaptive_beam < next_cutoff:
                next_cutoff = tot + adaptive_beam
            ns = arc_next[a]
            nt = state2tok[ns]
            better = True
            if nt < 0:
                nt = _new_tok(toks_f, toks_i, ctr, tot, frame + 1, frame_head)
                state2tok[ns] = nt
                cur_states[n_cur] = ns
                cur_toks[n_cur] = nt
                n_cur += 1
            elif toks_f[nt, 0] > tot:
                toks_f[nt, 0] = tot
            else:
                better = False
            if keep_links:
                _add_link(links_i, links_f, ctr, toks_i, tok, nt, il, arc_ol[a], g, acost)
            elif better:
                _set_backpointer(toks_f, toks_i, nt, tok, il, arc_ol[a], g, acost - cost_offset)
    return n_cur, next_cutoff, n_exp, n_below


@njit(**_JIT)
def _collect_backpointers(frame, frame_head, toks_f, toks_i, links_i, ctr, stamp):
    """Best-path mode's garbage collection: stamp every token the tokens of frame list
    ``frame`` trace back to, free the unstamped ones of the earlier frames."""
    t = frame_head[frame]
    while t >= 0:
        u = t
        while u >= 0 and toks_i[u, 6] != stamp:
            toks_i[u, 6] = stamp
            u = toks_i[u, 3]
        t = toks_i[t, 1]
    for f in range(frame):
        _prune_tokens_for_frame(f, frame_head, toks_f, toks_i, links_i, ctr, stamp)


@njit(**_JIT)
def _trace_backpointers(frame_head, toks_f, toks_i, final_nonempty):
    """Best-path mode: the best last-frame token (with its final cost; all count as final when
    none is) traced back. Returns (ilabel, olabel, graph, acoustic) per arc in order and the
    final cost."""
    num_frames = frame_head.shape[0] - 1
    best = _INF
    best_t = -1
    t = frame_head[num_frames]
    while t >= 0:
        c = toks_f[t, 0] + (toks_f[t, 2] if final_nonempty else 0.0)
        if c < best:
            best = c
            best_t = t
        t = toks_i[t, 1]
    n = 0
    t = best_t
    while t >= 0 and toks_i[t, 3] >= 0:
        n += 1
        t = toks_i[t, 3]
    il = np.empty(n, np.int64)
    ol = np.empty(n, np.int64)
    g = np.empty(n, np.float64)
    a = np.empty(n, np.float64)
    t = best_t
    while t >= 0 and toks_i[t, 3] >= 0:
        n -= 1
        il[n] = toks_i[t, 4]
        ol[n] = toks_i[t, 5]
        g[n] = toks_f[t, 3]
        a[n] = toks_f[t, 4]
        t = toks_i[t, 3]
    fc = 0.0
    if best_t >= 0 and final_nonempty:
        fc = toks_f[best_t, 2]
    return il, ol, g, a, fc, best_t >= 0


@njit(**_JIT)
def _search(arc_start, arc_il, arc_ol, arc_w, arc_next, final_w, n_eps, start, ac, tid2pdf,
            beam, max_active, min_active, lattice_beam, prune_interval, beam_delta, keep_links,
            gmm_x2, gmm_proj, gmm_gconst, gmm_off, acwt, state2tok, lists, tmp):
    """The whole utterance. Returns the token/link arrays and the frame lists for
    :func:`_raw_lattice` (or, without links, for :func:`_trace_backpointers`), whether a final
    state was reached and the per-frame expanded counts.

    keep_links=False is the best-path-only mode: each token keeps the arc that gave it its cost
    (a backpointer) instead of forward links, nothing is lattice-pruned, and every
    prune-interval frames the tokens no current token traces back to are freed. The search
    (cutoffs, tokens) is the same, so is the best path.

    On-demand mode (``gmm_off`` not empty): ``ac`` is not read; the scaled log-likelihoods come
    from the GMM kernel for the pdfs the search reaches, cached per frame (see _fill_cache).

    ``state2tok`` (all -1), ``lists`` and ``tmp`` are a SearchWorkspace's arrays; the search
    leaves ``state2tok`` all -1 again when it returns."""
    on_demand = gmm_off.shape[0] > 0
    num_frames = gmm_x2.shape[0] if on_demand else ac.shape[0]
    num_cached = gmm_off.shape[0] - 1 if on_demand else 0
    cache = np.empty(num_cached, np.float32)
    cache_frame = np.full(num_cached, -1, np.int64)
    num_pdfs = num_cached if on_demand else ac.shape[1]
    n_eval = np.zeros(1, np.int64)
    cap = 1024
    toks_f = np.empty((cap, 3 if keep_links else 5), np.float64)
    toks_i = np.empty((cap, 3 if keep_links else 7), np.int64)
    links_f = np.empty((cap * 2, 2), np.float64)
    links_i = np.empty((cap * 2, 4), np.int64)
    ctr = np.array([0, -1, 0, -1], np.int64)
    frame_head = np.full(num_frames + 1, -1, np.int64)
    must_fl = np.ones(num_frames + 1, np.bool_)
    must_tok = np.ones(num_frames + 1, np.bool_)
    cost_offsets = np.zeros(num_frames, np.float64)
    # per frame: tokens expanded; those below the cutoff; pdfs computed (on-demand mode)
    expanded = np.zeros((num_frames, 3), np.int64)
    cur_states = lists[0]    # the active states of the newest frame
    cur_toks = lists[1]
    prev_states = lists[2]
    prev_toks = lists[3]
    queue = lists[4]         # replaced by a larger copy in the rare case it overflows

    t0 = _new_tok(toks_f, toks_i, ctr, 0.0, 0, frame_head)
    if not keep_links:
        _set_backpointer(toks_f, toks_i, t0, -1, 0, 0, 0.0, 0.0)
    stamp = 0
    state2tok[start] = t0
    cur_states[0] = start
    cur_toks[0] = t0
    n_cur = 1
    cutoff = beam
    for frame in range(num_frames + 1):
        # ---- ProcessNonemitting(cutoff) on frame list `frame` ----
        nq = 0
        for i in range(n_cur):
            if n_eps[cur_states[i]] != 0:
                queue[nq] = cur_states[i]
                nq += 1
        status = 1
        while status != 0:
            n_cur, nq, status = _process_nonemitting(
                frame, cutoff, arc_start, arc_il, arc_ol, arc_w, arc_next, n_eps, state2tok,
                cur_states, cur_toks, n_cur, queue, nq, toks_f, toks_i, links_i, links_f, ctr,
                frame_head, keep_links)
            if status == 1:
                toks_f = _grow(toks_f)
                toks_i = _grow(toks_i)
                links_f = _grow(links_f)
                links_i = _grow(links_i)
            elif status == 2:
                queue = np.concatenate((queue, np.empty(queue.shape[0], np.int64)))
        if frame == num_frames:
            break
        # ---- PruneActiveTokens every prune_interval frames ----
        if frame % prune_interval == 0:
            if keep_links:
                _prune_active_tokens(frame, frame_head, must_fl, must_tok, toks_f, toks_i,
                                     links_i, links_f, ctr, lattice_beam,
                                     lattice_beam * PRUNE_SCALE)
            elif frame > 0:
                stamp += 1
                _collect_backpointers(frame, frame_head, toks_f, toks_i, links_i, ctr, stamp)
        # ---- ProcessEmitting: frame list `frame` -> `frame + 1` ----
        n_prev = n_cur
        need = 0
        for i in range(n_cur):
            prev_states[i] = cur_states[i]
            prev_toks[i] = cur_toks[i]
            state2tok[cur_states[i]] = -1
            need += arc_start[cur_states[i] + 1] - arc_start[cur_states[i]]
        while ctr[_T_USED] + need > toks_f.shape[0]:
            toks_f = _grow(toks_f)
            toks_i = _grow(toks_i)
        while keep_links and ctr[_L_USED] + need > links_f.shape[0]:
            links_f = _grow(links_f)
            links_i = _grow(links_i)
        cur_cutoff, adaptive_beam, best_i = _get_cutoff(prev_toks, n_prev, toks_f, beam,
                                                        max_active, min_active, beam_delta,
                                                        tmp)
        next_cutoff = _INF
        cost_offset = 0.0
        if best_i >= 0:
            s = prev_states[best_i]
            tc = toks_f[prev_toks[best_i], 0]
            cost_offset = -tc
            for a in range(arc_start[s], arc_start[s + 1]):
                if arc_il[a] != 0:
                    pdf = tid2pdf[arc_il[a]]       # as in _process_emitting
                    if pdf >= num_pdfs:
                        raise ValueError(_PDF_RANGE)
                    if on_demand and cache_frame[pdf] != frame:
                        _fill_cache(frame, pdf, gmm_x2, gmm_proj, gmm_gconst, gmm_off, acwt,
                                    cache, cache_frame, n_eval)
                    w = (np.float64(arc_w[a]) + cost_offset
                         - (np.float64(cache[pdf]) if on_demand
                            else np.float64(ac[frame, pdf]))
                         + tc)
                    if w + adaptive_beam < next_cutoff:
                        next_cutoff = w + adaptive_beam
        cost_offsets[frame] = cost_offset
        n_cur, next_cutoff, n_exp, n_below = _process_emitting(
            frame, cur_cutoff, adaptive_beam, next_cutoff, cost_offset, arc_start, arc_il,
            arc_ol, arc_w, arc_next, ac, tid2pdf, prev_states, prev_toks, n_prev, state2tok,
            cur_states, cur_toks, toks_f, toks_i, links_i, links_f, ctr, frame_head, keep_links,
            gmm_x2, gmm_proj, gmm_gconst, gmm_off, acwt, cache, cache_frame, n_eval)
        expanded[frame, 0] = n_exp
        expanded[frame, 1] = n_below
        expanded[frame, 2] = n_eval[0]
        n_eval[0] = 0
        cutoff = next_cutoff

    # ---- ComputeFinalCosts + FinalizeDecoding ----
    best = _INF
    best_final = _INF
    for i in range(n_cur):
        t = cur_toks[i]
        fc = np.float64(final_w[cur_states[i]])
        toks_f[t, 2] = fc
        if toks_f[t, 0] < best:
            best = toks_f[t, 0]
        if toks_f[t, 0] + fc < best_final:
            best_final = toks_f[t, 0] + fc
    for i in range(n_cur):                 # the workspace's map back to all -1
        state2tok[cur_states[i]] = -1
    final_nonempty = best_final != _INF
    final_best = best_final if final_nonempty else best
    if not keep_links:
        return (frame_head, toks_f, toks_i, links_i, links_f, cost_offsets, final_nonempty,
                expanded)
    _prune_forward_links_final(num_frames, frame_head, toks_f, toks_i, links_i, links_f, ctr,
                               lattice_beam, final_nonempty, final_best)
    for f in range(num_frames - 1, -1, -1):
        _prune_forward_links(f, frame_head, toks_f, toks_i, links_i, links_f, ctr,
                             lattice_beam, 0.0)
        _prune_tokens_for_frame(f + 1, frame_head, toks_f, toks_i, links_i, ctr)
    _prune_tokens_for_frame(0, frame_head, toks_f, toks_i, links_i, ctr)
    return (frame_head, toks_f, toks_i, links_i, links_f, cost_offsets, final_nonempty,
            expanded)


@njit(**_JIT)
def _raw_lattice(frame_head, toks_f, toks_i, links_i, links_f, cost_offsets, final_nonempty):
    """Kaldi's GetRawLattice(use_final_probs=true) after FinalizeDecoding: states in frame
    order, each frame's tokens in creation order topologically sorted on epsilon links
    (Kahn), so the start token is state 0 and every arc goes to a higher state."""
    num_frames = frame_head.shape[0] - 1
    ntok = toks_f.shape[0]
    tok2state = np.full(ntok, -1, np.int64)
    indeg = np.zeros(ntok, np.int64)
    order = np.empty(ntok, np.int64)     # tokens by state number
    n_states = 0
    n_arcs = 0
    cycle = False
    frame_list = np.empty(ntok, np.int64)
    for f in range(num_frames + 1):
        m = 0
        t = frame_head[f]
        while t >= 0:
            frame_list[m] = t
            m += 1
            k = toks_i[t, 0]
            while k >= 0:
                n_arcs += 1
                if links_i[k, 1] == 0:
                    indeg[links_i[k, 0]] += 1
                k = links_i[k, 3]
            t = toks_i[t, 1]
        first = n_states
        head = n_states
        for j in range(m - 1, -1, -1):        # creation order (lists are newest first)
            t = frame_list[j]
            if indeg[t] == 0:
                order[n_states] = t
                tok2state[t] = n_states
                n_states += 1
        while head < n_states:
            t = order[head]
            head += 1
            k = toks_i[t, 0]
            while k >= 0:
                if links_i[k, 1] == 0:
                    nt = links_i[k, 0]
                    indeg[nt] -= 1
                    if indeg[nt] == 0:
                        order[n_states] = nt
                        tok2state[nt] = n_states
                        n_states += 1
                k = links_i[k, 3]
        if n_states - first < m:              # an epsilon cycle: keep the rest as they come
            cycle = True
            for j in range(m - 1, -1, -1):
                t = frame_list[j]
                if tok2state[t] < 0:
                    order[n_states] = t
                    tok2state[t] = n_states
                    n_states += 1
    src = np.empty(n_arcs, np.int64)
    dst = np.empty(n_arcs, np.int64)
    il = np.empty(n_arcs, np.int64)
    ol = np.empty(n_arcs, np.int64)
    g = np.empty(n_arcs, np.float64)
    a = np.empty(n_arcs, np.float64)
    final_g = np.full(n_states, _INF)
    final_a = np.full(n_states, _INF)
    j = 0
    for s in range(n_states):
        t = order[s]
        f = toks_i[t, 2]
        k = toks_i[t, 0]
        while k >= 0:
            src[j] = s
            dst[j] = tok2state[links_i[k, 0]]
            il[j] = links_i[k, 1]
            ol[j] = links_i[k, 2]
            g[j] = links_f[k, 0]
            a[j] = links_f[k, 1] - (cost_offsets[f] if links_i[k, 1] != 0 else 0.0)
            j += 1
            k = links_i[k, 3]
        if f == num_frames:
            if final_nonempty:
                if toks_f[t, 2] != _INF:
                    final_g[s] = toks_f[t, 2]
                    final_a[s] = 0.0
            else:
                final_g[s] = 0.0
                final_a[s] = 0.0
    return n_states, src, dst, il, ol, g, a, final_g, final_a, cycle


@njit(**_JIT)
def best_path_arcs(num_states, src, dst, g, a, final_g, final_a):
    """The arcs of the cheapest start-to-final path of a lattice whose states are numbered
    topologically (start 0, arcs sorted by source, each arc to a higher state): one forward
    pass, ties to the first arc. Empty when no final state is reachable."""
    alpha = np.full(num_states, _INF)
    back = np.full(num_states, -1, np.int64)
    if num_states == 0:
        return np.empty(0, np.int64)
    alpha[0] = 0.0
    for i in range(src.shape[0]):
        c = alpha[src[i]] + g[i] + a[i]
        if c < alpha[dst[i]]:
            alpha[dst[i]] = c
            back[dst[i]] = i
    best = _INF
    best_s = -1
    for s in range(num_states):
        c = alpha[s] + final_g[s] + final_a[s]
        if c < best:
            best = c
            best_s = s
    if best_s < 0:
        return np.empty(0, np.int64)
    n = 0
    s = best_s
    while back[s] >= 0:
        n += 1
        s = src[back[s]]
    out = np.empty(n, np.int64)
    s = best_s
    while back[s] >= 0:
        n -= 1
        out[n] = back[s]
        s = src[back[s]]
    return out


def lattice_search(graph: GraphArrays, scaled_loglikes: Optional[np.ndarray],
                   tid2pdf: np.ndarray, opts: SearchOptions, best_path_only: bool = False,
                   gmm: Optional[tuple] = None,
                   workspace: Optional[SearchWorkspace] = None) -> SearchOutput:
    """Decode one utterance. ``scaled_loglikes`` is (T, num_pdfs): acoustic_scale times the
    pdf log-likelihoods (Kaldi's DecodableMatrixScaledMapped); ``tid2pdf[tid]`` maps an input
    label to its column. Or, with ``gmm = (OnDemandGmm, features (T, D), acoustic_scale)`` and
    no matrix, the search computes the pdfs it reaches (Kaldi's DecodableAmDiagGmmScaled; see
    :mod:`nnetmix.decode.gmmframes`). ``best_path_only``: the same search keeping backpointers
    instead of forward links; the lattice returned is then the best path alone (linear).
    ``workspace``: the graph's :class:`SearchWorkspace` to reuse (one search at a time); without
    it the state-sized arrays are made for this call. Raises ValueError when the epsilon arcs of
    a frame form a cycle (lattice mode) or an arc's pdf is beyond the matrix's columns (or the
    GMM's pdfs)."""
    if gmm is not None:
        model, feats, acwt = gmm
        x2, proj, gconst, off = model.design(feats), model.proj_t, model.gconst, model.offsets
        ac = _NO_MATRIX
    else:
        x2, proj, gconst, off, acwt = _NO_GMM
        ac = np.ascontiguousarray(scaled_loglikes, dtype=np.float32)
    ws = workspace if workspace is not None else SearchWorkspace(graph.num_states)
    ws._enter(graph.num_states)
    clean = False
    try:
        (frame_head, toks_f, toks_i, links_i, links_f, offsets, final_nonempty,
         expanded) = _search(graph.arc_start, graph.ilabel, graph.olabel, graph.weight,
                             graph.nextstate, graph.final, graph.num_input_eps, graph.start, ac,
                             np.ascontiguousarray(tid2pdf, dtype=np.int64), float(opts.beam),
                             int(opts.max_active), int(opts.min_active),
                             float(opts.lattice_beam), max(int(opts.prune_interval), 1),
                             float(opts.beam_delta), not best_path_only, x2, proj, gconst, off,
                             float(acwt), ws.state2tok, ws.lists, ws.costs)
        clean = True
    finally:
        ws._leave(clean)
    if best_path_only:
        il, ol, g, a, fc, found = _trace_backpointers(frame_head, toks_f, toks_i,
                                                      final_nonempty)
        n = len(il) + 1 if found else 0
        final_g, final_a = np.full(n, np.inf), np.full(n, np.inf)
        if found:
            final_g[-1], final_a[-1] = fc, 0.0
        steps = np.arange(len(il), dtype=np.int64)
        return SearchOutput(RawLattice(n, 0, steps, steps + 1, il, ol, g, a, final_g, final_a),
                            bool(final_nonempty), expanded)
    n, src, dst, il, ol, g, a, fg, fa, cycle = _raw_lattice(frame_head, toks_f, toks_i,
                                                            links_i, links_f, offsets,
                                                            final_nonempty)
    if cycle:
        raise ValueError("Epsilon loops exist in your decoding graph (this is not allowed!)")
    return SearchOutput(RawLattice(int(n), 0, src, dst, il, ol, g, a, fg, fa),
                        bool(final_nonempty), expanded)
