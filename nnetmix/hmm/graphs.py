"""Training graphs: compile-train-graphs, and Kaldi FST archives in and out.

Kaldi's compile-train-graphs (src/bin/compile-train-graphs.cc) builds one graph per utterance
with ``TrainingGraphCompiler`` (H o C o L o linear word acceptor, self-loops added, reordered)
and, unlike the class's defaults, with ``--transition-scale=0 --self-loop-scale=0``: the graphs
carry NO transition probabilities, because gmm-align-compiled adds the current model's (they
change every iteration). Compiling with the defaults (1.0) and then adding the scaled
probabilities in the aligner counts them twice, the first time at 10x the weight the acoustic
scale 0.1 intends.

Graphs are written and read as Kaldi FST archives by kaldifst's table types (Kaldi's own
TableWriter<VectorFstHolder>), so ``ark:|gzip -c >fsts.1.gz`` and ``ark:gunzip -c fsts.1.gz|``
work as in Kaldi and Kaldi's own tools can read them.

Monophone trees go through kaldi-hmm-gmm's TrainingGraphCompiler (byte-identical to Kaldi's
output). Any other tree (e.g. a triphone tree, which kaldi-hmm-gmm 1.1.4 cannot build) goes
through :class:`CdGraphCompiler`, Kaldi's TrainingGraphCompiler::CompileGraph written here:
L o (linear word acceptor), the context through ``kaldifst.compose_context`` (which adds the
subsequential loop Kaldi's constructor adds to L when P != N-1), H from
:class:`nnetmix.hmm.h_transducer.HTransducerBuilder` (GetHTransducer, its HMMs kept between
utterances), DeterminizeStarInLog, the H disambiguation symbols to epsilon, MinimizeEncoded,
then AddSelfLoops. For a monophone tree that path gives the bindings' graph arc for arc
(tests/hmm/test_hmm_cd_graphs.py).

LIFETIMES (nnetmix.hmm.khg): a kaldi-hmm-gmm TrainingGraphCompiler keeps raw pointers to its
transition model, tree and lexicon FST; :class:`TrainGraphCompiler` holds all of them.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterator, Sequence

import kaldi_hmm_gmm as _khg  # noqa: I001 -- before kaldifst: the other order can hang
import kaldifst

from nnetmix import outfile
from nnetmix.errors import FormatError, NnetmixError
from nnetmix.hmm.h_transducer import (HTransducerBuilder, HTransducerError, add_self_loops,
                                      remove_input_symbols)
from nnetmix.hmm.khg import KhgUnsupported, to_khg_context_dependency, to_khg_transition_model
from nnetmix.kaldi.context_dep import ContextDependency, read_tree
from nnetmix.kaldi.fstfile import iter_fst_table, read_checked_fst
from nnetmix.kaldi.specifier import classify_wxfilename, parse_wspecifier
from nnetmix.kaldi.stream import open_input
from nnetmix.kaldi.transition_model import TransitionModel, read_transition_model
from nnetmix.kaldi.table import SequentialReader
from nnetmix.options import option

__all__ = ["GraphCompilerOptions", "TrainGraphCompiler", "CdGraphCompiler", "read_int_list",
           "read_fst", "iter_graphs", "GraphWriter", "compile_train_graphs", "CompileCounts"]

logger = logging.getLogger(__name__)


@dataclass
class GraphCompilerOptions:
    """compile-train-graphs' TrainingGraphCompilerOptions, with its changed defaults (0.0)."""
    transition_scale: float = option(0.0, "Scale of transition probabilities "
                                     "(excluding self-loops)")
    self_loop_scale: float = option(0.0, "Scale of self-loop vs. non-self-loop probability mass ")
    reorder: bool = option(True, "Reorder transition ids for greater decoding efficiency.")
    rm_eps: bool = option(False, "Remove [most] epsilons before minimization (only applicable if "
                          "disambig symbols present)")


def read_int_list(rxfilename: str) -> list[int]:
    """Kaldi's ReadIntegerVectorSimple: whitespace-separated integers (e.g. disambig.int)."""
    src = open_input(rxfilename)
    try:
        chunks = []
        while True:
            b = src.read(1 << 16)
            if not b:
                break
            chunks.append(b)
        text = b"".join(chunks).decode("utf-8", errors="replace")
    finally:
        src.close(check=False)
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for tok in line.split():
            try:
                out.append(int(tok))
            except ValueError:
                raise FormatError(f"{rxfilename}:{n}: expected integers, got '{tok}'") from None
    return out


def read_fst(rxfilename: str, max_ilabel: int | None = None,
             labels_from: str = "") -> kaldifst.StdVectorFst:
    """An FST file as fstcompile/Kaldi write it (e.g. L.fst), checked before kaldifst sees it
    (:mod:`nnetmix.kaldi.fstfile`; input labels at most ``max_ilabel`` when given)."""
    return read_checked_fst(rxfilename, max_ilabel=max_ilabel, labels_from=labels_from)


class CdGraphCompiler:
    """Kaldi's TrainingGraphCompiler for any tree, over nnetmix's tree and transition model."""
    def __init__(self, tree: ContextDependency, tm: TransitionModel,
                 lex_fst: kaldifst.StdVectorFst, disambig: Sequence[int] = (),
                 opts: GraphCompilerOptions = GraphCompilerOptions()):
        self.tree, self.tm, self.opts = tree, tm, opts
        phones = set(tm.phones.tolist())
        self.disambig = sorted(set(int(d) for d in disambig))
        both = phones.intersection(self.disambig)
        if both:
            raise FormatError(f"disambiguation symbol {min(both)} is also a phone")
        self.lex_fst = lex_fst.copy()
        kaldifst.arcsort(self.lex_fst, "olabel")
        self.h_builder = HTransducerBuilder(tree, tm, opts.transition_scale)

    def compile(self, word_ids: Sequence[int]) -> kaldifst.StdVectorFst:
        words = kaldifst.make_linear_acceptor([int(w) for w in word_ids])
        LG = kaldifst.compose(self.lex_fst, words)
        if LG.start < 0 or LG.num_states == 0:
            return LG  # the caller warns "Empty decoding graph"
        CLG, ilabels = kaldifst.compose_context(self.disambig, self.tree.N, self.tree.P, LG)
        kaldifst.arcsort(CLG, "ilabel")
        H, disambig_h = self.h_builder.build(ilabels)
        kaldifst.arcsort(H, "olabel")
        g = kaldifst.compose(H, CLG)
        if g.start < 0 or g.num_states == 0:
            return g
        kaldifst.determinize_star(g, use_log=True)
        if disambig_h:
            g = remove_input_symbols(g, disambig_h)
            if self.opts.rm_eps:
                kaldifst.rmepsilon(g)  # RemoveEpsLocal is not bound; the full removal
        kaldifst.minimize_encoded(g)
        return add_self_loops(self.tm, g, self.opts.self_loop_scale, self.opts.reorder)


class TrainGraphCompiler:
    """TrainingGraphCompiler with the Python references it needs kept alive: kaldi-hmm-gmm's
    for monophone trees, :class:`CdGraphCompiler` for any other tree."""
    def __init__(self, tree: ContextDependency, tm: TransitionModel,
                 lex_fst: kaldifst.StdVectorFst, disambig: Sequence[int] = (),
                 opts: GraphCompilerOptions = GraphCompilerOptions()):
        self.tree, self.tm, self.lex_fst = tree, tm, lex_fst
        self.disambig = list(disambig)
        try:
            self.k_ctx = to_khg_context_dependency(tree, tm.topo)
        except KhgUnsupported:
            self.compiler = CdGraphCompiler(tree, tm, lex_fst, disambig, opts)
            return
        self.k_tm = to_khg_transition_model(tm, ctx_dep=self.k_ctx)
        self.k_opts = _khg.TrainingGraphCompilerOptions(
            transition_scale=opts.transition_scale, self_loop_scale=opts.self_loop_scale,
            reorder=opts.reorder)
        self.k_opts.rm_eps = opts.rm_eps
        self.compiler = _khg.TrainingGraphCompiler(self.k_tm, self.k_ctx, lex_fst,
                                                   self.disambig, self.k_opts)

    def compile(self, word_ids: Sequence[int]) -> kaldifst.StdVectorFst:
        if isinstance(self.compiler, CdGraphCompiler):
            return self.compiler.compile(word_ids)
        return self.compiler.compile_graph_from_text([int(w) for w in word_ids])


def iter_graphs(rspecifier: str) -> Iterator[tuple[str, kaldifst.StdVectorFst]]:
    """(key, graph) from a Kaldi FST archive or script, each graph checked before kaldifst
    sees it (:func:`nnetmix.kaldi.fstfile.iter_fst_table`)."""
    yield from iter_fst_table(rspecifier)


class GraphWriter:
    """Kaldi FST archive writer (kaldifst's VectorFstWriter); a context manager. A plain
    ``ark:FILE`` (no script, no pipe) is written under a temporary name and renamed on a clean
    close, so a tool that stops with an error leaves no half-written archive."""
    def __init__(self, wspecifier: str):
        self.wspecifier = wspecifier
        self._final = self._tmp = None
        spec = wspecifier
        try:
            ws = parse_wspecifier(wspecifier)
            if (ws.type == "ark" and wspecifier.endswith(ws.ark)
                    and classify_wxfilename(ws.ark).kind == "file"
                    and not outfile.writes_in_place(ws.ark)):
                self._final = ws.ark
                self._tmp = outfile.temp_name(ws.ark)
                spec = wspecifier[:len(wspecifier) - len(ws.ark)] + self._tmp
        except NnetmixError:
            pass  # kaldifst gives its own error below
        try:
            self.writer = kaldifst.VectorFstWriter(spec)
        except Exception as e:
            raise FormatError(f"{wspecifier}: cannot open FST archive for writing: {e}") from None

    def write(self, key: str, graph: kaldifst.StdVectorFst) -> None:
        self.writer.write(key, graph)

    def close(self) -> None:
        self.writer.close()
        if self._tmp:
            tmp, self._tmp = self._tmp, None
            outfile.commit_temp(tmp, self._final)

    def abort(self) -> None:
        self.writer.close()
        outfile.discard_temp(self._tmp)
        self._tmp = None

    def __enter__(self) -> "GraphWriter":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


@dataclass
class CompileCounts:
    succeeded: int = 0
    failed: int = 0


def compile_train_graphs(tree_rx: str, model_rx: str, lex_rx: str, transcripts_rspecifier: str,
                         graphs_wspecifier: str, disambig_rx: str = "",
                         opts: GraphCompilerOptions = GraphCompilerOptions()) -> CompileCounts:
    """compile-train-graphs: one graph per transcript; an empty graph is warned and skipped."""
    tree = read_tree(tree_rx)
    tm = read_transition_model(model_rx)
    disambig = read_int_list(disambig_rx) if disambig_rx else []
    lex = read_fst(lex_rx, max(tm.phones.tolist() + disambig),
                   f"the phones of {model_rx}" + (f" and {disambig_rx}" if disambig_rx else ""))
    gc = TrainGraphCompiler(tree, tm, lex, disambig, opts)
    counts = CompileCounts()
    with SequentialReader(transcripts_rspecifier, "ivec") as reader, \
            GraphWriter(graphs_wspecifier) as writer:
        for key, words in reader:
            try:
                graph = gc.compile(words)
            except HTransducerError as e:
                raise HTransducerError(f"{tree_rx}, {model_rx}: utterance {key}: {e}") from None
            if graph.start < 0 or graph.num_states == 0:
                logger.warning("Empty decoding graph for utterance %s", key)
                counts.failed += 1
                continue
            writer.write(key, graph)
            counts.succeeded += 1
        if not counts.succeeded:  # before the writer closes: no empty archive is left
            raise FormatError(f"{transcripts_rspecifier}: no graph was compiled (an empty "
                              f"transcription table?), so {graphs_wspecifier} is not written")
    logger.info("compile-train-graphs: succeeded for %d graphs, failed for %d",
                counts.succeeded, counts.failed)
    return counts
