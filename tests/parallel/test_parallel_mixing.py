"""Mixing strategies and BMUF at the world size pytest runs with (1 under plain pytest)."""
import numpy as np
import pytest

import parallel_mpi_checks as C
from nnetmix.parallel import (BMUF, BmufOptions, Mixer, ParallelError, butterfly_partner,
                              check_mixing)
from nnetmix.utils.state import StateError
from parallel_testutil import world


def test_butterfly_mixing():
    C.check_butterfly_mixing(world())


def test_ring_mixing():
    C.check_ring_mixing(world())


def test_allreduce_mixing():
    C.check_allreduce_mixing(world())


def test_butterfly_partners():
    # N = 8: steps 0, 1, 2 pair across bit 0, 1, 2, then repeat
    assert [butterfly_partner(5, 8, k) for k in range(4)] == [4, 7, 1, 4]
    assert butterfly_partner(0, 1, 3) == 0
    with pytest.raises(ParallelError, match="power-of-two number of ranks, got 6"):
        butterfly_partner(0, 6, 0)


def test_unknown_strategy_refused():
    with pytest.raises(ParallelError, match="^--mixing=gossip: expected one of allreduce, "):
        Mixer(world(), "gossip", "mpi", np.zeros(3, np.float32))
    with pytest.raises(ParallelError, match="^--allreduce=fast: expected one of mpi, "):
        Mixer(world(), "ring", "fast", np.zeros(3, np.float32))
    with pytest.raises(ParallelError, match="flat parameter buffer"):
        Mixer(world(), "ring", "mpi", None)


def test_bmuf_eta0_is_model_averaging():
    C.check_bmuf_is_model_averaging(world())


def test_bmuf_three_blocks_by_hand():
    C.check_bmuf_three_blocks(world())


def test_bmuf_defaults():
    comm = world()
    n = comm.Get_size()
    bmuf = BMUF(comm, np.zeros(4, np.float32))
    assert bmuf.eta == pytest.approx(1 - 1 / n) and bmuf.zeta == 1.0 and bmuf.nesterov
    bmuf.free()
    with pytest.raises(ParallelError, match="block momentum"):
        BMUF(comm, np.zeros(4, np.float32), BmufOptions(block_momentum=1.0))


def test_bmuf_checkpoint_roundtrip(tmp_path):
    comm = world()
    opts = BmufOptions(block_momentum=0.5, block_learn_rate=1.2, nesterov=True)
    params = np.linspace(-1, 1, 9).astype(np.float32)
    bmuf = BMUF(comm, params, opts)
    for t in range(2):
        params += np.float32(0.1 * (t + 1))
        bmuf.sync()
    path = tmp_path / "bmuf.npz"
    bmuf.save(path)
    assert path.exists() and not list(tmp_path.glob("*.tmp"))
    state = bmuf.state_dict()

    other_params = np.zeros(9, np.float32)
    other = BMUF(comm, other_params, opts)
    other.load(path)
    for key in ("W", "W_g", "delta"):
        assert np.array_equal(other.state_dict()[key], state[key]), key
    assert other.blocks == 2 and np.array_equal(other_params, state["W_g"])
    assert not np.array_equal(state["W"], state["W_g"])        # NBM keeps them apart
    dst = np.empty(9, np.float32)
    other.copy_model(dst)
    assert np.array_equal(dst, state["W"])
    # the next block continues identically from the checkpoint
    params += 0.05
    other_params += 0.05
    bmuf.sync()
    other.sync()
    assert np.array_equal(params, other_params)

    cbm = BMUF(comm, np.zeros(9, np.float32), BmufOptions(nesterov=False))
    with pytest.raises(ParallelError, match="nesterov"):
        cbm.load(path)
    small = BMUF(comm, np.zeros(3, np.float32), opts)
    with pytest.raises(ParallelError, match=r"W has shape \(9,\)"):
        small.load(path)
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(StateError, match="junk.npz: BMUF state: not an .npz archive"):
        bmuf.load(tmp_path / "junk.npz")
    for b in (bmuf, other, cbm, small):
        b.free()


def test_bmuf_reset_restarts_filter():
    comm = world()
    params = np.ones(5, np.float32)
    bmuf = BMUF(comm, params, BmufOptions(block_momentum=0.5))
    params += 1
    bmuf.sync()
    best = np.full(5, 3.0, np.float32)
    bmuf.reset(best)
    assert np.array_equal(params, best) and np.array_equal(bmuf.model, best)
    assert not bmuf.delta.any()
    bmuf.free()


def test_mixing_options_register_and_check():
    """One mixing options class and one check; its errors name the options the MPI tools take."""
    from nnetmix.cli import OptionParser
    from nnetmix.parallel import MixingOptions
    p = OptionParser("Usage: x")
    p.register_group(MixingOptions)
    p.register_group(BmufOptions)
    text = p.format_usage()
    assert "--mixing" in text and "--allreduce" in text and "--block-momentum" in text
    MixingOptions().check()
    with pytest.raises(ParallelError, match="^--mixing=gossip: expected one of"):
        MixingOptions(mixing="gossip").check()
    with pytest.raises(ParallelError, match="^--allreduce=fast: expected one of"):
        MixingOptions(allreduce="fast").check()
    with pytest.raises(ParallelError, match=r"--mixing=butterfly needs a power-of-two number of "
                       r"ranks, got 6 \(use --mixing=allreduce or ring"):
        butterfly_partner(0, 6, 0)


def test_mixing_errors_name_options_the_mpi_tools_take():
    import re
    from helpers import load_bin
    from nnetmix.parallel import MixingOptions, MpiTrainOptions

    def named(opts):
        with pytest.raises(ParallelError) as e:
            opts.check()
        return set(re.findall(r"--([a-z][a-z0-9-]*)", str(e.value)))

    mixing = set().union(*(named(MixingOptions(**kw)) for kw in (
        {"mixing": "gossip"}, {"allreduce": "fast"}, {"average_every": 0})))
    with pytest.raises(ParallelError) as e:
        check_mixing("butterfly", "mpi", 6)
    mixing |= set(re.findall(r"--([a-z][a-z0-9-]*)", str(e.value)))
    dnn = mixing | named(MpiTrainOptions(bmuf=True, mixing="ring")) \
        | named(MpiTrainOptions(scale_lr_by_workers="sometimes"))
    assert mixing == {"mixing", "allreduce", "average-every"}
    for tool, names in (("nnet-train-mpi.py", dnn), ("rbm-train-cd1-mpi.py", mixing)):
        taken = load_bin(tool).make_parser().options
        assert names <= set(taken), (tool, names - set(taken))
