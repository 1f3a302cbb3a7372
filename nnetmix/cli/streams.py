"""The command line nnet-train-multistream.py and nnet-train-multistream-perutt.py share: the
epoch tools' options plus one group of stream options (which chooses the batch source), the
argument check, one epoch through :func:`~nnetmix.driver.multistream.multistream_epoch`, and
the epoch tools' closing lines; and the stream options of nnet-train-mpi.py, which takes both
tools' (:func:`register_mpi_stream_options`, :func:`mpi_stream_options`)."""
from __future__ import annotations

import dataclasses
import logging

from nnetmix.cli.binary import OptionParser, run_tool
from nnetmix.cli.training import (check_epoch_args, epoch_files, epoch_spec, log_epoch,
                                  register_epoch_options)
from nnetmix.driver.multistream import multistream_epoch
from nnetmix.errors import UsageError
from nnetmix.train.seqstreams import PerUttOptions
from nnetmix.train.streams import StreamOptions

__all__ = ["stream_tool_parser", "run_stream_tool", "register_mpi_stream_options",
           "mpi_stream_options"]

#: --stream-mode's values: nnet-train-multistream.py's source, nnet-train-multistream-perutt.py's
STREAM_MODES = ("multistream", "perutt")


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
        spec = epoch_spec(parser, opts, streams=parser.group(stream_group, opts))
        res = multistream_epoch(spec, epoch_files(opts, args), log=log)
        log_epoch(log, res.stats)
        return 0

    return run_tool(parser, (3, 4), body, argv)


def _num_streams_default(mode_options: type) -> int:
    return next(f.default for f in dataclasses.fields(mode_options) if f.name == "num_streams")


#: --num-streams=0 in nnet-train-mpi.py: each --stream-mode's own tool's default (Kaldi's
#: nnet-train-multistream.cc 4, nnet-train-multistream-perutt.cc 20)
MODE_NUM_STREAMS = {"multistream": _num_streams_default(StreamOptions),
                    "perutt": _num_streams_default(PerUttOptions)}


def register_mpi_stream_options(p: OptionParser) -> None:
    """nnet-train-mpi.py's stream options: --stream-mode, nnet-train-multistream.py's
    (--batch-size, --num-streams) and nnet-train-multistream-perutt.py's other options
    (--max-frames, --matrix-buffer-size, --chunk-size, --chunk-left-context,
    --chunk-right-context). --num-streams is one option for both modes; its default (0)
    stands for the default of the tool --stream-mode names (4 multistream, 20 perutt, as
    Kaldi's two tools), so an MPI epoch trains as the single-worker tool would."""
    p.register("stream-mode", "multistream",
               "How a recurrent network is trained: multistream (nnet-train-multistream.py: "
               "--num-streams streams of --batch-size frames, state carried) or perutt "
               "(nnet-train-multistream-perutt.py: whole utterances, or CSC-BPTT chunks with "
               "--chunk-size)")
    for f in dataclasses.fields(StreamOptions):
        if f.name != "num_streams":
            p.register(f.name, f.default, f.metadata.get("help", ""), type(f.default))
    p.register("num-streams", 0,
               "Number of streams (multistream) or sentences/chunks (perutt) processed in "
               "parallel; 0: the mode's tool's default, "
               + ", ".join(f"{v} for {k}" for k, v in MODE_NUM_STREAMS.items()))
    for f in dataclasses.fields(PerUttOptions):
        if f.name != "num_streams":
            p.register(f.name, f.default, f.metadata.get("help", ""), type(f.default))


def mpi_stream_options(opts) -> StreamOptions | PerUttOptions:
    """The stream options --stream-mode chooses (make_stream_source's input); a per-utterance
    option given in multistream mode is a UsageError rather than silently unused."""
    if opts.stream_mode not in STREAM_MODES:
        raise UsageError(f"--stream-mode must be one of {', '.join(STREAM_MODES)}, "
                         f"got {opts.stream_mode}")
    if opts.num_streams < 0:
        raise UsageError(f"--num-streams must be > 0 (or 0: the mode's default), "
                         f"got {opts.num_streams}")
    num_streams = opts.num_streams or MODE_NUM_STREAMS[opts.stream_mode]
    perutt = PerUttOptions(**{f.name: getattr(opts, f.name)
                              for f in dataclasses.fields(PerUttOptions)
                              if f.name != "num_streams"}, num_streams=num_streams)
    if opts.stream_mode == "perutt":
        return perutt
    given = [f"--{f.name.replace('_', '-')}" for f in dataclasses.fields(PerUttOptions)
             if f.name != "num_streams" and getattr(perutt, f.name) != f.default]
    if given:
        raise UsageError(f"{', '.join(given)}: per-utterance/CSC-BPTT options, which need "
                         f"--stream-mode=perutt")
    return StreamOptions(batch_size=opts.batch_size, num_streams=num_streams)
