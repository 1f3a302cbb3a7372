"""File-level steps of utils/mkgraph.sh, one per bin/ tool: read the inputs, call
:mod:`nnetmix.decode.graph`, write the output atomically (temporary name, then rename)."""
from __future__ import annotations

import logging
import os
from typing import Optional

import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst (importing kaldifst first can hang)
import kaldifst

from nnetmix.decode.graph import (GraphError, add_self_loops, make_clg, make_h, make_hclga,
                                  make_lg, read_ilabel_info, read_int_list, write_ilabel_info,
                                  write_int_list)
from nnetmix.hmm.khg import KhgUnsupported, to_khg_context_dependency, to_khg_transition_model
from nnetmix.kaldi.context_dep import read_tree
from nnetmix.kaldi.transition_model import read_transition_model

__all__ = ["read_fst", "write_fst", "compile_lg", "compose_context", "make_h_transducer",
           "compile_hclga", "add_self_loops_file", "tree_info"]

logger = logging.getLogger(__name__)


def read_fst(path: str) -> "kaldifst.StdVectorFst":
    if not os.path.isfile(path):
        raise GraphError(f"{path}: no such file")
    try:
        return kaldifst.StdVectorFst.read(path)
    except Exception as e:  # noqa: BLE001 -- kaldifst raises plain RuntimeErrors
        raise GraphError(f"{path}: cannot read an FST of standard (tropical) arcs ({e})") from None


def write_fst(fst, path: str) -> None:
    d = os.path.dirname(path) or "."
    tmp = os.path.join(d, f".{os.path.basename(path)}.tmp{os.getpid()}")
    if not fst.write(tmp):
        raise GraphError(f"{path}: could not write the FST")
    os.replace(tmp, path)


def _khg_models(model: str, tree_path: Optional[str]):
    """(our TransitionModel, kaldi-hmm-gmm ContextDependency, kaldi-hmm-gmm TransitionModel).
    All three must stay referenced while the C++ objects are used."""
    tm = read_transition_model(model)
    tree = read_tree(tree_path) if tree_path else None
    try:
        kc = to_khg_context_dependency(tree, tm.topo) if tree is not None else None
        ktm = to_khg_transition_model(tm, tree=tree, ctx_dep=kc)
    except (KhgUnsupported, ValueError) as e:
        raise GraphError(f"{tree_path or model}: {e}") from None
    return tm, kc, ktm


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


def make_h_transducer(ilabels_path: str, tree_path: str, model: str, out_fst: str,
                      disambig_out: str = "", transition_scale: float = 1.0) -> int:
    _tm, kc, ktm = _khg_models(model, tree_path)
    H, disambig_tid = make_h(read_ilabel_info(ilabels_path), kc, ktm, transition_scale)
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
    """add-self-loops. kaldi-hmm-gmm builds a TransitionModel only from a tree and a topology,
    so the tree is needed too (default: ``tree`` beside the model); without one, the monophone
    tree of the topology is assumed."""
    if not tree:
        beside = os.path.join(os.path.dirname(model) or ".", "tree")
        tree = beside if os.path.isfile(beside) else ""
    _tm, _kc, ktm = _khg_models(model, tree or None)
    out = add_self_loops(ktm, read_fst(in_fst), self_loop_scale, reorder)
    write_fst(out, out_fst)
    return out.num_states


def tree_info(tree_path: str) -> dict[str, int]:
    """tree-info: num-pdfs, context-width, central-position."""
    tree = read_tree(tree_path)
    return {"num-pdfs": tree.num_pdfs, "context-width": tree.N, "central-position": tree.P}
