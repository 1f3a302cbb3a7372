"""Bridge between nnetmix's Kaldi model objects (nnetmix.kaldi) and kaldi-hmm-gmm 1.1.4's.

kaldi-hmm-gmm binds Kaldi's C++ GMM-HMM algorithms but no reader or writer for TransitionModel,
AmDiagGmm or ContextDependency, so models are read and written by nnetmix.kaldi and converted here
when a C++ algorithm is needed (graph compilation, alignment, decoding, GMM accumulation/update).
Import this module before kaldifst anywhere (importing kaldifst first can hang the process).

LIFETIMES: the bindings keep C++ references without pybind keep_alive. A decodable refers to
its AmDiagGmm and TransitionModel, a TrainingGraphCompiler to its TransitionModel and
ContextDependency: keep the Python objects referenced while those live (a temporary such as
``DecodableAmDiagGmmScaled(to_khg_am_diag_gmm(am), ...)`` gives garbage or a segfault; seen).

What kaldi-hmm-gmm 1.1.4 exposes (``import kaldi_hmm_gmm as khg``; checked with dir()/help() on
the installed wheel; arrays are numpy, float32 unless said, vectors are 1-D):

Model objects
  * ``HmmTopology()``: ``.read(text)`` parses the TEXT ``<Topology>`` form (binary=false) from a
    str; ``str(topo)`` is Kaldi's text Write; ``.phones``, ``.is_hmm``, ``.check()``,
    ``.topology_for_phone(p) -> [HmmState]`` (``forward_pdf_class``, ``self_loop_pdf_class``,
    ``transitions``), ``.num_pdf_classes(p)``, ``.get_phone_to_num_pdf_classes()``,
    ``.min_length(p)``.
  * ``TransitionModel()`` / ``TransitionModel(ctx_dep, hmm_topo)`` (Kaldi's constructor: tuples
    from the tree, log-probs from the topology). Read-only: ``tuples`` (list of
    ``TransitionModelTuple``, fields only visible through str()), ``log_probs``,
    ``non_self_loop_log_probs``, ``id2pdf_id``, ``id2state``, ``state2id``, ``num_pdfs``,
    ``num_transition_ids``, ``num_transition_states``, ``phones``, ``topo``; methods
    ``transition_id_to_pdf(tid)``, ``transition_id_to_pdf_array()``,
    ``transition_id_to_phone(tid)``, ``is_self_loop(tid)``, ``is_final(tid)``,
    ``transition_ids_equivalent(a, b)``, ``transition_ids_is_start_of_phone(tid)``,
    ``init_stats() -> float64 (num_tids+1,)``, ``accumulate(prob, tid, stats) -> stats``,
    ``mle_update(stats float64, MleTransitionUpdateConfig(floor=0.01, mincount=5.0,
    share_for_pdfs=False)) -> (objf_impr, count)``; ``str(tm)`` is Kaldi's text Write (but at
    ostream precision 6; Kaldi's files, and ours, have 7 digits). There is
    NO setter for log-probs: :func:`to_khg_transition_model` restores trained ones through
    ``mle_update`` with stats = the probabilities (agreement to about 1e-5 in log, because
    Kaldi renormalises and the stored probs of floored states do not sum exactly to one).
  * ``ContextDependency``: no constructor and no reader. Built only by
    ``monophone_context_dependency(phones, phone2num_pdf_classes)`` and
    ``monophone_context_dependency_shared(phone_classes, phone2num_pdf_classes)``; has
    ``.write(binary, filename)``, ``.compute(phone_seq, pdf_class) -> (ok, pdf)``,
    ``.get_pdf_info(phones, num_pdf_classes)``, ``.num_pdfs``, ``.context_width``,
    ``.central_position``. So context-dependent (triphone) trees CANNOT be handed to the C++
    side in 1.1.4; :func:`to_khg_context_dependency` raises for them (their H, self-loops and
    training graphs come from nnetmix.hmm.h_transducer and nnetmix.hmm.graphs instead). ``EventMap`` /
    ``ConstantEventMap(answer)`` exist with ``map``/``multimap`` but no Table/Split maps.
  * ``DiagGmm()`` / ``DiagGmm(nmix, dim)`` / ``DiagGmm(other)`` / ``DiagGmm([(w, gmm), ...])``:
    read-only ``gconsts``, ``means_invvars``, ``inv_vars``, ``means``, ``vars``, ``num_gauss``,
    ``dim``, ``valid_gconsts``; settable ``weights``; ``set_weights``, ``set_means``,
    ``set_invvars``, ``set_invvars_and_means(inv_vars, means)``, ``set_component_mean/inv_var/
    weight``, ``compute_gconsts()``, ``log_likelihood(x) -> float``, ``log_likelihoods(x)``,
    ``log_likelihoods_matrix(X)``, ``component_posteriors(x)``, ``component_log_likelihood``,
    ``gaussian_selection_*``, ``split``, ``merge``, ``merge_kmeans``, ``perturb``,
    ``remove_component(s)``, ``interpolate``, ``generate``.
  * ``AmDiagGmm()``: ``add_pdf(gmm)`` (copies), ``get_pdf(i)`` (a reference), ``init(proto,
    num_pdfs)``, ``num_pdfs``, ``dim``, ``num_gauss``, ``num_gauss_in_pdf(i)``,
    ``log_likelihood(pdf, x)``, ``compute_gconsts()``, ``split_pdf``, ``split_by_count(occs,
    target, perturb, power, min_count)``, ``merge_by_count``, ``get/set_gaussian_mean``,
    ``get_gaussian_variance``, ``copy_from_am_diag_gmm``.

Training (gmm-acc-stats-ali / gmm-est)
  * ``AccumAmDiagGmm()``: ``init(am, flags)`` / ``init(am, dim, flags)``,
    ``accumulate_for_gmm(am, x, pdf, weight) -> loglike``,
    ``accumulate_from_posteriors(am, x, pdf, posts)``, ``accumulate_for_gaussian``, ``add``,
    ``scale``, ``set_zero``, ``get_acc(i)``, ``num_accs``, ``tot_count``, ``tot_log_like``;
    ``AccumDiagGmm`` likewise per GMM. ``mle_am_diag_gmm_update(MleDiagGmmOptions(
    min_gaussian_weight=1e-5, min_gaussian_occupancy=10, min_variance=1e-3,
    remove_low_count_gaussians=True), acc, flags, am) -> (objf_impr, count)``;
    ``map_am_diag_gmm_update``; flags ``GmmUpdateFlags.kGmmAll`` etc., ``str_to_gmm_flags("mvwt")``,
    ``gmm_flags_to_str``. Transition stats: ``tm.init_stats``/``tm.accumulate``/``tm.mle_update``.
Graphs
  * ``TrainingGraphCompiler(trans_model, ctx_dep, lex_fst (kaldifst.StdVectorFst), disambig_syms,
    TrainingGraphCompilerOptions(transition_scale=1.0, self_loop_scale=1.0, reorder=True))``
    with ``compile_graph_from_text(word_ids) -> StdVectorFst`` (compile-train-graphs).
  * ``get_h_transducer(ilabel_info, ctx_dep, trans_model, HTransducerConfig(transition_scale=1.0,
    nonterm_phones_offset=-1)) -> (H fst, disambig_syms_out)``; ``add_self_loops(trans_model,
    ifst, self_loop_scale=1.0, disambig_syms=[], reorder=True) -> fst``;
    ``add_transition_probs(trans_model, fst, transition_scale, self_loop_scale, disambig_syms=[])``
    (in place) -- mkgraph.sh's H, self-loops and transition probabilities. There is no
    ComposeContext / ilabel_info writer binding: ilabel_info must be built in Python.
  * ``get_pdfs_for_phones(tm, phones) -> (is_unique, pdfs)``.
Alignment and decoding
  * ``DecodableAmDiagGmmScaled(am, tm, feats (T, D) float32, scale, log_sum_exp_prune=-1)``
    (log_likelihood(frame, tid)), ``DecodableAmDiagGmmUnmapped(am, feats)`` (by pdf),
    ``DecodableCtc(matrix)``.
  * ``align_utterance_wrapper(AlignConfig(beam=200, retry_beam=0, careful=False), utt,
    acoustic_scale, fst, decodable, num_done, num_error, num_retried, tot_like, frame_count)
    -> (num_done, num_error, num_retried, tot_like, frame_count, alignment, words)``
    (the core of gmm-align-compiled).
  * ``FasterDecoder(fst, FasterDecoderOptions(beam=16, max_active, min_active=20, ...))`` with
    ``decode(decodable)``, ``reached_final()``, ``get_best_path() -> (ok, Lattice fst)``;
    ``LatticeFasterDecoder(fst, LatticeFasterDecoderConfig(beam=16, max_active, min_active=200,
    lattice_beam=10, ...))`` and ``LatticeSimpleDecoder`` (no methods of their own);
    ``decode_utterance_lattice_faster(
    decoder, decodable, trans_model, utt, allow_partial) -> (ok, alignment, words, likelihood)``
    and ``decode_utterance_lattice_simple`` (best path only, no lattice out);
    ``DeterminizeLatticePhonePrunedOptions`` is bound without the function.
Other: ``draw_tree(phones_txt, tree_path)`` reads a tree FILE (to dot); ``Clusterable``,
``GaussClusterable``, ``ScalarClusterable``, ``sum_clusterable*`` (no tree building).
"""
from __future__ import annotations

import os
import re
import tempfile
from typing import Optional

import kaldi_hmm_gmm as _khg  # noqa: I001 -- must come before any kaldifst import
import numpy as np

from nnetmix.kaldi.context_dep import (ContextDependency, monophone_context_dependency,
                                       monophone_context_dependency_shared, read_tree)
from nnetmix.kaldi.diag_gmm import AmDiagGmm, DiagGmm
from nnetmix.kaldi.hmm_topology import HmmTopology, read_topology_text
from nnetmix.kaldi.transition_model import TransitionModel

__all__ = ["to_khg_topology", "from_khg_topology", "to_khg_context_dependency",
           "from_khg_context_dependency", "to_khg_transition_model", "from_khg_transition_model",
           "khg_tuples", "to_khg_diag_gmm", "from_khg_diag_gmm", "to_khg_am_diag_gmm",
           "from_khg_am_diag_gmm", "monophone_phone_sets", "KhgUnsupported"]


class KhgUnsupported(NotImplementedError):
    """kaldi-hmm-gmm 1.1.4 cannot represent this object (e.g. a context-dependent tree)."""


# -- topology -----------------------------------------------------------------------------------
def to_khg_topology(topo: HmmTopology) -> "_khg.HmmTopology":
    kt = _khg.HmmTopology()
    kt.read(topo.to_text())
    return kt


def from_khg_topology(kt: "_khg.HmmTopology") -> HmmTopology:
    return read_topology_text(str(kt), "kaldi_hmm_gmm.HmmTopology")


# -- tree ---------------------------------------------------------------------------------------
def monophone_phone_sets(tree: ContextDependency, topo: HmmTopology) -> Optional[list[list[int]]]:
    """The phone sets of a monophone(-shared) tree, in the order that rebuilds it exactly with
    MonophoneContextDependencyShared, or None when the tree is not such a tree."""
    if tree.N != 1 or tree.P != 0:
        return None
    phone2num = topo.phone_to_num_pdf_classes()
    groups: dict[tuple, list[int]] = {}
    for p in topo.phones.tolist():
        pdfs = tuple(tree.compute_pdf([p], c) for c in range(phone2num[p]))
        if any(x is None for x in pdfs):
            return None
        groups.setdefault(pdfs, []).append(p)
    sets = [groups[k] for k in sorted(groups, key=lambda k: k[0])]
    try:
        rebuilt = monophone_context_dependency_shared(sets, phone2num)
    except ValueError:
        return None
    return sets if rebuilt == tree else None


def to_khg_context_dependency(tree: ContextDependency,
                              topo: HmmTopology) -> "_khg.ContextDependency":
    """The kaldi-hmm-gmm tree; only monophone (optionally shared-phone) trees can be built in
    1.1.4. The result is checked by writing it and comparing with our bytes."""
    sets = monophone_phone_sets(tree, topo)
    if sets is None:
        raise KhgUnsupported(
            f"kaldi-hmm-gmm 1.1.4 can only build monophone trees; this tree has N={tree.N}, "
            f"P={tree.P} and is not a MonophoneContextDependency(Shared) of the topology's phones")
    phone2num = topo.phone_to_num_pdf_classes()
    if all(len(s) == 1 for s in sets):
        kc = _khg.monophone_context_dependency([s[0] for s in sets], phone2num)
    else:
        kc = _khg.monophone_context_dependency_shared(sets, phone2num)
    if _khg_tree_bytes(kc) != tree.to_bytes(True):
        raise KhgUnsupported("kaldi-hmm-gmm built a different tree from the same phone sets")
    return kc


def _khg_tree_bytes(kc) -> bytes:
    fd, path = tempfile.mkstemp(prefix="nnetmix-tree.", suffix=".tmp")
    os.close(fd)
    try:
        kc.write(True, path)
        with open(path, "rb") as fh:
            data = fh.read()
    finally:
        os.unlink(path)
    return data[2:] if data[:2] == b"\0B" else data


def from_khg_context_dependency(kc) -> ContextDependency:
    """Through ContextDependency.write (the only way out of a kaldi-hmm-gmm tree)."""
    fd, path = tempfile.mkstemp(prefix="nnetmix-tree.", suffix=".tmp")
    os.close(fd)
    try:
        kc.write(True, path)
        return read_tree(path)
    finally:
        os.unlink(path)


# -- transition model ---------------------------------------------------------------------------
_TUPLE = re.compile(r"phone=(-?\d+),\s*hmm_state=(-?\d+),\s*forward_pdf=(-?\d+),"
                    r"\s*self_loop_pdf=(-?\d+)")


def khg_tuples(ktm) -> np.ndarray:
    """(T, 4) int32 tuples of a kaldi-hmm-gmm TransitionModel (its tuple objects only say them
    through str())."""
    rows = []
    for t in ktm.tuples:
        m = _TUPLE.search(str(t))
        if m is None:
            raise RuntimeError(f"cannot parse kaldi-hmm-gmm tuple {str(t)!r}")
        rows.append([int(g) for g in m.groups()])
    return np.array(rows, dtype=np.int32).reshape(-1, 4)


def to_khg_transition_model(tm: TransitionModel, tree: Optional[ContextDependency] = None,
                            ctx_dep=None) -> "_khg.TransitionModel":
    """kaldi-hmm-gmm's TransitionModel(ctx_dep, topo) with our tuples and log-probs.

    ``tree`` (ours) or ``ctx_dep`` (kaldi-hmm-gmm's) gives the tree; without either, the
    monophone tree of the topology is used. The tuples must come out identical (checked); the
    trained log-probs are then restored through mle_update (see the module docstring)."""
    if ctx_dep is None:
        if tree is None:
            tree = monophone_context_dependency(tm.phones, tm.topo.phone_to_num_pdf_classes())
        ctx_dep = to_khg_context_dependency(tree, tm.topo)
    ktm = _khg.TransitionModel(ctx_dep, to_khg_topology(tm.topo))
    if not np.array_equal(khg_tuples(ktm), tm.tuples):
        raise ValueError("the tree and topology give kaldi-hmm-gmm different tuples from the "
                         "transition model's (tree and model do not match?)")
    current = np.asarray(ktm.log_probs, dtype=np.float32)
    if not np.array_equal(current, tm.log_probs):
        stats = np.exp(tm.log_probs.astype(np.float64)) * 1e6
        stats[0] = 0.0
        cfg = _khg.MleTransitionUpdateConfig(floor=1e-20, mincount=0.0, share_for_pdfs=False)
        ktm.mle_update(stats, cfg)
    return ktm


def from_khg_transition_model(ktm) -> TransitionModel:
    topo = from_khg_topology(ktm.topo)
    return TransitionModel(topo, khg_tuples(ktm), np.asarray(ktm.log_probs, dtype=np.float32))


# -- GMMs ---------------------------------------------------------------------------------------
def to_khg_diag_gmm(g: DiagGmm) -> "_khg.DiagGmm":
    """Weights, inverse variances and means (float32) into a kaldi-hmm-gmm DiagGmm; Kaldi then
    forms means_invvars and gconsts itself (equal to ours up to float32 rounding)."""
    kg = _khg.DiagGmm(g.num_gauss, g.dim)
    kg.set_weights(g.weights.astype(np.float32))
    kg.set_invvars_and_means(g.inv_vars.astype(np.float32), g.means.astype(np.float32))
    kg.compute_gconsts()
    return kg


def from_khg_diag_gmm(kg) -> DiagGmm:
    return DiagGmm(np.asarray(kg.gconsts), np.asarray(kg.weights), np.asarray(kg.means_invvars),
                   np.asarray(kg.inv_vars))


def to_khg_am_diag_gmm(am: AmDiagGmm) -> "_khg.AmDiagGmm":
    kam = _khg.AmDiagGmm()
    for g in am:
        kam.add_pdf(to_khg_diag_gmm(g))
    return kam


def from_khg_am_diag_gmm(kam) -> AmDiagGmm:
    return AmDiagGmm([from_khg_diag_gmm(kam.get_pdf(i)) for i in range(kam.num_pdfs)])
