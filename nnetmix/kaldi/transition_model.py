"""Kaldi's TransitionModel (src/hmm/transition-model.cc) with numpy lookups, and the alignment
conversions built on it (ali-to-pdf, ali-to-phones, analyze-counts).

A transition model is the topology plus the sorted list of *tuples* (phone, hmm-state,
forward-pdf, self-loop-pdf); tuple i is transition-state i+1. Each transition-state owns one
transition-id per transition out of its HMM state, numbered consecutively from 1 in tuple order,
so the tuple order fixes every transition-id. File layout::

    <TransitionModel> <Topology> ... </Topology>
    <Triples> T  (phone hmm-state pdf) * T  </Triples>            # topology is an HMM
    <Tuples> T  (phone hmm-state fwd-pdf self-loop-pdf) * T </Tuples>   # otherwise
    <LogProbs> FV (num-transition-ids + 1; entry 0 is 0) </LogProbs>
    </TransitionModel>

Lookups (numpy int32/bool/float32 arrays indexed by transition-id, entry 0 unused):
``tid2pdf`` (-1 at 0), ``tid2phone``, ``tid2state`` (the transition-STATE, Kaldi's id2state_),
``tid2hmm_state``, ``tid2index`` (transition-index within its state), ``tid_is_selfloop``,
``tid_is_final``, ``log_probs``; per transition-state (1-based): ``state2id``,
``non_self_loop_log_probs``.
"""
from __future__ import annotations

import logging
from typing import Iterable, Optional, Sequence, TextIO

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.kaldi.codec import _fmt
from nnetmix.kaldi.context_dep import ContextDependency
from nnetmix.kaldi.hmm_topology import NO_PDF, HmmTopology
from nnetmix.kaldi.stream import open_output
from nnetmix.kaldi.table import SequentialReader
from nnetmix.kaldi.tokens import TokenReader, TokenWriter, open_object, write_object_bytes
from nnetmix.kaldi.writer import TableWriter

__all__ = ["TransitionModel", "read_transition_model", "write_transition_model",
           "build_transition_model", "ali_to_pdf", "ali_to_phones", "ali_to_phones_ctm",
           "ali_to_post", "analyze_counts", "format_counts", "info_lines", "write_info"]

logger = logging.getLogger(__name__)


class TransitionModel:
    """Topology + tuples + transition log-probs, with Kaldi's derived lookups as numpy arrays."""
    def __init__(self, topo: HmmTopology, tuples, log_probs: Optional[np.ndarray] = None,
                 name: str = "transition model"):
        self.topo = topo
        self.tuples = np.asarray(tuples, dtype=np.int32).reshape(-1, 4)
        self._compute_derived(name)
        if log_probs is None:
            self.log_probs = self._initial_log_probs()
        else:
            lp = np.asarray(log_probs, dtype=np.float32)
            if lp.shape != (self.num_transition_ids + 1,):
                raise FormatError(f"{name}: <LogProbs> has {lp.size} entries, expected "
                                  f"{self.num_transition_ids + 1} (transition-ids + 1)")
            bad = np.flatnonzero(~np.isfinite(lp[1:]) | (lp[1:] > 0))
            if bad.size:
                raise FormatError(f"{name}: log-prob of transition-id {int(bad[0]) + 1} is "
                                  f"{lp[bad[0] + 1]}, expected a finite value <= 0")
            self.log_probs = lp

    # -- construction (TransitionModel(ctx_dep, topo)) -------------------------------------------
    @classmethod
    def build(cls, ctx_dep: ContextDependency, topo: HmmTopology) -> "TransitionModel":
        """Kaldi's TransitionModel(ctx_dep, topo): tuples from the tree, probs from the topology."""
        tuples = _tuples_hmm(ctx_dep, topo) if topo.is_hmm() else _tuples_not_hmm(ctx_dep, topo)
        return cls(topo, sorted(set(tuples)) if tuples else np.zeros((0, 4), np.int32))

    def _compute_derived(self, name: str) -> None:
        """ComputeDerived: transition-ids in tuple order, one per transition of the HMM state."""
        phones = set(self.topo.phones.tolist())
        T = len(self.tuples)
        if T == 0:
            raise FormatError(f"{name}: no tuples")
        rows = [tuple(t) for t in self.tuples.tolist()]
        bad = next((i for i in range(1, T) if rows[i - 1] >= rows[i]), None)
        if bad is not None:
            raise FormatError(f"{name}: tuples not sorted and unique at tuple {bad} "
                              "(Kaldi's transition-ids need them sorted)")
        state2id = np.zeros(T + 2, dtype=np.int32)
        tid = 1
        entries = []
        for ts, (phone, hmm_state, fwd, loop) in enumerate(self.tuples.tolist(), start=1):
            if phone not in phones:
                raise FormatError(f"{name}: tuple {ts - 1} names phone {phone}, which the "
                                  "topology does not have")
            entry = self.topo.topology_for_phone(phone)
            if not 0 <= hmm_state < len(entry) or entry[hmm_state].forward_pdf_class == NO_PDF:
                raise FormatError(f"{name}: tuple {ts - 1} names HMM state {hmm_state} of phone "
                                  f"{phone}, which is not an emitting state")
            if fwd < 0 or loop < -1:
                raise FormatError(f"{name}: tuple {ts - 1} has bad pdfs ({fwd}, {loop})")
            state2id[ts] = tid
            entries.append(entry)
            tid += len(entry[hmm_state].transitions)
        state2id[T + 1] = tid
        n = tid - 1
        tid2state = np.zeros(n + 1, dtype=np.int32)
        tid2index = np.zeros(n + 1, dtype=np.int32)
        tid2pdf = np.full(n + 1, -1, dtype=np.int32)
        tid2phone = np.zeros(n + 1, dtype=np.int32)
        tid2hmm_state = np.zeros(n + 1, dtype=np.int32)
        tid_is_selfloop = np.zeros(n + 1, dtype=bool)
        tid_is_final = np.zeros(n + 1, dtype=bool)
        for ts, (phone, hmm_state, fwd, loop) in enumerate(self.tuples.tolist(), start=1):
            entry = entries[ts - 1]
            for k, (dst, _prob) in enumerate(entry[hmm_state].transitions):
                t = state2id[ts] + k
                tid2state[t] = ts
                tid2index[t] = k
                tid2phone[t] = phone
                tid2hmm_state[t] = hmm_state
                tid_is_selfloop[t] = dst == hmm_state
                tid_is_final[t] = dst + 1 == len(entry)
                tid2pdf[t] = loop if dst == hmm_state else fwd
        self.state2id = state2id
        self.tid2state, self.tid2index, self.tid2pdf = tid2state, tid2index, tid2pdf
        self.tid2phone, self.tid2hmm_state = tid2phone, tid2hmm_state
        self.tid_is_selfloop, self.tid_is_final = tid_is_selfloop, tid_is_final
        self.num_pdfs = int(max(self.tuples[:, 2].max(), self.tuples[:, 3].max())) + 1

    def _initial_log_probs(self) -> np.ndarray:
        """InitializeProbs: log of the topology's transition probabilities (float32 logs)."""
        lp = np.zeros(self.num_transition_ids + 1, dtype=np.float32)
        for t in range(1, self.num_transition_ids + 1):
            phone, hmm_state = int(self.tid2phone[t]), int(self.tid2hmm_state[t])
            prob = self.topo.topology_for_phone(phone)[hmm_state].transitions[self.tid2index[t]][1]
            lp[t] = np.log(np.float32(prob))
        return lp

    # -- sizes and lookups --------------------------------------------------------------------
    @property
    def phones(self) -> np.ndarray:
        return self.topo.phones

    @property
    def num_transition_ids(self) -> int:
        return int(self.tid2state.size - 1)

    @property
    def num_transition_states(self) -> int:
        return int(len(self.tuples))

    @property
    def num_phones(self) -> int:
        """NumPhones(): the highest phone in any tuple."""
        return int(self.tuples[:, 0].max())

    def is_hmm(self) -> bool:
        return self.topo.is_hmm()

    @property
    def non_self_loop_log_probs(self) -> np.ndarray:
        """ComputeDerivedOfProbs: per transition-state log(1 - p(self-loop)), 0 without one."""
        out = np.zeros(self.num_transition_states + 1, dtype=np.float32)
        loops = np.flatnonzero(self.tid_is_selfloop)
        p = np.exp(self.log_probs[loops].astype(np.float64))
        out[self.tid2state[loops]] = np.log(np.maximum(1.0 - p, 1e-10)).astype(np.float32)
        return out

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TransitionModel) and self.topo == other.topo
                and np.array_equal(self.tuples, other.tuples)
                and np.array_equal(self.log_probs, other.log_probs))

    def check_alignment(self, ali: np.ndarray, what: str = "alignment") -> None:
        """Refuse transition-ids outside 1..num_transition_ids (Kaldi asserts)."""
        ali = np.asarray(ali)
        if ali.size and (ali.min() < 1 or ali.max() > self.num_transition_ids):
            bad = int(ali[(ali < 1) | (ali > self.num_transition_ids)][0])
            raise FormatError(f"{what}: transition-id {bad} out of range "
                              f"1..{self.num_transition_ids} (alignment and model do not match?)")

    def split_to_phones(self, ali: Sequence[int]) -> list[np.ndarray]:
        """SplitToPhones (hmm-utils.cc): the alignment cut at phone ends, reordered or not."""
        ali = np.asarray(ali, dtype=np.int32)
        if ali.size == 0:
            return []
        reordered = self._is_reordered(ali)
        final, loop, state = self.tid_is_final, self.tid_is_selfloop, self.tid2state
        ends = []
        n = ali.size
        i = 0
        while i < n:
            t = ali[i]
            if final[t]:
                if reordered:
                    while i + 1 < n and loop[ali[i + 1]]:
                        i += 1
                ends.append(i + 1)
            elif i + 1 == n:
                ends.append(i + 1)
            elif state[t] != state[ali[i + 1]] and self.tid2phone[t] != self.tid2phone[ali[i + 1]]:
                ends.append(i + 1)
            i += 1
        return np.split(ali, ends[:-1])

    def is_reordered(self, ali: Sequence[int]) -> bool:
        """IsReordered (hmm-utils.cc): whether self-loops follow their forward transition."""
        ali = np.asarray(ali, dtype=np.int32)
        return bool(ali.size) and self._is_reordered(ali)

    def _is_reordered(self, ali: np.ndarray) -> bool:
        st = self.tid2state[ali]
        change = np.flatnonzero(st[:-1] != st[1:])
        loop = self.tid_is_selfloop
        for i in change.tolist():
            if loop[ali[i]]:
                return True
            if loop[ali[i + 1]]:
                return False
        if loop[ali[0]]:
            return False
        return bool(loop[ali[-1]])

    # -- I/O -----------------------------------------------------------------------------------
    @classmethod
    def read(cls, r: TokenReader) -> "TransitionModel":
        r.expect("<TransitionModel>")
        topo = HmmTopology.read(r)
        pos = r.src.pos
        tok = r.token("<Triples> or <Tuples>")
        if tok not in ("<Triples>", "<Tuples>"):
            raise r.fail(f"expected <Triples> or <Tuples>, got {tok[:40]!r}", pos=pos)
        size = r.int32("tuple count")
        if size <= 0:
            raise r.fail(f"bad tuple count {size}")
        width = 4 if tok == "<Tuples>" else 3
        if r.binary:
            raw = r.src.read(5 * width * size)
            if len(raw) != 5 * width * size:
                raise r.fail(f"truncated {tok}: expected {5 * width * size} bytes, got {len(raw)}",
                             pos=pos)
            items = np.frombuffer(raw, dtype=np.dtype([("s", "u1"), ("v", "<i4")]))
            if np.any(items["s"] != 4):
                k = int(np.flatnonzero(items["s"] != 4)[0])
                raise r.fail(f"bad {tok} entry {k}: expected size byte 4, got {items['s'][k]}",
                             pos=r.src.pos - len(raw) + 5 * k)
            vals = items["v"].astype(np.int32).reshape(size, width)
        else:
            vals = np.array([[r.int32(f"{tok} entry") for _ in range(width)] for _ in range(size)],
                            dtype=np.int32).reshape(size, width)
        tuples = np.concatenate([vals, vals[:, 2:3]], axis=1) if width == 3 else vals
        r.expect("</Tuples>" if width == 4 else "</Triples>")
        r.expect("<LogProbs>")
        log_probs = r.vector("<LogProbs>")
        r.expect("</LogProbs>")
        r.expect("</TransitionModel>")
        return cls(topo, tuples, log_probs, name=r.name)

    def write(self, w: TokenWriter) -> None:
        """TransitionModel::Write, byte for byte."""
        is_hmm = self.is_hmm()
        w.token("<TransitionModel>")
        w.newline()
        self.topo.write(w)
        w.token("<Triples>" if is_hmm else "<Tuples>")
        w.int32(len(self.tuples))
        w.newline()
        cols = self.tuples[:, :3] if is_hmm else self.tuples
        if w.binary:
            items = np.empty(cols.size, dtype=np.dtype([("s", "u1"), ("v", "<i4")]))
            items["s"] = 4
            items["v"] = cols.ravel()
            w.raw(items.tobytes())
        else:
            w.raw("".join("".join(f"{v} " for v in row) + "\n" for row in cols.tolist()).encode())
        w.token("</Triples>" if is_hmm else "</Tuples>")
        w.newline()
        w.token("<LogProbs>")
        w.newline()
        w.vector(self.log_probs)
        w.token("</LogProbs>")
        w.newline()
        w.token("</TransitionModel>")
        w.newline()

    def to_bytes(self, binary: bool = True) -> bytes:
        w = TokenWriter(binary)
        self.write(w)
        return w.getvalue()


def _tuples_hmm(ctx_dep: ContextDependency, topo: HmmTopology) -> list[tuple]:
    """ComputeTuplesIsHmm."""
    phones = topo.phones.tolist()
    num_classes = [-1] * (max(phones) + 1)
    for p in phones:
        num_classes[p] = topo.num_pdf_classes(p)
    pdf_info = ctx_dep.get_pdf_info(phones, num_classes)
    to_states: dict[tuple[int, int], list[int]] = {}
    for p in phones:
        for j, s in enumerate(topo.topology_for_phone(p)):
            if s.forward_pdf_class != NO_PDF:
                to_states.setdefault((p, s.forward_pdf_class), []).append(j)
    tuples = []
    for pdf, pairs in enumerate(pdf_info):
        for phone, pdf_class in pairs:
            states = to_states.get((phone, pdf_class))
            if not states:
                raise FormatError(f"tree and topology disagree: pdf {pdf} is for pdf-class "
                                  f"{pdf_class} of phone {phone}, which has no such state")
            tuples += [(phone, j, pdf, pdf) for j in states]
    return tuples


def _tuples_not_hmm(ctx_dep: ContextDependency, topo: HmmTopology) -> list[tuple]:
    """ComputeTuplesNotHmm: (forward pdf-class, self-loop pdf-class) pairs per state."""
    phones = topo.phones.tolist()
    class_pairs: dict[int, list[tuple[int, int]]] = {}
    to_states: dict[int, dict[tuple[int, int], list[int]]] = {}
    for p in phones:
        for j, s in enumerate(topo.topology_for_phone(p)):
            if s.forward_pdf_class != NO_PDF:
                key = (s.forward_pdf_class, s.self_loop_pdf_class)
                class_pairs.setdefault(p, []).append(key)
                to_states.setdefault(p, {}).setdefault(key, []).append(j)
    info = ctx_dep.get_pdf_info_pairs(phones, class_pairs)
    tuples = []
    for p in phones:
        for j, key in enumerate(class_pairs.get(p, [])):
            for hmm_state in to_states[p][key]:
                tuples += [(p, hmm_state, f, s) for f, s in info[p][j]]
    return tuples


def build_transition_model(ctx_dep: ContextDependency, topo: HmmTopology) -> TransitionModel:
    """Kaldi's TransitionModel(ctx_dep, topo)."""
    return TransitionModel.build(ctx_dep, topo)


def info_lines(tm: TransitionModel) -> list[str]:
    """The sizes hmm-info and am-info print (gmm-info adds the GMM's), one line each."""
    return [f"number of phones {tm.phones.size}", f"number of pdfs {tm.num_pdfs}",
            f"number of transition-ids {tm.num_transition_ids}",
            f"number of transition-states {tm.num_transition_states}"]


def write_info(rxfilename: str, out: TextIO) -> TransitionModel:
    """hmm-info and am-info: read the model's transition model, write its sizes to ``out``."""
    tm = read_transition_model(rxfilename)
    out.write("".join(line + "\n" for line in info_lines(tm)))
    out.flush()
    return tm


def read_transition_model(f) -> TransitionModel:
    """Read a transition model: from an rxfilename (a .mdl's leading transition model, or a
    file copy-transition-model wrote), or from an open :class:`TokenReader`."""
    if isinstance(f, TokenReader):
        return TransitionModel.read(f)
    r = open_object(f)
    try:
        return TransitionModel.read(r)
    finally:
        r.src.close(check=False)


def write_transition_model(wxfilename: str, tm: TransitionModel, binary: bool = True) -> None:
    """WriteKaldiObject(trans_model, ...), as copy-transition-model writes it."""
    write_object_bytes(wxfilename, tm.to_bytes(binary), binary)


# -- alignment conversions (the ali-to-* and analyze-counts binaries) ---------------------------
def ali_to_pdf(tm: TransitionModel, rspecifier: str, wspecifier: str) -> int:
    """ali-to-pdf: transition-ids to zero-based pdf-ids; returns the number converted."""
    done = 0
    with SequentialReader(rspecifier, "ivec") as reader, TableWriter(wspecifier, "ivec") as writer:
        for key, ali in reader:
            tm.check_alignment(ali, f"{rspecifier}: key {key}")
            writer.write(key, tm.tid2pdf[ali])
            done += 1
    return done


def ali_to_phones(tm: TransitionModel, rspecifier: str, wspecifier: str,
                  per_frame: bool = False) -> int:
    """ali-to-phones: the phone sequence (or per-frame phones) of each alignment."""
    done = 0
    with SequentialReader(rspecifier, "ivec") as reader, TableWriter(wspecifier, "ivec") as writer:
        for key, ali in reader:
            tm.check_alignment(ali, f"{rspecifier}: key {key}")
            split = tm.split_to_phones(ali)
            phones = np.array([tm.tid2phone[s[0]] for s in split], dtype=np.int32)
            if per_frame:
                phones = np.repeat(phones, [len(s) for s in split])
            writer.write(key, phones)
            done += 1
    return done


def ali_to_phones_ctm(tm: TransitionModel, rspecifier: str, wxfilename: str,
                      frame_shift: float = 0.01) -> int:
    """ali-to-phones --ctm-output: ``key 1 start duration phone`` lines (confidence-free)."""
    digits = 2 if frame_shift >= 0.01 else 3
    done = 0
    sink = open_output(wxfilename)
    try:
        with SequentialReader(rspecifier, "ivec") as reader:
            for key, ali in reader:
                tm.check_alignment(ali, f"{rspecifier}: key {key}")
                start = np.float32(0.0)
                lines = []
                for seg in tm.split_to_phones(ali):
                    dur = np.float32(frame_shift * len(seg))
                    lines.append(f"{key} 1 {start:.{digits}f} {dur:.{digits}f} "
                                 f"{tm.tid2phone[seg[0]]}\n")
                    start = np.float32(start + dur)
                sink.write("".join(lines).encode())
                done += 1
    except BaseException:
        sink.abort()
        raise
    sink.commit()
    return done


def ali_to_post(rspecifier: str, wspecifier: str) -> int:
    """ali-to-post: each frame's id with posterior 1.0."""
    done = 0
    with SequentialReader(rspecifier, "ivec") as reader, TableWriter(wspecifier, "post") as writer:
        for key, ali in reader:
            writer.write(key, [[(int(a), 1.0)] for a in ali.tolist()])
            done += 1
    return done


def analyze_counts(rspecifier: str, counts_dim: int = 0) -> tuple[np.ndarray, int]:
    """analyze-counts: how often each value occurs over all vectors (float64, length at least
    ``counts_dim``, grown to the largest value + 1), and the number of vectors read.

    The +0.5 that Kaldi's analyze-counts adds before writing is applied by :func:`format_counts`'s
    caller (bin/analyze-counts.py), not here, so these are the raw frame counts."""
    counts = np.zeros(max(0, counts_dim), dtype=np.float64)
    done = 0
    with SequentialReader(rspecifier, "ivec") as reader:
        for key, ali in reader:
            if ali.size and ali.min() < 0:
                raise FormatError(f"{rspecifier}: key {key}: negative value {int(ali.min())}")
            c = np.bincount(ali, minlength=counts.size).astype(np.float64)
            if c.size > counts.size:
                counts = np.concatenate([counts, np.zeros(c.size - counts.size)])
            counts += c
            done += 1
    return counts, done


def format_counts(counts: Iterable[float]) -> str:
    """Vector<double>::Write in text mode: `` [ c1 c2 ... ]\\n`` (7 significant digits)."""
    return " [ " + "".join(_fmt(float(c)) + " " for c in counts) + "]\n"
