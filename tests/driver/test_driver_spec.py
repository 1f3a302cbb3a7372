"""EpochSpec and EpochFiles: the one vocabulary of an epoch between the tools, the drivers and
the scheduler (the spec a scheduler renders is the spec the tool parses back)."""
import dataclasses

import pytest
from helpers import load_bin

from nnetmix.cli.training import epoch_files, epoch_spec, frmshuff_epoch
from nnetmix.driver import EpochFiles, EpochSpec
from nnetmix.nnet import NnetTrainOptions
from nnetmix.train import TrainOptions
from nnetmix.train.options import OptimizerOptions, TrainError

SPEC = EpochSpec(TrainOptions(minibatch_size=16, randomizer_seed=3, cross_validate=True,
                              prefetch=False),
                 NnetTrainOptions(learn_rate=0.02, momentum=0.5, l2_penalty=1e-5),
                 feature_transform="exp/final.feature_transform", targets_kind="ali",
                 binary=False)


@pytest.mark.parametrize("tool", ["nnet-train-frmshuff.py", "nnet-train-mpi.py",
                                  "nnet-train-multistream.py",
                                  "nnet-train-multistream-perutt.py"])
def test_tool_options_parse_back_to_the_spec(tool):
    """What the scheduler passes its --train-tool is every epoch tool's vocabulary."""
    parser = load_bin(tool).make_parser()
    opts, args = parser.parse(SPEC.tool_options() + ["a", "b", "c"])
    assert args == ["a", "b", "c"]
    assert epoch_spec(parser, opts) == SPEC


def test_for_pass_sets_the_rate_and_the_pass_only():
    cv = SPEC.for_pass(0.5, False)
    assert cv.update.learn_rate == 0.5 and not cv.train.cross_validate
    assert dataclasses.replace(cv, train=SPEC.train, update=SPEC.update) == SPEC
    assert SPEC.update.learn_rate == 0.02 and SPEC.train.cross_validate  # a copy


def test_files_and_optimizer_from_the_command_line():
    parser = load_bin("nnet-train-frmshuff.py").make_parser()
    opts, args = parser.parse(["--optimizer=ngsgd", "--ngsgd-state-in=in.npz",
                               "--result-file=r.json", "f", "t", "m"])
    spec, files = frmshuff_epoch(parser, opts, args)
    assert spec.optimizer == OptimizerOptions(optimizer="ngsgd")
    assert files == EpochFiles("f", "t", "m", None, ngsgd_state_in="in.npz",
                               result_file="r.json")
    assert epoch_files(opts, args + ["o"]).model_out == "o"


def test_check_refuses_what_the_groups_refuse():
    with pytest.raises(TrainError):
        dataclasses.replace(SPEC, train=TrainOptions(minibatch_size=0)).check()
