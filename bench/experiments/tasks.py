# Copyright 2026 nnetmix authors. Apache 2.0.
"""The recipes an experiment runs on, and how a :class:`~bench.experiments.spec.RunSpec` becomes
that recipe's command line.

A task is one ``egs/<corpus>/s5`` recipe. Its prerequisites (corpus, features, GMMs,
alignments, fMLLR features, RBMs) are the recipe's own stages, run once per size in a work
directory outside the clone; each run is then the recipe's DNN training + decoding stages with
the run's options and its id as ``--dnn-tag``, so runs never share a directory.

harbour's prerequisites are stages 0-3 and 5-9 (stage 4, the monophone's decoding, is not
needed; stage 8's tri3 decoding gives the test speakers' fMLLR transforms and the graphs the DNN
decodes with); its runs are stages 10-11, decoded with the word-pair grammar and the trigram.
digits' prerequisites are stages 0-7 (through tri1's alignments and the RBMs) and its runs stages
8-9 (one test condition, tri1's graph).
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from bench.experiments.spec import PlanError, RunSpec

__all__ = ["Size", "Task", "TASKS", "get_task", "CSC", "CSC_TRAIN", "CSC_DECODE"]

#: seed 002's context-sensitive chunks (left context, chunk, right context), for training (the
#: tool's options) and decoding (steps/nnet/decode.sh's, with seed 002's 32-frame overlap):
#: egs/harbour/s5's local/run_blstm.sh settings
CSC = (21, 64, 21)
CSC_TRAIN = (f"--chunk-size={CSC[1]} --chunk-left-context={CSC[0]} "
             f"--chunk-right-context={CSC[2]}")
CSC_DECODE = (f"--chunk-size {CSC[1]} --chunk-left-context {CSC[0]} "
              f"--chunk-right-context {CSC[2]} --chunk-overlap 32")


@dataclasses.dataclass(frozen=True)
class Size:
    """One size of a task: the run.sh options of its prerequisites."""

    name: str
    options: tuple[str, ...]     #: run.sh options every stage of this size gets
    train_utts: int              #: training utterances (a run may not have more workers)
    about: str                   #: one line for the tables' header


@dataclasses.dataclass(frozen=True)
class Task:
    """One recipe: where it is, which stages make the prerequisites and which make a run."""

    name: str
    recipe: str                          #: relative to the repository root
    prefix_stages: tuple[tuple[int, int], ...]   #: (stage, stop-stage) pairs, in order
    run_stages: tuple[int, int]
    decodes: tuple[str, ...]             #: a run's decode directories (one per test condition)
    inputs: tuple[str, ...]              #: RunSpec.input values the recipe has
    networks: tuple[str, ...]            #: RunSpec.network values the recipe has
    sizes: dict
    #: the test set's per-utterance conditions in the work directory (a Kaldi-style table:
    #: utterance, then fields), kept in the store for the tables; "" where the corpus has none
    conditions: str = ""

    def size(self, name: str) -> Size:
        if name not in self.sizes:
            raise PlanError(f"task {self.name}: unknown size {name!r} (expected "
                            f"{', '.join(self.sizes)})")
        return self.sizes[name]

    def check(self, spec: RunSpec, where: str) -> None:
        """The spec's own check, and what this recipe can run."""
        spec.check(where, max_workers=self.size(spec.size).train_utts)
        if spec.input not in self.inputs:
            raise PlanError(f"{where}: input {spec.input!r}: {self.name} has "
                            f"{', '.join(self.inputs)}")
        if spec.network not in self.networks:
            raise PlanError(f"{where}: network {spec.network!r}: {self.name} has "
                            f"{', '.join(self.networks)}")
        if spec.network == "blstm" and spec.optimizer != "sgd":
            raise PlanError(f"{where}: a blstm trains with optimizer \"sgd\" (steps/nnet/"
                            f"train.sh has no NG-SGD for recurrent networks)")

    def prefix_commands(self, size: str) -> list[list[str]]:
        """run.sh argument lists that build the prerequisites, in order."""
        opts = list(self.size(size).options)
        return [opts + ["--stage", str(a), "--stop-stage", str(b)] for a, b in self.prefix_stages]

    def run_args(self, spec: RunSpec, tag: str) -> list[str]:
        """run.sh options that train and decode ``spec`` into ``exp/*_<tag>``."""
        train = ["--use-mpi", "true", "--learn-rate", f"{spec.learn_rate:g}",
                 "--scheduler", spec.scheduler, "--seed", str(spec.seed)]
        if spec.network != "blstm":        # a BLSTM's batches are its CSC chunks' streams
            train += ["--minibatch-size", str(spec.minibatch)]
        if spec.scheduler == "exponential":
            train += ["--num-epochs", str(spec.epochs)]
        else:
            train += ["--max-iters", str(spec.max_epochs)]
        if spec.mixing in ("butterfly", "ring"):
            train += ["--mixing", spec.mixing]
        elif spec.mixing.startswith("bmuf"):
            train += ["--bmuf", "true", "--bmuf-nesterov",
                      "true" if spec.mixing == "bmuf-nbm" else "false",
                      "--block-lr", f"{spec.block_lr:g}"]
            if spec.block_momentum is not None:
                train += ["--block-momentum", f"{spec.block_momentum:g}"]
        if spec.mix_compression != "none":
            train += ["--mix-compression", spec.mix_compression]
        if spec.overlap_mixing:
            train += ["--overlap-mixing", "true"]
        if not spec.epoch_average:
            train += ["--epoch-average", "false"]
        if spec.scale_lr is not None:
            train += ["--scale-lr-by-workers", "true" if spec.scale_lr else "false"]
        if spec.max_change is not None:     # one word: --dnn-opts is split on spaces
            train += ["--ngsgd-opts", f"--max-change-per-sample={spec.max_change:g}"]
        a, b = self.run_stages
        args = list(self.size(spec.size).options) + [
            "--stage", str(a), "--stop-stage", str(b),
            "--pretrain", "true" if spec.init == "rbm" else "false",
            "--dnn-num-workers", str(spec.workers),
            "--dnn-average-every", str(spec.average_every),
            "--dnn-optimizer", spec.optimizer, "--dnn-tag", tag]
        if self.name == "harbour":
            args += ["--dnn-input", spec.input]
            if spec.network == "relu":
                args += ["--dnn-activation", "relu"]
            elif spec.network == "blstm":
                args += ["--dnn-type", "blstm", "--rnn-num-workers", str(spec.workers),
                         "--rnn-learn-rate", f"{spec.learn_rate:g}",
                         "--rnn-train-opts", CSC_TRAIN, "--rnn-decode-opts", CSC_DECODE]
        return args + ["--dnn-opts", " ".join(train)]


def _harbour_sizes() -> dict:
    return {
        # The recipe's defaults: 5100 training utterances of 100 speakers, 1200 test utterances
        # (10,993 words) of 40 others; the DNN 2 x 512 sigmoid on +/-5 frames of tri3's fMLLR
        # features, RBM-pretrained, 1800-leaf tri3 targets.
        "full": Size("full", (), 5100, "5100 training / 1200 test utterances (10,993 words)"),
        # Plumbing only (an opt-in test): every stage on a few utterances.
        "smoke": Size("smoke", ("--num-train-utts", "60", "--num-test-utts", "16",
                                "--num-train-spk", "6", "--num-test-spk", "4",
                                "--num-lm-text", "200", "--noise-seconds", "5",
                                "--mono-gauss", "200", "--mono-subset", "0",
                                "--tri1-leaves", "60", "--tri1-gauss", "300",
                                "--tri2-leaves", "60", "--tri2-gauss", "300",
                                "--tri3-leaves", "60", "--tri3-gauss", "300",
                                "--dnn-hid-dim", "64"),
                      60, "60 training / 16 test utterances (plumbing only)"),
    }


def _digits_sizes() -> dict:
    return {
        "full": Size("full", (), 2000, "2000 training / 1000 test utterances"),
        "quick": Size("quick", ("--num-train-utts", "1000", "--num-test-utts", "100"), 1000,
                      "1000 training / 100 test utterances"),
        "smoke": Size("smoke", ("--num-train-utts", "100", "--num-test-utts", "30",
                                "--num-train-spk", "10", "--num-test-spk", "5",
                                "--tri1-leaves", "60", "--tri1-gauss", "300"), 100,
                      "100 training / 30 test utterances (plumbing only)"),
    }


TASKS = {
    "harbour": Task("harbour", "egs/harbour/s5", ((0, 3), (5, 9)), (10, 11),
                    ("decode_test_wp", "decode_test_tg"), ("fmllr", "mfcc"),
                    ("dnn", "relu", "blstm"),
                    _harbour_sizes(), conditions="data/test/utt2cond"),
    "digits": Task("digits", "egs/digits/s5", ((0, 7),), (8, 9), ("decode_test",), ("mfcc",),
                   ("dnn",), _digits_sizes()),
    # The speed benchmarks (bench/plans/speed.toml): [[bench]] entries only, no recipe and no
    # runs; their tables are bench/RESULTS.md (bench/experiments/speed_tables.py).
    "speed": Task("speed", "", (), (0, 0), (), (), (),
                  {"full": Size("full", (), 0, "the speed benchmarks (no recipe)")}),
}


def get_task(name: str, recipe: Optional[str] = None) -> Task:
    """The task called ``name``; ``recipe`` points it at another recipe directory (tests)."""
    if name not in TASKS:
        raise PlanError(f"unknown task {name!r} (expected {', '.join(TASKS)})")
    task = TASKS[name]
    return dataclasses.replace(task, recipe=recipe) if recipe else task
