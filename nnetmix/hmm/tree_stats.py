"""Tree statistics: Kaldi's BuildTreeStatsType of GaussClusterable (acc-tree-stats, sum-tree-stats).

Each entry maps an *event* -- the sorted (key, value) pairs of one context-dependent HMM state:
``(-1, pdf-class)``, then the phones at positions ``0..N-1`` (only the central one for a
context-independent phone, 0 for "outside the utterance") -- to a Gaussian's sufficient
statistics: the frame count, the sum of the frames and the sum of their squares (doubles), and
the variance floor used when its likelihood is computed (src/tree/build-tree-utils.cc,
clusterable-classes.cc, hmm/tree-accu.cc).

File layout (WriteBuildTreeStats), binary or text::

    BTS <uint32 n>  n x ( EV <uint32 k> k x (<int32 key> <int32 value>)  T
                          GCL <double count> <float var_floor> <Matrix<double> 2 x dim> )

(``T`` is WriteBasicType<bool>; text mode adds a newline after each event and at the end.)
The entries are sorted by event, as Kaldi's std::map leaves them, so files sum and compare.

Statistics live in arrays (counts, sums, sums of squares), so the tree builder sums any subset
with one ``np.add.reduceat`` or matrix product instead of a loop over Clusterable objects.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.feat.pipeline import open_features
from nnetmix.kaldi.diag_gmm import read_gmm_model
from nnetmix.kaldi.stream import read_all
from nnetmix.kaldi.table import RandomAccessReader
from nnetmix.kaldi.tokens import TokenReader, TokenWriter, read_object_with, write_object_bytes
from nnetmix.kaldi.transition_model import TransitionModel
from nnetmix.options import option

__all__ = ["TreeStats", "read_tree_stats", "write_tree_stats", "sum_tree_stats",
           "AccTreeStatsOptions", "accumulate_tree_stats", "acc_tree_stats_tables",
           "TreeStatsAccumulator", "read_phone_map", "gauss_objf", "PDF_CLASS_KEY"]

logger = logging.getLogger(__name__)

PDF_CLASS_KEY = -1
_LOG_2PI = math.log(2.0 * math.pi)


def gauss_objf(count: np.ndarray, x: np.ndarray, x2: np.ndarray, var_floor) -> np.ndarray:
    """GaussClusterable::Objf for each row: count times the average log-likelihood of the data
    under its own ML diagonal Gaussian, variances floored at ``var_floor`` (0 where count <= 0).

    Vectorised over rows: ``count`` (n,), ``x`` and ``x2`` (n, dim)."""
    count = np.asarray(count, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    x2 = np.asarray(x2, dtype=np.float64)
    ok = count > 0.0
    c = np.where(ok, count, 1.0)[..., None]
    mean = x / c
    var = x2 / c - mean * mean
    floor = np.asarray(var_floor, dtype=np.float64)
    if floor.ndim:
        floor = floor[..., None]
    floored = np.maximum(var, floor)
    dim = x.shape[-1]
    per_frame = -0.5 * (var / floored).sum(-1) - 0.5 * (np.log(floored).sum(-1) + _LOG_2PI * dim)
    return np.where(ok, per_frame * np.where(ok, count, 0.0), 0.0)


@dataclass
class TreeStats:
    """BuildTreeStatsType of GaussClusterable: events and their Gaussian statistics."""

    events: list          #: per entry, a tuple of sorted (key, value) pairs
    count: np.ndarray     #: (n,) float64 frame counts
    x: np.ndarray         #: (n, dim) float64 sums of frames
    x2: np.ndarray        #: (n, dim) float64 sums of squared frames
    var_floor: np.ndarray  #: (n,) float32 variance floors

    def __len__(self) -> int:
        return len(self.events)

    @property
    def dim(self) -> int:
        return int(self.x.shape[1])

    def objf(self) -> np.ndarray:
        return gauss_objf(self.count, self.x, self.x2, self.var_floor)

    def subset(self, idx) -> "TreeStats":
        idx = np.asarray(idx, dtype=np.int64)
        return TreeStats([self.events[i] for i in idx.tolist()], self.count[idx], self.x[idx],
                         self.x2[idx], self.var_floor[idx])

    def value_table(self, keys: Sequence[int]) -> np.ndarray:
        """(n, len(keys)) int64 matrix of each event's value for each key, -1 where absent
        (values are phones or pdf-classes, never negative)."""
        col = {int(k): j for j, k in enumerate(keys)}
        out = np.full((len(self.events), len(col)), -1, dtype=np.int64)
        for i, ev in enumerate(self.events):
            for k, v in ev:
                j = col.get(k)
                if j is not None:
                    out[i, j] = v
        return out

    def sorted(self) -> "TreeStats":
        """Entries in Kaldi's std::map order, equal events summed (as sum-tree-stats does)."""
        order = sorted(range(len(self.events)), key=self.events.__getitem__)
        events, starts = [], []
        for pos, i in enumerate(order):
            if not events or self.events[i] != events[-1]:
                events.append(self.events[i])
                starts.append(pos)
        order_a = np.asarray(order, dtype=np.int64)
        if not events:
            return self
        st = np.asarray(starts)
        return TreeStats(events, np.add.reduceat(self.count[order_a], st),
                         np.add.reduceat(self.x[order_a], st, axis=0),
                         np.add.reduceat(self.x2[order_a], st, axis=0),
                         self.var_floor[order_a][st])

    # -- I/O ------------------------------------------------------------------------------------
    def write(self, w: TokenWriter) -> None:
        """WriteBuildTreeStats, byte for byte."""
        w.token("BTS")
        w.uint32(len(self.events))
        for i, ev in enumerate(self.events):
            w.token("EV")
            w.uint32(len(ev))
            for k, v in ev:
                w.int32(k)
                w.int32(v)
            w.newline()
            w.boolean(True)
            w.token("GCL")
            w.float64(self.count[i])
            w.float32(self.var_floor[i])
            w.matrix64(np.stack([self.x[i], self.x2[i]]))
        w.newline()

    def to_bytes(self, binary: bool = True) -> bytes:
        w = TokenWriter(binary, "tree stats")
        self.write(w)
        return w.getvalue()

    @classmethod
    def read(cls, r: TokenReader) -> "TreeStats":
        """ReadBuildTreeStats with GaussClusterable as the example type."""
        r.expect("BTS")
        n = r.uint32("number of statistics")
        events, count, floors, mats = [], np.zeros(n), np.zeros(n, np.float32), []
        for i in range(n):
            r.context = f"statistics entry {i}"
            r.expect("EV")
            k = r.uint32("event size")
            ev = tuple((r.int32("event key"), r.int32("event value")) for _ in range(k))
            events.append(ev)
            if not r.boolean("non-NULL flag"):
                raise r.fail("NULL statistics", "acc-tree-stats never writes them; "
                             "not a Gaussian tree-stats file?")
            r.expect("GCL")
            count[i] = r.float64("GCL count")
            floors[i] = r.float32("GCL var_floor")
            m = r.matrix64("GCL statistics")
            if m.shape[0] != 2 or (mats and m.shape[1] != mats[0].shape[1]):
                want = mats[0].shape[1] if mats else "dim"
                raise r.fail("bad GCL statistics",
                             f"expected 2 x {want}, got {m.shape[0]} x {m.shape[1]}")
            mats.append(m)
        r.context = ""
        dim = mats[0].shape[1] if mats else 0
        stack = np.stack(mats) if mats else np.zeros((0, 2, dim))
        return cls(events, count, stack[:, 0].copy(), stack[:, 1].copy(), floors)


def read_tree_stats(rxfilename: str) -> TreeStats:
    """Read a tree-accs file (binary or text)."""
    return read_object_with(rxfilename, TreeStats.read)


def write_tree_stats(wxfilename: str, stats: TreeStats, binary: bool = True) -> None:
    write_object_bytes(wxfilename, stats.to_bytes(binary), binary)


def sum_tree_stats(rxfilenames: Iterable[str]) -> TreeStats:
    """sum-tree-stats: the entries of all files, equal events added."""
    parts = [read_tree_stats(f) for f in rxfilenames]
    parts = [p for p in parts if len(p)]
    if not parts:
        return TreeStats([], np.zeros(0), np.zeros((0, 0)), np.zeros((0, 0)),
                         np.zeros(0, np.float32))
    dims = {p.dim for p in parts}
    if len(dims) > 1:
        raise FormatError(f"tree statistics of different dimensions {sorted(dims)} in "
                          f"{' '.join(rxfilenames)}")
    return TreeStats([e for p in parts for e in p.events], np.concatenate([p.count for p in parts]),
                     np.concatenate([p.x for p in parts]), np.concatenate([p.x2 for p in parts]),
                     np.concatenate([p.var_floor for p in parts])).sorted()


# -- acc-tree-stats -------------------------------------------------------------------------------
@dataclass
class AccTreeStatsOptions:
    """AccumulateTreeStatsOptions (hmm/tree-accu.h)."""

    var_floor: float = option(0.01, "Variance floor for tree clustering.")
    ci_phones: str = option("", "Colon-separated list of integer indices of "
                            "context-independent phones.")
    context_width: int = option(3, "Context window size.")
    central_position: int = option(1, "Central context-window position (zero-based)")
    phone_map: str = option("", "File name containing old->new phone mapping (each line is: "
                            "old-integer-id new-integer-id)")

    def ci_phone_list(self) -> list[int]:
        try:
            return sorted(int(t) for t in self.ci_phones.split(":") if t.strip())
        except ValueError:
            raise FormatError(f"--ci-phones: expected a colon-separated list of integers, got "
                              f"'{self.ci_phones}'") from None


class TreeStatsAccumulator:
    """AccumulateTreeStats over many utterances: the event of each frame is found per phone
    segment, and an utterance's frames are summed per event with one sort and reduceat."""

    def __init__(self, tm: TransitionModel, opts: AccTreeStatsOptions,
                 phone_map: Optional[np.ndarray] = None):
        if opts.context_width < 1 or not 0 <= opts.central_position < opts.context_width:
            raise FormatError(f"bad --context-width={opts.context_width} / --central-position="
                              f"{opts.central_position}")
        self.tm = tm
        self.N, self.P = opts.context_width, opts.central_position
        self.var_floor = np.float32(opts.var_floor)
        self.ci = set(opts.ci_phone_list())
        self.phone_map = phone_map
        self.tid2pdf_class = self._tid_to_pdf_class(tm)
        self.index: dict = {}
        self.count: list[float] = []
        self._x: list[np.ndarray] = []
        self._x2: list[np.ndarray] = []
        self.dim: Optional[int] = None

    @staticmethod
    def _tid_to_pdf_class(tm: TransitionModel) -> np.ndarray:
        """TransitionIdToPdfClass: the forward pdf-class, or the self-loop one for a self-loop."""
        out = np.zeros(tm.num_transition_ids + 1, dtype=np.int64)
        for t in range(1, tm.num_transition_ids + 1):
            state = tm.topo.topology_for_phone(int(tm.tid2phone[t]))[int(tm.tid2hmm_state[t])]
            out[t] = state.self_loop_pdf_class if tm.tid_is_selfloop[t] else state.forward_pdf_class
        return out

    def _map(self, phone: int) -> int:
        if phone == 0 or self.phone_map is None:
            return phone
        if not 0 < phone < len(self.phone_map):
            raise FormatError(f"Out-of-range phone {phone} bad --phone-map option?")
        return int(self.phone_map[phone])

    def add(self, feats: np.ndarray, ali: np.ndarray) -> bool:
        """Add one utterance; False (with Kaldi's warning) if its alignment is bad."""
        feats = np.asarray(feats)
        if self.dim is None:
            self.dim = feats.shape[1]
        elif feats.shape[1] != self.dim:
            raise FormatError(f"features of dimension {feats.shape[1]}, earlier ones had "
                              f"{self.dim}")
        self.tm.check_alignment(ali)
        segs = self.tm.split_to_phones(ali)
        if not segs or not all(self.tm.tid_is_final[s].any() for s in segs):
            logger.warning("AccumulateTreeStats: alignment appears to be bad, not using it")
            return False
        phones = [self._map(int(self.tm.tid2phone[s[0]])) for s in segs]
        N, P, n = self.N, self.P, len(segs)
        frame_event = np.empty(len(ali), dtype=np.int64)
        pos = 0
        pdf_class = self.tid2pdf_class[np.asarray(ali, dtype=np.int64)]
        for c in range(n):  # one step per phone: the window around phone c
            central = phones[c]
            ctx_dep = central not in self.ci
            base = []
            for j in range(N):
                i = c - P + j
                phone = phones[i] if 0 <= i < n else 0
                if ctx_dep or j == P:
                    base.append((j, phone))
            seg_len = len(segs[c])
            seg_pc = pdf_class[pos:pos + seg_len]
            for pc in np.unique(seg_pc).tolist():
                ev = ((PDF_CLASS_KEY, int(pc)), *base)
                idx = self.index.get(ev)
                if idx is None:
                    idx = self.index[ev] = len(self.index)
                frame_event[pos:pos + seg_len][seg_pc == pc] = idx
            pos += seg_len
        need = len(self.index) - len(self.count)
        if need:
            self.count.extend([0.0] * need)
            self._x.append(np.zeros((need, self.dim)))
            self._x2.append(np.zeros((need, self.dim)))
            self._consolidate()
        # frames sorted by event, each event's run summed with one reduceat (no BLAS threads)
        order = np.argsort(frame_event, kind="stable")
        ev_sorted = frame_event[order]
        starts = np.flatnonzero(np.r_[True, ev_sorted[1:] != ev_sorted[:-1]])
        used = ev_sorted[starts]
        f64 = feats.astype(np.float64)[order]
        self._x[0][used] += np.add.reduceat(f64, starts, axis=0)
        self._x2[0][used] += np.add.reduceat(f64 * f64, starts, axis=0)
        self._counts[used] += np.diff(np.r_[starts, len(ev_sorted)])
        return True

    def _consolidate(self) -> None:
        self._x = [np.concatenate(self._x)]
        self._x2 = [np.concatenate(self._x2)]
        old = getattr(self, "_counts", np.zeros(0))
        self._counts = np.concatenate([old, np.zeros(len(self.count) - len(old))])

    def stats(self) -> TreeStats:
        if not self.index:
            return TreeStats([], np.zeros(0), np.zeros((0, self.dim or 0)),
                             np.zeros((0, self.dim or 0)), np.zeros(0, np.float32))
        events = list(self.index)
        n = len(events)
        return TreeStats(events, self._counts.copy(), self._x[0], self._x2[0],
                         np.full(n, self.var_floor, dtype=np.float32)).sorted()


def accumulate_tree_stats(tm: TransitionModel, utterances, opts: AccTreeStatsOptions,
                          phone_map: Optional[np.ndarray] = None) -> TreeStats:
    """AccumulateTreeStats over (features, alignment) pairs (tests and library callers)."""
    acc = TreeStatsAccumulator(tm, opts, phone_map)
    for feats, ali in utterances:
        acc.add(feats, ali)
    return acc.stats()


def read_phone_map(rxfilename: str) -> np.ndarray:
    """ReadPhoneMap: ``old new`` per line -> array indexed by old phone (-1 where unmapped)."""
    text = read_all(rxfilename).decode("utf-8", "replace")
    pairs = []
    for n, line in enumerate(text.splitlines(), 1):
        w = line.split()
        if len(w) != 2 or not all(t.lstrip("-").isdigit() for t in w) or int(w[0]) <= 0:
            raise FormatError(f"{rxfilename}:{n}: expected 'old-phone new-phone', got '{line}'")
        pairs.append((int(w[0]), int(w[1])))
    out = np.full(max((p for p, _ in pairs), default=0) + 1, -1, dtype=np.int64)
    for a, b in pairs:
        out[a] = b
    return out


def acc_tree_stats_tables(model_rx: str, feats_rspecifier: str, ali_rspecifier: str,
                          opts: AccTreeStatsOptions) -> tuple[TreeStats, dict]:
    """acc-tree-stats over tables; returns the statistics and Kaldi's counts."""
    tm, _ = read_gmm_model(model_rx)
    phone_map = read_phone_map(opts.phone_map) if opts.phone_map else None
    acc = TreeStatsAccumulator(tm, opts, phone_map)
    counts = {"done": 0, "no_ali": 0, "other": 0}
    alis = RandomAccessReader(ali_rspecifier, "ivec")
    try:
        with open_features(feats_rspecifier) as r:
            for key, m in r:
                ali = alis.get(key)
                if ali is None:
                    counts["no_ali"] += 1
                    continue
                if len(ali) != len(m):
                    logger.warning("Alignments has wrong size %d vs. %d", len(ali), len(m))
                    counts["other"] += 1
                    continue
                tm.check_alignment(ali, f"alignment of {key} in {ali_rspecifier}")
                acc.add(m, ali)
                counts["done"] += 1
                if counts["done"] % 1000 == 0:
                    logger.info("Processed %d utterances.", counts["done"])
    finally:
        alis.close()
    return acc.stats(), counts
