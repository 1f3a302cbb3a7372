"""Initialising a network from a prototype, as Kaldi's nnet-initialize (Nnet::Init, InitData).

A prototype has one component per line: ``<Marker> <InputDim> N <OutputDim> M`` followed by
that component's options (``<NnetProto>``/``</NnetProto>`` lines and blank lines are skipped):

* AffineTransform: ``<ParamStddev> 0.1 <BiasMean> -2 <BiasRange> 2 <LearnRateCoef> 1
  <BiasLearnRateCoef> 1 <MaxNorm> 0`` (Kaldi's defaults); W ~ N(0, stddev), b ~ U(mean -
  range/2, mean + range/2), drawn in that order.
* LinearTransform: ``<ParamStddev> 0.1 <ReadMatrix> file <LearnRateCoef> 1``.
* Sigmoid, Tanh, Softmax: nothing.
* Splice: ``<ReadVector> [ -5 -4 ... 5 ]`` or ``<BuildVector> -5:5 </BuildVector>``
  (items ``a``, ``a:b`` or ``a:step:b``).
* AddShift, Rescale: ``<InitParam> 0 <LearnRateCoef> 1``.
* LstmProjected, BlstmProjected: ``<CellDim> 512 <ParamRange> 0.1 <LearnRateCoef> 1
  <BiasLearnRateCoef> 1 <CellClip> 50 <DiffClip> 1 <CellDiffClip> 0 <GradClip> 250``
  (Kaldi's InitData; ``<ParamScale>`` is read as the older name of ``<ParamRange>``).
* ParametricRelu: ``<Alpha> 1 <Beta> 0 <AlphaLearnRateCoef> 0 <BetaLearnRateCoef> 0``;
  Dropout: ``<DropoutRate> 0.5`` (the component's ``PROTO_OPTIONS`` and ``from_proto``).
* Rbm: ``<VisibleType> gauss <HiddenType> bern <ParamStddev> 0.1 <VisibleBiasMean>
  <VisibleBiasRange> <HiddenBiasMean> <HiddenBiasRange> <VisibleBiasCmvnFilename>``.

Kaldi seeds C's rand(); we seed numpy's PCG64 with ``--seed`` (777): the same prototype and seed
give the same network on every run, though not Kaldi's numbers.
"""
from __future__ import annotations

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.kaldi.objects import read_object
from nnetmix.kaldi.stream import open_input
from nnetmix.nnet.components import (AddShift, AffineTransform, Component, LinearTransform, Rbm,
                                     Rescale, Splice, component_type)
from nnetmix.nnet.network import Nnet
from nnetmix.nnet.options import NnetError
from nnetmix.nnet.recurrent import MultistreamComponent

__all__ = ["init_nnet", "init_components", "build_integer_vector"]


class _Line:
    """The tokens of one prototype line, with errors that name file and line."""

    def __init__(self, tokens: list[str], where: str):
        self.tokens = tokens
        self.pos = 0
        self.where = where

    def fail(self, msg: str) -> FormatError:
        return FormatError(f"{self.where}: {msg}")

    def done(self) -> bool:
        return self.pos >= len(self.tokens)

    def next(self, what: str) -> str:
        if self.done():
            raise self.fail(f"expected {what}, got end of line")
        self.pos += 1
        return self.tokens[self.pos - 1]

    def expect(self, tok: str) -> None:
        got = self.next(tok)
        if got != tok:
            raise self.fail(f"expected {tok}, got '{got}'")

    def int(self, what: str) -> int:
        t = self.next(what)
        try:
            return int(t)
        except ValueError:
            raise self.fail(f"{what}: expected an integer, got '{t}'") from None

    def float(self, what: str) -> float:
        t = self.next(what)
        try:
            return float(np.float32(float(t)))
        except ValueError:
            raise self.fail(f"{what}: expected a number, got '{t}'") from None

    def options(self, known: dict[str, str]) -> dict[str, object]:
        """Parse the rest as ``<Token> value`` pairs; ``known`` maps token -> 'f'|'s'|'v'|'b'."""
        out: dict[str, object] = {}
        while not self.done():
            tok = self.next("an option")
            kind = known.get(tok)
            if kind is None:
                raise self.fail(f"unknown token {tok}, a typo in the prototype? "
                                f"(expected one of {' '.join(known)})")
            if kind == "f":
                out[tok] = self.float(tok)
            elif kind == "s":
                out[tok] = self.next(tok)
            elif kind == "v":  # [ a b c ]
                self.expect("[")
                vals = []
                while True:
                    t = self.next("]")
                    if t == "]":
                        break
                    try:
                        vals.append(int(t))
                    except ValueError:
                        raise self.fail(f"{tok}: expected an integer, got '{t}'") from None
                out[tok] = vals
            elif kind == "b":  # items until </BuildVector>
                items = []
                while True:
                    t = self.next("</BuildVector>")
                    if t == "</BuildVector>":
                        break
                    items.append(t)
                out[tok] = build_integer_vector(items, self)
        return out


def build_integer_vector(items: list[str], line: _Line | None = None) -> list[int]:
    """Kaldi's BuildIntegerVector: each item ``a`` or ``a:b`` or ``a:step:b`` (inclusive)."""
    out: list[int] = []
    for item in items:
        try:
            parts = [int(p) for p in item.split(":")]
        except ValueError:
            parts = []
        if len(parts) == 1:
            beg = end = parts[0]
            step = 1
        elif len(parts) == 2:
            (beg, end), step = parts, 1
        elif len(parts) == 3:
            beg, step, end = parts
        else:
            msg = f"<BuildVector> item '{item}': expected a, a:b or a:step:b"
            raise line.fail(msg) if line else FormatError(msg)
        if beg > end or step <= 0:
            msg = f"<BuildVector> item '{item}': expected begin <= end and step > 0"
            raise line.fail(msg) if line else FormatError(msg)
        out.extend(range(beg, end + 1, step))
    return out


def _gauss(rng: np.random.Generator, stddev: float, shape) -> np.ndarray:
    return (rng.standard_normal(shape) * stddev).astype(np.float32)


def _uniform(rng: np.random.Generator, mean: float, rng_range: float, shape) -> np.ndarray:
    """Kaldi's RandUniform(mean, range): mean + range * (U[0,1) - 0.5)."""
    return (mean + rng_range * (rng.random(shape) - 0.5)).astype(np.float32)


def _init_one(line: _Line, rng: np.random.Generator) -> Component:
    marker = line.next("a component marker")
    cls = component_type(marker)
    if cls is None:
        raise line.fail(f"unknown component '{marker}'")
    line.expect("<InputDim>")
    i = line.int("<InputDim>")
    line.expect("<OutputDim>")
    o = line.int("<OutputDim>")
    if i <= 0 or o <= 0:
        raise line.fail(f"{cls.marker}: expected positive dims, got <InputDim> {i} <OutputDim> {o}")
    if cls is AffineTransform:
        op = line.options({"<ParamStddev>": "f", "<BiasMean>": "f", "<BiasRange>": "f",
                           "<LearnRateCoef>": "f", "<BiasLearnRateCoef>": "f", "<MaxNorm>": "f"})
        W = _gauss(rng, op.get("<ParamStddev>", 0.1), (o, i))
        b = _uniform(rng, op.get("<BiasMean>", -2.0), op.get("<BiasRange>", 2.0), (o,))
        return AffineTransform(i, o, W, b, op.get("<LearnRateCoef>", 1.0),
                               op.get("<BiasLearnRateCoef>", 1.0), op.get("<MaxNorm>", 0.0))
    if cls is LinearTransform:
        op = line.options({"<ParamStddev>": "f", "<ReadMatrix>": "s", "<LearnRateCoef>": "f"})
        if "<ReadMatrix>" in op:
            W = np.asarray(read_object(str(op["<ReadMatrix>"]), "mat"), dtype=np.float32)
            if W.shape != (o, i):
                raise line.fail(f"<ReadMatrix> {op['<ReadMatrix>']}: matrix is {W.shape[0]}x"
                                f"{W.shape[1]}, expected {o}x{i}")
        else:
            W = _gauss(rng, op.get("<ParamStddev>", 0.1), (o, i))
        return LinearTransform(i, o, W, op.get("<LearnRateCoef>", 1.0))
    if cls is Splice:
        op = line.options({"<ReadVector>": "v", "<BuildVector>": "b"})
        off = op.get("<BuildVector>", op.get("<ReadVector>"))
        if off is None or len(off) * i != o:
            n = 0 if off is None else len(off)
            raise line.fail(f"<Splice>: {n} frame offsets times <InputDim> {i} != <OutputDim> {o}")
        return Splice(i, o, off)
    if cls in (AddShift, Rescale):
        op = line.options({"<InitParam>": "f", "<LearnRateCoef>": "f"})
        if i != o:
            raise line.fail(f"{cls.marker}: <InputDim> {i} != <OutputDim> {o}")
        return cls(i, o, np.full(i, op.get("<InitParam>", 0.0), np.float32),
                   op.get("<LearnRateCoef>", 1.0))
    if cls is Rbm:
        return _init_rbm(line, rng, i, o)
    if issubclass(cls, MultistreamComponent):
        op = line.options(cls.PROTO_OPTIONS)
        if op.get("<CellDim>", 0) <= 0 or op["<CellDim>"] != int(op["<CellDim>"]):
            raise line.fail(f"{cls.marker}: expected <CellDim> with a positive integer")
        if o % len(cls.directions):
            raise line.fail(f"{cls.marker}: <OutputDim> {o} must be even (forward and "
                            "backward projections)")
        return cls.from_proto(i, o, op, rng)
    proto_options = getattr(cls, "PROTO_OPTIONS", None)
    if proto_options is not None:  # a component that parses its own line (prelu_dropout.py)
        op = line.options(proto_options)
        try:
            return cls.from_proto(op, i, o, rng)
        except NnetError as e:
            raise line.fail(str(e)) from None
    # activations: Kaldi's base InitData ignores the rest of the line
    if i != o:
        raise line.fail(f"{cls.marker}: <InputDim> {i} != <OutputDim> {o}")
    return cls(i, o)


_UNIT = {"bern": "bern", "Bernoulli": "bern", "gauss": "gauss", "Gaussian": "gauss"}


def _init_rbm(line: _Line, rng: np.random.Generator, i: int, o: int) -> Rbm:
    op = line.options({"<VisibleType>": "s", "<HiddenType>": "s", "<VisibleBiasMean>": "f",
                       "<VisibleBiasRange>": "f", "<HiddenBiasMean>": "f",
                       "<HiddenBiasRange>": "f", "<ParamStddev>": "f",
                       "<VisibleBiasCmvnFilename>": "s"})
    types = []
    for tok in ("<VisibleType>", "<HiddenType>"):
        t = _UNIT.get(str(op.get(tok, "")))
        if t is None:
            raise line.fail(f"<Rbm>: {tok} '{op.get(tok, '')}', expected bern or gauss")
        types.append(t)
    W = _gauss(rng, op.get("<ParamStddev>", 0.1), (o, i))
    hb = _uniform(rng, op.get("<HiddenBiasMean>", 0.0), op.get("<HiddenBiasRange>", 0.0), (o,))
    cmvn = op.get("<VisibleBiasCmvnFilename>")
    if cmvn:  # visible bias = logit(p), p the mean activity: minus the AddShift of a cmvn nnet
        net = Nnet.read(str(cmvn))
        if not net.components or not isinstance(net.components[0], AddShift) or net.input_dim != i:
            raise line.fail(f"<VisibleBiasCmvnFilename> {cmvn}: expected an <AddShift> of dim {i} "
                            "first (the output of cmvn-to-nnet)")
        p = np.clip(-net.host_params()[0]["shift"], 0.0001, 0.9999).astype(np.float32)
        vb = (np.log(p) - np.log(1.0 - p)).astype(np.float32)
    else:
        vb = _uniform(rng, op.get("<VisibleBiasMean>", 0.0), op.get("<VisibleBiasRange>", 0.0), (i,))
    return Rbm(i, o, W, vb, hb, types[0], types[1])


def init_components(proto_text: str, seed: int = 777, name: str = "prototype") -> list[Component]:
    """Components from the text of a prototype, seeded."""
    rng = np.random.default_rng(seed)
    comps: list[Component] = []
    for n, raw in enumerate(proto_text.splitlines(), 1):
        tokens = raw.split()
        if not tokens or tokens[0] in ("<NnetProto>", "</NnetProto>"):
            continue
        comp = _init_one(_Line(tokens, f"{name}:{n}"), rng)
        if comps and comps[-1].output_dim != comp.input_dim:
            raise FormatError(f"{name}:{n}: {comp.marker} has <InputDim> {comp.input_dim}, the "
                              f"previous component's <OutputDim> is {comps[-1].output_dim}")
        comps.append(comp)
    return comps


def init_nnet(proto_rxfilename: str, seed: int = 777) -> Nnet:
    """nnet-initialize: a network from a prototype file (any rxfilename)."""
    src = open_input(proto_rxfilename)
    try:
        data = b""
        while True:
            chunk = src.read(1 << 16)
            if not chunk:
                break
            data += chunk
    except BaseException:
        src.close(check=False)
        raise
    src.close(check=True)
    if not data.strip():
        raise FormatError(f"{proto_rxfilename}: empty prototype (no components to initialize)")
    return Nnet(init_components(data.decode("utf-8", errors="replace"), seed, proto_rxfilename))
