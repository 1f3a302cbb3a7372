"""Clustering of Gaussian statistics for tree building (Kaldi's src/tree/cluster-utils.cc).

A *point* is a GaussClusterable: a count, a sum and a sum of squares. The objective of a set of
clusters is the summed log-likelihood of each cluster's data under its own ML Gaussian
(:func:`nnetmix.hmm.tree_stats.gauss_objf`); merging two clusters costs
``objf(a) + objf(b) - objf(a + b) >= 0`` (Kaldi's Clusterable::Distance).

* :func:`refine_clusters` -- RefineClusters: move single points to the cluster that gains most,
  pass after pass, until nothing moves (or ``num_iters`` passes);
* :func:`cluster_kmeans` -- ClusterKMeans: Kaldi's "skip" initialisation (points dealt round-robin
  in a stride coprime to their number), refinement, best of ``num_tries``;
* :func:`tree_cluster` -- TreeCluster: top-down binary splits by 2-means, always splitting the
  leaf whose split gains most; returns Kaldi's assignments and parent links;
* :func:`cluster_bottom_up` -- ClusterBottomUp(Compartmentalized): merge the cheapest pair (within
  a compartment) while the cost is under a threshold or until a number of clusters is left.

Random draws come from a seeded numpy Generator, not Kaldi's Rand(), so k-means starts differ from
Kaldi's run for run; the algorithm and its objective are the same.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from nnetmix.hmm.tree_stats import gauss_objf

__all__ = ["Points", "refine_clusters", "cluster_kmeans", "tree_cluster", "cluster_bottom_up"]


@dataclass
class Points:
    """Gaussian statistics of n points: count (n,), x (n, dim), x2 (n, dim), one var floor."""

    count: np.ndarray
    x: np.ndarray
    x2: np.ndarray
    var_floor: float

    def __len__(self) -> int:
        return len(self.count)

    def take(self, idx) -> "Points":
        idx = np.asarray(idx, dtype=np.int64)
        return Points(self.count[idx], self.x[idx], self.x2[idx], self.var_floor)

    def objf(self, count, x, x2) -> np.ndarray:
        return gauss_objf(count, x, x2, self.var_floor)

    def sums(self, assign: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        c = np.bincount(assign, weights=self.count, minlength=k)
        x = np.zeros((k, self.x.shape[1]))
        x2 = np.zeros_like(x)
        np.add.at(x, assign, self.x)
        np.add.at(x2, assign, self.x2)
        return c, x, x2


def refine_clusters(points: Points, assign: np.ndarray, k: int, num_iters: int = 100) -> float:
    """RefineClusters (in place on ``assign``): returns the objective improvement."""
    if num_iters <= 0 or len(points) == 0 or k < 2:
        return 0.0
    c, x, x2 = points.sums(assign, k)
    cur = points.objf(c, x, x2)
    total = 0.0
    for _ in range(num_iters):
        moved = False
        for i in range(len(points)):
            a = int(assign[i])
            pc, px, px2 = points.count[i], points.x[i], points.x2[i]
            # objective of a without the point, and of every cluster with it added
            a_minus = float(points.objf(c[a] - pc, (x[a] - px)[None], (x2[a] - px2)[None])[0])
            plus = points.objf(c + pc, x + px, x2 + px2)
            gain = (a_minus - cur[a]) + (plus - cur)
            gain[a] = 0.0
            b = int(np.argmax(gain))
            if gain[b] > 0.0:
                c[a] -= pc; x[a] -= px; x2[a] -= px2  # noqa: E702
                c[b] += pc; x[b] += px; x2[b] += px2  # noqa: E702
                cur[a], cur[b] = a_minus, plus[b]
                assign[i] = b
                total += float(gain[b])
                moved = True
        if not moved:
            break
    return total


def _kmeans_once(points: Points, k: int, rng: np.random.Generator, num_iters: int,
                 refine_iters: int) -> tuple[float, np.ndarray]:
    n = len(points)
    if n == 1:
        skip = 1
    else:
        skip = 1 + int(rng.integers(0, n - 1))
        while math.gcd(skip, n) != 1:
            if skip == n - 1:
                skip = 0
            skip += 1
    assign = np.zeros(n, dtype=np.int64)
    i = j = 0
    for _ in range(n):
        assign[i] = j
        i, j = (i + skip) % n, (j + 1) % k
    c, x, x2 = points.sums(assign, k)
    ans = float(points.objf(c, x, x2).sum()
                - points.objf(c.sum()[None], x.sum(0)[None], x2.sum(0)[None])[0])
    for _ in range(num_iters):
        impr = refine_clusters(points, assign, k, refine_iters)
        ans += impr
        if impr == 0:
            break
    return ans, assign


def cluster_kmeans(points: Points, k: int, rng: np.random.Generator, num_tries: int = 2,
                   num_iters: int = 20, refine_iters: int = 100) -> tuple[float, np.ndarray]:
    """ClusterKMeans: (objective improvement over one cluster, assignments) of the best try."""
    best = None
    for _ in range(num_tries):
        ans, assign = _kmeans_once(points, k, rng, num_iters, refine_iters)
        if best is None or ans > best[0]:
            best = (ans, assign)
    return best


class _Node:
    __slots__ = ("is_leaf", "index", "parent", "points", "best_split", "assign", "children",
                 "order")

    def __init__(self, parent, points, order):
        self.is_leaf, self.index, self.parent = True, 0, parent
        self.points = points          # indices into the original points
        self.best_split, self.assign, self.children = 0.0, None, []
        self.order = order


def tree_cluster(points: Points, max_clust: int, rng: np.random.Generator,
                 num_tries: int = 10, thresh: float = 0.0) -> tuple[np.ndarray, np.ndarray, int]:
    """TreeCluster with branch factor 2: (assignments of points to leaf clusters, parent of each
    cluster in Kaldi's numbering -- leaves 0..L-1, then the non-leaves, the root last and its
    own parent --, number of leaves L)."""
    n = len(points)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    leaves: list[_Node] = []
    nonleaves: list[_Node] = []
    heap: list = []
    counter = [0]

    def find_best_split(node: _Node) -> None:
        if len(node.points) <= 1:
            node.best_split = 0.0
            return
        impr, assign = cluster_kmeans(points.take(node.points), 2, rng, num_tries)
        node.best_split, node.assign = impr, assign
        if impr > thresh:
            heapq.heappush(heap, (-impr, node.order, node))

    def new_node(parent, pts) -> _Node:
        counter[0] += 1
        return _Node(parent, pts, counter[0])

    top = new_node(None, np.arange(n))
    leaves.append(top)
    find_best_split(top)
    while len(leaves) < max_clust and heap:
        _, _, node = heapq.heappop(heap)
        kids = []
        for b in range(2):
            child = new_node(node, node.points[node.assign == b])
            if b == 0:
                child.index = node.index
                leaves[child.index] = child
            else:
                child.index = len(leaves)
                leaves.append(child)
            kids.append(child)
        node.children, node.is_leaf, node.index = kids, False, len(nonleaves)
        nonleaves.append(node)
        for child in kids:
            find_best_split(child)
    L, NL = len(leaves), len(nonleaves)

    def out_index(node: _Node) -> int:
        return node.index if node.is_leaf else L + NL - 1 - node.index

    assignments = np.full(n, -1, dtype=np.int64)
    for li, leaf in enumerate(leaves):
        assignments[leaf.points] = li
    parents = np.zeros(L + NL, dtype=np.int64)
    for node in leaves + nonleaves:
        idx = out_index(node)
        parents[idx] = idx if node.parent is None else out_index(node.parent)
    if L == 1 and NL == 0:
        parents[0] = 0
    return assignments, parents, L


def _distances(points: Points) -> np.ndarray:
    """Lower-triangle merge costs (i > j), +inf elsewhere."""
    m = len(points)
    d = np.full((m, m), np.inf)
    own = points.objf(points.count, points.x, points.x2)
    for i in range(1, m):
        merged = points.objf(points.count[i] + points.count[:i], points.x[i] + points.x[:i],
                             points.x2[i] + points.x2[:i])
        d[i, :i] = own[i] + own[:i] - merged
    return d


def cluster_bottom_up(comps: Sequence[Points], thresh: float = math.inf,
                      min_clust: int = 0) -> tuple[list[np.ndarray], float]:
    """ClusterBottomUp over compartments (one compartment: the plain algorithm): repeatedly merge
    the pair (i > j, i absorbs j) of one compartment with the smallest cost, ties to the smallest
    (i, j), while that cost is <= ``thresh`` and more than ``min_clust`` clusters remain in all.
    Returns per compartment the assignments (clusters numbered in the order of their surviving
    point, Kaldi's Renumber) and the objective change (<= 0)."""
    dists = [_distances(p) for p in comps]
    sums = [[p.count.copy(), p.x.copy(), p.x2.copy()] for p in comps]
    owns = [p.objf(p.count, p.x, p.x2) for p in comps]
    parent = [np.arange(len(p)) for p in comps]
    alive = [np.ones(len(p), dtype=bool) for p in comps]
    nclust = sum(len(p) for p in comps)
    change = 0.0
    while nclust > min_clust:
        best: Optional[tuple] = None
        for ci, d in enumerate(dists):
            if d.size == 0:
                continue
            flat = int(np.argmin(d))
            v = d.flat[flat]
            if np.isfinite(v) and (best is None or v < best[0]):
                best = (float(v), ci, flat // d.shape[1], flat % d.shape[1])
        if best is None or best[0] > thresh:
            break
        v, ci, i, j = best
        p, (c, x, x2), d = comps[ci], sums[ci], dists[ci]
        c[i] += c[j]; x[i] += x[j]; x2[i] += x2[j]  # noqa: E702
        alive[ci][j] = False
        parent[ci][j] = i
        change -= v
        nclust -= 1
        d[j, :] = np.inf
        d[:, j] = np.inf
        owns[ci][i] = float(p.objf(c[i:i + 1], x[i:i + 1], x2[i:i + 1])[0])
        live = np.flatnonzero(alive[ci])
        live = live[live != i]
        if live.size:
            merged = p.objf(c[i] + c[live], x[i] + x[live], x2[i] + x2[live])
            cost = owns[ci][i] + owns[ci][live] - merged
            lo, hi = live[live < i], live[live > i]
            d[i, lo] = cost[live < i]
            d[hi, i] = cost[live > i]
    out = []
    for ci in range(len(comps)):
        par = parent[ci]
        root = par.copy()
        for k in range(len(root)):
            r = k
            while par[r] != r:
                r = par[r]
            root[k] = r
        numbering = np.cumsum(alive[ci]) - 1
        out.append(numbering[root].astype(np.int64))
    return out, change
