"""The training driver of steps/nnet/train.sh: epochs, cross-validation and the schedule.

:func:`run_schedule` does what Kaldi's steps/nnet/train_scheduler.sh does, in one process and
with the losses taken from the library (not grepped from logs); bin/nnet-train-scheduler.py is
its command line:

* CV of the starting model (``log/iter00.initial.log``), then per epoch training
  (``log/iterNN.tr.log``) from the best model so far and CV (``log/iterNN.cv.log``);
* Newbob accept/reject/halving/stop (:mod:`nnetmix.train.newbob`) or exponential decay;
* ``--dropout-schedule=0.2,0.2,0.0``: epoch N trains from ``<best>.dropout_rate<r>``, the best
  model with every <Dropout> at the N-th rate (train_scheduler.sh's nnet-copy --dropout-rate);
* models ``nnet/<base>_iterNN_learnrate<lr>_tr<loss>_cv<loss>`` (``_rejected``,
  ``_keep-lr-iters-N``), ``final.nnet`` -> ``nnet/<best>_final_`` -> ``<best>``;
* restart safety: every finished epoch atomically rewrites ``.scheduler_state.json`` (the source
  of truth: learning rate, halving, best model and loss, last epoch) and then Kaldi's
  ``.learn_rate``, ``.halving``, ``.mlp_best`` and ``.done_iterNN`` beside it. A run killed in the
  middle of an epoch restarts that epoch from the best model with the same seeds, so it ends
  with the same final model, bit for bit, as a run that was never killed.

Each epoch can instead run as its own command (``--train-cmd``, e.g. ``utils/run.py --num-tasks
2``, with ``--train-tool``, default ``nnet-train-mpi.py``): the scheduler passes the epoch's
learning rate and every training option on that tool's command line, the job writes
``log/iterNN.tr.log`` (the MPI tool's ranks ``log/iterNN.tr.rankR.log``), and the losses come
back in the tool's result file ``log/iterNN.tr.json`` (``--result-file``). The local wrapper
utils/run.py is run in this process, so an MPI epoch is ``mpiexec -n N nnet-train-mpi.py ...``
started by the scheduler itself; other wrappers (Slurm, Grid Engine) run as commands. Newbob or
exponential work the same either way. With
``--bmuf-state=true`` each epoch's model carries its BMUF checkpoint (``<model>.bmuf.npz``: W,
W_g, Delta): an epoch starts from the best model's checkpoint, a rejected epoch's is set aside
with its model, so a killed run resumes with the filter where it stood. The residuals of
compressed mixing (``<model>.mix.npz``, the tool's ``--mix-compression``), the ranks' own models
(``<model>.ranks.npz``, its ``--epoch-average=false``) and NG-SGD's state move with their model
the same way.

Every epoch reads its starting model from disk, so momentum starts at zero each epoch, as with
Kaldi's one process per epoch. The randomizer seed is the same every epoch (Kaldi passes the
same --randomizer-seed to each nnet-train-frmshuff).
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from typing import Iterator, Optional

from nnetmix.driver.dnn import dnn_epoch, read_result, write_result
from nnetmix.driver.spec import EpochFiles, EpochSpec
from nnetmix.errors import UsageError
from nnetmix.log import KaldiFormatter
from nnetmix.nnet import read_nnet
from nnetmix.options import option
from nnetmix.parallel.rank_models import RANK_MODELS_SUFFIX
from nnetmix.train.loop import Hook
from nnetmix.train.newbob import (NewbobOptions, NewbobState, exponential_lr, kaldi_round,
                                  newbob_step)
from nnetmix.train.options import TrainError
from nnetmix.train.stats import EpochStats
from nnetmix.utils.jobs import parse_job_args, run_job, run_mpi_job
from nnetmix.utils.lock import DirLock
from nnetmix.utils.rankstatus import summarise_mpi_failure
from nnetmix.utils.state import copy_file, read_json, write_json, write_text

__all__ = ["ScheduleOptions", "TrainCommandOptions", "run_schedule"]

logger = logging.getLogger(__name__)

STATE = ".scheduler_state.json"
#: the fields of STATE: a NewbobState
_STATE_FIELDS = {"learn_rate": float, "loss": float, "mlp_best": str, "halving": bool,
                 "last_iter": int, "finished": bool}


@dataclasses.dataclass
class ScheduleOptions(NewbobOptions):
    scheduler: str = option("newbob", "Learning-rate schedule: newbob (CV-driven halving) "
                            "or exponential")
    num_epochs: int = option(10, "Epochs of the exponential schedule (lr0 * 0.01^(e/(E-1)))")
    final_lr_ratio: float = option(0.01, "Exponential schedule: the last epoch's learning rate "
                                   "over the first")
    dropout_schedule: str = option("", "Dropout rates of the first N epochs, e.g. 0.2,0.2,0.0 "
                                   "(train_scheduler.sh's: each epoch trains from a copy of the "
                                   "best model with its <Dropout> rates set, later epochs keep "
                                   "the last)")

    def dropout_rates(self) -> list[str]:
        """The schedule's rates as written (they name the copies, as Kaldi's file names)."""
        rates = [r for r in self.dropout_schedule.split(",") if r] if self.dropout_schedule else []
        for r in rates:
            try:
                ok = 0.0 <= float(r) < 1.0
            except ValueError:
                ok = False
            if not ok:
                raise TrainError(f"--dropout-schedule={self.dropout_schedule}: '{r}' is not a "
                                 "rate in [0, 1)")
        return rates

    def check(self) -> None:
        super().check()
        self.dropout_rates()
        if self.scheduler not in ("newbob", "exponential"):
            raise TrainError(f"--scheduler={self.scheduler}: expected newbob or exponential")
        if self.scheduler == "exponential" and self.num_epochs < 1:
            raise TrainError(f"--num-epochs must be >= 1, got {self.num_epochs}")


@dataclasses.dataclass
class TrainCommandOptions:
    """Running each epoch as a separate command (e.g. MPI training through a job wrapper)."""

    train_cmd: str = option("", "Job wrapper that runs each epoch (training and CV) as its own "
                            "command, e.g. 'utils/run.py --num-tasks 2' (empty: in this process)")
    train_tool: str = option("nnet-train-mpi.py", "With --train-cmd: the per-epoch tool and its "
                             "own options")
    tr_tool_opts: str = option("", "With --train-cmd: options for the tool on the training "
                               "set only")
    cv_tool_opts: str = option("", "With --train-cmd: options for the tool on the CV set only")
    bmuf_state: bool = option(False, "With --train-cmd: keep a BMUF checkpoint with each epoch's "
                              "model (<model>.bmuf.npz), passed to the tool as --bmuf-state")
    pass_epoch: bool = option(True, "With --train-cmd: give the tool --epoch=N (nnet-train-mpi.py "
                              "seeds its per-epoch data partition with it; nnet-train-frmshuff.py "
                              "has no such option)")
    watchdog_timeout: float = option(-1.0, "With --train-cmd: the MPI tool's --watchdog-timeout "
                                     "(seconds without progress that end the job naming the rank "
                                     "that hung; 0: off; negative: adaptive, the tool's default, "
                                     "and not passed)")


@contextlib.contextmanager
def _epoch_log(path: Path, prog: str, verbose: int) -> Iterator[logging.Logger]:
    """A logger writing Kaldi-format lines to ``path`` only (one epoch's log file)."""
    log = logging.getLogger(f"nnetmix.train.epoch.{path.name}")
    log.propagate = False
    log.setLevel(logging.INFO - max(0, verbose))
    fh = logging.FileHandler(path, mode="w", encoding="utf-8")
    fh.setFormatter(KaldiFormatter(prog))
    log.addHandler(fh)
    try:
        yield log
    finally:
        log.removeHandler(fh)
        fh.close()


def _symlink_atomic(target: str, link: Path) -> None:
    tmp = link.with_name(link.name + ".tmp")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(target, tmp)
    os.replace(tmp, link)


class _Run:
    def __init__(self, mlp_init: str, feats_tr: str, feats_cv: str, labels_tr: str,
                 labels_cv: str, exp_dir: str, spec: EpochSpec, sched: ScheduleOptions,
                 hook: Optional[Hook], verbose: int, command: Optional[TrainCommandOptions]):
        self.command = command if command is not None and command.train_cmd else None
        self.mlp_init = mlp_init
        self.feats = {"tr": feats_tr, "cv": feats_cv}
        self.labels = {"tr": labels_tr, "cv": labels_cv}
        self.dir = Path(exp_dir)
        self.spec = spec
        self.sched = sched
        self.hook = hook
        self.verbose = verbose
        base = Path(mlp_init).name
        self.base = base.rsplit(".", 1)[0] if "." in base else base

    # -- epochs ------------------------------------------------------------------------------
    def epoch(self, model: str, which: str, log_name: str, lr: float = 0.0,
              out: Optional[Path] = None, it: int = 0) -> EpochStats:
        if self.command is not None:
            return self.external_epoch(model, which, log_name, lr, out, it)
        cv = which == "cv"
        with _epoch_log(self.dir / "log" / log_name, "nnet-train-frmshuff.py", self.verbose) as log:
            log.info("model %s, features %s, targets %s", model, self.feats[which],
                     self.labels[which])
            res = dnn_epoch(None, self.spec.for_pass(lr, cv),
                            EpochFiles(self.feats[which], self.labels[which], model,
                                       None if out is None else str(out)),
                            log=log, hook=None if cv else self.hook)
            write_result(str((self.dir / "log" / log_name).with_suffix(".json")), res)
            st = res.stats
            log.info("%s", st.summary_line())
            log.info("%s", st.report())
            log.info("%s", st.time_split())
        return st

    def external_epoch(self, model: str, which: str, log_name: str, lr: float,
                       out: Optional[Path], it: int) -> EpochStats:
        """One epoch as ``<train-cmd> log/NAME <train-tool> --opts... feats labels model [out]``;
        the statistics come back in the tool's result file ``log/NAME.json``."""
        c = self.command
        cv = which == "cv"
        log = self.dir / "log" / log_name
        result = log.with_suffix(".json")
        if result.exists():
            result.unlink()  # left by a killed run of this epoch
        opts = self.spec.for_pass(lr, cv).tool_options() + [f"--result-file={result}"]
        if c.pass_epoch:
            opts.append(f"--epoch={it}")
        if c.watchdog_timeout >= 0:
            opts.append(f"--watchdog-timeout={c.watchdog_timeout:g}")
        opts += shlex.split(c.cv_tool_opts if cv else c.tr_tool_opts)
        if c.bmuf_state and not cv and out is not None:
            opts.append(f"--bmuf-state={self.bmuf_state_for(model, out)}")
        args = [self.feats[which], self.labels[which], model] + ([str(out)] if not cv else [])
        tool = shlex.split(c.train_tool) + opts + args
        t0 = time.time()
        rc = _run_command(shlex.split(c.train_cmd), str(log), tool, it, which)
        if rc != 0:
            what = "cross-validation" if cv else "training"
            failure = summarise_mpi_failure(str(log), rc, since=t0)
            if failure.records or failure.launcher:  # an MPI job: name the rank first
                raise TrainError(f"epoch {it} {what}: {failure.text()}")
            text = log.read_text(errors="replace") if log.exists() else ""
            errs = [ln for ln in text.splitlines() if ln.startswith("ERROR")]
            raise TrainError(f"{log}: the {what} command failed (exit code {rc})"
                             + (f": {errs[0]}" if errs else ""))
        if out is not None and not out.exists():
            raise TrainError(f"{log}: the training command wrote no model {out}")
        return read_result(str(result))

    def bmuf_state_for(self, model: str, out: Path) -> Path:
        """The BMUF checkpoint of the epoch writing ``out``, seeded with ``model``'s (or none)."""
        src, dst = Path(model + ".bmuf.npz"), Path(str(out) + ".bmuf.npz")
        if src.exists():
            copy_file(src, dst)
        elif dst.exists():
            dst.unlink()  # left by a killed run of this epoch
        return dst

    @staticmethod
    def with_dropout_rate(model: str, rate: str) -> str:
        """``<model>.dropout_rate<rate>``: ``model`` with every <Dropout> at ``rate``."""
        out = f"{model}.dropout_rate{rate}"
        nnet = read_nnet(model)
        nnet.set_dropout_rate(float(rate), logger)
        nnet.write(out)
        return out

    @staticmethod
    def move_model(src: Path, dst) -> None:
        """Rename a model and the state beside it (BMUF checkpoint, NG-SGD state, the residuals
        of compressed mixing, the ranks' own models of --epoch-average=false): the state first and the model last, so a model in place implies
        its state; a stale state of ``dst``'s with no counterpart beside ``src`` is removed."""
        for suffix in (".bmuf.npz", ".ngsgd.npz", ".mix.npz", RANK_MODELS_SUFFIX):
            state, old = Path(str(src) + suffix), Path(str(dst) + suffix)
            if state.exists():
                os.replace(state, old)
            elif old.exists():
                old.unlink()
        os.replace(src, dst)

    # -- state -------------------------------------------------------------------------------
    def load(self) -> Optional[NewbobState]:
        p = self.dir / STATE
        if not p.exists():
            return None
        d = read_json(p, "scheduler state", _STATE_FIELDS,
                      "remove it to train again from the first epoch")
        return NewbobState(**{name: d[name] for name in _STATE_FIELDS})

    def save(self, st: NewbobState) -> None:
        write_json(self.dir / STATE, dataclasses.asdict(st))
        write_text(self.dir / ".learn_rate", "%g\n" % st.learn_rate)
        write_text(self.dir / ".halving", "%d\n" % int(st.halving))
        write_text(self.dir / ".mlp_best", st.mlp_best + "\n")
        (self.dir / (".done_iter%02d" % st.last_iter)).touch()

    # -- the schedule ------------------------------------------------------------------------
    def run(self) -> str:
        d = self.dir
        (d / "log").mkdir(parents=True, exist_ok=True)
        (d / "nnet").mkdir(parents=True, exist_ok=True)
        final = d / "final.nnet"
        if final.exists():
            logger.info("'%s' exists, skipping training", final)
            return str(final)
        state = self.load()
        if state is None:
            st = self.epoch(self.mlp_init, "cv", "iter00.initial.log")
            state = NewbobState(learn_rate=kaldi_round(self.spec.update.learn_rate),
                                loss=kaldi_round(st.avg_loss), mlp_best=self.mlp_init)
            self.log_prerun(st)
            self.save_initial(state)
        else:
            logger.info("resuming after epoch %d: best model %s (CV loss %g), learn rate %g%s",
                        state.last_iter, state.mlp_best, state.loss, state.learn_rate,
                        ", halving" if state.halving else "")
            self.replay(state)
        total = self.sched.max_iters if self.sched.scheduler == "newbob" else self.sched.num_epochs
        it = state.last_iter
        while not state.finished and it < total:
            it += 1
            self.one_epoch(state, it, total)
        if state.mlp_best == self.mlp_init:
            raise TrainError(f"{d}: no epoch improved on the initial model {self.mlp_init} "
                             "(error training the neural network; lower the learning rate?)")
        if not Path(state.mlp_best).is_file():  # never a final.nnet that points nowhere
            raise TrainError(f"{d / STATE}: the best model {state.mlp_best} is missing (restore "
                             f"it, or remove {d / STATE} to train again from the first epoch)")
        best = Path(state.mlp_best).name
        _symlink_atomic(best, d / "nnet" / f"{best}_final_")
        _symlink_atomic(f"nnet/{best}_final_", final)
        logger.info("Succeeded training the Neural Network : %s", final)
        return str(final)

    def replay(self, state: NewbobState) -> None:
        """The PRERUN and ITERATION lines of the epochs before a resume, again, from their
        result files (log/iterNN.{tr,cv}.json) and kept models' names: the job wrapper writes
        this log afresh, and whoever reads it (utils, bench/experiments) finds the whole
        schedule, as an uninterrupted run leaves it."""
        d = self.dir
        try:
            st = read_result(str(d / "log" / "iter00.initial.json"))
            self.log_prerun(st)
            for it in range(1, state.last_iter + 1):
                tr = read_result(str(d / "log" / ("iter%02d.tr.json" % it)))
                cv = read_result(str(d / "log" / ("iter%02d.cv.json" % it)))
                model = self.epoch_model(it)
                lr = float(model.name.split("_learnrate", 1)[1].split("_", 1)[0])
                verdict = ("rejected" if model.name.endswith("_rejected") else
                           "kept" if self.sched.scheduler == "exponential" else "accepted")
                logger.info("%snnet %s (%s)", self.iteration_line(it, lr, tr, cv), verdict,
                            model.name)
        except (TrainError, ValueError, IndexError) as e:
            logger.warning("the lines of the epochs before the resume are in the earlier log "
                           "only: %s", e)

    def epoch_model(self, it: int) -> Path:
        """Epoch ``it``'s model as the schedule named it (accepted, rejected or kept)."""
        names = [p for p in (self.dir / "nnet").glob("%s_iter%02d_learnrate*" % (self.base, it))
                 if not p.name.endswith(("_final_", ".npz")) and ".dropout_rate" not in p.name]
        if len(names) != 1:
            raise TrainError(f"{self.dir / 'nnet'}: {len(names)} models of epoch {it}")
        return names[0]

    @staticmethod
    def log_prerun(st: EpochStats) -> None:
        logger.info("CROSSVAL PRERUN AVG.LOSS %.4f (Xent), FRAME_ACCURACY %.2f%%",
                    st.avg_loss, st.frame_accuracy)

    @staticmethod
    def iteration_line(it: int, lr: float, tr: EpochStats, cv: EpochStats) -> str:
        return (f"ITERATION {it:02d}: TRAIN AVG.LOSS {tr.avg_loss:.4f}, (lrate{lr:g}), "
                f"CROSSVAL AVG.LOSS {cv.avg_loss:.4f}, FRAME_ACCURACY tr {tr.frame_accuracy:.2f}% "
                f"cv {cv.frame_accuracy:.2f}%, ")

    def save_initial(self, state: NewbobState) -> None:
        write_json(self.dir / STATE, dataclasses.asdict(state))

    def one_epoch(self, state: NewbobState, it: int, total: int) -> None:
        d = self.dir
        sched = self.sched
        if sched.scheduler == "exponential":
            lr = exponential_lr(self.spec.update.learn_rate, it - 1, sched.num_epochs,
                                sched.final_lr_ratio)
            state.learn_rate = lr
        lr = state.learn_rate
        rates = sched.dropout_rates()
        if it <= len(rates):  # train_scheduler.sh: nnet-copy --dropout-rate, then train that
            state.mlp_best = self.with_dropout_rate(state.mlp_best, rates[it - 1])
        nxt = d / "nnet" / ("%s_iter%02d" % (self.base, it))
        tr = self.epoch(state.mlp_best, "tr", "iter%02d.tr.log" % it, lr, out=nxt, it=it)
        cv = self.epoch(str(nxt), "cv", "iter%02d.cv.log" % it, it=it)
        name = "%s_learnrate%g_tr%.4f_cv%.4f" % (nxt.name, lr, tr.avg_loss, cv.avg_loss)
        line = self.iteration_line(it, lr, tr, cv)
        if sched.scheduler == "exponential":
            dest = d / "nnet" / name
            self.move_model(nxt, dest)
            state.mlp_best, state.loss, state.last_iter = str(dest), kaldi_round(cv.avg_loss), it
            logger.info("%snnet kept (%s)", line, dest.name)
        else:
            keep = it <= sched.keep_lr_iters
            accepted_name = str(d / "nnet" / (name + (f"_keep-lr-iters-{sched.keep_lr_iters}"
                                                       if keep else "")))
            dec = newbob_step(state, sched, it, cv.avg_loss, accepted_name)
            if dec.accepted:
                self.move_model(nxt, accepted_name)
                logger.info("%snnet accepted (%s)", line, Path(accepted_name).name)
            else:
                rej = d / "nnet" / (name + "_rejected")
                self.move_model(nxt, rej)
                logger.info("%snnet rejected (%s)", line, rej.name)
            if dec.message:
                logger.info("%s", dec.message)
        self.save(state)


def run_schedule(mlp_init: str, feats_tr: str, feats_cv: str, labels_tr: str, labels_cv: str,
                 exp_dir: str, spec: EpochSpec, sched: ScheduleOptions, *,
                 hook: Optional[Hook] = None, verbose: int = 1,
                 command: Optional[TrainCommandOptions] = None) -> str:
    """Train ``mlp_init`` into ``exp_dir/final.nnet`` (see the module docstring); returns its path.

    ``spec``: how every epoch trains, its learning rate the first epoch's (each epoch gets the
    schedule's rate and its pass, :meth:`~nnetmix.driver.spec.EpochSpec.for_pass`).
    Skips everything when final.nnet exists; resumes after the last finished epoch otherwise.
    Holds the lock of ``exp_dir`` (:mod:`nnetmix.utils.lock`) throughout: another job there
    raises DirLockedError before anything is written.
    ``command``: run each epoch as its own command (e.g. MPI training; module docstring).
    """
    sched.check()
    spec.check()
    fresh, made = not Path(exp_dir).exists(), False
    try:
        with DirLock(exp_dir):  # one job per directory; re-entrant under steps/nnet/train.sh's
            made = fresh  # (not when another job holds the directory)
            return _Run(mlp_init, feats_tr, feats_cv, labels_tr, labels_cv, exp_dir, spec,
                        sched, hook, verbose, command).run()
    except BaseException:
        # a run that made exp_dir and failed before its first state was saved (a bad initial
        # model or CV data) leaves nothing; once a state is saved, the run can be resumed
        if made and not (Path(exp_dir) / STATE).exists():
            shutil.rmtree(exp_dir, ignore_errors=True)
        raise


def _run_command(wrapper: list[str], log: str, tool: list[str], it: int, which: str) -> int:
    """Run one epoch's tool through the job wrapper. The local wrapper (utils/run.py) is run in
    this process: ``mpiexec -n N tool ...`` starts straight from here (the scheduler, mpiexec and
    the tool are the only processes between a recipe and the mixing code); any other wrapper
    (utils/slurm.py, utils/queue.py, Kaldi's run.pl) is run as a command."""
    logger.info("epoch %d %s: %s", it, which,
                " ".join(shlex.quote(a) for a in wrapper + [log] + tool))
    if wrapper and os.path.basename(wrapper[0]) == "run.py":
        try:
            spec = parse_job_args(wrapper[1:] + [log] + tool, "run.py")
        except UsageError as e:
            raise TrainError(f"--train-cmd={' '.join(wrapper)}: {e}") from None
        if spec.var is None:
            prog = shutil.which(tool[0]) or tool[0]
            if spec.num_tasks:
                return run_mpi_job([prog] + tool[1:], spec.num_tasks, log, spec.num_threads)
            return run_job([prog] + tool[1:], log, spec.num_threads)
    return subprocess.run(wrapper + [log] + tool, stdin=subprocess.DEVNULL).returncode
