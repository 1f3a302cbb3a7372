"""File-level steps of utils/mkgraph.sh, one per bin/ tool: read the inputs, call
:mod:`nnetmix.decode.graph`, write the output atomically (temporary name, then rename).

H and the self-loops come from :mod:`nnetmix.hmm.h_transducer` (Kaldi's GetHTransducer and
AddSelfLoops over our own tree and transition model), so any tree works, triphone trees
included; for a monophone tree they equal kaldi-hmm-gmm's arc for arc."""
from __future__ import annotations

import logging
import os

import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst (importing kaldifst first can hang)
import kaldifst

from nnetmix.decode.graph import (GraphError, make_clg, make_hclga, make_lg, read_ilabel_info,
                                  read_int_list, write_ilabel_info, write_int_list)
from nnetmix.hmm.h_transducer import HTransducerError, add_self_loops, get_h_transducer
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
    tm = read_transition_model(model)
    tree = read_tree(tree_path)
    try:
        H, disambig_tid = get_h_transducer(read_ilabel_info(ilabels_path), tree, tm,
                                           transition_scale)
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
    """add-self-loops. ``tree`` is accepted for older callers and not needed: the transition
    model alone says every self-loop."""
    tm = read_transition_model(model)
    try:
        out = add_self_loops(tm, read_fst(in_fst), self_loop_scale, reorder)
    except HTransducerError as e:
        raise GraphError(f"{in_fst}, {model}: {e}") from None
    write_fst(out, out_fst)
    return out.num_states


def tree_info(tree_path: str) -> dict[str, int]:
    """tree-info: num-pdfs, context-width, central-position."""
    tree = read_tree(tree_path)
    return {"num-pdfs": tree.num_pdfs, "context-width": tree.N, "central-position": tree.P}
