"""Compile nnetmix's cached numba kernels once, at ``make install``, so recipes load them.

nnetmix's hot loops are ``@njit(cache=True)`` functions: the first process that calls one
compiles it (the lattice decoder alone costs about 40 CPU-seconds) and writes the machine code
to the on-disk cache (``nnetmix/**/__pycache__/*.nbi, *.nbc``, or under ``$NUMBA_CACHE_DIR``);
later processes load it in milliseconds. On a fresh clone the recipe's first jobs would each
compile the same kernels at once (``steps/decode.sh --nj 2``: two processes, the same 40 s
each). This module runs the real code paths on tiny inputs instead, so the cache holds every
kernel with the type signatures the recipes use:

* ``decoding``: a tiny monophone HCLG built by :mod:`nnetmix.decode.graph`, decoded by
  :class:`~nnetmix.decode.decoder.LatticeDecoder` from GMM frames (on-demand and dense
  likelihoods, as gmm-latgen-faster picks by model size) and from a log-likelihood matrix
  (latgen-faster-mapped), with lattices and best path only (gmm-decode-faster).
* ``training``: one small DNN epoch through :func:`~nnetmix.driver.dnn.dnn_epoch` with NG-SGD and
  with plain SGD (momentum, L2, max-norm), its cross-validation, nnet-forward with priors, and
  one RBM (Bernoulli and Gaussian visible units) through :func:`~nnetmix.driver.rbm.rbm_train`.

Each part runs in its own process (``python -m nnetmix.driver.warmup --jobs=2``: the two parts
compile in parallel). The cache must be written by a process with the same kernel pins
(:mod:`nnetmix.kernel_pin`: numba's CPU name is part of the cache key), which importing nnetmix
gives. numba checks each cached function against its source file's time stamp, so after an
edit the first process to call that file's kernels compiles them again (once, then cached): a
stale cache costs one compile, never wrong code.
"""
from __future__ import annotations

import argparse
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from nnetmix.decode.decoder import LatticeDecoder, LatticeDecoderConfig
from nnetmix.decode.gmmframes import GmmFrames, OnDemandGmm
from nnetmix.decode.graph import add_self_loops, make_clg, make_h, make_hclga, make_lg
from nnetmix.decode.latio import CompactLatticeWriter
from nnetmix.decode.latrescore import determinize_lattices
from nnetmix.decode.phonedet import PhoneDeterminizeOptions, phone_start_labels
from nnetmix.driver.dnn import dnn_epoch
from nnetmix.driver.multistream import multistream_epoch
from nnetmix.driver.rbm import rbm_train
from nnetmix.driver.spec import EpochFiles, EpochSpec
from nnetmix.hmm.gmm_likelihood import GmmParams
from nnetmix.hmm.khg import to_khg_context_dependency, to_khg_transition_model
from nnetmix.kaldi import TableWriter
from nnetmix.kaldi.context_dep import monophone_context_dependency
from nnetmix.kaldi.hmm_topology import default_topology
from nnetmix.kaldi.transition_model import TransitionModel
from nnetmix.nnet import (AffineTransform, ForwardOptions, Nnet, NnetTrainOptions, PdfPrior, Rbm,
                          Sigmoid, Softmax, init_components, nnet_forward, read_nnet)
from nnetmix.rbm.options import Cd1Options, RbmRandomizerOptions, RbmTrainOptions
from nnetmix.train.options import OptimizerOptions, TrainOptions
from nnetmix.train.seqstreams import PerUttOptions
from nnetmix.train.streams import StreamOptions

import kaldifst  # noqa: I001 -- after nnetmix.decode, which loads kaldi_hmm_gmm first
from numba.core.registry import CPUDispatcher

__all__ = ["PARTS", "warm_decoding", "warm_training", "cache_counts", "warm_up", "main"]

logger = logging.getLogger(__name__)


def _tiny_system():
    """(TransitionModel, tree, L_disambig, G, disambig phones): phones 1 SIL, 2 a, 3 b, #0 = 4;
    words A -> a, B -> b with optional silence after each; G a unigram loop over A and B."""
    topo = default_topology([1, 2, 3], [1], 3, 3)
    tree = monophone_context_dependency([1, 2, 3], topo.phone_to_num_pdf_classes())
    tm = TransitionModel.build(tree, topo)
    L = kaldifst.compile("0\t0\t2\t1\t0.693147\n0\t1\t2\t1\t0.693147\n"
                         "0\t0\t3\t2\t0.693147\n0\t1\t3\t2\t0.693147\n"
                         "1\t0\t1\t0\n0\t0\t4\t3\n0\t0.0\n1\t0.0\n")
    G = kaldifst.compile("0\t0\t1\t1\t0.798508\n0\t0\t2\t2\t0.798508\n0\t2.302585\n")
    return tm, tree, L, G, [4]


def warm_decoding(tmp: Path) -> None:
    """The lattice decoder and the GMM likelihood kernels, as gmm-latgen-faster,
    gmm-decode-faster and latgen-faster-mapped call them, and lattice-determinize-pruned
    (``tmp``: a scratch directory for the lattices)."""
    tm, tree, L, G, disambig = _tiny_system()
    kc = to_khg_context_dependency(tree, tm.topo)
    ktm = to_khg_transition_model(tm, tree=tree, ctx_dep=kc)
    CLG, ilabels = make_clg(make_lg(L, G), disambig, 1, 0)
    Ha, dtid = make_h(ilabels, kc, ktm)
    hclg = add_self_loops(ktm, make_hclga(Ha, CLG, dtid), 0.1)
    rng = np.random.default_rng(0)
    dim = 4
    am = [GmmParams(np.full(2, 0.5), rng.normal(size=(2, dim)), rng.uniform(0.5, 1.5, (2, dim)))
          for _ in range(tm.num_pdfs)]
    gmm = OnDemandGmm(am)
    feats = rng.normal(size=(30, dim)).astype(np.float32)
    decoder = LatticeDecoder(hclg, tm, LatticeDecoderConfig(allow_partial=True))
    for on_demand in (True, False):
        for lattice in (True, False):
            decoder.decode(GmmFrames(gmm, feats, on_demand), "warmup", lattice=lattice)
    loglikes = rng.normal(size=(30, tm.num_pdfs)).astype(np.float32)
    for lattice in (True, False):
        decoder.decode(loglikes, "warmup", lattice=lattice)
    phone_det = LatticeDecoder(hclg, tm, LatticeDecoderConfig(allow_partial=True,
                                                              phone_determinize=True))
    phone_det.decode(loglikes, "warmup")
    # steps/decode_fmllr.sh: state-level lattices written, read back and determinized by
    # lattice-determinize-pruned (and -phone-pruned)
    raw = LatticeDecoder(hclg, tm, LatticeDecoderConfig(allow_partial=True,
                                                        determinize_lattice=False))
    lats = f"ark:{tmp}/lat.ark"
    with CompactLatticeWriter(lats) as writer:
        writer.write("warmup", raw.decode(loglikes, "warmup").lattice)
    determinize_lattices(lats, f"ark:{tmp}/det.ark", 0.1, 4.0)
    determinize_lattices(lats, f"ark:{tmp}/phone-det.ark", 0.1, 4.0,
                         phones=(phone_start_labels(tm), PhoneDeterminizeOptions()))


def _write_tables(tmp: Path, rng: np.random.Generator, dim: int, num_pdfs: int,
                  num_utts: int = 6, frames: int = 60) -> tuple[str, str]:
    """(feats rspecifier, posterior-targets rspecifier) of random utterances in ``tmp``."""
    feats, post = f"ark:{tmp}/feats.ark", f"ark:{tmp}/post.ark"
    with TableWriter(feats, "mat") as fw, TableWriter(post, "post") as pw:
        for u in range(num_utts):
            fw.write(f"utt{u}", rng.normal(size=(frames, dim)).astype(np.float32))
            pw.write(f"utt{u}", [[(int(p), 1.0)] for p in rng.integers(0, num_pdfs, frames)])
    return feats, post


_OTHER_PROTO = """<AffineTransform> <InputDim> {dim} <OutputDim> {hid} <ParamStddev> 0.1 <MaxNorm> 1.0
<Tanh> <InputDim> {hid} <OutputDim> {hid}
<LinearTransform> <InputDim> {hid} <OutputDim> {hid} <ParamStddev> 0.1
<Sigmoid> <InputDim> {hid} <OutputDim> {hid}
<AffineTransform> <InputDim> {hid} <OutputDim> {hid} <ParamStddev> 0.1
<ParametricRelu> <InputDim> {hid} <OutputDim> {hid} <AlphaLearnRateCoef> 1 <BetaLearnRateCoef> 1
<Dropout> <InputDim> {hid} <OutputDim> {hid} <DropoutRate> 0.2
<LinearTransform> <InputDim> {hid} <OutputDim> {hid} <ParamStddev> 0.1
<Tanh> <InputDim> {hid} <OutputDim> {hid}
<AffineTransform> <InputDim> {hid} <OutputDim> {pdfs} <ParamStddev> 0.1
<Softmax> <InputDim> {pdfs} <OutputDim> {pdfs}
"""
_RNN_PROTO = """{kind} <InputDim> {dim} <OutputDim> 6 <CellDim> 6 <ParamRange> 0.1
<AffineTransform> <InputDim> 6 <OutputDim> {pdfs} <ParamStddev> 0.1
<Softmax> <InputDim> {pdfs} <OutputDim> {pdfs}
"""


def warm_training(tmp: Path) -> None:
    """A DNN epoch (NG-SGD and SGD), its cross-validation, nnet-forward and RBM CD-1, on the
    cpu backend in float32, as nnet-train-frmshuff / nnet-train-mpi, nnet-forward and
    rbm-train-cd1-frmshuff run them."""
    rng = np.random.default_rng(0)
    dim, hid, pdfs = 8, 16, 5
    feats, post = _write_tables(tmp, rng, dim, pdfs)
    net = Nnet([AffineTransform(dim, hid, rng.normal(size=(hid, dim)) * 0.3, np.zeros(hid)),
                Sigmoid(hid, hid),
                AffineTransform(hid, pdfs, rng.normal(size=(pdfs, hid)) * 0.3, np.zeros(pdfs)),
                Softmax(pdfs, pdfs)])
    model = str(tmp / "nnet.init")
    net.write(model)
    train = TrainOptions(minibatch_size=64, prefetch=False)
    for name, optim, update in (
            ("ngsgd", OptimizerOptions(optimizer="ngsgd"), NnetTrainOptions()),
            ("sgd", OptimizerOptions(), NnetTrainOptions(momentum=0.9, l2_penalty=1e-5))):
        out = str(tmp / f"nnet.{name}")
        dnn_epoch(None, EpochSpec(train, update, optim), EpochFiles(feats, post, model, out))
        dnn_epoch(None, EpochSpec(TrainOptions(cross_validate=True, prefetch=False), update),
                  EpochFiles(feats, post, out))
    # the other feed-forward components (harbour's recipes): max-norm, <Tanh> and <Sigmoid>
    # after an <AffineTransform> (fused with its bias) and after a <LinearTransform> (alone),
    # <ParametricRelu> with learnt slopes, <Dropout>; trained, cross-validated, forwarded
    other = str(tmp / "nnet.other")
    Nnet(init_components(_OTHER_PROTO.format(dim=dim, hid=hid, pdfs=pdfs))).write(other)
    for cv in (False, True):
        dnn_epoch(None, EpochSpec(TrainOptions(minibatch_size=64, prefetch=False,
                                               cross_validate=cv), NnetTrainOptions(momentum=0.5)),
                  EpochFiles(feats, post, other, None if cv else other + ".out"))
    x = rng.normal(size=(40, dim)).astype(np.float32)
    for model in (net, read_nnet(other)):
        nnet_forward(model, x, ForwardOptions(apply_log=True),
                     prior=PdfPrior(np.arange(1, pdfs + 1, dtype=np.float64)))
        nnet_forward(model, x, ForwardOptions(no_softmax=True))
    # LSTM (nnet-train-multistream) and BLSTM (nnet-train-multistream-perutt) epochs
    for proto, streams in (("<LstmProjected>", StreamOptions(batch_size=10, num_streams=2)),
                           ("<BlstmProjected>", PerUttOptions(num_streams=2))):
        rnn = str(tmp / "rnn")
        Nnet(init_components(_RNN_PROTO.format(kind=proto, dim=dim, pdfs=pdfs))).write(rnn)
        for cv in (False, True):
            multistream_epoch(EpochSpec(TrainOptions(prefetch=False, cross_validate=cv),
                                        NnetTrainOptions(momentum=0.9), streams=streams),
                              EpochFiles(feats, post, rnn, None if cv else rnn + ".out"))
    for vis_type in ("bern", "gauss"):
        rbm = Nnet([Rbm(dim, hid, rng.normal(size=(hid, dim)) * 0.1, np.zeros(dim),
                        np.zeros(hid), vis_type, "bern")])
        rbm_in = str(tmp / f"rbm.{vis_type}")
        rbm.write(rbm_in)
        rbm_train(None, rbm_in, feats, rbm_in + ".out", RbmTrainOptions(), Cd1Options(),
                  RbmRandomizerOptions(minibatch_size=64))


#: part name -> function; each runs in its own process
PARTS: dict[str, Callable[[Path], None]] = {"decoding": warm_decoding, "training": warm_training}


def cache_counts(modules: Iterable[str] = ()) -> dict[str, tuple[int, int]]:
    """``module.function -> (cache hits, cache misses)`` of every cached numba dispatcher this
    process has called, in loaded nnetmix modules (or in ``modules``). A miss is a compile."""
    names = list(modules) or [m for m in sys.modules if m.startswith("nnetmix")]
    out: dict[str, tuple[int, int]] = {}
    for name in names:
        mod = sys.modules.get(name)
        for attr, obj in list(vars(mod).items()) if mod is not None else ():
            disp = obj
            closure = getattr(obj, "__closure__", None) or ()
            for cell in closure:   # gmm_likelihood's lazily made dispatchers
                try:
                    if isinstance(cell.cell_contents, CPUDispatcher):
                        disp = cell.cell_contents
                except ValueError:   # an empty cell: not made yet
                    pass
            if not isinstance(disp, CPUDispatcher) or disp._cache is None:
                continue
            if getattr(disp.py_func, "__module__", name) != name:
                continue   # imported from another module: counted there
            stats = disp.stats
            hits, misses = sum(stats.cache_hits.values()), sum(stats.cache_misses.values())
            if hits or misses:
                out[f"{name}.{attr}"] = (hits, misses)
    return out


def _run_part(name: str) -> None:
    with tempfile.TemporaryDirectory(prefix=f"nnetmix-warmup-{name}-") as tmp:
        PARTS[name](Path(tmp))


def warm_up(parts: Sequence[str], jobs: int = 2) -> None:
    """Run ``parts`` (names in :data:`PARTS`), ``jobs`` processes at a time; raises
    RuntimeError naming the part whose process failed (its output is on stderr)."""
    procs: list[tuple[str, subprocess.Popen]] = []
    failed: list[str] = []
    pending = list(parts)
    while pending or procs:
        while pending and len(procs) < max(jobs, 1):
            name = pending.pop(0)
            procs.append((name, subprocess.Popen(
                [sys.executable, "-m", "nnetmix.driver.warmup", f"--part={name}"])))
        name, proc = procs.pop(0)
        if proc.wait() != 0:
            failed.append(name)
    if failed:
        raise RuntimeError(f"warm-up part(s) {', '.join(failed)} failed (see the lines above)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nnetmix.driver.warmup",
        description="Compile nnetmix's numba kernels into their on-disk cache by running the "
                    "decoder and the trainers on tiny inputs (make install runs it).")
    parser.add_argument("--jobs", type=int, default=2, help="parts run at once (default 2)")
    parser.add_argument("--part", default="", help=f"run one part in this process ({', '.join(PARTS)}), "
                        "and print its cache hits and misses")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    start = time.time()
    if args.part:
        if args.part not in PARTS:
            print(f"ERROR (warmup): --part={args.part}: expected one of {', '.join(PARTS)}",
                  file=sys.stderr)
            return 1
        _run_part(args.part)
        counts = cache_counts()
        hits = sum(h for h, _ in counts.values())
        misses = sum(m for _, m in counts.values())
        print(f"warmup: {args.part}: {len(counts)} cached kernels, {misses} compiled, {hits} "
              f"loaded from the cache, {time.time() - start:.1f}s", file=sys.stderr)
        return 0
    try:
        warm_up(list(PARTS), args.jobs)
    except RuntimeError as e:
        print(f"ERROR (warmup) {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
