"""Equal (flat-start) alignment and Viterbi forced alignment against compiled training graphs.

Graphs are what Kaldi's compile-train-graphs writes: per-utterance ``kaldifst.StdVectorFst``s
with transition-ids on the input side, made by ``kaldi_hmm_gmm.TrainingGraphCompiler(trans_model,
ctx_dep, L.fst, disambig, TrainingGraphCompilerOptions()).compile_graph_from_text(word_ids)``.

* :func:`equal_align_graph` is align-equal-compiled: ``kaldifst.equal_align`` (Kaldi's
  EqualAlign: a random path, then the extra frames spread over the self-loops on it) seeded as
  Kaldi seeds it, with StringHasher()(utterance-id).
* :func:`equal_align_states` is the same on arrays, for a known linear sequence of HMM states.
* :func:`align_utterance` is gmm-align-compiled's inner loop (AlignUtteranceWrapper: FasterDecoder
  with ``beam``, once more with ``retry_beam`` if no final state was reached). The acoustics come
  as a (T, pdfs) log-likelihood matrix: it is turned into a (T, transition-ids) matrix for
  ``kaldi_hmm_gmm.DecodableCtc``, whose log_likelihood(t, i) reads column i-1. The transition
  probabilities that gmm-align-compiled adds to the graph (AddTransitionProbs with
  --transition-scale and --self-loop-scale) are added to those columns instead: every arc with
  input label tid consumes one frame and gets the same cost either way, so the search is the same
  and the graph is never modified.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Optional

import kaldi_hmm_gmm as khg  # before kaldifst: the other order can hang
import kaldifst
import numpy as np

from nnetmix.hmm.gmm_init import kaldi_string_hash
from nnetmix.options import option

__all__ = ["AlignOptions", "AlignResult", "equal_align_states", "equal_align_graph",
           "scaled_transition_log_probs", "graph_tids", "graph_pdfs", "align_utterance"]

logger = logging.getLogger(__name__)


@dataclass
class AlignOptions:
    """gmm-align-compiled's options as train_mono.sh/align_si.sh pass them."""

    beam: float = option(10.0, "Decoding beam used in alignment")
    retry_beam: float = option(40.0, "Decoding beam for second try at alignment")
    careful: bool = option(False, "If true, do 'careful' alignment (loop to the start of "
                           "the graph)")
    acoustic_scale: float = option(0.1, "Scaling factor for acoustic likelihoods")
    transition_scale: float = option(1.0, "Transition-probability scale [relative to acoustics]")
    self_loop_scale: float = option(0.1, "Scale of self-loop versus non-self-loop log probs "
                                    "[relative to acoustics]")


@dataclass
class AlignResult:
    """One utterance's alignment; ``ok`` False means it failed even with the retry beam."""

    ok: bool
    alignment: np.ndarray
    words: list
    like: float
    retried: bool


def equal_align_states(num_frames: int, forward_tids: np.ndarray,
                       self_loop_tids: np.ndarray) -> np.ndarray:
    """Equal alignment of a linear HMM-state sequence; returns (num_frames,) transition-ids.

    State i is entered by ``forward_tids[i]`` (one frame) and repeats ``self_loop_tids[i]``
    (0: no self-loop) as Kaldi's reordered graphs put them (forward transition first, then
    self-loops). The extra frames are spread as EqualAlign does: each state with a self-loop
    gets extra // n_loops more, the first extra % n_loops one more again. Raises ValueError when
    the utterance has too few frames or no self-loop can absorb the extra ones.
    """
    fwd = np.asarray(forward_tids, dtype=np.int64)
    loop = np.asarray(self_loop_tids, dtype=np.int64)
    n = len(fwd)
    extra = num_frames - n
    if extra < 0:
        raise ValueError(f"utterance has too few frames ({num_frames}) for {n} HMM states")
    has_loop = loop > 0
    n_loops = int(has_loop.sum())
    if extra > 0 and n_loops == 0:
        raise ValueError("no self-loops on the state sequence; cannot match the length")
    loops = np.zeros(n, dtype=np.int64)
    if extra:
        rank = np.cumsum(has_loop) - 1
        loops[has_loop] = extra // n_loops + (rank[has_loop] < extra % n_loops)
    reps = 1 + loops
    out = np.repeat(loop, reps)
    starts = np.r_[0, np.cumsum(reps)[:-1]]
    out[starts] = fwd
    return out


def equal_align_graph(graph: kaldifst.StdVectorFst, num_frames: int, key: str = "",
                      seed: Optional[int] = None) -> Optional[tuple[np.ndarray, list]]:
    """align-equal-compiled for one utterance: (transition-ids, words), or None on failure.

    The seed defaults to Kaldi's (StringHasher of the key), so the random choice of optional
    silences follows the key, not the order of the utterances.
    """
    if num_frames <= 0 or graph.start < 0:
        return None
    ok, path = kaldifst.equal_align(graph, int(num_frames),
                                    kaldi_string_hash(key) if seed is None else int(seed))
    if not ok:
        return None
    ok, tids, words, _ = kaldifst.get_linear_symbol_sequence(path)
    if not ok or len(tids) != num_frames:
        return None
    return np.asarray(tids, dtype=np.int32), list(words)


def scaled_transition_log_probs(log_probs: np.ndarray, id2state: np.ndarray,
                                is_self_loop: np.ndarray, transition_scale: float = 1.0,
                                self_loop_scale: float = 0.1) -> np.ndarray:
    """GetScaledTransitionLogProb for every transition-id ([0] unused), as AddTransitionProbs.

    With equal scales: scale * log p. Otherwise a self-loop gets self_loop_scale * log p and a
    forward transition self_loop_scale * log(1 - p_loop) + transition_scale * (log p -
    log(1 - p_loop)), where p_loop is its state's self-loop probability (0 when none).
    """
    lp = np.asarray(log_probs, dtype=np.float64)
    if transition_scale == self_loop_scale:
        return lp * transition_scale
    id2state = np.asarray(id2state, dtype=np.int64)
    loop = np.asarray(is_self_loop, dtype=bool)
    loop_lp = np.full(int(id2state.max()) + 1, -np.inf)
    loop_lp[id2state[loop]] = lp[loop]
    p = np.exp(loop_lp[id2state])
    with np.errstate(divide="ignore"):
        non_loop = np.where(p > 0, np.log(np.maximum(1.0 - p, 1e-10)), 0.0)
    out = self_loop_scale * non_loop + transition_scale * (lp - non_loop)
    out[loop] = self_loop_scale * lp[loop]
    out[0] = 0.0
    return out


def graph_tids(graph: kaldifst.StdVectorFst) -> np.ndarray:
    """Sorted distinct non-epsilon input labels (transition-ids) of a graph."""
    labels = set()
    for s in range(graph.num_states):
        it = kaldifst.ArcIterator(graph, s)
        while not it.done:
            labels.add(it.value.ilabel)
            it.next()
    labels.discard(0)
    return np.array(sorted(labels), dtype=np.int64)


def graph_pdfs(graph: kaldifst.StdVectorFst, tid2pdf: np.ndarray) -> np.ndarray:
    """Sorted distinct pdfs a graph can visit: compute only these columns for it."""
    return np.unique(np.asarray(tid2pdf)[graph_tids(graph)])


def align_utterance(graph: kaldifst.StdVectorFst, pdf_ll: np.ndarray, tid2pdf: np.ndarray,
                    opts: AlignOptions = AlignOptions(),
                    trans_log_probs: Optional[np.ndarray] = None,
                    pdfs: Optional[np.ndarray] = None, key: str = "",
                    labels: Optional[np.ndarray] = None) -> AlignResult:
    """Forced alignment of one utterance given its per-frame pdf log-likelihoods.

    ``pdf_ll`` is (T, P'): all pdfs, or the columns of ``pdfs`` (e.g. :func:`graph_pdfs`).
    ``tid2pdf`` is indexed by transition-id ([0] unused). ``trans_log_probs`` is the output of
    :func:`scaled_transition_log_probs` for the current model (None: add nothing, as when the
    graph already holds all transition costs). Boost silence by adding log(boost) to the
    silence pdfs' columns before calling. ``labels``: the graph's input label i stands for
    transition-id ``labels[i - 1]`` (a graph from :func:`~nnetmix.hmm.fst_labels.
    compact_input_labels`); the alignment returned is in transition-ids all the same.
    """
    if opts.beam <= 0.0 or (opts.retry_beam != 0 and opts.retry_beam <= opts.beam):
        raise ValueError(f"beams do not make sense: beam {opts.beam}, retry-beam "
                         f"{opts.retry_beam}")
    tid2pdf = np.asarray(tid2pdf, dtype=np.int64)
    if labels is not None:
        labels = np.asarray(labels, dtype=np.int64)
        tid2pdf = np.concatenate([[0], tid2pdf[labels]])
        if trans_log_probs is not None:
            trans_log_probs = np.concatenate([[0.0], np.asarray(trans_log_probs)[labels]])
    t = len(pdf_ll)
    num_tids = len(tid2pdf) - 1
    col = tid2pdf[1:]
    if pdfs is not None:
        where = np.full(int(tid2pdf.max()) + 1, -1, dtype=np.int64)
        where[np.asarray(pdfs, dtype=np.int64)] = np.arange(len(pdfs))
        col = where[col]
    mat = np.zeros((t, num_tids), dtype=np.float32)
    have = col >= 0
    mat[:, have] = pdf_ll[:, col[have]] * opts.acoustic_scale
    if trans_log_probs is not None:
        mat += np.asarray(trans_log_probs[1:], dtype=np.float32)
    empty = np.zeros(0, dtype=np.int32)
    if t == 0 or graph.start < 0:
        logger.warning("%s: %s", key, "zero-length utterance" if t == 0 else "empty graph")
        return AlignResult(False, empty, [], 0.0, False)
    if opts.careful:
        graph = graph.copy()
    cfg = khg.AlignConfig(beam=opts.beam, retry_beam=opts.retry_beam, careful=opts.careful)
    done, err, retried, like, _, ali, words = khg.align_utterance_wrapper(
        cfg, key, opts.acoustic_scale, graph, khg.DecodableCtc(mat), 0, 0, 0, 0.0, 0)
    if retried:
        logger.warning("Retrying utterance %s with beam %g", key, opts.retry_beam)
    if not done:
        logger.warning("Did not successfully decode file %s, len = %d", key, t)
        return AlignResult(False, empty, [], 0.0, bool(retried))
    ali = np.asarray(ali, dtype=np.int32)
    if labels is not None:
        ali = labels[ali - 1].astype(np.int32)
    return AlignResult(True, ali, list(words), float(like), bool(retried))
