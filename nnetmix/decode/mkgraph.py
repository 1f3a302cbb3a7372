"""File-level steps of utils/mkgraph.sh, one per bin/ tool: read the inputs, call
:mod:`nnetmix.decode.graph`, write the output atomically (temporary name, then rename).

H and the self-loops of a monophone tree come from kaldi-hmm-gmm, as before (so monophone graphs
stay byte for byte what they were); any other tree (a triphone tree, which kaldi-hmm-gmm 1.1.4
cannot build) goes through :mod:`nnetmix.hmm.h_transducer`, Kaldi's GetHTransducer and
AddSelfLoops over our own tree and transition model. On monophone trees the two agree arc for
arc (tests/hmm/test_hmm_cd_graphs.py); weights differ by up to about 1e-4 only where the
bindings' transition model had to get trained probabilities back through mle_update
(nnetmix.hmm.khg)."""
from __future__ import annotations

import logging
import os

import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst (importing kaldifst first can hang)
import kaldifst

from nnetmix.decode.graph import GraphError, add_self_loops as khg_add_self_loops
from nnetmix.decode.graph import (make_clg, make_h, make_hclga, make_lg, read_ilabel_info,
                                  read_int_list, write_ilabel_info, write_int_list)
from nnetmix.hmm.h_transducer import HTransducerError, add_self_loops, get_h_transducer
from nnetmix.hmm.khg import KhgUnsupported, to_khg_context_dependency, to_khg_transition_model
from nnetmix.kaldi.context_dep import read_tree
from nnetmix.kaldi.fstfile import FstFormatError, read_checked_fst
from nnetmix.kaldi.transition_model import read_transition_model
from nnetmix.outfile import write_via_temp

__all__ = ["read_fst", "write_fst", "compile_lg", "compose_context", "make_h_transducer",
           "compile_hclga", "add_self_loops_file", "tree_info"]

logger = logging.getLogger(__name__)


def read_fst(path: str) -> "kaldifst.StdVectorFst":
    """An FST file checked before kaldifst sees it (:mod:`nnetmix.kaldi.fstfile`)."""
    try:
        return read_checked_fst(path)
    except FstFormatError as e:
        raise GraphError(str(e)) from None


def write_fst(fst, path: str) -> None:
    """Write an FST by :mod:`nnetmix.outfile`'s rule (a temporary file renamed into place)."""
    write_via_temp(path, fst.write)


def compile_lg(L_path: str, G_path: str, out_path: str, push: bool = True) -> tuple[int, int]:
    LG = make_lg(read_fst(L_path), read_fst(G_path), use_push_special=push)
    write_fst(LG, out_path)
    return LG.num_states, sum(LG.num_arcs(s) for s in range(LG.num_states))


def compose_context(context_width: int, central_position: int, disambig_in: str,
                    disambig_out: str, ilabels_out: str, in_fst: str, out_fst: str) -> int:
    """fstcomposecontext --context-size --central-position --read-disambig-syms
    --write-disambig-syms ilabels_out < in_fst > out_fst (arc-sorted on input labels)."""
    disambig = read_int_list(disambig_in) if disambig_in else []
    CLG, ilabels = make_clg(read_fst(in_fst), disambig, context_width, central_position)
    write_ilabel_info(ilabels_out, ilabels)
    if disambig_out:
        # the ilabels of the disambiguation symbols: windows [-phone] in ilabel_info
        write_int_list(disambig_out, [i for i, w in enumerate(ilabels) if len(w) == 1 and w[0] < 0])
    write_fst(CLG, out_fst)
    return len(ilabels)


def _khg_models(tm, tree):
    """(kaldi-hmm-gmm ContextDependency, TransitionModel) for a monophone tree (``tree`` None:
    the monophone tree of the topology), or None for any other tree. The caller keeps both
    referenced while the C++ objects are used."""
    try:
        kc = to_khg_context_dependency(tree, tm.topo) if tree is not None else None
        return kc, to_khg_transition_model(tm, tree=tree, ctx_dep=kc)
    except (KhgUnsupported, ValueError):
        return None


def make_h_transducer(ilabels_path: str, tree_path: str, model: str, out_fst: str,
                      disambig_out: str = "", transition_scale: float = 1.0) -> int:
    tm = read_transition_model(model)
    tree = read_tree(tree_path)
    ilabels = read_ilabel_info(ilabels_path)
    khg_models = _khg_models(tm, tree)
    try:
        if khg_models is not None:
            H, disambig_tid = make_h(ilabels, *khg_models, transition_scale)
        else:
            H, disambig_tid = get_h_transducer(ilabels, tree, tm, transition_scale)
    except HTransducerError as e:
        raise GraphError(f"{ilabels_path}, {tree_path}, {model}: {e}") from None
    if disambig_out:
        write_int_list(disambig_out, disambig_tid)
    write_fst(H, out_fst)
    return H.num_states


def compile_hclga(Ha_path: str, CLG_path: str, disambig_tid_path: str, out_fst: str) -> int:
    HCLGa = make_hclga(read_fst(Ha_path), read_fst(CLG_path), read_int_list(disambig_tid_path))
    write_fst(HCLGa, out_fst)
    return HCLGa.num_states


def add_self_loops_file(model: str, in_fst: str, out_fst: str, self_loop_scale: float = 0.1,
                        reorder: bool = True, tree: str = "") -> int:
    """add-self-loops. kaldi-hmm-gmm builds a TransitionModel only from a monophone tree and a
    topology, so the tree is read too (default: ``tree`` beside the model; without one, the
    monophone tree of the topology is tried); for any other tree, our own AddSelfLoops."""
    if not tree:
        beside = os.path.join(os.path.dirname(model) or ".", "tree")
        tree = beside if os.path.isfile(beside) else ""
    tm = read_transition_model(model)
    fst = read_fst(in_fst)
    khg_models = _khg_models(tm, read_tree(tree) if tree else None)
    try:
        if khg_models is not None:
            out = khg_add_self_loops(khg_models[1], fst, self_loop_scale, reorder)
        else:
            out = add_self_loops(tm, fst, self_loop_scale, reorder)
    except HTransducerError as e:
        raise GraphError(f"{in_fst}, {model}: {e}") from None
    write_fst(out, out_fst)
    return out.num_states


def tree_info(tree_path: str) -> dict[str, int]:
    """tree-info: num-pdfs, context-width, central-position."""
    tree = read_tree(tree_path)
    return {"num-pdfs": tree.num_pdfs, "context-width": tree.N, "central-position": tree.P}
