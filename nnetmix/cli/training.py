"""What the training tools' command lines share: nnet-train-frmshuff.py's options (which
nnet-train-mpi.py takes too, so a recipe switches between them by name alone), their argument
check, and the way an MPI tool runs (one copy of the command line, per-rank logs, a failing
rank ending the job with its name)."""
from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Callable, Iterator, Sequence

from nnetmix.utils.mpi_init import MPI  # MPI_Init under a deadline

from nnetmix.cli.binary import OptionParser, run_tool
from nnetmix.driver import EpochFiles, EpochSpec, setup_rank_logging
from nnetmix.errors import NnetmixError, UsageError
from nnetmix.nnet import NnetTrainOptions
from nnetmix.parallel.failure import launcher_rank, run_job
from nnetmix.train.options import OptimizerOptions, TrainOptions
from nnetmix.utils.lock import DirLockedError, lock_dir

__all__ = ["register_frmshuff_options", "register_epoch_options", "check_epoch_args",
           "epoch_spec", "epoch_files", "frmshuff_epoch", "log_epoch", "run_mpi_tool"]


def register_frmshuff_options(p: OptionParser) -> None:
    """Register nnet-train-frmshuff.py's options on ``p``."""
    register_epoch_options(p)
    p.register_group(OptimizerOptions)
    p.register("ngsgd-state-in", "", "NG-SGD state to start from (default: <model-in>.ngsgd.npz "
               "when that file exists)")
    p.register("ngsgd-state-out", "", "Where to write the NG-SGD state (default: "
               "<model-out>.ngsgd.npz; over MPI, written by rank 0)")


def register_epoch_options(p: OptionParser) -> None:
    """The options every cross-entropy epoch tool takes (nnet-train-frmshuff.py's, less the
    optimizer's): the update, the pass, the files and the backend, all of which a scheduler
    passes to its --train-tool."""
    p.register_group(NnetTrainOptions)
    p.register_group(TrainOptions)
    p.register("binary", True, "Write output in binary mode")
    p.register("feature-transform", "", "Feature transform in Nnet format")
    p.register("backend", "cpu", "Compute backend: cpu, cuda or auto")
    p.register("result-file", "", "Write the epoch's statistics (loss, frame accuracy, counts) "
               "to this JSON file, which a scheduler reads instead of the log")
    p.register("targets-kind", "post", "Targets table kind: post (pdf posteriors, as ali-to-post "
               "writes) or ali (pdf alignments as int vectors, as ali-to-pdf writes)")


def check_epoch_args(parser: OptionParser, opts: Any, args: list[str]) -> None:
    """Training takes <model-out>, cross-validation does not (Kaldi's nnet-train-frmshuff)."""
    want = 3 + (0 if opts.cross_validate else 1)
    if len(args) != want:
        sys.stderr.write(parser.format_usage())
        raise UsageError(f"wrong number of arguments: {len(args)} (expected {want} with "
                         f"--cross-validate={'true' if opts.cross_validate else 'false'})")


def epoch_spec(parser: OptionParser, opts: Any, **fields: Any) -> EpochSpec:
    """The :class:`EpochSpec` of a tool's options: :func:`register_epoch_options`' (or the
    scheduler's, which has the same names); ``fields``: the tool's own parts (optimizer,
    mixing, streams)."""
    return EpochSpec(train=parser.group(TrainOptions, opts),
                     update=parser.group(NnetTrainOptions, opts),
                     feature_transform=opts.feature_transform, backend=opts.backend,
                     targets_kind=opts.targets_kind, binary=opts.binary, **fields)


def epoch_files(opts: Any, args: list[str], **paths: str) -> EpochFiles:
    """The :class:`EpochFiles` of an epoch tool's arguments (<model-out> optional) and its
    --result-file; ``paths``: the tool's other files (NG-SGD's state)."""
    return EpochFiles(args[0], args[1], args[2], args[3] if len(args) > 3 else None,
                      result_file=opts.result_file, **paths)


def frmshuff_epoch(parser: OptionParser, opts: Any, args: list[str],
                   **fields: Any) -> tuple[EpochSpec, EpochFiles]:
    """The epoch of :func:`register_frmshuff_options`' command line: the epoch options, the
    optimizer and its state files; ``fields``: the tool's own parts of the spec (mixing,
    streams)."""
    spec = epoch_spec(parser, opts, optimizer=parser.group(OptimizerOptions, opts), **fields)
    return spec, epoch_files(opts, args, ngsgd_state_in=opts.ngsgd_state_in,
                             ngsgd_state_out=opts.ngsgd_state_out)


def log_epoch(log: Any, stats: Any) -> None:
    """An epoch tool's closing lines: Kaldi's summary, AvgLoss, progress and FRAME_ACCURACY
    lines, then the time split."""
    log.info("%s", stats.summary_line())
    log.info("%s", stats.report())
    log.info("%s", stats.time_split())


@contextlib.contextmanager
def _output_lock(comm: Any, target: str | None) -> Iterator[bool]:
    """Rank 0 holds the lock of ``target``'s directory; yields whether every rank may go on
    (rank 0 raises DirLockedError itself, the others yield False and exit 1 quietly)."""
    lock, err = None, None
    if target and (target == "-" or target.strip().startswith("|") or target.endswith("|")):
        target = None  # a pipe or stdout: no directory is written
    if target and comm.Get_rank() == 0:
        try:
            lock = lock_dir(os.path.dirname(os.path.abspath(target)))
        except DirLockedError as e:
            err = e
    if target and comm.Get_size() > 1:
        failed = comm.bcast(err is not None, root=0)
    else:
        failed = err is not None
    if err is not None:
        raise err
    try:
        yield not failed
    finally:
        if lock is not None:
            lock.release()


def run_mpi_tool(parser: OptionParser, nargs: tuple[int, int],
                 work: Callable[[Any, Any, list[str]], int | None],
                 argv: Sequence[str] | None = None,
                 check: Callable[[Any, list[str]], None] | None = None,
                 output: Callable[[Any, list[str]], str | None] | None = None) -> int:
    """:func:`run_tool` for a tool run as ``mpiexec -n N tool ...``: only rank 0 echoes the
    command line, each rank logs to its own file (``--rank-log``, or beside the job log), and
    ``work(comm, opts, args)`` runs under :func:`run_job`, so a rank that fails ends the job at
    once, named. ``check(opts, args)`` runs first, before any rank starts work or takes a lock;
    a command line it refuses is one ERROR line, rank 0's (the other ranks, given the same
    command line, exit 1 without repeating it; were rank k alone given a bad one, mpiexec names
    it as the rank that exited).
    ``output(opts, args)``: the file the tool writes (None: nothing); rank 0 holds the lock of
    its directory (:mod:`nnetmix.utils.lock`) for the whole run, and when another job holds it
    every rank stops before any work, rank 0 with the ERROR line naming that job."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if launcher_rank() > 0:  # one copy of the command line in the job log, from rank 0
        argv = ["--print-args=false"] + argv

    def body(opts, args) -> int:
        if check is not None:
            try:
                check(opts, args)
            except NnetmixError:
                if launcher_rank() > 0:  # rank 0 runs the same check on the same command
                    return 1             # line and prints the one ERROR line
                raise
        comm = MPI.COMM_WORLD
        setup_rank_logging(comm, parser.prog, opts.verbose, opts.rank_log)
        target = output(opts, args) if output is not None else None
        with _output_lock(comm, target) as held:
            if not held:
                return 1
            return run_job(comm, lambda: work(comm, opts, args))

    return run_tool(parser, nargs, body, argv)
