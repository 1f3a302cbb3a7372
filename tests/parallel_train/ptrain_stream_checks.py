"""Multi-stream training over MPI, step by step: after every mix (model averaging, a BMUF
block) the ranks hold bit-identical parameters, while each rank's LSTM state is its own and the
mix leaves it as it was. Run by test_ptrain_streams.py at any world size > 1:

    mpiexec -n 2 --oversubscribe .venv/bin/python tests/parallel_train/ptrain_stream_checks.py

The pieces are dnn_epoch's (Workers, its MixingHook, BMUF, the agreed number of steps,
train_pass); the check wraps the hook to look at the ranks after each call.
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(TESTS), str(TESTS / "parallel")]  # helpers, parallel_mpi_checks
from helpers import memory_lstm, memory_utts  # noqa: E402
from parallel_mpi_checks import same_on_all_ranks  # noqa: E402

from nnetmix.driver.batches import epoch_streams, stream_steps, train_pass  # noqa: E402
from nnetmix.driver.ranks import Workers  # noqa: E402
from nnetmix.nnet import LstmProjected, NnetTrainOptions  # noqa: E402
from nnetmix.parallel import BMUF, MpiTrainOptions  # noqa: E402
from nnetmix.train.options import TrainOptions  # noqa: E402
from nnetmix.train.streams import StreamOptions  # noqa: E402

EVERY = 3


def lstm_state(nnet) -> np.ndarray:
    """The carried (cell, projection) state of the network's LSTM, flattened (empty before
    the first step)."""
    lstm = next(c for c in nnet.components if isinstance(c, LstmProjected))
    if lstm._state is None:
        return np.zeros(0, np.float32)
    return np.concatenate([np.asarray(s, np.float32).ravel() for s in lstm._state])


def check(comm, mopts: MpiTrainOptions) -> int:
    """One epoch on this rank's share; returns the number of mixes checked."""
    w = Workers(comm, logging.getLogger("checks"))
    nnet = memory_lstm()
    utts = memory_utts(np.random.default_rng(7), 12 * w.size)[w.rank::w.size]
    streams = epoch_streams(nnet, StreamOptions(batch_size=5, num_streams=3))
    assert streams is not None
    opts = TrainOptions(randomize=False)
    n = w.agree_min(stream_steps([len(u[2]) for u in utts], streams, opts, nnet.input_dim))
    bmuf = BMUF(comm, nnet.params, mopts.bmuf_options(), mopts.allreduce, nnet._be(),
                nnet.velocity) if mopts.bmuf else None
    wd = w.watchdog(0.0, "checks").start()
    seen = {"mixes": 0, "apart": 0}
    with w.mixing(nnet.params, nnet._be(), mopts, wd, bmuf) as mix:
        def hook(step: int, model) -> None:
            before = lstm_state(model)
            if step % EVERY == 0 and not same_on_all_ranks(comm, np.array(model.params)):
                seen["apart"] += 1  # each rank's steps moved its own parameters
            mix(step, model)
            if step % EVERY:
                return
            seen["mixes"] += 1
            assert same_on_all_ranks(comm, np.array(model.params)), f"step {step}: params differ"
            after = lstm_state(model)
            assert np.array_equal(before, after), f"step {step}: the mix changed the LSTM state"
            assert not same_on_all_ranks(comm, after), f"step {step}: the LSTM state is shared"

        train_pass(nnet, utts, opts, NnetTrainOptions(learn_rate=0.02, momentum=0.5),
                   streams=streams, hook=hook, limit=n)
        mix.finish(n, nnet.params)
    wd.stop()
    assert same_on_all_ranks(comm, np.array(nnet.params))
    assert seen["mixes"] == n // EVERY >= 3 and seen["apart"] == seen["mixes"], seen
    if bmuf is not None:
        bmuf.free()
    return seen["mixes"]


def main() -> int:
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    if comm.Get_size() < 2:
        print("needs at least 2 ranks")
        return 1
    done = []
    for name, mopts in (("allreduce", MpiTrainOptions(average_every=EVERY)),
                        ("bmuf", MpiTrainOptions(average_every=EVERY, bmuf=True))):
        done.append(f"{name} {check(comm, mopts)} mixes")
    if comm.Get_rank() == 0:
        print(f"{comm.Get_size()} ranks: all stream checks passed ({', '.join(done)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
