"""LSTM and BLSTM network prototypes, as Kaldi's utils/nnet/make_lstm_proto.py and
make_blstm_proto.py write them (the 2016 versions, <LstmProjected>/<BlstmProjected>).

The network is what steps/nnet/train.sh --network-type lstm|blstm trains::

    <LstmProjected> x num_layers    (input feat_dim, then proj_dim; <CellDim> cell_dim)
    <Tanh>                          (Kaldi adds it "for more stability")
    <AffineTransform> <BiasMean> 0 <BiasRange> 0 [<ParamStddev> param_stddev]
    <Softmax>

A BLSTM layer's output holds both directions, so its <OutputDim> is 2 * proj_dim, and the last
BLSTM layer projects to 2 * proj_dim_last. The optional numbers (negative: not written, so the
component's own default applies: <ParamRange> 0.1, <CellClip> 50, <DiffClip> 1,
<CellDiffClip> 0, <GradClip> 250; AffineTransform's <ParamStddev> 0.1) become the tokens of
every recurrent line. Unlike Kaldi's script, a space always separates <CellDim>'s value from the
next token (Kaldi's C++ reader copes with ``320<ParamRange>``; a whitespace tokenizer does not).

Kaldi's older scripts (2015: <LstmProjectedStreams>, at most 2 layers) named the options
--num-cells, --num-recurrent, --lstm-stddev-factor, --param-stddev-factor and --clip-gradient;
the bin/ tools take those as other names of --cell-dim, --proj-dim, --lstm-param-range,
--param-stddev and --grad-clip, so old recipes' --proto-opts keep working.
"""
from __future__ import annotations

import dataclasses

from nnetmix.errors import UsageError
from nnetmix.options import option

__all__ = ["RnnProtoOptions", "OLD_OPTION_NAMES", "make_lstm_proto", "make_blstm_proto"]


@dataclasses.dataclass
class RnnProtoOptions:
    """The options of make_lstm_proto.py / make_blstm_proto.py (Kaldi's names and defaults;
    proj_dim's default differs between the two, so it is given by the tool)."""

    cell_dim: int = option(320, "Number of cells for one direction in the LSTM")
    proj_dim: int = option(400, "Number of recurrent (projection) units for one direction "
                                "(make-blstm-proto.py's default: 200)")
    proj_dim_last: int = option(320, "BLSTM only: projection units for one direction in the "
                                     "last BLSTM layer")
    num_layers: int = option(2, "Number of LSTM (BLSTM) layers")
    lstm_param_range: float = option(-1.0, "Range of the initial LSTM parameters, <ParamRange> "
                                           "(negative: not written, the component's 0.1)")
    param_stddev: float = option(-1.0, "Standard deviation of the initial weights of the softmax "
                                       "layer (negative: not written, 0.1)")
    cell_clip: float = option(-1.0, "Clipping of the cell values in the forward pass, <CellClip> "
                                    "(negative: not written, 50)")
    diff_clip: float = option(-1.0, "Clipping of the partial derivatives in BPTT (per frame), "
                                    "<DiffClip> (negative: not written, 1)")
    cell_diff_clip: float = option(-1.0, "Clipping of the cells' derivatives in BPTT (those the "
                                         "CEC accumulates), <CellDiffClip> (negative: not "
                                         "written, 0 = off)")
    grad_clip: float = option(-1.0, "Clipping of the accumulated gradient (per update), "
                                    "<GradClip> (negative: not written, 250)")


#: Kaldi's older option names -> the field they set
OLD_OPTION_NAMES = {"num_cells": "cell_dim", "num_recurrent": "proj_dim",
                    "lstm_stddev_factor": "lstm_param_range",
                    "param_stddev_factor": "param_stddev", "clip_gradient": "grad_clip"}


def _check(feat_dim: int, num_leaves: int, o: RnnProtoOptions, blstm: bool) -> None:
    dims = {"feat-dim": feat_dim, "num-leaves": num_leaves, "--cell-dim": o.cell_dim,
            "--proj-dim": o.proj_dim, "--num-layers": o.num_layers}
    if blstm:
        dims["--proj-dim-last"] = o.proj_dim_last
    bad = [f"{k} {v}" for k, v in dims.items() if v <= 0]
    if bad:
        raise UsageError(f"make_{'b' if blstm else ''}lstm_proto: expected positive "
                         f"{', '.join(bad)}")


def _recurrent_opts(o: RnnProtoOptions) -> str:
    toks = (("<ParamRange>", o.lstm_param_range), ("<CellClip>", o.cell_clip),
            ("<DiffClip>", o.diff_clip), ("<CellDiffClip>", o.cell_diff_clip),
            ("<GradClip>", o.grad_clip))
    return "".join(" %s %f" % (t, v) for t, v in toks if v >= 0)


def _head(dim: int, num_leaves: int, o: RnnProtoOptions) -> list[str]:
    stddev = " <ParamStddev> %f" % o.param_stddev if o.param_stddev >= 0 else ""
    return ["<Tanh> <InputDim> %d <OutputDim> %d" % (dim, dim),
            "<AffineTransform> <InputDim> %d <OutputDim> %d <BiasMean> 0.0 <BiasRange> 0.0%s"
            % (dim, num_leaves, stddev),
            "<Softmax> <InputDim> %d <OutputDim> %d" % (num_leaves, num_leaves)]


def _lines(marker: str, dims: list[int], o: RnnProtoOptions) -> list[str]:
    extra = _recurrent_opts(o)
    return ["%s <InputDim> %d <OutputDim> %d <CellDim> %d%s" % (marker, i, j, o.cell_dim, extra)
            for i, j in zip(dims, dims[1:])]


def make_lstm_proto(feat_dim: int, num_leaves: int, o: RnnProtoOptions | None = None) -> str:
    """The prototype of an LSTM network (lines ending in newlines)."""
    o = o or RnnProtoOptions()
    _check(feat_dim, num_leaves, o, blstm=False)
    dims = [feat_dim] + [o.proj_dim] * o.num_layers
    lines = _lines("<LstmProjected>", dims, o) + _head(o.proj_dim, num_leaves, o)
    return "".join(ln + "\n" for ln in lines)


def make_blstm_proto(feat_dim: int, num_leaves: int, o: RnnProtoOptions | None = None) -> str:
    """The prototype of a BLSTM network; one layer projects straight to 2 * proj_dim_last."""
    o = o or RnnProtoOptions(proj_dim=200)
    _check(feat_dim, num_leaves, o, blstm=True)
    dims = [feat_dim] + [2 * o.proj_dim] * (o.num_layers - 1) + [2 * o.proj_dim_last]
    lines = _lines("<BlstmProjected>", dims, o) + _head(2 * o.proj_dim_last, num_leaves, o)
    return "".join(ln + "\n" for ln in lines)
