"""The command line shared by make-lstm-proto.py and make-blstm-proto.py.

Kaldi's two scripts differ only in the marker, one default (--proj-dim 400 vs 200) and the
BLSTM's --proj-dim-last, so one function builds the parser (with Kaldi's older option names as
other names of the new ones) and prints the prototype; each bin/ file keeps its usage text.
"""
from __future__ import annotations

import dataclasses
import sys
from typing import Sequence

from nnetmix.cli.binary import OptionParser, run_tool
from nnetmix.errors import UsageError
from nnetmix.nnet.rnn_proto import (OLD_OPTION_NAMES, RnnProtoOptions, make_blstm_proto,
                                    make_lstm_proto)

__all__ = ["rnn_proto_main"]

_UNSET = -1.0


def rnn_proto_main(blstm: bool, usage: str, argv: Sequence[str] | None = None) -> int:
    """make-(b)lstm-proto.py ``[options] <feat-dim> <num-leaves>``: the prototype on stdout."""
    prog = "make-blstm-proto.py" if blstm else "make-lstm-proto.py"
    parser = OptionParser(usage, prog=prog)
    defaults = RnnProtoOptions(proj_dim=200) if blstm else RnnProtoOptions()
    fields = [f for f in dataclasses.fields(RnnProtoOptions)
              if blstm or f.name != "proj_dim_last"]
    for f in fields:
        parser.register(f.name, getattr(defaults, f.name), f.metadata["help"])
    for old, new in OLD_OPTION_NAMES.items():
        kind = type(getattr(defaults, new))
        parser.register(old, kind(_UNSET), f"Kaldi's older name of --{new.replace('_', '-')} "
                        "(negative: not given)")

    def body(opts, args) -> int:
        try:
            feat_dim, num_leaves = (int(a) for a in args)
        except ValueError:
            raise UsageError(f"expected two integers, got {' '.join(args)}") from None
        values = {f.name: getattr(opts, f.name) for f in fields}
        for old, new in OLD_OPTION_NAMES.items():
            if getattr(opts, old) != _UNSET:
                values[new] = getattr(opts, old)
        o = RnnProtoOptions(**values)
        sys.stdout.write((make_blstm_proto if blstm else make_lstm_proto)(feat_dim, num_leaves, o))
        sys.stdout.flush()
        return 0

    return run_tool(parser, (2, 2), body, argv)
