"""Decoding-graph construction as Kaldi's utils/mkgraph.sh: HCLG = min(det(H o min(det(C o
min(det(L o G)))))) with self-loops added last.

Kaldi's pipeline and what is used here (kaldifst 1.7.17, kaldi-hmm-gmm 1.1.4):

====================================  ==========================================================
Kaldi                                 here
====================================  ==========================================================
fsttablecompose L_disambig G          ``kaldifst.compose`` (L arc-sorted on olabels)
fstdeterminizestar --use-log=true     ``kaldifst.determinize_star(use_log=True)``
fstminimizeencoded                    ``kaldifst.minimize_encoded``
fstpushspecial                        :func:`push_special` (not bound; written here)
fstcomposecontext                     ``kaldifst.compose_context`` (gives the ilabel_info)
make-h-transducer                     ``kaldi_hmm_gmm.get_h_transducer`` (monophone trees; the
                                      others: nnetmix.hmm.h_transducer, see decode/mkgraph.py)
fstrmsymbols disambig_tid.int         :func:`relabel` (input labels to epsilon; not bound)
fstrmepslocal                         ``kaldifst.rmepsilon`` (the full removal: same language
                                      and weights; RemoveEpsLocal is not bound)
add-self-loops --reorder=true         ``kaldi_hmm_gmm.add_self_loops`` (monophone trees; the
                                      others: nnetmix.hmm.h_transducer)
====================================  ==========================================================

Checked on the real Kaldi yesno system: the HCLG built here from its L_disambig.fst, G.fst,
tree and 40.mdl has the same 33 states and 72 arcs as Kaldi's and the same path weights.
kaldi-hmm-gmm objects keep no references to their inputs: the transition model and tree objects
are held by the caller for as long as the C++ side uses them.
"""
from __future__ import annotations

import logging
from typing import Iterable, Sequence

import kaldi_hmm_gmm as khg  # noqa: I001 -- before kaldifst (importing kaldifst first can hang)
import kaldifst
import numpy as np
import scipy.sparse

from nnetmix.decode.fstarrays import fst_from_arrays, graph_arrays
from nnetmix.errors import NnetmixError

__all__ = ["GraphError", "fst_arrays", "relabel", "push_special", "make_lg", "make_clg",
           "make_h", "make_hclga", "add_self_loops", "write_ilabel_info", "read_ilabel_info",
           "read_int_list", "write_int_list", "is_stochastic"]

logger = logging.getLogger(__name__)


class GraphError(NnetmixError):
    """A graph cannot be built (empty composition, unsupported tree, bad input files)."""


def fst_arrays(fst) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray]:
    """(num_states, start, arcs (A, 4) int64 [src, dst, ilabel, olabel] grouped by source
    state, arc weights (A,), final weights (num_states,) with inf where not final) of a
    StdVectorFst, through nnetmix.decode.fstarrays (exact float32 weights, no per-arc Python:
    the text form printed 6 digits and cost minutes and gigabytes on a 20,000-word graph)."""
    g = graph_arrays(fst)
    src = np.repeat(np.arange(g.num_states, dtype=np.int64), np.diff(g.arc_start))
    arcs = np.stack([src, g.nextstate.astype(np.int64), g.ilabel.astype(np.int64),
                     g.olabel.astype(np.int64)], axis=1)
    return (g.num_states, g.start if g.num_states else -1, arcs.reshape(-1, 4),
            g.weight.astype(np.float64), g.final.astype(np.float64))


def _from_arrays(n: int, start: int, arcs: np.ndarray, weights: np.ndarray,
                 finals: np.ndarray) -> "kaldifst.StdVectorFst":
    """Build a StdVectorFst keeping the state numbering and each state's arc order (weights
    rounded to float32, as the FST stores them)."""
    order = np.argsort(arcs[:, 0], kind="stable")
    arcs = arcs[order]
    arc_start = np.zeros(n + 1, dtype=np.int64)
    arc_start[1:] = np.cumsum(np.bincount(arcs[:, 0], minlength=n))
    return fst_from_arrays(n, start if n else -1, arc_start, arcs[:, 2].astype(np.int32),
                           arcs[:, 3].astype(np.int32),
                           np.asarray(weights)[order].astype(np.float32),
                           arcs[:, 1].astype(np.int32), np.asarray(finals, dtype=np.float32))


def relabel(fst, ilabels_to_eps: Iterable[int]) -> "kaldifst.StdVectorFst":
    """fstrmsymbols: replace the given input labels by epsilon."""
    n, start, arcs, w, finals = fst_arrays(fst)
    drop = np.isin(arcs[:, 2], np.array(sorted(set(ilabels_to_eps)), dtype=np.int64))
    arcs = arcs.copy()
    arcs[drop, 2] = 0
    return _from_arrays(n, start, arcs, w, finals)


def push_special(fst, delta: float = 1e-6, max_iter: int = 2000) -> "kaldifst.StdVectorFst":
    """Kaldi's fstpushspecial (fstext/push-special.cc): reweight so that every state's outgoing
    probability mass (arcs + final) is the same constant, keeping every path's weight.

    The potentials are the leading eigenvector v of M (M[i,j] = sum of exp(-w) over arcs i->j,
    plus exp(-final(i)) from each final state i back to the start), found by power iteration
    on M + I (the identity avoids oscillation on periodic graphs): arc weights become
    w + log v(src) - log v(dst), final weights f + log v(i) - log v(start)."""
    n, start, arcs, w, finals = fst_arrays(fst)
    if n == 0:
        return fst
    src, dst = arcs[:, 0], arcs[:, 1]
    p = np.exp(-w)
    pf = np.exp(-finals)
    # M as a sparse matrix, built once: a 20,000-word LG takes hundreds of iterations, and a
    # gather plus bincount over every arc per iteration cost most of make-lg's Python time.
    m = scipy.sparse.csr_matrix((p, (src, dst)), shape=(n, n))
    v = np.ones(n)
    log_v = np.zeros(n)
    for _ in range(max_iter):
        new = m @ v + pf * v[start] + v
        new /= new.max()
        log_new = np.log(np.maximum(new, 1e-300))
        done = np.max(np.abs(log_new - log_v))
        v, log_v = new, log_new
        if done < delta:
            break
    if np.any(v <= 0):
        logger.warning("push_special: some states cannot reach a final state; not pushing")
        return fst
    lv = np.log(v)
    w2 = w + lv[src] - lv[dst]
    f2 = np.where(np.isfinite(finals), finals + lv - lv[start], np.inf)
    return _from_arrays(n, start, arcs, w2, f2)


def is_stochastic(fst, delta: float = 0.01) -> tuple[bool, float, float]:
    """fstisstochastic in the log semiring: (ok, min, max) of -log(sum of outgoing mass)."""
    n, _start, arcs, w, finals = fst_arrays(fst)
    mass = np.bincount(arcs[:, 0], weights=np.exp(-w), minlength=n) + np.exp(-finals)
    cost = -np.log(np.maximum(mass, 1e-300))
    lo, hi = float(cost.min()), float(cost.max())
    return lo >= -delta and hi <= delta, lo, hi


def make_lg(L_disambig, G, use_push_special: bool = True) -> "kaldifst.StdVectorFst":
    """fsttablecompose L_disambig G | fstdeterminizestar --use-log=true | fstminimizeencoded |
    fstpushspecial."""
    L = L_disambig.copy()
    kaldifst.arcsort(L, "olabel")
    LG = kaldifst.compose(L, G)
    if LG.num_states == 0:
        raise GraphError("L o G is empty (do L_disambig.fst and G.fst share words.txt?)")
    if kaldifst.determinize_star(LG, use_log=True):
        raise GraphError("determinization of LG stopped early")
    kaldifst.minimize_encoded(LG)
    return push_special(LG) if use_push_special else LG


def make_clg(LG, disambig_phones: Sequence[int], context_width: int,
             central_position: int) -> tuple["kaldifst.StdVectorFst", list[list[int]]]:
    """fstcomposecontext | fstarcsort --sort_type=ilabel: (CLG, ilabel_info)."""
    CLG, ilabels = kaldifst.compose_context(list(disambig_phones), context_width,
                                            central_position, LG)
    kaldifst.arcsort(CLG, "ilabel")
    return CLG, [list(x) for x in ilabels]


def make_h(ilabel_info: Sequence[Sequence[int]], ctx_dep, trans_model,
           transition_scale: float = 1.0) -> tuple["kaldifst.StdVectorFst", list[int]]:
    """make-h-transducer: (Ha.fst without self-loops, disambiguation transition-ids).
    ``ctx_dep``/``trans_model`` are kaldi-hmm-gmm objects the caller keeps alive."""
    cfg = khg.HTransducerConfig(transition_scale=transition_scale)
    H, disambig_tid = khg.get_h_transducer([list(x) for x in ilabel_info], ctx_dep, trans_model,
                                           cfg)
    return H, list(disambig_tid)


def make_hclga(Ha, CLG, disambig_tid: Sequence[int]) -> "kaldifst.StdVectorFst":
    """fsttablecompose Ha CLG | fstdeterminizestar --use-log=true | fstrmsymbols disambig_tid |
    fstrmepslocal | fstminimizeencoded."""
    H = Ha.copy()
    kaldifst.arcsort(H, "olabel")
    HCLG = kaldifst.compose(H, CLG)
    if HCLG.num_states == 0:
        raise GraphError("H o CLG is empty (do the tree and model match the lang directory?)")
    if kaldifst.determinize_star(HCLG, use_log=True):
        raise GraphError("determinization of HCLGa stopped early")
    HCLG = relabel(HCLG, disambig_tid)
    kaldifst.rmepsilon(HCLG)
    kaldifst.minimize_encoded(HCLG)
    return HCLG


def add_self_loops(trans_model, HCLGa, self_loop_scale: float = 0.1,
                   reorder: bool = True) -> "kaldifst.StdVectorFst":
    """add-self-loops --self-loop-scale --reorder (disambiguation symbols already removed)."""
    return khg.add_self_loops(trans_model=trans_model, ifst=HCLGa,
                              self_loop_scale=self_loop_scale, disambig_syms=[], reorder=reorder)


# -- small files ---------------------------------------------------------------------------------
def write_ilabel_info(path: str, ilabel_info: Sequence[Sequence[int]]) -> None:
    """Kaldi's WriteILabelInfo, binary (fstcomposecontext's ilabels_N_P): ``\\0B``, int32 count
    (size byte 4), then each window as an integer vector (size byte 4, int32 length, data)."""
    out = [b"\0B", b"\x04" + len(ilabel_info).to_bytes(4, "little", signed=True)]
    for win in ilabel_info:
        out.append(b"\x04" + np.array([len(win), *win], dtype="<i4").tobytes())
    with open(path, "wb") as fh:
        fh.write(b"".join(out))


def read_ilabel_info(path: str) -> list[list[int]]:
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:3] != b"\0B\x04" or len(data) < 7:
        raise GraphError(f"{path}: not a binary ilabel_info file (as fstcomposecontext writes)")
    n = int.from_bytes(data[3:7], "little", signed=True)
    pos, out = 7, []
    for _ in range(n):
        k = int.from_bytes(data[pos + 1:pos + 5], "little", signed=True)
        if data[pos:pos + 1] != b"\x04" or k < 0 or pos + 5 + 4 * k > len(data):
            raise GraphError(f"{path}: bad or cut-short integer vector at byte {pos} "
                             f"(vector {len(out)} of {n})")
        out.append(np.frombuffer(data, "<i4", k, pos + 5).tolist())
        pos += 5 + 4 * k
    return out


def read_int_list(path: str) -> list[int]:
    try:
        with open(path, encoding="utf-8") as fh:
            return [int(x) for x in fh.read().split()]
    except (OSError, ValueError) as e:
        raise GraphError(f"{path}: cannot read a list of integers ({e})") from None


def write_int_list(path: str, values: Iterable[int]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(f"{v}\n" for v in values))

