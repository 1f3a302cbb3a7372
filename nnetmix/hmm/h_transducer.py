"""The H transducer and self-loop expansion for any tree (Kaldi's hmm-utils.cc), in Python.

kaldi-hmm-gmm 1.1.4 binds GetHTransducer and AddSelfLoops, but only for its own TransitionModel,
which it can build from monophone trees alone (nnetmix.hmm.khg). These are Kaldi's algorithms
written over nnetmix.kaldi's :class:`ContextDependency` and :class:`TransitionModel`, so
context-dependent (triphone) trees get the same graphs:

* :func:`get_h_transducer` is GetHTransducer: one HMM acceptor per distinct (central phone,
  pdf per pdf-class) (GetHmmAsFsa, self-loops left out, the forward arcs weighted by
  GetTransitionLogProbIgnoringSelfLoops, scaled by ``transition_scale``), joined by MakeLoopFst
  with the ilabel_info index as output label; disambiguation windows become new input symbols
  numbered from num_transition_ids + 1. :class:`HTransducerBuilder` does the same and keeps the
  HMM of each window for the next call (one H per utterance in training-graph compilation).
  Topologies whose inner states do not emit (Kaldi's RemoveEpsLocal case) are refused.
* :func:`add_self_loops` is AddSelfLoops: with reorder=true (MakePrecedingInputSymbolsSameClass)
  each state entered by a transition-state gets that state's self-loop and its out-weights
  times the non-self-loop probability, both at ``self_loop_scale``; with reorder=false
  (MakeFollowingInputSymbolsSameClass) the state that leaves by it does.

Both build the FST in Kaldi's state and arc order, so for a monophone tree the output equals the
bindings' arc for arc (tests/hmm/test_hmm_cd_graphs.py). Weights are float32 as OpenFst's.
"""
from __future__ import annotations

from typing import Sequence

import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst (importing kaldifst first can hang)
import kaldifst
import numpy as np

from nnetmix.errors import NnetmixError
from nnetmix.kaldi.context_dep import ContextDependency
from nnetmix.kaldi.hmm_topology import NO_PDF, HmmTopology
from nnetmix.kaldi.transition_model import TransitionModel

__all__ = ["HTransducerError", "HTransducerBuilder", "FstLists", "read_fst_lists", "build_fst",
           "tuple_index", "window_pdfs", "get_h_transducer", "add_self_loops",
           "remove_input_symbols"]

_F32 = np.float32


class HTransducerError(NnetmixError):
    """The tree, model and context windows do not fit together (Kaldi's KALDI_ERR cases)."""


class FstLists:
    """A StdVectorFst as Python lists, in OpenFst's state and arc order: ``arcs[s]`` is a list
    of [ilabel, olabel, weight (float32), nextstate]; ``finals[s]`` is inf where not final."""

    def __init__(self, start: int, arcs: list, finals: list):
        self.start, self.arcs, self.finals = start, arcs, finals

    @property
    def num_states(self) -> int:
        return len(self.arcs)

    def add_state(self) -> int:
        self.arcs.append([])
        self.finals.append(float("inf"))
        return len(self.arcs) - 1


def read_fst_lists(fst) -> FstLists:
    """Exact copy of the arcs (weights through the arc iterator, not the text form)."""
    n = fst.num_states
    arcs = [[[a.ilabel, a.olabel, _F32(a.weight.value), a.nextstate]
             for a in kaldifst.ArcIterator(fst, s)] for s in range(n)]
    finals = [_F32(fst.final(s).value) for s in range(n)]
    return FstLists(fst.start if n else -1, arcs, finals)


def build_fst(g: FstLists) -> "kaldifst.StdVectorFst":
    fst = kaldifst.StdVectorFst()
    for _ in range(g.num_states):
        fst.add_state()
    if g.start >= 0:
        fst.start = g.start
    for s, arcs in enumerate(g.arcs):
        for il, ol, w, d in arcs:
            fst.add_arc(s, kaldifst.StdArc(int(il), int(ol), float(w), int(d)))
        if np.isfinite(g.finals[s]):
            fst.set_final(s, float(g.finals[s]))
    return fst


def tuple_index(tm: TransitionModel) -> dict[tuple[int, int, int, int], int]:
    """TupleToTransitionState: (phone, hmm-state, forward pdf, self-loop pdf) -> state (1-based)."""
    return {tuple(t): i + 1 for i, t in enumerate(tm.tuples.tolist())}


def window_pdfs(tree: ContextDependency, topo: HmmTopology, window: Sequence[int]) -> list[int]:
    """The pdf of each pdf-class of the window's central phone (ContextDependency::Compute)."""
    phone = int(window[tree.P])
    pdfs = []
    for c in range(topo.num_pdf_classes(phone)):
        pdf = tree.compute_pdf(window, c)
        if pdf is None:
            raise HTransducerError(f"the tree gives no pdf for pdf-class {c} of context window "
                                   f"{list(window)} (tree and topology or lang do not match?)")
        pdfs.append(pdf)
    return pdfs


def _non_self_loop_log_prob(tm: TransitionModel) -> np.ndarray:
    """ComputeDerivedOfProbs in Kaldi's float arithmetic: log(1 - exp(loop log-prob)) per
    transition-state, 0 without a self-loop."""
    out = np.zeros(tm.num_transition_states + 1, dtype=_F32)
    loops = np.flatnonzero(tm.tid_is_selfloop)
    # each step in double, rounded to float where Kaldi stores a float (expf and logf are
    # correctly rounded in glibc; numpy's float32 exp/log can be a few ulps off)
    p = np.exp(tm.log_probs[loops].astype(np.float64)).astype(_F32)
    q = (1.0 - p.astype(np.float64)).astype(_F32)
    q = np.where(q <= 0, _F32(1e-10), q)
    out[tm.tid2state[loops]] = np.log(q.astype(np.float64)).astype(_F32)
    return out


def _hmm_as_fsa(window: Sequence[int], tree: ContextDependency, tm: TransitionModel,
                index: dict, nsl: np.ndarray, scale: float) -> tuple[tuple, FstLists]:
    """GetHmmAsFsa: (cache key, acceptor) for one phone in context."""
    if len(window) != tree.N:
        raise HTransducerError(f"context size mismatch: ilabel-info window {list(window)} has "
                               f"{len(window)} phones, the tree expects {tree.N}")
    phone = int(window[tree.P])
    if phone == 0:
        raise HTransducerError(f"phone == 0 at the central position of window {list(window)}")
    entry = tm.topo.topology_for_phone(phone)
    pdfs = window_pdfs(tree, tm.topo, window)
    key = (phone, tuple(pdfs))
    g = FstLists(0, [[] for _ in entry], [float("inf")] * len(entry))
    g.finals[-1] = _F32(0.0)
    for h, st in enumerate(entry):
        for k, (dst, prob) in enumerate(st.transitions):
            if dst == h:
                continue  # self-loops are added later (add_self_loops)
            if st.forward_pdf_class == NO_PDF:
                label, lp = 0, _F32(np.log(_F32(prob)))
            else:
                loop = st.self_loop_pdf_class
                ts = index.get((phone, h, pdfs[st.forward_pdf_class],
                                pdfs[loop] if loop != NO_PDF else -1))
                if ts is None:
                    raise HTransducerError(
                        f"the transition model has no state for phone {phone}, HMM state {h} "
                        f"and pdfs {pdfs} (tree and model do not match?)")
                label = int(tm.state2id[ts]) + k
                lp = _F32(tm.log_probs[label] - nsl[ts])
            g.arcs[h].append([label, label, _F32(-lp), dst])
    if any(a[0] == 0 for arcs in g.arcs for a in arcs):
        raise HTransducerError(f"phone {phone}: topologies with non-emitting inner states are "
                               "not supported (Kaldi removes their epsilons with RemoveEpsLocal)")
    if scale != 1.0:
        for arcs in g.arcs:
            for a in arcs:
                a[2] = _F32(a[2] * _F32(scale))
    return key, g


def _initial_acyclic(g: FstLists) -> bool:
    return not any(a[3] == g.start for arcs in g.arcs for a in arcs)


def _make_loop_fst(fsts: list) -> FstLists:
    """MakeLoopFst: every acceptor hangs off state 0 (start and final) with output label i;
    an acceptor that shares a Python object with an earlier one reuses its first arc."""
    ans = FstLists(0, [[]], [_F32(0.0)])
    cache: dict[int, list] = {}
    for i, g in enumerate(fsts):
        if g is None:
            continue
        if id(g) in cache:
            arc = list(cache[id(g)])
            arc[1] = i
            ans.arcs[0].append(arc)
            continue
        share = (_initial_acyclic(g) and len(g.arcs[g.start]) == 1
                 and not np.isfinite(g.finals[g.start]))
        smap = [0 if (s == g.start and share) else ans.add_state() for s in range(g.num_states)]
        if not share:
            arc = [0, i, _F32(0.0), smap[g.start]]
            cache[id(g)] = arc
            ans.arcs[0].append(arc)
        for s in range(g.num_states):
            for il, _ol, w, d in g.arcs[s]:
                first = s == g.start and share
                arc = [il, i if first else 0, w, smap[d]]
                ans.arcs[smap[s]].append(arc)
                if first:
                    cache[id(g)] = arc
            if np.isfinite(g.finals[s]):
                ans.arcs[smap[s]].append([0, 0, g.finals[s], 0])
    return ans


class HTransducerBuilder:
    """GetHTransducer for one tree and model, keeping each window's HMM acceptor between calls
    (a training-graph compiler builds one H per utterance from mostly the same windows)."""

    def __init__(self, tree: ContextDependency, tm: TransitionModel,
                 transition_scale: float = 1.0):
        self.tree, self.tm, self.scale = tree, tm, float(transition_scale)
        self._index = tuple_index(tm)
        self._nsl = _non_self_loop_log_prob(tm)
        self._phones = set(tm.phones.tolist())
        self._by_window: dict[tuple, FstLists] = {}
        self._by_key: dict[tuple, FstLists] = {}

    def _hmm(self, win: tuple) -> FstLists:
        g = self._by_window.get(win)
        if g is None:
            if len(win) == self.tree.N and win[self.tree.P] not in self._phones | {0}:
                raise HTransducerError(f"phone {win[self.tree.P]} of window {list(win)} is not "
                                       "in the topology")
            key, g = _hmm_as_fsa(win, self.tree, self.tm, self._index, self._nsl, self.scale)
            g = self._by_window[win] = self._by_key.setdefault(key, g)
        return g

    def build(self, ilabel_info: Sequence[Sequence[int]]
              ) -> tuple["kaldifst.StdVectorFst", list[int]]:
        """(H without self-loops, the disambiguation symbols on its input side)."""
        if not ilabel_info or len(ilabel_info[0]):
            raise HTransducerError("ilabel_info must start with the empty window (epsilon)")
        fsts: list = [None] * len(ilabel_info)
        disambig: list[int] = []
        next_sym = self.tm.num_transition_ids + 1
        for j in range(1, len(ilabel_info)):
            win = tuple(int(x) for x in ilabel_info[j])
            if not win:
                raise HTransducerError(f"ilabel_info entry {j} is empty")
            if win[0] < 0 or (win[0] == 0 and len(win) == 1):
                if len(win) != 1:
                    raise HTransducerError(f"ilabel_info entry {j} {list(win)} is a grammar-FST "
                                           "symbol (--nonterm-phones-offset is not supported)")
                disambig.append(next_sym)
                fsts[j] = FstLists(0, [[[next_sym, next_sym, _F32(0.0), 1]], []],
                                   [float("inf"), _F32(0.0)])
                next_sym += 1
                continue
            fsts[j] = self._hmm(win)
        return build_fst(_make_loop_fst(fsts)), disambig


def get_h_transducer(ilabel_info: Sequence[Sequence[int]], tree: ContextDependency,
                     tm: TransitionModel, transition_scale: float = 1.0
                     ) -> tuple["kaldifst.StdVectorFst", list[int]]:
    """GetHTransducer: (H without self-loops, the disambiguation symbols on its input side)."""
    return HTransducerBuilder(tree, tm, transition_scale).build(ilabel_info)


def _tstate_classes(tm: TransitionModel, disambig: Sequence[int], check_no_self_loops: bool):
    """TidToTstateMapper: transition-id -> transition-state, epsilon and disambig -> 0."""
    n_tid = tm.num_transition_ids
    dis = set(int(d) for d in disambig)
    tid2state, loop = tm.tid2state, tm.tid_is_selfloop

    def f(label: int) -> int:
        if 1 <= label <= n_tid:
            if check_no_self_loops and loop[label]:
                raise HTransducerError("AddSelfLoops: graph already has self-loops "
                                       f"(transition-id {label})")
            return int(tid2state[label])
        if label != 0 and label < 1000000 and label not in dis:
            raise HTransducerError(f"AddSelfLoops: input label {label} is neither a "
                                   f"transition-id (1..{n_tid}) nor a disambiguation symbol "
                                   "(graph and model do not match?)")
        return 0
    return f


def _make_preceding_same_class(g: FstLists, f) -> None:
    """MakePrecedingInputSymbolsSameClass(start_is_epsilon=true): states entered by arcs of
    several classes get one eps-linked copy per class of non-epsilon arc."""
    no_class = -1
    classes = [no_class] * g.num_states
    classes[g.start] = 0
    bad = set()
    for arcs in g.arcs:
        for a in arcs:
            c = f(a[0])
            if classes[a[3]] == no_class:
                classes[a[3]] = c
            elif classes[a[3]] != c:
                bad.add(a[3])
    if not bad:
        return
    state_map: dict[tuple[int, int], int] = {}
    for s in range(g.num_states):
        for a in g.arcs[s]:
            if a[0] != 0 and a[3] in bad:
                p = (a[3], f(a[0]))
                if p not in state_map:
                    new = state_map[p] = g.add_state()
                    g.arcs[new].append([0, 0, _F32(0.0), a[3]])
                a[3] = state_map[p]


def _make_following_same_class(g: FstLists, f) -> None:
    """MakeFollowingInputSymbolsSameClass(end_is_epsilon=true): a state whose out-arcs (or
    final weight) mix classes gets each non-epsilon arc moved behind a new epsilon arc."""
    bad = []
    for s in range(g.num_states):
        classes = {f(a[0]) for a in g.arcs[s]}
        c = next(iter(classes)) if len(classes) == 1 else None
        if len(classes) > 1 or (c not in (None, 0) and np.isfinite(g.finals[s])):
            bad.append(s)
    for s in bad:
        for a in list(g.arcs[s]):
            if a[0] != 0:
                new = g.add_state()
                g.arcs[new].append([a[0], 0, _F32(0.0), a[3]])
                a[0], a[3] = 0, new


def add_self_loops(tm: TransitionModel, fst, self_loop_scale: float = 1.0, reorder: bool = True,
                   disambig: Sequence[int] = (), check_no_self_loops: bool = True
                   ) -> "kaldifst.StdVectorFst":
    """AddSelfLoops on a copy of ``fst``: with ``reorder`` (Kaldi's default) a state entered
    by a transition-state gets its self-loop (the loop follows the forward transition), else a
    state left by one does (AddSelfLoopsNoReorder)."""
    g = read_fst_lists(fst)
    if g.start < 0:
        raise HTransducerError("AddSelfLoops: the graph is empty (no start state)")
    f = _tstate_classes(tm, disambig, check_no_self_loops)
    nsl = _non_self_loop_log_prob(tm)
    scale = _F32(self_loop_scale)
    if reorder:
        _make_preceding_same_class(g, f)
        state_ts = [-1] * g.num_states
        for arcs in g.arcs:
            for a in arcs:
                t = f(a[0])
                if state_ts[a[3]] == -1:
                    state_ts[a[3]] = t
                elif state_ts[a[3]] != t:
                    raise HTransducerError("internal error: state entered by two "
                                           "transition-states")
    else:
        _make_following_same_class(g, f)
        state_ts = [f(arcs[0][0]) if arcs else -1 for arcs in g.arcs]
    for s in range(g.num_states):
        ts = state_ts[s]
        if ts <= 0:
            continue
        w = _F32(-nsl[ts] * scale)
        if reorder:
            g.finals[s] = _F32(g.finals[s] + w)
        for a in g.arcs[s]:
            a[2] = _F32(a[2] + w)
        lo, hi = int(tm.state2id[ts]), int(tm.state2id[ts + 1])
        loops = [t for t in range(lo, hi) if tm.tid_is_selfloop[t]]
        if loops:
            g.arcs[s].append([loops[0], 0, _F32(-tm.log_probs[loops[0]] * scale), s])
    return build_fst(g)


def remove_input_symbols(fst, symbols: Sequence[int]) -> "kaldifst.StdVectorFst":
    """RemoveSomeInputSymbols / fstrmsymbols: the given input labels become epsilon."""
    drop = set(int(x) for x in symbols)
    g = read_fst_lists(fst)
    for arcs in g.arcs:
        for a in arcs:
            if a[0] in drop:
                a[0] = 0
    return build_fst(g)
