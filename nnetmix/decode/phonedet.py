"""Phone-then-word lattice determinization: Kaldi's DeterminizeLatticePhonePrunedWrapper
(src/lat/determinize-lattice-pruned.cc), what Kaldi's latgen decoders run by default.

Why two passes: word-level determinization of a deep lattice carries, for every word sequence
still open, the transition-id strings of all its alignments since the last word, and each
closure copies them again. Marking where each phone starts and determinizing on words *and*
phones first settles the alignment phone by phone (one best alignment per word-and-phone
sequence), so the strings stay short; the word pass then runs on that much smaller lattice. The
result is the same word lattice: for each word sequence within the beam, its best alignment.

The steps, each Kaldi's:

1. :func:`insert_phones` (DeterminizeLatticeInsertPhones): on every arc whose transition-id
   starts a phone (HMM state 0, not a self-loop), except the arcs leaving the start state, the
   phone, offset above the highest word label, goes on the word side: on the arc itself when it
   has no word, else on a new arc after it.
2. Pruned determinization on those labels (:func:`nnetmix.decode.lattice.pruned_with_retries`,
   with --max-mem's retries), its output written as a raw lattice with one transition-id per arc
   (Kaldi's Output to a Lattice) and the phone labels turned back into epsilons
   (DeterminizeLatticeDeletePhones): :func:`phone_pass`.
3. The word-level pruned determinization of that lattice, with the same beam.

``--phone-determinize=false`` is step 3 alone; ``--word-determinize=false`` stops after step 2
and converts the lattice to a CompactLattice as ConvertLattice does (:func:`factor_to_compact`).
``--minimize`` pushes and minimizes the word lattice (:mod:`nnetmix.decode.latmin`).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from nnetmix.decode.latmin import push_and_minimize
from nnetmix.decode.lattice import (IMPLS, INF, CompactLattice, LatticeError, RawLattice,
                                    connect, determinize_compiled_arrays,
                                    determinize_lattice_pruned_status, determinize_reference,
                                    pruned_with_retries)
from nnetmix.options import option

__all__ = ["PhoneDeterminizeOptions", "phone_start_labels", "insert_phones", "phone_pass",
           "factor_to_compact", "determinize_lattice_phone_pruned"]

logger = logging.getLogger(__name__)


@dataclass
class PhoneDeterminizeOptions:
    """Kaldi's DeterminizeLatticePhonePrunedOptions (less --delta and --max-mem, which our
    tools register themselves)."""

    phone_determinize: bool = option(True, "If true, do an initial pass of determinization on both "
                                     "phones and words (see also --word-determinize)")
    word_determinize: bool = option(True, "If true, do a second pass of determinization on words "
                                    "only (see also --phone-determinize)")
    minimize: bool = option(False, "If true, push and minimize after determinization.")


def phone_start_labels(tm) -> np.ndarray:
    """Per transition-id, the phone it starts (Kaldi's TransitionIdToHmmState == 0 and not
    IsSelfLoop), else 0; index 0 (epsilon) is 0."""
    lab = np.where((np.asarray(tm.tid2hmm_state) == 0) & ~np.asarray(tm.tid_is_selfloop, bool),
                   np.asarray(tm.tid2phone), 0).astype(np.int64)
    lab[0] = 0
    return lab


def insert_phones(raw: RawLattice, phone_of_tid: np.ndarray) -> tuple[RawLattice, int]:
    """DeterminizeLatticeInsertPhones on a raw lattice (transition-ids as ilabel, words as
    olabel): returns (lattice with phone labels first_phone + phone on the word side,
    first_phone). New states (one per marked arc that has a word) come after the others."""
    if len(raw.ilabel) and int(raw.ilabel.max()) >= len(phone_of_tid):
        raise LatticeError(f"the lattice has transition-id {int(raw.ilabel.max())}, but the "
                           f"model has only {len(phone_of_tid) - 1} (lattice and model do not "
                           "match)")
    first = int(raw.olabel.max(initial=0)) + 1
    ph = phone_of_tid[raw.ilabel]
    mark = (ph > 0) & (raw.src != raw.start)
    olabel = raw.olabel.copy()
    direct = mark & (raw.olabel == 0)
    olabel[direct] = first + ph[direct]
    split = np.flatnonzero(mark & (raw.olabel != 0))
    n, k = raw.num_states, len(split)
    new = np.arange(n, n + k, dtype=np.int64)
    dst = raw.dst.copy()
    dst[split] = new
    zf = np.zeros(k, dtype=raw.g.dtype)
    more = np.full(k, INF, dtype=raw.final_g.dtype)
    out = RawLattice(n + k, raw.start, np.concatenate([raw.src, new]),
                     np.concatenate([dst, raw.dst[split]]),
                     np.concatenate([raw.ilabel, np.zeros(k, np.int64)]),
                     np.concatenate([olabel, first + ph[split]]),
                     np.concatenate([raw.g, zf]), np.concatenate([raw.a, zf.astype(raw.a.dtype)]),
                     np.concatenate([raw.final_g, more]),
                     np.concatenate([raw.final_a, more.astype(raw.final_a.dtype)]))
    return out, first


def phone_pass(raw: RawLattice, phone_of_tid: np.ndarray, beam: float,
               max_mem: int = 50_000_000, key: str = "", impl: str = "compiled",
               max_states: int = -1, max_arcs: int = -1) -> tuple[RawLattice, bool]:
    """DeterminizeLatticePhonePrunedFirstPass: insert phones, determinize with pruning (and
    --max-mem's retries), write the result as a raw lattice without the phones. Returns (raw
    lattice, reached the requested beam)."""
    marked, first = insert_phones(raw, phone_of_tid)
    if impl == "compiled":
        from nnetmix.decode import detlat  # optional: numba loads only when determinizing

        def run(b):
            (arcs, w, fstr, fw, _start, tpar, tlab), info = determinize_compiled_arrays(
                marked, b, max_states, max_mem, max_arcs)
            n, *arrays = detlat.output_lattice(arcs, w, fstr, fw, tpar, tlab, first)
            return RawLattice(n, 0 if n else -1, *arrays), info
    else:
        from nnetmix.decode.latrescore import compact_to_raw  # cycle: latrescore -> phonedet

        def run(b):
            clat, info = determinize_reference(marked, b, max_states, max_mem, max_arcs)
            out = compact_to_raw(clat)
            out.olabel = np.where(out.olabel >= first, 0, out.olabel)
            return out, info
    return pruned_with_retries(run, beam, max_mem, max_states, max_arcs, key)


def factor_to_compact(raw: RawLattice) -> CompactLattice:
    """ConvertLattice (Lattice -> CompactLattice): chains of arcs through states with one arc in
    and one arc out (not the start, not final), where only the chain's first arc has a word,
    become one compact arc (Kaldi's Factor); its string is the chain's transition-ids, its weight
    their sum."""
    n = raw.num_states
    out = CompactLattice()
    if n == 0 or raw.start < 0:
        return out
    src, dst, il, ol = (x.tolist() for x in (raw.src, raw.dst, raw.ilabel, raw.olabel))
    g, a = raw.g.tolist(), raw.a.tolist()
    fin = np.isfinite(raw.final_g).tolist()
    indeg = np.bincount(raw.dst, minlength=n).tolist()
    by_src: list[list[int]] = [[] for _ in range(n)]
    for i, s in enumerate(src):
        by_src[s].append(i)

    def inner(s: int) -> bool:
        return (s != raw.start and not fin[s] and indeg[s] == 1 and len(by_src[s]) == 1
                and ol[by_src[s][0]] == 0)
    keep = [s for s in range(n) if not inner(s)]
    new_id = {s: j for j, s in enumerate(keep)}
    for _ in keep:
        out.add_state()
    out.start = new_id[raw.start]
    for s in keep:
        for i in by_src[s]:
            tg, ta, tids, d = g[i], a[i], [il[i]] if il[i] else [], dst[i]
            while inner(d):
                j = by_src[d][0]
                tg, ta, d = tg + g[j], ta + a[j], dst[j]
                if il[j]:
                    tids.append(il[j])
            out.add_arc(new_id[s], ol[i], tg, ta, tids, new_id[d])
        if fin[s]:
            out.set_final(new_id[s], raw.final_g[s], raw.final_a[s])
    return out


def determinize_lattice_phone_pruned(raw: RawLattice, phone_of_tid: np.ndarray, beam: float,
                                     opts: PhoneDeterminizeOptions | None = None,
                                     max_mem: int = 50_000_000, key: str = "",
                                     impl: str = "compiled", max_states: int = -1,
                                     max_arcs: int = -1) -> tuple[CompactLattice, bool]:
    """DeterminizeLatticePhonePrunedWrapper: the phone pass then the word pass (each as
    ``opts`` says), both with ``beam`` and --max-mem, and Connect at the end; returns
    (CompactLattice, every pass reached the beam). ``max_states``/``max_arcs`` apply to each
    pass (Kaldi's latgen tools do not set them)."""
    opts = opts or PhoneDeterminizeOptions()
    if impl not in IMPLS:
        raise LatticeError(f"determinization implementation {impl!r}: expected one of {IMPLS}")
    if not (opts.phone_determinize or opts.word_determinize):
        logger.warning("Both --phone-determinize and --word-determinize are set to false, "
                       "copying lattice without determinization.")
        return connect(factor_to_compact(raw)), True
    if raw.start < 0 or raw.num_states == 0:
        return CompactLattice(), True
    ok = True
    if opts.phone_determinize:
        raw, ok = phone_pass(raw, phone_of_tid, beam, max_mem, key, impl, max_states, max_arcs)
        if not np.isfinite(raw.final_g).any():
            # a pass stopped by a budget before any path was complete: nothing to connect
            return CompactLattice(), ok
        if not opts.word_determinize:
            return connect(factor_to_compact(raw)), ok
    clat, ok2 = determinize_lattice_pruned_status(raw, beam, max_states, max_mem, key, impl,
                                                  max_arcs)
    if opts.minimize:
        clat = push_and_minimize(clat)
    return clat, ok and ok2
