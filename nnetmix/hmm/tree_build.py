"""build-tree and gmm-init-model (src/bin/build-tree.cc, src/tree/build-tree.cc BuildTree,
build-tree-utils.cc SplitDecisionTree/ClusterEventMap*, src/gmmbin/gmm-init-model.cc).

BuildTree, as Kaldi runs it:

1. the stub map over the roots of ``roots.int`` (GetStubMap: a shared root is one leaf, an
   unshared one a leaf per pdf-class);
2. the statistics of ``not-split`` roots are set aside; each stub leaf grows greedily: every leaf
   knows its best question (over all keys, the question -- optionally refined by moving single
   values -- whose yes/no split gains most Gaussian log-likelihood), and the best split over the
   whole tree is made while its gain exceeds ``--thresh`` and there are fewer than
   ``--max-leaves`` leaves (a split leaf keeps its number for "yes", "no" gets the next);
3. leaves under the same root are merged bottom-up while the cost is below ``--cluster-thresh``
   (-1: the smallest gain of any split made);
4. with ``--round-num-leaves`` (default true), merged further (cheapest first, any root) down to
   a multiple of 8;
5. leaves renumbered in order.

The gain of splitting a set of statistics S into yes/no is ``objf(yes) + objf(no) - objf(S)``,
``objf`` being :func:`nnetmix.hmm.tree_stats.gauss_objf`. For speed the statistics of one leaf are
summed per value of a key once (np.add.at), and every question of the key is scored with one
matrix product of the question/value incidence matrix with those sums.
"""
from __future__ import annotations

import heapq
import logging
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.hmm.gmm_mixup import mix_up as mix_up_gmms
from nnetmix.hmm.tree_cluster import Points, cluster_bottom_up, refine_clusters
from nnetmix.hmm.tree_questions import Questions, read_questions
from nnetmix.hmm.tree_stats import TreeStats, gauss_objf, read_tree_stats
from nnetmix.kaldi.context_dep import (ConstantEventMap, ContextDependency, EventMap,
                                       SplitEventMap, TableEventMap, read_tree, stub_map,
                                       write_tree)
from nnetmix.kaldi.diag_gmm import AmDiagGmm, DiagGmm, read_gmm_model, write_gmm_model
from nnetmix.kaldi.hmm_topology import HmmTopology, read_topology
from nnetmix.kaldi.objects import read_object, write_object
from nnetmix.kaldi.stream import read_all
from nnetmix.kaldi.transition_model import TransitionModel
from nnetmix.options import option

__all__ = ["Roots", "read_roots", "BuildTreeOptions", "build_tree", "split_stats_by_map",
           "leaf_sums", "init_am_gmm", "init_am_gmm_from_old", "pdf_occs", "map_leaves",
           "objf_given_map", "convert_stats", "run_build_tree", "run_gmm_init_model",
           "run_gmm_mixup"]

logger = logging.getLogger(__name__)


# -- roots.int ------------------------------------------------------------------------------------
@dataclass
class Roots:
    phone_sets: list   #: sorted phone lists
    shared: list       #: per set: "shared" (one root for all pdf-classes)
    split: list        #: per set: "split" (grow a tree under it)


def read_roots(rxfilename: str, topo: Optional[HmmTopology] = None) -> Roots:
    """ReadRootsFile: ``shared|not-shared split|not-split phone...`` per line. A bad line, or a
    phone the topology does not have, is a one-line error naming the file and line."""
    text = read_all(rxfilename).decode("utf-8", "replace")
    known = set(int(p) for p in topo.phones) if topo is not None else None
    roots = Roots([], [], [])
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if len(words) < 3 or words[0] not in ("shared", "not-shared") \
                or words[1] not in ("split", "not-split"):
            raise FormatError(f"{rxfilename}:{n}: bad line in roots file (expected "
                              f"'shared|not-shared split|not-split <phones>'): '{line[:60]}'")
        try:
            phones = sorted(int(t) for t in words[2:])
        except ValueError:
            raise FormatError(f"{rxfilename}:{n}: phones must be integers (roots.int, not "
                              f"roots.txt?): '{line[:60]}'") from None
        if len(set(phones)) != len(phones) or phones[0] <= 0:
            raise FormatError(f"{rxfilename}:{n}: bad line in roots file [empty, or contains "
                              f"non-positive or duplicate phone-ids]: '{line[:60]}'")
        if known is not None:
            unknown = [p for p in phones if p not in known]
            if unknown:
                raise FormatError(f"{rxfilename}:{n}: phone {unknown[0]} is not in the "
                                  "topology (roots file and lang directory do not match?)")
        roots.phone_sets.append(phones)
        roots.shared.append(words[0] == "shared")
        roots.split.append(words[1] == "split")
    if not roots.phone_sets:
        raise FormatError(f"{rxfilename}: empty roots file")
    flat = [p for s in roots.phone_sets for p in s]
    if len(set(flat)) != len(flat):
        dup = next(p for p in flat if flat.count(p) > 1)
        raise FormatError(f"{rxfilename}: phone {dup} is in more than one root")
    return roots


# -- event maps -----------------------------------------------------------------------------------
def map_leaves(em: Optional[EventMap], new) -> Optional[EventMap]:
    """EventMap::Copy(new_leaves): each ConstantEventMap replaced by ``new(answer)`` (None keeps
    it)."""
    if em is None:
        return None
    if isinstance(em, ConstantEventMap):
        repl = new(em.answer)
        return em if repl is None else repl
    if isinstance(em, TableEventMap):
        return TableEventMap(em.key, tuple(map_leaves(c, new) for c in em.table))
    return SplitEventMap(em.key, em.yes_set, map_leaves(em.yes, new), map_leaves(em.no, new))


def split_stats_by_map(stats: TreeStats, em: EventMap) -> np.ndarray:
    """SplitStatsByMap: the leaf of every statistic (an error if one does not map)."""
    out = np.empty(len(stats), dtype=np.int64)
    for i, ev in enumerate(stats.events):
        a = em.map(dict(ev))
        if a is None:
            raise FormatError(f"could not map the event {ev} of the tree statistics (tree and "
                              "statistics of different phone sets or context width?)")
        out[i] = a
    return out


def leaf_sums(stats: TreeStats, leaves: np.ndarray, num: int):
    c = np.bincount(leaves, weights=stats.count, minlength=num)
    x = np.zeros((num, stats.dim))
    x2 = np.zeros((num, stats.dim))
    np.add.at(x, leaves, stats.x)
    np.add.at(x2, leaves, stats.x2)
    return c, x, x2


def _floor(stats: TreeStats) -> float:
    return float(stats.var_floor[0]) if len(stats) else 0.01


def objf_given_map(stats: TreeStats, em: EventMap) -> float:
    leaves = split_stats_by_map(stats, em)
    c, x, x2 = leaf_sums(stats, leaves, int(leaves.max()) + 1 if len(leaves) else 0)
    return float(gauss_objf(c, x, x2, _floor(stats)).sum())


# -- splitting ------------------------------------------------------------------------------------
class _Splitter:
    """DecisionTreeSplitter: one leaf, its statistics and best split, or its two children."""

    def __init__(self, leaf: int, idx: np.ndarray, ctx: "_SplitContext"):
        self.leaf, self.idx, self.ctx = leaf, idx, ctx
        self.yes = self.no = None
        self.key, self.yes_set, self.best = 0, (), 0.0
        self._find_best_split()

    def _find_best_split(self) -> None:
        self.best = 0.0
        for key in self.ctx.questions.keys():
            gain, yes_set = self.ctx.best_split_for_key(self.idx, key)
            if gain > self.best:
                self.best, self.yes_set, self.key = gain, yes_set, key

    def do_split(self, next_leaf: list) -> None:
        if self.yes is None:
            vals = self.ctx.values[self.idx, self.key + 1]
            in_yes = np.isin(vals, np.asarray(self.yes_set, dtype=np.int64))
            no_leaf = next_leaf[0]
            next_leaf[0] += 1
            self.yes = _Splitter(self.leaf, self.idx[in_yes], self.ctx)
            self.no = _Splitter(no_leaf, self.idx[~in_yes], self.ctx)
            self.leaf, self.idx = -1, self.idx[:0]
        else:
            (self.yes if self.yes.best >= self.no.best else self.no).do_split(next_leaf)
        self.best = max(self.yes.best, self.no.best)

    def get_map(self) -> EventMap:
        if self.yes is None:
            return ConstantEventMap(self.leaf)
        return SplitEventMap(self.key, tuple(int(v) for v in self.yes_set), self.yes.get_map(),
                             self.no.get_map())


class _SplitContext:
    def __init__(self, stats: TreeStats, questions: Questions, keys: Sequence[int]):
        self.stats, self.questions = stats, questions
        self.values = stats.value_table(keys)  # column key + 1 (keys are -1..N-1)
        self.floor = _floor(stats)
        self._incidence: dict = {}

    def _questions_matrix(self, key: int, num_values: int) -> np.ndarray:
        m = self._incidence.get((key, num_values))
        if m is None:
            qs = self.questions[key].questions
            m = np.zeros((len(qs), num_values))
            for i, q in enumerate(qs):
                q = [v for v in q if 0 <= v < num_values]
                m[i, q] = 1.0
            self._incidence[(key, num_values)] = m
        return m

    def best_split_for_key(self, idx: np.ndarray, key: int) -> tuple[float, tuple]:
        """FindBestSplitForKey: (gain, yes-set) of the best question of ``key`` for ``idx``."""
        if len(idx) <= 1 or key + 1 >= self.values.shape[1]:
            return 0.0, ()
        vals = self.values[idx, key + 1]
        if (vals < 0).any():
            return 0.0, ()  # the key is not defined for every statistic here
        st = self.stats
        nv = int(vals.max()) + 1
        c = np.bincount(vals, weights=st.count[idx], minlength=nv)
        x = np.zeros((nv, st.dim))
        x2 = np.zeros((nv, st.dim))
        np.add.at(x, vals, st.x[idx])
        np.add.at(x2, vals, st.x2[idx])
        qfk = self.questions[key]
        m = self._questions_matrix(key, nv)
        if not len(m):
            return 0.0, ()
        tc, tx, tx2 = c.sum(), x.sum(0), x2.sum(0)
        unsplit = float(gauss_objf(tc[None], tx[None], tx2[None], self.floor)[0])
        yc, yx, yx2 = m @ c, m @ x, m @ x2
        split = (gauss_objf(yc, yx, yx2, self.floor)
                 + gauss_objf(tc - yc, tx - yx, tx2 - yx2, self.floor))
        gains = split - unsplit
        best = int(np.argmax(gains))
        gain = float(gains[best])
        if gain <= 0.0:
            gain, yes_set, assign = 0.0, (), np.zeros(nv, dtype=np.int64)
        else:
            yes_set = qfk.questions[best]
            assign = m[best].astype(np.int64)
        if qfk.num_iters > 0:
            gain += refine_clusters(Points(c, x, x2, self.floor), assign, 2, qfk.num_iters)
            yes_set = tuple(np.flatnonzero(assign == 1).tolist())
        return gain, tuple(yes_set)


def _split_decision_tree(stub: EventMap, num_leaves: int, stats: TreeStats,
                         questions: Questions, thresh: float, max_leaves: int,
                         keys: Sequence[int]) -> tuple[EventMap, int, float, float]:
    """SplitDecisionTree: (map, #leaves, total gain, smallest gain of a split made)."""
    ctx = _SplitContext(stats, questions, keys)
    leaves = split_stats_by_map(stats, stub) if len(stats) else np.zeros(0, np.int64)
    n_builders = int(leaves.max()) + 1 if len(leaves) else 0
    builders = [_Splitter(i, np.flatnonzero(leaves == i), ctx) for i in range(n_builders)]
    heap = [(-b.best, -i) for i, b in enumerate(builders)]
    heapq.heapify(heap)
    next_leaf = [num_leaves]
    impr, smallest, count = 0.0, 1.0e20, 0
    # (a leaf with no gain is never split, whatever --thresh: Kaldi asserts there)
    while heap and -heap[0][0] > max(thresh, 0.0) \
            and (max_leaves <= 0 or next_leaf[0] < max_leaves):
        g, i = heapq.heappop(heap)
        smallest = min(smallest, -g)
        impr += -g
        builders[-i].do_split(next_leaf)
        heapq.heappush(heap, (-builders[-i].best, i))
        count += 1
    logger.info("DoDecisionTreeSplit: split %d times, #leaves now %d", count, next_leaf[0])
    subs = {i: b.get_map() for i, b in enumerate(builders)}
    return map_leaves(stub, subs.get), next_leaf[0], impr, smallest


def _cluster_restricted(tree: EventMap, stats: TreeStats, restrict: EventMap,
                        thresh: float = np.inf, num_required: int = -1) -> tuple[EventMap, int]:
    """ClusterEventMapRestrictedByMap (``thresh``) or ClusterEventMapToNClustersRestrictedByMap
    (``num_required``): leaves of ``tree`` merged only within a leaf of ``restrict``."""
    comp = split_stats_by_map(stats, restrict)
    leaf = split_stats_by_map(stats, tree)
    n_comp = int(comp.max()) + 1
    n_leaf = int(leaf.max()) + 1
    c, x, x2 = leaf_sums(stats, leaf, n_leaf)
    groups, points = [], []
    for k in range(n_comp):
        here = np.unique(leaf[comp == k])
        groups.append(here)
        points.append(Points(c[here], x[here], x2[here], _floor(stats)))
    if num_required >= 0:
        if num_required < n_comp:
            logger.warning("num-clusters-required is less than size of map. Not doing anything.")
            return tree, 0
        required = num_required - sum(1 for g in groups if g.size == 0)
        total = sum(g.size for g in groups)
        if required > total:
            logger.warning("Cannot get required num-clusters %d as number of non-empty clusters "
                           "required is larger than  number of non-empty clusters: %d > %d",
                           num_required, required, total)
            return tree, 0
        assigns, _ = cluster_bottom_up(points, np.inf, required)
    else:
        assigns = []
        for p in points:
            a, _ = cluster_bottom_up([p], thresh, 0) if len(p) else ([np.zeros(0, np.int64)], 0)
            assigns.append(a[0])
    mapping: dict[int, EventMap] = {}
    removed = 0
    for here, a in zip(groups, assigns):
        if here.size == 0:
            continue
        removed += here.size - (int(a.max()) + 1)
        for j, leaf_id in enumerate(here.tolist()):
            mapping[leaf_id] = ConstantEventMap(int(here[a[j]]))
    return map_leaves(tree, mapping.get), removed


def _renumber(em: EventMap) -> tuple[EventMap, int]:
    """RenumberEventMap: leaves renumbered 0.. in increasing order of their old numbers."""
    answers = sorted(set(ContextDependency(1, 0, em).multimap({})))
    new = {a: ConstantEventMap(i) for i, a in enumerate(answers)}
    return map_leaves(em, new.get), len(answers)


@dataclass
class BuildTreeOptions:
    """build-tree's options."""

    context_width: int = option(3, "Context window size [must match acc-tree-stats]")
    central_position: int = option(1, "Central position in context window [must "
                                   "match acc-tree-stats]")
    max_leaves: int = option(0, "Maximum number of leaves to be used in tree-building "
                             "(if positive)")
    thresh: float = option(300.0, "Log-likelihood change threshold for tree-building")
    cluster_thresh: float = option(-1.0, "Log-likelihood change threshold for clustering after "
                                   "tree-building.  0 means no clustering; -1 means use as a "
                                   "clustering threshold the likelihood change of the final split.")
    round_num_leaves: bool = option(True, "If true, then the number of leaves will be reduced to a "
                                    "multiple of 8 by clustering.")


def build_tree(stats: TreeStats, roots: Roots, questions: Questions, topo: HmmTopology,
               opts: BuildTreeOptions = BuildTreeOptions()) -> ContextDependency:
    """BuildTree, with build-tree's checks (see the module docstring)."""
    if not (opts.thresh > 0 or opts.max_leaves > 0):
        raise FormatError("build-tree: need --thresh > 0 or --max-leaves > 0")
    if not len(stats):
        raise FormatError("build-tree: no tree statistics")
    N, P = opts.context_width, opts.central_position
    phone2num = topo.phone_to_num_pdf_classes()
    stub, num_leaves = stub_map(P, roots.phone_sets, phone2num, roots.shared)
    logger.info("BuildTree: before building trees, map has %d leaves.", num_leaves)
    central = stats.value_table([P])[:, 0]
    in_roots = {p for s in roots.phone_sets for p in s}
    bad = sorted(set(central.tolist()) - in_roots)
    if bad:
        raise FormatError(f"Phone {bad[0]} appears in stats but is not listed in roots file.")
    nonsplit = [p for s, sp in zip(roots.phone_sets, roots.split) if not sp for p in s]
    filtered = stats.subset(np.flatnonzero(~np.isin(central, nonsplit)))
    keys = list(range(-1, N))
    tree, num_leaves, impr, smallest = _split_decision_tree(
        stub, num_leaves, filtered, questions, opts.thresh, opts.max_leaves, keys)
    cluster_thresh = opts.cluster_thresh
    if cluster_thresh < 0.0:
        logger.info("Setting clustering threshold to smallest split %g", smallest)
        cluster_thresh = smallest
    norm, norm_f = float(stats.count.sum()), float(filtered.count.sum())
    vlog = logger.log
    vlog(logging.INFO - 1, "After decision tree split, num-leaves = %d, like-impr = %g per frame "
         "over %g frames.", num_leaves, impr / norm, norm)
    vlog(logging.INFO - 1, "Including just phones that were split, improvement is %g per frame "
         "over %g frames.", impr / max(norm_f, 1e-20), norm_f)
    if cluster_thresh == 0.0 and not opts.round_num_leaves:
        return ContextDependency(N, P, tree)
    objf_before = objf_given_map(stats, tree)
    removed = 0
    if cluster_thresh != 0.0:
        tree, removed = _cluster_restricted(tree, stats, stub, thresh=cluster_thresh)
        logger.info("BuildTree: removed %d leaves.", removed)
    if opts.round_num_leaves:
        required = ((num_leaves - removed) // 8) * 8
        tree, rounded = _cluster_restricted(tree, stats, stub, num_required=required)
        if rounded > 0:
            logger.info("BuildTree: Rounded num leaves to multiple of 8 by removing %d leaves.",
                        rounded)
        if num_leaves - removed - rounded != required:
            logger.warning("Did not get expected number of leaves: %d - %d - %d != %d",
                           num_leaves, removed, rounded, required)
    tree, num_out = _renumber(tree)
    objf_after = objf_given_map(stats, tree)
    vlog(logging.INFO - 1, "Objf change due to clustering %g per frame.",
         (objf_after - objf_before) / norm)
    vlog(logging.INFO - 1, "Normalizing over only split phones, this is: %g per frame.",
         (objf_after - objf_before) / max(norm_f, 1e-20))
    vlog(logging.INFO - 1, "Num-leaves is now %d", num_out)
    return ContextDependency(N, P, tree)


# -- gmm-init-model -------------------------------------------------------------------------------
def _phones_for_pdf(tm: TransitionModel, pdf: int) -> str:
    t = tm.tuples
    phones = sorted(set(t[(t[:, 2] == pdf) | (t[:, 3] == pdf), 0].tolist()))
    return " ".join(map(str, phones)) + " "


def _gmm_from_stats(count: float, x: np.ndarray, x2: np.ndarray, var_floor: float) -> DiagGmm:
    """DiagGmm(const GaussClusterable&, var_floor): one Gaussian, variance floored."""
    mean = x / count
    var = np.maximum(x2 / count - mean * mean, var_floor)
    return DiagGmm.from_means_vars(np.ones(1), mean[None], var[None])


def init_am_gmm(stats: TreeStats, ctx_dep: ContextDependency, tm: TransitionModel,
                var_floor: float = 0.01) -> AmDiagGmm:
    """InitAmGmm: one Gaussian per pdf from the statistics the tree sends to it (the global
    statistics for a pdf with none, with Kaldi's warning naming its phones)."""
    num_pdfs = ctx_dep.num_pdfs
    leaves = split_stats_by_map(stats, ctx_dep.to_pdf)
    c, x, x2 = leaf_sums(stats, leaves, num_pdfs)
    has = np.bincount(leaves, minlength=num_pdfs) > 0
    tc, tx, tx2 = c.sum(), x.sum(0), x2.sum(0)
    gmms = []
    for i in range(num_pdfs):
        if not has[i]:
            logger.warning("Tree has pdf-id %d with no stats; corresponding phone list: %s", i,
                           _phones_for_pdf(tm, i))
            gmms.append(_gmm_from_stats(tc, tx, tx2, var_floor))
            cnt = tc
        else:
            gmms.append(_gmm_from_stats(c[i], x[i], x2[i], var_floor))
            cnt = c[i]
        if cnt < 100:
            logger.warning("Very small count for state %d: %g; corresponding phone list: %s", i,
                           cnt, _phones_for_pdf(tm, i))
    return AmDiagGmm(gmms)


def convert_stats(stats: TreeStats, N: int, P: int, old_N: int, old_P: int) -> TreeStats:
    """ConvertStats: events of an (N, P) window seen through a narrower (old_N, old_P) one."""
    shift = P - old_P
    if shift < 0 or N - P < old_N - old_P:
        raise FormatError("InitAmGmmFromOld: old system has wider context so cannot convert "
                          "stats.")
    events = [tuple((k if k < 0 else k - shift, v) for k, v in ev
                    if k < 0 or 0 <= k - shift < old_N) for ev in stats.events]
    return TreeStats(events, stats.count, stats.x, stats.x2, stats.var_floor)


def init_am_gmm_from_old(stats: TreeStats, ctx_dep: ContextDependency,
                         old_tree: ContextDependency, old_am: AmDiagGmm,
                         var_floor: float = 0.01) -> AmDiagGmm:
    """InitAmGmmFromOld: each new pdf copies the old pdf that shares most of its counts."""
    num_pdfs = ctx_dep.num_pdfs
    leaves = split_stats_by_map(stats, ctx_dep.to_pdf)
    old = convert_stats(stats, ctx_dep.N, ctx_dep.P, old_tree.N, old_tree.P)
    old_leaves = split_stats_by_map(old, old_tree.to_pdf)
    avg = _gmm_from_stats(stats.count.sum(), stats.x.sum(0), stats.x2.sum(0), var_floor)
    gmms = []
    for pdf in range(num_pdfs):
        here = leaves == pdf
        if not here.any():
            logger.warning("Leaf %d of new tree has no stats.", pdf)
        counts = np.bincount(old_leaves[here], weights=stats.count[here],
                             minlength=old_am.num_pdfs)
        best = int(np.argmax(counts)) if counts.size else -1
        if best < 0 or counts[best] <= 0:
            logger.warning("Leaf %d of new tree being initialized with globally averaged stats.",
                           pdf)
            gmms.append(avg)
        else:
            gmms.append(old_am[best])
    return AmDiagGmm(gmms)


def pdf_occs(stats: TreeStats, ctx_dep: ContextDependency) -> np.ndarray:
    """GetOccs: the frame count of each pdf (float32, as Kaldi's Vector<BaseFloat>)."""
    leaves = split_stats_by_map(stats, ctx_dep.to_pdf)
    return np.bincount(leaves, weights=stats.count, minlength=ctx_dep.num_pdfs).astype(np.float32)


# -- the tools' file-level work -------------------------------------------------------------------
def run_build_tree(stats_rx: str, roots_rx: str, questions_rx: str, topo_rx: str, tree_wx: str,
                   opts: BuildTreeOptions = BuildTreeOptions(), binary: bool = True
                   ) -> ContextDependency:
    """build-tree: read, BuildTree, write, then Kaldi's checks on phones and counts."""
    topo = read_topology(topo_rx)
    roots = read_roots(roots_rx, topo)
    stats = read_tree_stats(stats_rx)
    logger.info("Number of separate statistics is %d", len(stats))
    try:
        questions = read_questions(questions_rx)
    except FormatError as e:
        raise FormatError(f"Error reading questions file {questions_rx}, error is: {e}") from None
    tree = build_tree(stats, roots, questions, topo, opts)
    leaves = split_stats_by_map(stats, tree.to_pdf)
    occ = np.bincount(leaves, weights=stats.count, minlength=tree.num_pdfs)
    for i in np.flatnonzero(occ < 100.0).tolist():
        logger.log(logging.INFO - 1, "For pdf-id %d, low count %g", i, occ[i])
    write_tree(tree_wx, tree, binary)
    all_phones = sorted(p for s in roots.phone_sets for p in s)
    if all_phones != [int(p) for p in topo.phones]:
        logger.warning("Mismatch between phone sets provided in roots file, and those in "
                       "topology: [ %s ] vs. [ %s ]", " ".join(map(str, all_phones)),
                       " ".join(str(int(p)) for p in topo.phones))
    seen = set(stats.value_table([opts.central_position])[:, 0].tolist())
    unseen = [p for p in all_phones if p not in seen]
    if unseen:
        logger.warning("Saw no stats for following phones: %s ", " ".join(map(str, unseen)))
    logger.info("Wrote tree")
    return tree


def run_gmm_init_model(tree_rx: str, stats_rx: str, topo_rx: str, model_wx: str,
                       old_tree_rx: str = "", old_model_rx: str = "", var_floor: float = 0.01,
                       write_occs: str = "", binary: bool = True) -> AmDiagGmm:
    """gmm-init-model: TransitionModel of the tree and topology, one Gaussian per leaf."""
    tree = read_tree(tree_rx)
    stats = read_tree_stats(stats_rx)
    logger.info("Number of separate statistics is %d", len(stats))
    if not len(stats):
        raise FormatError(f"{stats_rx}: no tree statistics")
    topo = read_topology(topo_rx)
    tm = TransitionModel.build(tree, topo)
    if old_tree_rx:
        _, old_am = read_gmm_model(old_model_rx)
        if old_am.dim != stats.dim:
            raise FormatError(f"{old_model_rx}: model of dimension {old_am.dim}, but the tree "
                              f"statistics {stats_rx} have dimension {stats.dim}")
        am = init_am_gmm_from_old(stats, tree, read_tree(old_tree_rx), old_am, var_floor)
    else:
        am = init_am_gmm(stats, tree, tm, var_floor)
    if write_occs:
        write_object(write_occs, pdf_occs(stats, tree), "vec", binary)
    write_gmm_model(model_wx, tm, am, binary)
    logger.info("Wrote model.")
    return am


def run_gmm_mixup(model_rx: str, occs_rx: str, model_wx: str, mix_up: int = 0,
                  mix_down: int = 0, power: float = 0.2, min_count: float = 20.0,
                  perturb_factor: float = 0.01, seed: int = 0, binary: bool = True) -> AmDiagGmm:
    """gmm-mixup: AmDiagGmm::MergeByCount (Kaldi's own, through kaldi-hmm-gmm) then
    SplitByCount (:func:`nnetmix.hmm.gmm_mixup.mix_up`) over the occupancies."""
    tm, am = read_gmm_model(model_rx)
    if mix_up or mix_down:
        occs = np.asarray(read_object(occs_rx, "vec"), dtype=np.float32)
        if len(occs) != am.num_pdfs:
            raise FormatError(f"{occs_rx}: Dimension of state occupancies {len(occs)} does not "
                              f"match num-pdfs {am.num_pdfs} of {model_rx}")
        if mix_down:
            from nnetmix.hmm import khg  # optional: only --mix-down needs kaldi-hmm-gmm
            kam = khg.to_khg_am_diag_gmm(am)
            kam.merge_by_count(occs, mix_down, power, min_count)
            am = khg.from_khg_am_diag_gmm(kam)
        if mix_up:
            gmms = mix_up_gmms(list(am), occs, mix_up, power, perturb_factor, min_count,
                               rng=np.random.default_rng(seed))
            am = AmDiagGmm([g if isinstance(g, DiagGmm) else
                            DiagGmm.from_means_vars(g.weights, g.means, g.vars) for g in gmms])
    write_gmm_model(model_wx, tm, am, binary)
    logger.info("Written model to %s", model_wx)
    return am
