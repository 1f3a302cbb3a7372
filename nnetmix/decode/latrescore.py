"""State-level lattices and acoustic rescoring, as Kaldi's decode_fmllr.sh uses them in its
last step: the pass-2 decode writes undeterminized lattices (``--determinize-lattice=false``),
gmm-rescore-lattice replaces their acoustic costs with the final model's log-likelihoods on the
final fMLLR features, and lattice-determinize-pruned turns them into word lattices. Rescoring the
lattice instead of decoding again saves a whole search (src/gmmbin/gmm-rescore-lattice.cc,
src/latbin/lattice-determinize-pruned.cc, src/lat/lattice-functions.cc LatticeStateTimes).

Our lattice archives hold CompactLattices; a state-level lattice is one whose arcs carry at most
one transition-id each (what gmm-latgen-faster writes without determinization, or what reading
Kaldi's ``lattice4`` archive gives). :func:`compact_to_raw` is Kaldi's ConvertLattice the other
way (a string of transition-ids becomes a chain of arcs), so any CompactLattice can be rescored
or determinized, as Kaldi's tools read either kind through their Lattice readers.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional

import numpy as np

from nnetmix.decode.latio import CompactLatticeWriter, iter_compact_lattices
from nnetmix.decode.lattice import (IMPLS, CompactLattice, LatticeError, RawLattice,
                                    determinize_lattice_pruned_status)
from nnetmix.decode.latmin import push_and_minimize
from nnetmix.decode.phonedet import determinize_lattice_phone_pruned
from nnetmix.errors import UsageError
from nnetmix.options import option

__all__ = ["compact_to_raw", "raw_to_compact", "lattice_state_times", "acoustic_rescore",
           "rescore_lattices", "determinize_lattices", "DeterminizeToolOptions"]

logger = logging.getLogger(__name__)


def raw_to_compact(raw: RawLattice) -> CompactLattice:
    """ConvertLattice without determinization: one compact arc per raw arc (word or 0 as the
    label, the transition-id, if any, as the string)."""
    clat = CompactLattice()
    for _ in range(raw.num_states):
        clat.add_state()
    clat.start = raw.start
    for s, d, il, ol, g, a in zip(raw.src.tolist(), raw.dst.tolist(), raw.ilabel.tolist(),
                                  raw.olabel.tolist(), raw.g.tolist(), raw.a.tolist()):
        clat.arcs[s].append((ol, g, a, (il,) if il else (), d))
    for s in range(raw.num_states):
        if math.isfinite(raw.final_g[s]):
            clat.set_final(s, raw.final_g[s], raw.final_a[s])
    return clat


def compact_to_raw(clat: CompactLattice) -> RawLattice:
    """ConvertLattice(CompactLattice -> Lattice): an arc with transition-ids t1..tn becomes a
    chain of n arcs, the first carrying the word and the weight; a final weight with a string
    becomes a chain to a new final state. An arc with no transition-id stays one epsilon-input
    arc."""
    n = clat.num_states
    src: list[int] = []
    dst: list[int] = []
    il: list[int] = []
    ol: list[int] = []
    gs: list[float] = []
    as_: list[float] = []
    final_g = [math.inf] * n
    final_a = [math.inf] * n

    def new_state() -> int:
        final_g.append(math.inf)
        final_a.append(math.inf)
        return len(final_g) - 1

    def chain(s: int, label: int, g: float, a: float, tids: tuple, end: int) -> None:
        if len(tids) <= 1:
            src.append(s), dst.append(end), il.append(tids[0] if tids else 0), ol.append(label)
            gs.append(g), as_.append(a)
            return
        cur = s
        for k, t in enumerate(tids):
            nxt = end if k == len(tids) - 1 else new_state()
            src.append(cur), dst.append(nxt), il.append(t), ol.append(label if k == 0 else 0)
            gs.append(g if k == 0 else 0.0), as_.append(a if k == 0 else 0.0)
            cur = nxt

    for s in range(n):
        for lab, g, a, t, nxt in clat.arcs[s]:
            chain(s, lab, g, a, t, nxt)
        fin = clat.finals[s]
        if fin is None:
            continue
        if fin[2]:
            end = new_state()
            chain(s, 0, fin[0], fin[1], fin[2], end)
            final_g[end], final_a[end] = 0.0, 0.0
        else:
            final_g[s], final_a[s] = fin[0], fin[1]
    return RawLattice(len(final_g), clat.start, np.array(src, np.int64), np.array(dst, np.int64),
                      np.array(il, np.int64), np.array(ol, np.int64), np.array(gs, np.float64),
                      np.array(as_, np.float64), np.array(final_g), np.array(final_a))


def lattice_state_times(raw: RawLattice) -> tuple[np.ndarray, int]:
    """Kaldi's LatticeStateTimes: the frame each state is reached at (the number of
    transition-ids on any path to it), and the utterance length (the largest time of a state).
    Raises LatticeError when two paths disagree (not a state-level lattice of one utterance)."""
    order = raw.topo_order()
    times = np.full(raw.num_states, -1, dtype=np.int64)
    if raw.start < 0:
        return times, 0
    times[raw.start] = 0
    by_src: list[list[int]] = [[] for _ in range(raw.num_states)]
    for i, s in enumerate(raw.src.tolist()):
        by_src[s].append(i)
    dst, step = raw.dst.tolist(), (raw.ilabel != 0).astype(np.int64).tolist()
    t_list = times.tolist()
    for s in order.tolist():
        t = t_list[s]
        if t < 0:
            continue
        for i in by_src[s]:
            d, nt = dst[i], t + step[i]
            if t_list[d] < 0:
                t_list[d] = nt
            elif t_list[d] != nt:
                raise LatticeError(f"state {d} is reached at frames {t_list[d]} and {nt} "
                                   "(not a state-level lattice)")
    times = np.array(t_list, dtype=np.int64)
    return times, int(times.max(initial=0))


def acoustic_rescore(raw: RawLattice, loglikes: np.ndarray, tid2pdf: np.ndarray,
                     times: np.ndarray, old_acoustic_scale: float = 0.0) -> RawLattice:
    """LatticeAcousticRescore: an arc with transition-id t leaving a state at frame f gets the
    acoustic cost ``old_acoustic_scale * cost - loglikes[f, pdf(t)]``; epsilon-input arcs and
    final weights get acoustic cost 0. ``loglikes`` is (frames, pdfs); one gather, no loop."""
    tid2pdf = np.asarray(tid2pdf, dtype=np.int64)
    has_tid = raw.ilabel != 0
    if has_tid.any() and int(raw.ilabel.max()) >= len(tid2pdf):
        raise LatticeError(f"the lattice has transition-id {int(raw.ilabel.max())}, the model "
                           f"has {len(tid2pdf) - 1} (lattice and model do not match)")
    t = times[raw.src]
    a = np.zeros_like(raw.a)
    old = raw.a[has_tid] * old_acoustic_scale if old_acoustic_scale != 0.0 else 0.0
    a[has_tid] = old - loglikes[t[has_tid], tid2pdf[raw.ilabel[has_tid]]]
    final_a = np.where(np.isfinite(raw.final_g), 0.0, math.inf)
    return RawLattice(raw.num_states, raw.start, raw.src, raw.dst, raw.ilabel, raw.olabel,
                      raw.g, a, raw.final_g, final_a)


def _features_by_key(items: Iterable[tuple[str, np.ndarray]]) -> Callable[[str], Optional[np.ndarray]]:
    """A lookup over a feature table read once, in order: keys passed over on the way to the
    one asked for are kept until asked for (as Kaldi's random access on a sorted archive)."""
    it: Iterator = iter(items)
    pending: dict[str, np.ndarray] = {}

    def get(key: str) -> Optional[np.ndarray]:
        if key in pending:
            return pending.pop(key)
        for k, m in it:
            if k == key:
                return m
            pending[k] = m
        return None
    return get


def rescore_lattices(lats_rspecifier: str, features: Iterable[tuple[str, np.ndarray]],
                     loglikes_of: Callable[[np.ndarray], np.ndarray], tid2pdf: np.ndarray,
                     lats_wspecifier: str, old_acoustic_scale: float = 0.0) -> int:
    """gmm-rescore-lattice's table loop: ``loglikes_of(feats)`` gives (frames, pdfs) model
    log-likelihoods. A lattice with no features or a different number of frames is skipped
    with Kaldi's warning. Returns the number of lattices written."""
    feats_of = _features_by_key(features)
    done = no_feats = other = 0
    with CompactLatticeWriter(lats_wspecifier) as writer:
        for key, clat in iter_compact_lattices(lats_rspecifier):
            feats = feats_of(key)
            if feats is None:
                logger.warning("No feature found for utterance %s. Skipping", key)
                no_feats += 1
                continue
            raw = compact_to_raw(clat)
            try:
                times, max_time = lattice_state_times(raw)
            except LatticeError as e:
                raise LatticeError(f"{lats_rspecifier}: lattice {key}: {e}") from None
            if feats.shape[0] != max_time:
                logger.warning("Skipping utterance %s since number of time frames in lattice "
                               "(%d) differ from number of feature frames (%d).", key, max_time,
                               feats.shape[0])
                other += 1
                continue
            try:
                raw = acoustic_rescore(raw, loglikes_of(feats), tid2pdf, times,
                                       old_acoustic_scale)
            except LatticeError as e:
                raise LatticeError(f"{lats_rspecifier}: lattice {key}: {e}") from None
            writer.write(key, raw_to_compact(raw))
            done += 1
    logger.info("Done %d lattices.", done)
    return done


@dataclass
class DeterminizeToolOptions:
    """The options lattice-determinize-pruned and lattice-determinize-phone-pruned share."""

    acoustic_scale: float = option(1.0, "Scaling factor for acoustic likelihoods")
    beam: float = option(10.0, "Pruning beam [applied after acoustic scaling].")
    delta: float = option(0.000976562, "Tolerance used in determinization (accepted; subsets are "
                          "compared at Kaldi's default, 1/1024)")
    max_mem: int = option(50000000, "Maximum approximate memory usage in determinization (real "
                          "usage might be many times this)")
    determinize_impl: str = option("compiled", "Determinization: compiled (numba) or python (the "
                                   "reference it is tested equal to)")


def determinize_lattices(lats_rspecifier: str, lats_wspecifier: str, acoustic_scale: float = 1.0,
                         beam: float = 10.0, max_states: int = -1, max_mem: int = 50000000,
                         impl: str = "compiled", max_arcs: int = -1,
                         phones: Optional[tuple] = None,
                         minimize: bool = False) -> tuple[int, int]:
    """lattice-determinize-pruned's table loop: scale the acoustic costs, determinize with
    pruning at ``beam`` (:func:`nnetmix.decode.lattice.determinize_lattice_pruned`, ``impl``
    compiled or python), scale back. With ``phones`` = (phone_start_labels(model),
    PhoneDeterminizeOptions), lattice-determinize-phone-pruned's: the phone-then-word wrapper
    (:func:`nnetmix.decode.phonedet.determinize_lattice_phone_pruned`, whose options say
    whether to minimize); ``minimize``: lattice-determinize-pruned's --minimize.
    Returns (lattices written, lattices whose determinization stopped short of the beam)."""
    if acoustic_scale == 0.0:
        raise UsageError("Do not use a zero acoustic scale (cannot be inverted)")
    if impl not in IMPLS:
        raise UsageError(f"--determinize-impl={impl}: expected one of {', '.join(IMPLS)}")
    done = warned = 0
    with CompactLatticeWriter(lats_wspecifier) as writer:
        for key, clat in iter_compact_lattices(lats_rspecifier):
            raw = compact_to_raw(clat)
            raw.a = raw.a * acoustic_scale
            fin = np.isfinite(raw.final_a)
            raw.final_a = np.where(fin, raw.final_a * acoustic_scale, math.inf)
            if raw.start < 0 or raw.num_states == 0:
                det = CompactLattice()
            else:
                try:
                    if phones is not None:
                        det, ok = determinize_lattice_phone_pruned(
                            raw, phones[0], beam, phones[1], max_mem, key, impl, max_states,
                            max_arcs)
                    else:
                        det, ok = determinize_lattice_pruned_status(
                            raw, beam, max_states, max_mem, key, impl, max_arcs)
                        if minimize:
                            det = push_and_minimize(det)
                    if not ok:
                        logger.warning("For key %s, determinization did not succeed(partial "
                                       "output will be pruned tighter than the specified beam.)",
                                       key)
                        warned += 1
                except LatticeError as e:
                    logger.warning("For key %s, determinization did not succeed(partial output "
                                   "will be pruned tighter than the specified beam.) (%s)", key, e)
                    warned += 1
                    det = CompactLattice()
            writer.write(key, det.scale(acoustic_scale=1.0 / acoustic_scale))
            done += 1
    logger.info("Done %d lattices, determinization finished earlier than specified by the beam "
                "on %d of these.", done, warned)
    return done, warned
