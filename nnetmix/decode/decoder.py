"""The decoding core: a (frames x pdfs) matrix of log-likelihoods -> lattice and best path.

This is what Kaldi's latgen-faster-mapped and gmm-latgen-faster do per utterance
(DecodeUtteranceLatticeFaster, src/decoder/decoder-wrappers.cc); any acoustic model that gives
pdf log-likelihoods (a GMM, or a DNN's log-posteriors minus log-priors) uses it:

    dec = LatticeDecoder(hclg, trans_model, LatticeDecoderConfig(beam=13, lattice_beam=8,
                                                                 acoustic_scale=0.1))
    result = dec.decode(loglikes, key="utt1")   # loglikes: (T, num_pdfs)
    result.words, result.alignment, result.lattice (CompactLattice), result.likelihood

How it is done with the pinned bindings (checked on kaldi-decoder 0.2.11):

* Acoustic scores: kaldi-decoder's ``DecodableCtc(matrix)`` returns ``matrix[t, i - 1]`` for
  index i (checked), so the matrix given is (T x num-transition-ids) with column tid-1 =
  acoustic_scale * loglike[t, pdf(tid)] -- Kaldi's DecodableMatrixScaledMapped.
* Search, ``--decoder``: ``faster`` is Kaldi's LatticeFasterDecoder compiled here
  (:mod:`nnetmix.decode.faster`: beam, max-active / min-active histogram pruning with the
  adaptive beam, lattice-beam pruning every prune-interval frames); ``simple`` (the default for
  now) is kaldi-decoder's ``LatticeSimpleDecoder``, which prunes by beam only (max-active /
  min-active accepted and not applied; said once in the log). With max-active above the number
  of active states and min-active 0 the two give the same best paths and, when the beam is well
  above the lattice beam, the same word sequences within the lattice beam (LatticeSimpleDecoder
  also keeps some links costing more than the beam, depending on its hash order;
  tests/decode/test_decode_faster.py); kaldi-hmm-gmm's own
  LatticeFasterDecoder binds only the best path, which the faster search gives too (tested at
  several max-active / min-active settings).
* Lattice: the raw state-level lattice is determinized with lattice-beam through Kaldi's
  DeterminizeLatticePhonePrunedWrapper (:mod:`nnetmix.decode.phonedet`: with
  --phone-determinize=true a pass on phones and words first; false by default here, unlike
  Kaldi: the same lattices, and word-only was faster in every measurement, README.md), each pass
  :func:`nnetmix.decode.lattice.determinize_lattice_pruned` (not bound; written here, compiled
  with numba in :mod:`nnetmix.decode.detlat`, ``--determinize-impl python`` for the reference),
  then the acoustic costs are divided by acoustic_scale, as gmm-latgen-faster does before
  writing.
"""
from __future__ import annotations

import dataclasses
import logging
import math
import threading
from dataclasses import dataclass
from typing import Optional

import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst (importing kaldifst first can hang)
import kaldi_decoder
import kaldifst  # noqa: F401
import numpy as np

from nnetmix.decode.faster import (SearchOptions, SearchWorkspace, best_path_arcs,
                                   lattice_search)
from nnetmix.decode.fstarrays import graph_arrays
from nnetmix.decode.gmmframes import GmmFrames
from nnetmix.decode.lattice import IMPLS, CompactLattice, LatticeError, RawLattice
from nnetmix.decode.latrescore import raw_to_compact
from nnetmix.decode.phonedet import (PhoneDeterminizeOptions, determinize_lattice_phone_pruned,
                                     phone_start_labels)
from nnetmix.errors import NnetmixError
from nnetmix.kaldi.fstfile import FstFormatError, read_checked_fst
from nnetmix.kaldi.transition_model import TransitionModel
from nnetmix.options import option

__all__ = ["LatticeDecoderConfig", "FasterDecoderConfig", "LatticeDecoder",
           "linear_compact_lattice", "DecodeResult", "DecodeError", "read_decoding_graph",
           "pdf_to_tid_matrix"]

logger = logging.getLogger(__name__)

#: the phone-determinization options LatticeDecoderConfig takes over, help and all
_PHONE_DET = {f.name: f for f in dataclasses.fields(PhoneDeterminizeOptions)}


class DecodeError(NnetmixError):
    """An utterance could not be decoded (no surviving tokens, no final state, bad matrix)."""


@dataclass
class LatticeDecoderConfig:
    """Kaldi's LatticeFasterDecoderConfig plus the decode-time options of *-latgen-faster."""

    beam: float = option(16.0, "Decoding beam.  Larger->slower, more accurate.")
    max_active: int = option(2147483647, "Decoder max active states.  Larger->slower; "
                             "more accurate (--decoder=faster only; simple applies no "
                             "histogram pruning)")
    min_active: int = option(200, "Decoder minimum #active states (--decoder=faster only, "
                             "as max-active)")
    lattice_beam: float = option(10.0, "Lattice generation beam.  Larger->slower, and "
                                 "deeper lattices")
    prune_interval: int = option(25, "Interval (in frames) at which to prune tokens")
    determinize_lattice: bool = option(True, "If true, determinize the lattice "
                                       "(lattice-determinization, keeping only best pdf-sequence "
                                       "for each word-sequence).")
    beam_delta: float = option(0.5, "Increment used in decoding-- this parameter is obscure and "
                               "relates to a speedup in the way the max-active constraint is "
                               "applied.  Larger is more accurate.")
    hash_ratio: float = option(2.0, "Setting used in decoder to control hash behavior "
                               "(accepted; the faster decoder's state-to-token map is an array "
                               "over all states)")
    acoustic_scale: float = option(0.1, "Scaling factor for acoustic likelihoods")
    allow_partial: bool = option(False, "If true, produce output even if end state was "
                                 "not reached.")
    decoder: str = option("faster", "Search: 'faster' (Kaldi's LatticeFasterDecoder, compiled "
                          "here: beam, max-active, min-active, adaptive beam) or 'simple' "
                          "(kaldi-decoder's LatticeSimpleDecoder: beam only)")
    max_mem: int = option(50000000, "Maximum approximate memory usage in determinization (real "
                          "usage might be many times this).")
    determinize_impl: str = option("compiled", "Lattice determinization: 'compiled' (numba, "
                                   "nnetmix/decode/detlat.py) or 'python' (the reference it is "
                                   "tested equal to)")
    phone_determinize: bool = option(False, "If true, do an initial pass of determinization on "
                                     "both phones and words (see also --word-determinize) (Kaldi's "
                                     "default is true; false here: the same lattices, and "
                                     "word-only was faster in every measurement, README.md)")
    word_determinize: bool = option(True, _PHONE_DET["word_determinize"].metadata["help"])
    minimize: bool = option(False, _PHONE_DET["minimize"].metadata["help"])


@dataclass
class FasterDecoderConfig:
    """Kaldi's FasterDecoderOptions (faster-decoder.h, with its obscure settings) plus the other
    options of gmm-decode-faster / decode-faster-mapped: best-path decoding. The search is the
    compiled LatticeFasterDecoder's in best-path mode (:mod:`nnetmix.decode.faster`), whose
    pruning is FasterDecoder's: beam, max-active / min-active through GetCutoff, the adaptive
    beam (beam-delta)."""

    beam: float = option(16.0, "Decoding beam.  Larger->slower, more accurate.")
    max_active: int = option(2147483647, "Decoder max active states.  Larger->slower; "
                             "more accurate")
    min_active: int = option(20, "Decoder min active states (don't prune if #active less "
                             "than this).")
    beam_delta: float = option(0.5, "Increment used in decoder [obscure setting]")
    hash_ratio: float = option(2.0, "Setting used in decoder to control hash behavior (accepted; "
                               "the state-to-token map is an array over all states)")
    acoustic_scale: float = option(0.1, "Scaling factor for acoustic likelihoods")
    allow_partial: bool = option(True, "Produce output even when final state was not reached")

    def lattice_config(self) -> "LatticeDecoderConfig":
        """The LatticeDecoder settings that run this search (lattice options unused)."""
        return LatticeDecoderConfig(beam=self.beam, max_active=self.max_active,
                                    min_active=self.min_active, beam_delta=self.beam_delta,
                                    hash_ratio=self.hash_ratio,
                                    acoustic_scale=self.acoustic_scale,
                                    allow_partial=self.allow_partial, decoder="faster")


@dataclass
class DecodeResult:
    """One utterance's output. ``likelihood`` is -(graph + acoustic_scale * acoustic cost) of
    the best path, as Kaldi logs it; ``lattice`` has unscaled acoustic costs (as written)."""

    key: str
    words: list[int]
    alignment: list[int]
    likelihood: float
    num_frames: int
    lattice: Optional[CompactLattice]
    partial: bool = False
    #: best-path decoding (``lattice=False``): the path as a linear CompactLattice with unscaled
    #: acoustic costs (what gmm-decode-faster writes), when the search gives one (faster)
    path_lattice: Optional[CompactLattice] = None


def read_decoding_graph(path: str, max_ilabel: Optional[int] = None,
                        max_olabel: Optional[int] = None,
                        labels_from: str = "") -> "kaldifst.StdVectorFst":
    """HCLG.fst (vector or const; a const FST is converted to a vector one), checked before the
    compiled decoder sees it (:mod:`nnetmix.kaldi.fstfile`): its input labels are transition-ids,
    at most ``max_ilabel`` (the transition model's count) when given; its output labels are
    word ids, at most ``max_olabel`` (the word symbol table's largest) when given."""
    try:
        return read_checked_fst(path, f"{path} (the decoding graph)", max_ilabel=max_ilabel,
                                max_olabel=max_olabel, labels_from=labels_from)
    except FstFormatError as e:
        raise DecodeError(str(e)) from None


def pdf_to_tid_matrix(loglikes: np.ndarray, tm: TransitionModel, scale: float) -> np.ndarray:
    """(T, num_transition_ids) float32: column tid-1 = scale * loglikes[:, pdf(tid)]."""
    return np.ascontiguousarray(scale * loglikes[:, tm.tid2pdf[1:]], dtype=np.float32)


class LatticeDecoder:
    """Decodes pdf log-likelihood matrices against one HCLG with one transition model. Keeps the
    graph referenced for as long as the C++ decoder lives (the bindings do not). With
    ``config.decoder == "faster"`` the search is :func:`nnetmix.decode.faster.lattice_search`
    on the graph's arrays (built once here)."""

    _warned_max_active = False

    def __init__(self, hclg, trans_model: TransitionModel, config: LatticeDecoderConfig):
        if config.acoustic_scale <= 0:
            raise DecodeError(f"--acoustic-scale={config.acoustic_scale}: must be > 0")
        if config.decoder not in ("faster", "simple"):
            raise DecodeError(f"--decoder={config.decoder}: expected faster or simple")
        if config.determinize_impl not in IMPLS:
            raise DecodeError(f"--determinize-impl={config.determinize_impl}: expected one of "
                              f"{', '.join(IMPLS)}")
        self.hclg = hclg
        self.tm = trans_model
        self.config = config
        self.last_expanded: np.ndarray | None = None   # faster: SearchOutput.expanded
        self._phone_of_tid = phone_start_labels(trans_model)
        if config.decoder == "faster":
            self._graph = graph_arrays(hclg)
            self._opts = SearchOptions(config.beam, config.max_active, config.min_active,
                                       config.lattice_beam, config.prune_interval,
                                       config.beam_delta)
            self._tid2pdf = np.asarray(trans_model.tid2pdf, dtype=np.int64)
            self._workspaces = threading.local()   # one SearchWorkspace per thread
            top = int(self._graph.ilabel.max()) if self._graph.num_arcs else 0
            if top >= len(self._tid2pdf) or int(self._graph.ilabel.min(initial=0)) < 0:
                raise DecodeError(f"the decoding graph has input label {top}, but the model has "
                                  f"only {len(self._tid2pdf) - 1} transition-ids (graph and "
                                  "model do not match)")
            return
        self._cfg = kaldi_decoder.LatticeSimpleDecoderConfig(
            beam=config.beam, lattice_beam=config.lattice_beam,
            prune_interval=config.prune_interval, determinize_lattice=False)
        self._decoder = kaldi_decoder.LatticeSimpleDecoder(hclg, self._cfg)
        if (config.max_active < 2147483647 or config.min_active != 200) \
                and not LatticeDecoder._warned_max_active:
            logger.info("max-active=%d / min-active=%d are not applied: the bound "
                        "LatticeSimpleDecoder prunes by beam only (--decoder=faster applies "
                        "them)", config.max_active, config.min_active)
            LatticeDecoder._warned_max_active = True

    def for_thread(self) -> "LatticeDecoder":
        """A decoder for another thread: the same graph, its arrays and transition model
        (read-only, shared), its own search state (the bound LatticeSimpleDecoder is one
        object per decoder; the compiled search's workspace is per thread already, see
        :meth:`_workspace`)."""
        other = object.__new__(LatticeDecoder)
        other.__dict__.update(self.__dict__)
        other.last_expanded = None
        if self.config.decoder == "simple":
            other._decoder = kaldi_decoder.LatticeSimpleDecoder(self.hclg, self._cfg)
        return other

    def decode(self, loglikes, key: str = "", lattice: bool = True) -> DecodeResult:
        """One utterance: a (T, num_pdfs) matrix of log-likelihoods, or a GMM's
        :class:`~nnetmix.decode.gmmframes.GmmFrames` (with ``on_demand`` and
        --decoder=faster the search computes the pdfs it reaches; otherwise the matrix is made
        here). ``lattice=False`` gives the best path only (``result.lattice`` is None: no
        determinization)."""
        cfg = self.config
        gmm = None
        if isinstance(loglikes, GmmFrames):
            if loglikes.on_demand and cfg.decoder == "faster":
                gmm = loglikes
            else:
                loglikes = loglikes.loglikes()
        if gmm is not None:
            if gmm.gmm.num_pdfs != self.tm.num_pdfs:
                raise DecodeError(f"utterance {key}: the GMM has {gmm.gmm.num_pdfs} pdfs, the "
                                  f"transition model {self.tm.num_pdfs}")
            if gmm.num_frames == 0:
                raise DecodeError(f"utterance {key}: zero-length utterance")
            if not np.all(np.isfinite(gmm.feats)):
                raise DecodeError(f"utterance {key}: the features are not all finite")
            raw, (words, ali, g, a), reached, path_lattice = self._search_faster(
                None, key, lattice, gmm)
        else:
            loglikes = self._checked(loglikes, key)
            search = self._search_faster if cfg.decoder == "faster" else self._search_simple
            raw, (words, ali, g, a), reached, path_lattice = search(loglikes, key, lattice)
        partial = False
        if not reached:
            if not cfg.allow_partial:
                raise DecodeError(f"Not producing output for utterance {key} since no "
                                  "final-state reached and --allow-partial=false.")
            logger.warning("Decoder did not reach end-state, outputting partial traceback "
                           "since --allow-partial=true")
            partial = True
        clat = None
        if lattice:
            try:
                if cfg.determinize_lattice:
                    clat, ok = determinize_lattice_phone_pruned(
                        raw, self._phone_of_tid, cfg.lattice_beam,
                        PhoneDeterminizeOptions(cfg.phone_determinize, cfg.word_determinize,
                                                cfg.minimize),
                        max_mem=cfg.max_mem, key=key, impl=cfg.determinize_impl)
                    if not ok:
                        logger.warning("Determinization finished earlier than the beam for "
                                       "utterance %s", key)
                else:
                    clat = raw_to_compact(raw)
            except LatticeError as e:
                raise DecodeError(f"utterance {key}: {e}") from None
            clat.scale(acoustic_scale=1.0 / cfg.acoustic_scale)
        if path_lattice is not None:
            path_lattice.scale(acoustic_scale=1.0 / cfg.acoustic_scale)
        return DecodeResult(key, words, ali, -(g + a), len(ali), clat, partial, path_lattice)

    def _checked(self, loglikes, key: str) -> np.ndarray:
        loglikes = np.asarray(loglikes)
        if loglikes.ndim != 2 or loglikes.shape[1] != self.tm.num_pdfs:
            raise DecodeError(f"utterance {key}: the log-likelihood matrix is {loglikes.shape}, "
                              f"expected (frames, {self.tm.num_pdfs}) (one column per pdf of "
                              "the transition model)")
        if loglikes.shape[0] == 0:
            raise DecodeError(f"utterance {key}: zero-length utterance")
        if not np.all(np.isfinite(loglikes)):
            raise DecodeError(f"utterance {key}: the log-likelihoods are not all finite")
        return loglikes

    def _search_simple(self, loglikes: np.ndarray, key: str, _lattice: bool = True):
        """kaldi-decoder's LatticeSimpleDecoder: (raw lattice, best path, reached final, None)."""
        T = loglikes.shape[0]
        mat = pdf_to_tid_matrix(loglikes, self.tm, self.config.acoustic_scale)
        decodable = kaldi_decoder.DecodableCtc(mat)
        dec = self._decoder
        # LatticeSimpleDecoder::Decode returns false when no final state is active at the end
        # (it has a traceback all the same), so "reached final" is that flag.
        reached = dec.decode(decodable) and math.isfinite(dec.final_relative_cost())
        if dec.num_frames_decoded() != T:
            raise DecodeError(f"Failed to decode file {key} (decoded "
                              f"{dec.num_frames_decoded()} of {T} frames)")
        # Decode() has finalized decoding, after which only use_final_probs=True is allowed; with
        # no final state active that treats every surviving token as final (Kaldi's partial
        # traceback).
        ok, best = dec.get_best_path(use_final_probs=True)
        if not ok or best.num_states == 0:
            raise DecodeError(f"Failed to get traceback for utterance {key}")
        path = _linear_path(RawLattice.from_kaldifst(best))
        ok, raw_fst = dec.get_raw_lattice(use_final_probs=True)
        if not ok:
            raise DecodeError(f"Unexpected problem getting lattice for utterance {key}")
        return RawLattice.from_kaldifst(raw_fst), path, reached, None

    def _workspace(self) -> SearchWorkspace:
        """This thread's workspace for the graph (made on the thread's first utterance and
        reused: the search's state-sized arrays are not made again per utterance). Thread-local,
        so that decoders from :meth:`for_thread`, or one decoder called from several threads,
        never share one."""
        ws = getattr(self._workspaces, "ws", None)
        if ws is None:
            ws = self._workspaces.ws = SearchWorkspace(self._graph.num_states)
        return ws

    def _search_faster(self, loglikes: Optional[np.ndarray], key: str, lattice: bool = True,
                       gmm: Optional[GmmFrames] = None):
        """The compiled LatticeFasterDecoder: (raw lattice, best path, reached final, the best
        path as a linear CompactLattice or None); without ``lattice`` the search keeps
        backpointers only, the raw lattice is the best path, and the linear lattice is made.
        With ``gmm`` the search computes the log-likelihoods of the pdfs it reaches."""
        acwt = self.config.acoustic_scale
        try:
            if gmm is not None:
                out = lattice_search(self._graph, None, self._tid2pdf, self._opts,
                                     best_path_only=not lattice,
                                     gmm=(gmm.gmm, gmm.feats, acwt), workspace=self._workspace())
            else:
                out = lattice_search(self._graph, np.asarray(acwt * loglikes, dtype=np.float32),
                                     self._tid2pdf, self._opts, best_path_only=not lattice,
                                     workspace=self._workspace())
        except ValueError as e:
            raise DecodeError(f"utterance {key}: {e}") from None
        self.last_expanded = out.expanded
        raw = out.lattice
        if raw.num_states == 0:
            raise DecodeError(f"Failed to decode file {key} (no tokens survived)")
        arcs = best_path_arcs(raw.num_states, raw.src, raw.dst, raw.g, raw.a, raw.final_g,
                              raw.final_a)
        if len(arcs) == 0:
            raise DecodeError(f"Failed to get traceback for utterance {key}")
        end = int(raw.dst[arcs[-1]])
        il, ol = raw.ilabel[arcs], raw.olabel[arcs]
        path_lattice = None if lattice else linear_compact_lattice(
            il, ol, raw.g[arcs], raw.a[arcs], raw.final_g[end], raw.final_a[end])
        path = (ol[ol != 0].tolist(), il[il != 0].tolist(),
                float(raw.g[arcs].sum() + raw.final_g[end]),
                float(raw.a[arcs].sum() + raw.final_a[end]))
        return raw, path, out.reached_final, path_lattice


def _linear_path(lat: RawLattice) -> tuple[list[int], list[int], float, float]:
    """Words, transition-ids and total (graph, acoustic) cost of a linear lattice."""
    nxt = {int(s): i for i, s in enumerate(lat.src.tolist())}
    words, ali, g, a = [], [], 0.0, 0.0
    s = lat.start
    seen = 0
    while s in nxt:
        i = nxt[s]
        if lat.ilabel[i]:
            ali.append(int(lat.ilabel[i]))
        if lat.olabel[i]:
            words.append(int(lat.olabel[i]))
        g += float(lat.g[i])
        a += float(lat.a[i])
        s = int(lat.dst[i])
        seen += 1
        if seen > lat.num_states:
            raise DecodeError("the best path is not linear")
    if math.isfinite(lat.final_g[s]):
        g += float(lat.final_g[s])
        a += float(lat.final_a[s])
    return words, ali, g, a


def linear_compact_lattice(ilabel, olabel, g, a, final_g: float,
                           final_a: float) -> CompactLattice:
    """A path of raw arcs as Kaldi's ConvertLattice factors it (fstext/factor-inl.h): a state
    is kept where a word leaves it (words are pushed to the first arc of a chain), so each
    compact arc is one word-bearing arc plus the word-less arcs after it (the arcs before the
    first word: one word-less compact arc), carrying their transition-ids and summed costs."""
    clat = CompactLattice()
    clat.add_state()
    clat.start = 0
    starts = [0] + [i for i in range(1, len(olabel)) if olabel[i] != 0]
    for k, lo in enumerate(starts):
        hi = starts[k + 1] if k + 1 < len(starts) else len(olabel)
        tids = tuple(int(t) for t in ilabel[lo:hi] if t)
        nxt = clat.add_state()
        clat.add_arc(nxt - 1, int(olabel[lo]), float(np.sum(g[lo:hi], dtype=np.float64)),
                     float(np.sum(a[lo:hi], dtype=np.float64)), tids, nxt)
    clat.set_final(clat.num_states - 1, float(final_g), float(final_a))
    return clat
