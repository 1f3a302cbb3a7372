"""One epoch as data: how it trains (:class:`EpochSpec`) and what it reads and writes
(:class:`EpochFiles`).

The epoch tools build both from their command line (nnetmix.cli.training), the drivers take
them whole (:func:`~nnetmix.driver.dnn.dnn_epoch`,
:func:`~nnetmix.driver.multistream.multistream_epoch`), and the scheduler
(:func:`~nnetmix.driver.scheduler.run_schedule`) holds one spec for all its epochs: it gives each
epoch its learning rate and pass (:meth:`EpochSpec.for_pass`) and its files, in process or as
the tool's command line (:meth:`EpochSpec.tool_options`)::

    spec = EpochSpec(TrainOptions(minibatch_size=256), NnetTrainOptions(learn_rate=0.008),
                     mixing=MpiTrainOptions(average_every=10))
    res = dnn_epoch(comm, spec, EpochFiles("scp:feats.scp", "ark:post.ark", "nnet.in",
                                           "nnet.out"))

The split follows the scheduler: the spec is what every epoch of a schedule shares, the files
are what changes from one epoch to the next.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional

from nnetmix.driver.batches import StreamOpts
from nnetmix.nnet import NnetTrainOptions
from nnetmix.parallel.options import MpiTrainOptions
from nnetmix.train.options import OptimizerOptions, TrainOptions

__all__ = ["EpochSpec", "EpochFiles"]


def _option_text(v: Any) -> str:
    """A value as a tool's command line spells it (Kaldi's booleans: true|false)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


@dataclasses.dataclass
class EpochSpec:
    """How an epoch trains: the option groups and options of nnet-train-frmshuff.py (which
    nnet-train-mpi.py and the multistream tools take too) and the MPI tool's own."""

    train: TrainOptions = dataclasses.field(default_factory=TrainOptions)
    update: NnetTrainOptions = dataclasses.field(default_factory=NnetTrainOptions)
    optimizer: OptimizerOptions = dataclasses.field(default_factory=OptimizerOptions)
    #: N ranks: how they share the data and mix (None: the defaults); one worker: unused
    mixing: Optional[MpiTrainOptions] = None
    #: a recurrent network trains in multi-stream steps of these (:mod:`nnetmix.driver.batches`);
    #: without them it is refused, as nnet-train-frmshuff.py refuses it
    streams: Optional[StreamOpts] = None
    #: a feed-forward network too trains in stream steps (the multistream tools)
    streams_always: bool = False
    feature_transform: str = ""     #: nnet1 network applied to the features of each utterance
    backend: str = "cpu"            #: cpu, cuda or auto
    targets_kind: str = "post"      #: post (pdf posteriors) or ali (pdf alignments)
    binary: bool = True             #: write the model in binary mode

    def check(self) -> None:
        self.train.check()
        self.update.check()

    def for_pass(self, learn_rate: float, cross_validate: bool) -> "EpochSpec":
        """This spec at ``learn_rate``, training or cross-validating (a scheduler's epoch)."""
        return dataclasses.replace(
            self, train=dataclasses.replace(self.train, cross_validate=cross_validate),
            update=dataclasses.replace(self.update, learn_rate=learn_rate))

    def tool_options(self) -> list[str]:
        """The spec as an epoch tool's options (``--learn-rate=0.008 ...``): the update's and
        the pass's groups and the files' options, what every epoch tool takes
        (nnetmix.cli.training.register_epoch_options); the optimizer, mixing and stream
        options are the tool's own, which a scheduler leaves to the user (--train-tool)."""
        values = {**dataclasses.asdict(self.update), **dataclasses.asdict(self.train),
                  "feature_transform": self.feature_transform, "backend": self.backend,
                  "targets_kind": self.targets_kind, "binary": self.binary}
        return [f"--{k.replace('_', '-')}={_option_text(v)}" for k, v in values.items()]


@dataclasses.dataclass
class EpochFiles:
    """What one epoch reads and writes: an epoch tool's arguments and its per-epoch files."""

    feats: str                      #: feature rspecifier
    targets: str                    #: targets rspecifier (pdf posteriors or alignments)
    model_in: str
    model_out: Optional[str] = None  #: None: nothing written (cross-validation)
    ngsgd_state_in: str = ""        #: NG-SGD state to start from ('': <model_in>.ngsgd.npz)
    ngsgd_state_out: str = ""       #: where NG-SGD's state goes ('': <model_out>.ngsgd.npz)
    result_file: str = ""           #: the epoch's statistics as JSON (:func:`write_result`)
