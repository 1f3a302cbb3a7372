"""The command-line options nnet-train-frmshuff.py and nnet-train-mpi.py share.

The MPI tool takes every option of the single-worker one (so a recipe switches between them by
name alone); registering them in one place keeps the two in step.
"""
from __future__ import annotations

__all__ = ["register_frmshuff_options"]


def register_frmshuff_options(p) -> None:
    """Register nnet-train-frmshuff.py's options on the OptionParser ``p``."""
    from nnetmix.nnet import NnetTrainOptions
    from nnetmix.train.options import OptimizerOptions, TrainOptions

    p.register_group(NnetTrainOptions)
    p.register_group(TrainOptions)
    p.register_group(OptimizerOptions)
    p.register("ngsgd-state-in", "", "NG-SGD state to start from (default: <model-in>.ngsgd.npz "
               "when that file exists)")
    p.register("ngsgd-state-out", "", "Where to write the NG-SGD state (default: "
               "<model-out>.ngsgd.npz; over MPI, written by rank 0)")
    p.register("binary", True, "Write output in binary mode")
    p.register("feature-transform", "", "Feature transform in Nnet format")
    p.register("backend", "cpu", "Compute backend: cpu, cuda or auto")
    p.register("result-file", "", "Write the epoch's statistics (loss, frame accuracy, counts) "
               "to this JSON file, which a scheduler reads instead of the log")
    p.register("targets-kind", "post", "Targets table kind: post (pdf posteriors, as ali-to-post "
               "writes) or ali (pdf alignments as int vectors, as ali-to-pdf writes)")
