"""Questions for tree building: cluster-phones and compile-questions (src/bin/cluster-phones.cc,
compile-questions.cc; src/tree/build-tree.cc AutomaticallyObtainQuestions, build-tree-questions.cc).

* :func:`automatically_obtain_questions` (cluster-phones): the tree statistics of the listed
  pdf-classes (``--pdf-class-list``, default the central state 1) are summed per phone set of
  ``sets.int``, the sets clustered top-down into a binary tree (TreeCluster: 2-means, 10 tries),
  and every node of that tree is a question: the union of its sets. The output lists the
  questions top node first, then the original sets, duplicates removed.
* :func:`kmeans_cluster_phones` (cluster-phones ``--mode=k-means --num-classes=N``): the same
  per-set statistics clustered flat into N classes (ClusterKMeans), one output line per class.
* :class:`Questions` / :func:`compile_questions` (compile-questions): the same phone questions for
  each context position ``0..N-1`` and the questions ``[0] [0 1] ...`` for the pdf-class key
  -1, each key with RefineClustersOptions (``--num-iters-refine``, top_n 2).

File layout (Questions::Write), binary or text::

    <Questions> ( <Key> <int32 key> <QuestionsForKey> <int32 n> n x <int vector>
                  <RefineClustersOptions> <int32 num_iters> <int32 top_n> </RefineClustersOptions>
                  </QuestionsForKey> )* </Questions>

with the keys in increasing order (-1 first), as Kaldi's std::map gives them.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from nnetmix.errors import FormatError, UsageError
from nnetmix.hmm.tree_cluster import Points, cluster_kmeans, tree_cluster
from nnetmix.hmm.tree_stats import PDF_CLASS_KEY, TreeStats
from nnetmix.kaldi.hmm_topology import HmmTopology
from nnetmix.kaldi.stream import open_output, read_all
from nnetmix.kaldi.tokens import TokenReader, TokenWriter, read_object_with, write_object_bytes

__all__ = ["QuestionsForKey", "Questions", "compile_questions", "read_questions",
           "write_questions", "read_int_lists", "write_int_lists",
           "automatically_obtain_questions", "kmeans_cluster_phones"]

logger = logging.getLogger(__name__)


# -- integer lists (ReadIntegerVectorVectorSimple) ------------------------------------------------
def read_int_lists(rxfilename: str) -> list[list[int]]:
    """One list of integers per line (questions.int, sets.int); a line that is not all integers
    is a one-line error naming the file and line."""
    out = []
    for n, line in enumerate(read_all(rxfilename).decode("utf-8", "replace").splitlines(), 1):
        try:
            out.append([int(t) for t in line.split()])
        except ValueError:
            raise FormatError(f"{rxfilename}:{n}: expected integers, got '{line[:60]}'") \
                from None
    return out


def write_int_lists(wxfilename: str, lists: Sequence[Sequence[int]]) -> None:
    """WriteIntegerVectorVectorSimple: space-separated integers, one list per line."""
    sink = open_output(wxfilename)
    try:
        sink.write("".join(" ".join(str(int(v)) for v in s) + "\n" for s in lists).encode())
    except BaseException:
        sink.abort()
        raise
    sink.commit()


# -- the Questions object -------------------------------------------------------------------------
@dataclass
class QuestionsForKey:
    """Initial questions (sorted value sets) of one key and its RefineClustersOptions."""

    questions: list = field(default_factory=list)
    num_iters: int = 5
    top_n: int = 2

    def write(self, w: TokenWriter) -> None:
        w.token("<QuestionsForKey>")
        w.int32(len(self.questions))
        for q in self.questions:
            w.int_vector(q)
        w.token("<RefineClustersOptions>")
        w.int32(self.num_iters)
        w.int32(self.top_n)
        w.token("</RefineClustersOptions>")
        w.token("</QuestionsForKey>")

    @classmethod
    def read(cls, r: TokenReader) -> "QuestionsForKey":
        r.expect("<QuestionsForKey>")
        n = r.int32("number of questions")
        if n < 0:
            raise r.fail("bad number of questions", str(n))
        qs = [tuple(int(v) for v in r.int_vector("question")) for _ in range(n)]
        r.expect("<RefineClustersOptions>")
        num_iters, top_n = r.int32("num_iters"), r.int32("top_n")
        r.expect("</RefineClustersOptions>")
        r.expect("</QuestionsForKey>")
        return cls(qs, num_iters, top_n)


class Questions:
    """Kaldi's Questions: per event key, the questions the tree builder may ask."""

    def __init__(self, by_key: dict | None = None):
        self.by_key: dict[int, QuestionsForKey] = dict(by_key or {})

    def keys(self) -> list[int]:
        return sorted(self.by_key)

    def __getitem__(self, key: int) -> QuestionsForKey:
        return self.by_key[key]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Questions) and self.by_key == other.by_key

    def write(self, w: TokenWriter) -> None:
        w.token("<Questions>")
        for key in self.keys():
            w.token("<Key>")
            w.int32(key)
            self.by_key[key].write(w)
        w.token("</Questions>")

    def to_bytes(self, binary: bool = True) -> bytes:
        w = TokenWriter(binary, "questions")
        self.write(w)
        return w.getvalue()

    @classmethod
    def read(cls, r: TokenReader) -> "Questions":
        r.expect("<Questions>")
        q = cls()
        while True:
            tok = r.token("<Key> or </Questions>")
            if tok == "</Questions>":
                return q
            if tok != "<Key>":
                raise r.fail(f"expected <Key>, got {tok[:40]!r}")
            key = r.int32("key")
            r.context = f"key {key}"
            q.by_key[key] = QuestionsForKey.read(r)
            r.context = ""


def read_questions(rxfilename: str) -> Questions:
    return read_object_with(rxfilename, Questions.read)


def write_questions(wxfilename: str, q: Questions, binary: bool = True) -> None:
    write_object_bytes(wxfilename, q.to_bytes(binary), binary)


def compile_questions(topo: HmmTopology, questions: Sequence[Sequence[int]], name: str,
                      context_width: int = 3, num_iters_refine: int = 0,
                      leftmost_questions_truncate: int = -1,
                      context_positions: Optional[Sequence[int]] = None) -> Questions:
    """compile-questions: sort and check the phone questions from ``name``, require them to
    cover the topology's phones exactly (a one-line error naming the file otherwise: a phone no
    question asks about can never be split from the others), and set them for every context
    position; the pdf-class key gets ``[0] [0 1] ... [0 .. max-1]``. ``context_positions``
    (nnetmix's, not Kaldi's) keeps the phone questions of those positions only, so a tree can be
    built that never asks about, say, the right context (an ablation; None: every position)."""
    if context_positions is not None:
        bad = [p for p in context_positions if not 0 <= int(p) < context_width]
        if bad:
            raise UsageError(f"context position {bad[0]} is outside the context window "
                             f"0..{context_width - 1}")
    qs = []
    for i, q in enumerate(questions):
        s = sorted(int(p) for p in q)
        if len(set(s)) != len(s):
            raise FormatError(f"{name}: question {i + 1} contains duplicate phones")
        qs.append(tuple(s))
    nq = len(qs)
    qs = sorted(set(qs))
    if len(qs) != nq:
        logger.warning("%d duplicate questions present in %s", nq - len(qs), name)
    seen = sorted({p for q in qs for p in q})
    topo_phones = [int(p) for p in topo.phones]
    extra = sorted(set(seen) - set(topo_phones))
    if extra:
        raise FormatError(f"{name}: questions ask about phones {' '.join(map(str, extra))} that "
                          "are undefined in the topology")
    missing = sorted(set(topo_phones) - set(seen))
    if missing:
        raise FormatError(f"{name}: questions do not cover phones {' '.join(map(str, missing))}"
                          " of the topology (append phones/sets.int or extra_questions.int?)")
    max_pdf_classes = max(topo.num_pdf_classes(p) for p in topo_phones)
    logger.info("Max # pdf classes is %d", max_pdf_classes)
    q = Questions()
    for n in range(context_width):
        if context_positions is not None and n not in {int(p) for p in context_positions}:
            logger.info("No questions for phonetic-context position %d", n)
            continue
        logger.info("Setting questions for phonetic-context position %d", n)
        these = qs
        if n == 0 and 0 < leftmost_questions_truncate < len(qs):
            logger.info("Truncating %d to %d for position 0.", len(qs),
                        leftmost_questions_truncate)
            these = qs[:leftmost_questions_truncate]
        q.by_key[n] = QuestionsForKey(list(these), num_iters_refine, 2)
    logger.info("Setting questions for hmm-position [hmm-position ranges from 0 to %d]",
                max_pdf_classes - 1)
    q.by_key[PDF_CLASS_KEY] = QuestionsForKey(
        [tuple(range(i + 1)) for i in range(max_pdf_classes - 1)], num_iters_refine, 2)
    return q


# -- cluster-phones --------------------------------------------------------------------------------
def _stats_per_set(stats: TreeStats, phone_sets: Sequence[Sequence[int]],
                   pdf_classes: Sequence[int], P: int, name: str
                   ) -> tuple[list[list[int]], list[int], Points, int]:
    """What both modes of cluster-phones start from: the phone sets checked and sorted, the
    tree statistics of the listed pdf-classes summed per set (warning for phones with stats but
    in no set, and for sets without stats). Returns (sets, pdf classes, per-set points, number
    of statistics kept by the pdf-class filter)."""
    sets = []
    for s in phone_sets:
        s = sorted(int(p) for p in s)
        if not s:
            raise FormatError(f"{name}: empty phone set")
        if len(set(s)) != len(s):
            raise FormatError(f"{name}: phone set contains duplicate phones")
        sets.append(s)
    phones = sorted(p for s in sets for p in s)
    if len(set(phones)) != len(phones):
        raise FormatError(f"{name}: phones are present in more than one phone set")
    if not phones:
        raise FormatError(f"{name}: no phones provided")
    classes = sorted(set(int(c) for c in pdf_classes))
    vals = stats.value_table([PDF_CLASS_KEY, P])
    keep = np.isin(vals[:, 0], classes)
    central = vals[keep, 1]
    if (central < 0).any():
        raise FormatError(f"tree statistics without the central phone (key {P}): wrong "
                          "--central-position?")
    top = max(phones[-1], int(central.max()) if central.size else 0) + 1
    dim = stats.dim
    c = np.bincount(central, weights=stats.count[keep], minlength=top)
    x = np.zeros((top, dim))
    x2 = np.zeros((top, dim))
    np.add.at(x, central, stats.x[keep])
    np.add.at(x2, central, stats.x2[keep])
    listed = set(phones)
    for p in np.flatnonzero(c > 0).tolist():
        if p not in listed:
            logger.warning("Phone %d is present in stats but is not in phone list [make sure you "
                           "intended this].", p)
    floor = float(stats.var_floor[0]) if len(stats) else 0.01
    sc = np.array([c[s].sum() for s in sets])
    sx = np.stack([x[s].sum(0) for s in sets])
    sx2 = np.stack([x2[s].sum(0) for s in sets])
    for s, cnt in zip(sets, sc):
        if cnt == 0.0:
            logger.warning("AutomaticallyObtainQuestions: no stats available for phone set: %s ",
                           " ".join(map(str, s)))
    return sets, classes, Points(sc, sx, sx2, floor), int(keep.sum())


def automatically_obtain_questions(stats: TreeStats, phone_sets: Sequence[Sequence[int]],
                                   pdf_classes: Sequence[int], P: int = 1, seed: int = 0,
                                   name: str = "phone sets") -> list[list[int]]:
    """AutomaticallyObtainQuestions (see the module docstring)."""
    sets, classes, points, kept = _stats_per_set(stats, phone_sets, pdf_classes, P, name)
    if kept * 10 < len(stats):
        logger.warning("After filtering the tree statistics to retain only stats where pdf-class "
                       "is in the set { %s }, most of your stats disappeared: the size changed "
                       "from %d to %d.  You might be using a nonstandard topology but forgot to "
                       "modify the --pdf-class-list option (it defaults to { 1 } which is the "
                       "central state in a 3-state left-to-right topology). E.g. a 1-state HMM "
                       "topology would require the option --pdf-class-list=0.",
                       " ".join(map(str, classes)) + " ", len(stats), kept)
    if int((points.count == 0.0).sum()) + 1 >= len(sets):
        logger.warning("All or all but one of your classes of phones had no data. Note that we "
                       "only consider data where pdf-class is in the set ( %s ).  If you have an "
                       "unusual HMM topology this may not be what you want; use the "
                       "--pdf-class-list option to change this if needed. See also any warnings "
                       "above.", " ".join(map(str, classes)))
    rng = np.random.default_rng(seed)
    assign, parents, num_leaves = tree_cluster(points, len(sets), rng, num_tries=10)
    # ObtainSetsOfPhones: leaves get their sets; each node passes its phones to its parent
    # (children always come before parents in Kaldi's numbering); top node first.
    raw: list[list[int]] = [[] for _ in range(len(parents))]
    for i, clust in enumerate(assign.tolist()):
        raw[clust].extend(sets[i])
    for j, par in enumerate(parents.tolist()):
        raw[j].sort()
        if par < len(parents) - 1:
            raw[par].extend(raw[j])
    raw.reverse()
    raw.extend(sets)
    out, seen = [], set()
    for s in raw:
        t = tuple(s)
        if t in seen or not t:
            continue
        seen.add(t)
        out.append(list(t))
    return out


def kmeans_cluster_phones(stats: TreeStats, phone_sets: Sequence[Sequence[int]],
                          pdf_classes: Sequence[int], P: int, num_classes: int, seed: int = 0,
                          name: str = "phone sets") -> list[list[int]]:
    """KMeansClusterPhones (cluster-phones --mode=k-means): the per-set statistics clustered
    into ``num_classes`` classes by ClusterKMeans with Kaldi's default options (2 tries, 20
    iterations of RefineClusters); class i of the output is the sorted union of the sets
    assigned to it (a class may be empty, as in Kaldi)."""
    if num_classes <= 1 or num_classes > len(phone_sets):
        raise UsageError(f"num-classes invalid: num_classes is {num_classes}, number of phone "
                         f"sets is {len(phone_sets)}")
    sets, _classes, points, _kept = _stats_per_set(stats, phone_sets, pdf_classes, P, name)
    impr, assign = cluster_kmeans(points, num_classes, np.random.default_rng(seed))
    count = float(points.count.sum())
    logger.info("ClusterKMeans: objf change from clustering [versus single set] is %g over %g "
                "frames.", impr / count if count else 0.0, count)
    out: list[list[int]] = [[] for _ in range(num_classes)]
    for i, k in enumerate(assign.tolist()):
        out[k].extend(sets[i])
    return [sorted(x) for x in out]
