"""Data-parallel training over MPI: all-reduce algorithms, mixing, BMUF, partition, agreement.

What the MPI trainer uses (every function takes ``comm``; everything works at size 1)::

    from nnetmix.parallel import (AllReducer, Mixer, BMUF, BmufOptions, partition_utterances,
                                  agree_minibatches, check_same, check_same_model, run_ranks,
                                  install_excepthook, Watchdog)
    check_same(comm, "options", opts); check_same_model(comm, nnet.params, nnet.backend)
    mine = partition_utterances(utt2frames, comm.size, epoch, seed).parts[comm.rank]
    n = agree_minibatches(comm, local_minibatches)
    mixer = Mixer(comm, "butterfly", "ring", nnet.params, backend=nnet.backend)
    ... every mix_frequency minibatches: mixer.mix(step); step += 1
    ... end of epoch: mixer.exact_average()
    # or BMUF: bmuf = BMUF(comm, nnet.params, BmufOptions(), "ring", nnet.backend, nnet.velocity)
    ... every block: bmuf.sync(); validate/save bmuf.model (bmuf.copy_model(dst))
    # compressed updates with error feedback (either): fb = ErrorFeedback(comm, "1bit", n)
    mixer = Mixer(comm, "allreduce", "mpi", nnet.params, feedback=fb)   # or BMUF(..., feedback=fb)
    # overlapped mixing (delayed update): om = OverlapMixer(comm, nnet.params, bmuf=None)
    ... after each minibatch: om.progress(); every block: om.block_end(); end: om.finish(partial)

Whole epochs on N ranks (partition, agreement, mixing or BMUF, summed statistics) are put
together one layer up, in :mod:`nnetmix.driver`.

Semantics: docs/parallel.md "Semantics"; algorithms: allreduce.py; device buffers: buffers.py;
compressed mixing: compress.py; mixing host by host: hierarchy.py; overlapped mixing:
overlap.py; a checkpoint of another number of ranks: elastic.py.
"""
from nnetmix.parallel.agree import (agree_max, agree_minibatches, check_same, check_same_model,
                                    params_digest, value_digest)
from nnetmix.parallel.allreduce import ALGORITHMS, AllReducer, allreduce
from nnetmix.parallel.bmuf import BMUF, BmufOptions, read_bmuf_state
from nnetmix.parallel.buffers import ParallelError, RankMismatchError, mpi_cuda_aware
from nnetmix.parallel.compress import (COMPRESSIONS, ErrorFeedback, check_compression,
                                       make_codec, read_mix_state)
from nnetmix.parallel.elastic import RESUME_WORKERS, ElasticResume, check_resume_workers
from nnetmix.parallel.failure import (Watchdog, abort_job, install_excepthook, launcher_rank,
                                      rank_error_line, run_job, run_ranks)
from nnetmix.parallel.hierarchy import HierarchicalReducer, host_communicator, make_reducer
from nnetmix.parallel.mixing import (EXACT, STRATEGIES, Mixer, butterfly_partner, check_mixing,
                                     exact_average)
from nnetmix.parallel.partition import (Partition, partition_utterances, rank_utterances,
                                        shuffled_utterances)
from nnetmix.parallel.options import MixingOptions, MpiTrainOptions
from nnetmix.parallel.overlap import OverlapAverage, OverlapMixer, check_overlap

__all__ = [
    "ALGORITHMS", "AllReducer", "allreduce",
    "HierarchicalReducer", "host_communicator", "make_reducer",
    "EXACT", "STRATEGIES", "Mixer", "butterfly_partner", "check_mixing", "exact_average",
    "BMUF", "BmufOptions", "read_bmuf_state",
    "COMPRESSIONS", "ErrorFeedback", "check_compression", "make_codec", "read_mix_state",
    "RESUME_WORKERS", "ElasticResume", "check_resume_workers",
    "Partition", "partition_utterances", "rank_utterances", "shuffled_utterances",
    "agree_minibatches", "agree_max", "check_same", "check_same_model", "params_digest",
    "value_digest",
    "run_ranks", "install_excepthook", "run_job", "launcher_rank", "Watchdog", "abort_job",
    "rank_error_line",
    "ParallelError", "RankMismatchError", "mpi_cuda_aware",
    "MixingOptions", "MpiTrainOptions",
    "OverlapAverage", "OverlapMixer", "check_overlap",
]
