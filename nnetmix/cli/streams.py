"""The command line nnet-train-multistream.py and nnet-train-multistream-perutt.py share: the
epoch tools' options plus one group of stream options (which chooses the batch source), the
argument check, one epoch through :func:`~nnetmix.driver.multistream.multistream_epoch`, and
the epoch tools' closing lines."""
from __future__ import annotations

import logging

from nnetmix.cli.binary import OptionParser, run_tool
from nnetmix.cli.training import check_epoch_args, log_epoch, register_epoch_options
from nnetmix.driver.multistream import multistream_epoch
from nnetmix.nnet import NnetTrainOptions
from nnetmix.train.options import TrainOptions

__all__ = ["stream_tool_parser", "run_stream_tool"]


def stream_tool_parser(usage: str, prog: str, stream_group: type) -> OptionParser:
    """The tool's parser: nnet-train-frmshuff.py's epoch options and ``stream_group``'s."""
    p = OptionParser(usage, prog=prog)
    register_epoch_options(p)
    p.register_group(stream_group)
    return p


def run_stream_tool(parser: OptionParser, stream_group: type, argv=None) -> int:
    """main() of a multistream tool built by :func:`stream_tool_parser`."""
    log = logging.getLogger(parser.prog.removesuffix(".py"))

    def body(opts, args) -> int:
        check_epoch_args(parser, opts, args)
        res = multistream_epoch(args[0], args[1], args[2], args[3] if len(args) > 3 else None,
                                parser.group(TrainOptions, opts), parser.group(stream_group, opts),
                                parser.group(NnetTrainOptions, opts),
                                feature_transform=opts.feature_transform, backend=opts.backend,
                                targets_kind=opts.targets_kind, binary=opts.binary,
                                result_file=opts.result_file, log=log)
        log_epoch(log, res.stats)
        return 0

    return run_tool(parser, (3, 4), body, argv)
