"""The options every MPI trainer shares (how often and how the ranks mix, how the data is cut
into shards, where each rank logs, the hang guard) and the DNN tool's own (BMUF, learning-rate
scaling): dataclasses whose fields are the tools' command-line options."""
from __future__ import annotations

import dataclasses

from nnetmix.options import option
from nnetmix.parallel.bmuf import BmufOptions
from nnetmix.parallel.buffers import ParallelError
from nnetmix.parallel.compress import check_compression
from nnetmix.parallel.elastic import check_resume_workers
from nnetmix.parallel.mixing import EXACT, check_mixing
from nnetmix.parallel.overlap import check_overlap
from nnetmix.parallel.rank_models import check_epoch_average

__all__ = ["MixingOptions", "MpiTrainOptions"]


@dataclasses.dataclass
class MixingOptions:
    """What every MPI trainer shares (nnet-train-mpi.py, rbm-train-cd1-mpi.py): how often and how
    the ranks mix, how the data is cut into shards, where each rank logs, the hang guard."""

    average_every: int = option(10, "Minibatches between model mixes (BMUF: the block size tau)")
    mixing: str = option("allreduce", "Model mixing: allreduce (exact average) | butterfly "
                         "(power-of-two ranks) | ring | hierarchical (the exact average host by "
                         "host: inside each host, then --allreduce among one leader per host)")
    allreduce: str = option("mpi", "All-reduce algorithm: mpi | ring | ring-async | "
                            "recursive-doubling | tree")
    utt2num_frames: str = option("", "utt2num_frames of the data (frame counts for the partition; "
                                 "without it rank 0 reads the features once to count)")
    shard_scp: str = option("", "The utterance scp inside a feature pipeline: each rank "
                            "substitutes a copy holding only its utterances (default: the file of "
                            "scp: features)")
    rank_log: str = option("", "Per-rank log file pattern, %d = rank (default: "
                           "<job log>.rank%d.log when run by utils/run.py --num-tasks)")
    watchdog_timeout: float = option(-1.0, "End the job, naming the rank that hung, when a rank "
                                     "makes no progress for this many seconds; 0: off; negative: "
                                     "adaptive (120 s for the first 10 minibatches, then 20 x the "
                                     "slowest step, at least 60 s)")

    def check(self) -> None:
        if self.average_every < 1:
            raise ParallelError(f"--average-every must be >= 1, got {self.average_every}")
        check_mixing(self.mixing, self.allreduce)


@dataclasses.dataclass
class MpiTrainOptions(MixingOptions):
    """How the ranks share the work and mix (bin/nnet-train-mpi.py's own options)."""

    bmuf: bool = option(False, "Blockwise model-update filtering (seed 002) instead of plain "
                        "model averaging")
    block_momentum: float = option(-1.0, "BMUF block momentum eta (negative: 1 - 1/N)")
    block_lr: float = option(1.0, "BMUF block learning rate zeta")
    bmuf_nesterov: bool = option(True, "BMUF Nesterov block momentum (NBM) rather than classical")
    reset_momentum_after_block: bool = option(True, "BMUF: zero the local SGD velocity when a "
                                              "block starts")
    scale_lr_by_workers: str = option("auto", "Multiply the learning rate by the number of ranks: "
                                      "true | false | auto (auto: true for model averaging, false "
                                      "for BMUF)")
    bmuf_state: str = option("", "BMUF checkpoint (.npz, W, W_g, Delta): read at the start when it "
                             "exists and belongs to <model-in>, written at the end")
    epoch: int = option(0, "Epoch number: seeds the per-epoch shuffle of the data partition")
    mix_compression: str = option("none", "What a mix sends: none (the models, uncompressed) | "
                                  "fp16 | bf16 | 1bit | topk: each rank's update since the last "
                                  "mixed model (BMUF: the block's), compressed, with error "
                                  "feedback; the residuals go beside the model (<model-out>"
                                  ".mix.npz); --mixing=allreduce or --bmuf=true only")
    mix_compression_topk_fraction: float = option(0.01, "--mix-compression=topk: the fraction of "
                                                  "values sent (those of largest magnitude), in "
                                                  "(0, 1]")
    resume_workers: str = option("same", "A checkpoint (the state beside <model-in>, "
                                 "--bmuf-state) written by another number of ranks: same "
                                 "(refuse it) | any (resume it here: BMUF's W, W_g, Delta kept, "
                                 "block momentum and learning rate for this number, residuals "
                                 "replaced by their mean, each change logged)")
    overlap_mixing: bool = option(False, "Overlap each mix's all-reduce with the next block's "
                                  "computation and apply it one block late (delayed update: "
                                  "theta <- avg(s_k) + (theta - s_k); BMUF filters avg(s_k)); "
                                  "--mixing=allreduce --allreduce=mpi --mix-compression=none "
                                  "only")
    epoch_average: bool = option(True, "At the epoch's end make the ranks one model, their exact "
                                 "average, which is validated and saved; false (seed 000's way): "
                                 "each rank keeps its own model, rank 0's is validated and saved, "
                                 "every rank's goes beside it (<model-out>.ranks.npz) and each "
                                 "rank of the next epoch starts from its own; plain mixing only")

    def check(self) -> None:
        super().check()
        if self.bmuf and self.mixing not in EXACT:
            raise ParallelError(f"--bmuf=true with --mixing={self.mixing}: BMUF filters the "
                                "exact average of the local models (use --mixing=allreduce or "
                                "hierarchical)")
        check_compression(self.mix_compression, self.mix_compression_topk_fraction, self.mixing)
        check_resume_workers(self.resume_workers)
        check_overlap(self.overlap_mixing, self.mixing, self.allreduce, self.mix_compression)
        check_epoch_average(self.epoch_average, self.bmuf, self.mix_compression,
                            self.overlap_mixing)
        self.lr_factor(1)

    def lr_factor(self, num_ranks: int) -> float:
        """The learning-rate multiplier: N or 1 (``scale_lr_by_workers`` resolved)."""
        v = str(self.scale_lr_by_workers).strip().lower()
        if v == "auto":
            scale = not self.bmuf
        elif v in ("true", "t", "1"):
            scale = True
        elif v in ("false", "f", "0"):
            scale = False
        else:
            raise ParallelError(f"--scale-lr-by-workers={self.scale_lr_by_workers}: expected "
                                "true, false or auto")
        return float(num_ranks) if scale else 1.0

    def bmuf_options(self) -> BmufOptions:
        return BmufOptions(self.block_momentum, self.block_lr, self.bmuf_nesterov,
                           self.reset_momentum_after_block)
