"""Decoding: HCLG graph building (mkgraph), the lattice decoder over a matrix of pdf
log-likelihoods (GMM or DNN), Kaldi CompactLattice archives and the lattice tools of scoring.

Import order matters: kaldi_hmm_gmm must be imported before kaldifst (the other order can hang),
so this package imports its submodules lazily and each of them imports kaldi_hmm_gmm first.

The entry point for any acoustic model::

    from nnetmix.decode import LatticeDecoder, LatticeDecoderConfig, read_decoding_graph
    dec = LatticeDecoder(read_decoding_graph("exp/mono/graph/HCLG.fst"), trans_model,
                         LatticeDecoderConfig(beam=13.0, lattice_beam=8.0, acoustic_scale=0.1))
    res = dec.decode(loglikes, key)   # (T, num_pdfs) -> words, alignment, lattice, likelihood
"""
from __future__ import annotations

import importlib

__all__ = ["LatticeDecoder", "LatticeDecoderConfig", "DecodeResult", "DecodeError",
           "read_decoding_graph", "pdf_to_tid_matrix", "latgen", "LatgenSummary",
           "CompactLattice", "RawLattice", "LatticeError", "determinize_lattice_pruned",
           "best_path", "CompactLatticeWriter", "iter_compact_lattices", "GraphError",
           "make_lg", "make_clg", "make_h", "make_hclga", "add_self_loops", "push_special",
           "lattice_search", "SearchOptions", "SearchOutput", "GraphArrays", "graph_arrays"]

_WHERE = {
    "LatticeDecoder": "decoder", "LatticeDecoderConfig": "decoder", "DecodeResult": "decoder",
    "DecodeError": "decoder", "read_decoding_graph": "decoder", "pdf_to_tid_matrix": "decoder",
    "latgen": "latgen", "LatgenSummary": "latgen",
    "CompactLattice": "lattice", "RawLattice": "lattice", "LatticeError": "lattice",
    "determinize_lattice_pruned": "lattice", "best_path": "lattice",
    "CompactLatticeWriter": "latio", "iter_compact_lattices": "latio",
    "GraphError": "graph", "make_lg": "graph", "make_clg": "graph", "make_h": "graph",
    "make_hclga": "graph", "add_self_loops": "graph", "push_special": "graph",
    "lattice_search": "faster", "SearchOptions": "faster", "SearchOutput": "faster",
    "GraphArrays": "fstarrays", "graph_arrays": "fstarrays",
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f"nnetmix.decode.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'nnetmix.decode' has no attribute {name!r}")
