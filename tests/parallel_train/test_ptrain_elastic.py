"""bin/nnet-train-mpi.py --resume-workers (nnetmix.parallel.elastic): checkpoints written at 2
ranks (BMUF with NG-SGD; model averaging with NG-SGD and compressed mixing) resumed at 3 and 4,
and one written at 4 (BMUF, 1bit) resumed at 2. The resumed state is checked in closed form
with a zero learning rate, where the epoch changes nothing but the filter and the residuals:
BMUF's W and Delta are the checkpoint's and the block momentum is M's (W(t) = W + eta_M Delta),
and the model gains exactly the mean of the checkpoint's residuals. Without the option each
file written by another number of ranks is one error line naming it, and nothing is written."""
import json
import shutil

import numpy as np
import pytest
from helpers import mpi_net, mpi_utts, read_params, run_mpi, write_data

from nnetmix.parallel import BMUF, MpiTrainOptions, ParallelError, read_bmuf_state, read_mix_state
from nnetmix.parallel.elastic import ElasticResume
from nnetmix.utils.state import Array, read_npz

MB = ["--minibatch-size=16", "--randomizer-size=64", "--momentum=0.5"]


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("pelastic")
    rng = np.random.default_rng(7)
    data = write_data(d, mpi_utts(rng, num_utts=24))
    init = d / "init.nnet"
    mpi_net(rng).write(str(init))
    return d, data, init


def _run(task, n, model_in, name, *extra, bmuf_from=None):
    """One epoch at ``n`` ranks from ``model_in`` into ``<name>.nnet``; with ``bmuf_from`` the
    BMUF state starts as a copy of that file (as the scheduler seeds each epoch's)."""
    d, data, _ = task
    out = d / f"{name}.nnet"
    opts = list(extra)
    if bmuf_from is not None:
        state = d / f"{name}.bmuf.npz"
        if bmuf_from:
            shutil.copyfile(bmuf_from, state)
        opts.append(f"--bmuf-state={state}")
    p, _ = run_mpi(n, [*MB, *opts, f"--utt2num-frames={data['u2nf']}",
                       f"--rank-log={d}/{name}.rank%d.log", data["feats"], data["targets"],
                       str(model_in), str(out)], timeout=240)
    return p, out


@pytest.fixture(scope="module")
def checkpoints(task):
    """bmuf2: BMUF + NG-SGD at 2 ranks; ma2: model averaging + NG-SGD + fp16 at 2 ranks;
    bmuf4: BMUF + 1bit at 4 ranks (each: the model, the state beside it, the BMUF state)."""
    d, _, init = task
    made = {}
    for n, name, extra in [(2, "bmuf2", ["--bmuf=true", "--optimizer=ngsgd"]),
                           (2, "ma2", ["--mix-compression=fp16", "--optimizer=ngsgd",
                                       "--average-every=2"]),
                           (4, "bmuf4", ["--bmuf=true", "--mix-compression=1bit"])]:
        p, out = _run(task, n, init, name, "--learn-rate=0.02", *extra,
                      bmuf_from="" if "bmuf" in name else None)
        assert p.returncode == 0, p.stderr
        made[name] = out
    return made


def _ngsgd_ranks(model):
    meta = read_npz(f"{model}.ngsgd.npz", "NG-SGD state", {"meta": Array("U")}, "")["meta"]
    return json.loads(str(meta)).get("num_ranks")


@pytest.mark.slow
@pytest.mark.parametrize("m", [3, 4])
def test_bmuf_and_ngsgd_resumed_at_another_count(task, checkpoints, m):
    """BMUF + NG-SGD of 2 ranks at M: a line per item, the filter in closed form."""
    ck = checkpoints["bmuf2"]
    saved = read_bmuf_state(f"{ck.parent}/bmuf2.bmuf.npz")
    assert int(saved["num_ranks"]) == 2 and _ngsgd_ranks(ck) == 2
    p, out = _run(task, m, ck, f"bmuf2to{m}", "--learn-rate=0", "--bmuf=true",
                  "--optimizer=ngsgd", "--average-every=1000", "--resume-workers=any",
                  bmuf_from=f"{ck.parent}/bmuf2.bmuf.npz")
    assert p.returncode == 0, p.stderr
    eta = 1.0 - 1.0 / m
    for line in [f"elastic resume: BMUF state {ck.parent}/bmuf2to{m}.bmuf.npz of 2 ranks: W, W_g "
                 f"and Delta kept (block {int(saved['blocks'])}); block momentum 0.5 -> {eta:g} "
                 f"(1 - 1/{m}), block learning rate 1 -> 1",
                 f"elastic resume: NG-SGD state {ck}.ngsgd.npz of 2 ranks holds rank 0's Fisher "
                 f"estimate only: each of the {m} ranks starts from it, as all 2 did",
                 f"elastic resume: learning rate x 1 at {m} ranks (x 1 at the checkpoint's 2)",
                 f"elastic resume: data partition of epoch 0 cut into {m} shards"]:
        assert line in p.stderr, line
    # lr 0: one block (the last, partial one) whose average is W_g itself, so G = 0 and
    # Delta(t) = eta_M Delta, W(t) = W + Delta(t), W_g(t) = W(t) + eta_M Delta(t)
    W, delta = saved["W"].astype(np.float64), saved["delta"].astype(np.float64)
    new = read_bmuf_state(f"{ck.parent}/bmuf2to{m}.bmuf.npz")
    np.testing.assert_allclose(new["delta"], eta * delta, rtol=0, atol=1e-6)
    np.testing.assert_allclose(new["W"], W + eta * delta, rtol=0, atol=1e-6)
    np.testing.assert_allclose(new["W_g"], W + eta * delta * (1 + eta), rtol=0, atol=1e-6)
    np.testing.assert_allclose(read_params(out), new["W"], rtol=0, atol=0)
    assert np.abs(delta).max() > 1e-3  # the checkpoint's momentum is not trivially zero
    assert int(new["num_ranks"]) == m and float(new["block_momentum"]) == pytest.approx(eta)
    assert int(new["blocks"]) == int(saved["blocks"]) + 1
    assert _ngsgd_ranks(out) == m


@pytest.mark.slow
@pytest.mark.parametrize("m", [3, 4])
def test_model_averaging_residuals_and_ngsgd_resumed(task, checkpoints, m):
    """Model averaging + fp16 + NG-SGD of 2 ranks at M: the owed mean residual is delivered."""
    ck = checkpoints["ma2"]
    rows = read_mix_state(f"{ck}.mix.npz")["residual"]
    assert rows.shape[0] == 2
    mean = rows.astype(np.float64).mean(axis=0)
    p, out = _run(task, m, ck, f"ma2to{m}", "--learn-rate=0", "--mix-compression=fp16",
                  "--optimizer=ngsgd", "--average-every=3", "--resume-workers=any")
    assert p.returncode == 0, p.stderr
    for line in [f"elastic resume: mixing state {ck}.mix.npz holds the residuals of 2 ranks, "
                 f"which cannot be given back rank by rank at {m}: each rank starts with their "
                 "mean",
                 f"elastic resume: NG-SGD state {ck}.ngsgd.npz of 2 ranks",
                 f"elastic resume: learning rate x {m} at {m} ranks (x 2 at the checkpoint's 2)",
                 f"elastic resume: data partition of epoch 0 cut into {m} shards"]:
        assert line in p.stderr, line
    # lr 0: the mixes deliver the owed update, the mean residual, and nothing else
    gained = read_params(out).astype(np.float64) - read_params(ck).astype(np.float64)
    assert np.linalg.norm(mean) > 0
    assert np.linalg.norm(gained - mean) < 0.02 * np.linalg.norm(mean)
    assert read_mix_state(f"{out}.mix.npz")["residual"].shape[0] == m
    assert _ngsgd_ranks(out) == m


@pytest.mark.slow
def test_four_ranks_resumed_at_two(task, checkpoints):
    """BMUF + 1bit of 4 ranks at 2: eta 0.75 -> 0.5, 4 residual rows -> 2."""
    ck = checkpoints["bmuf4"]
    p, out = _run(task, 2, ck, "bmuf4to2", "--learn-rate=0.02", "--bmuf=true",
                  "--mix-compression=1bit", "--resume-workers=any",
                  bmuf_from=f"{ck.parent}/bmuf4.bmuf.npz")
    assert p.returncode == 0, p.stderr
    assert "of 4 ranks: W, W_g and Delta kept" in p.stderr
    assert "block momentum 0.75 -> 0.5 (1 - 1/2)" in p.stderr
    assert "holds the residuals of 4 ranks, which cannot be given back rank by rank at 2" \
        in p.stderr
    new = read_bmuf_state(f"{ck.parent}/bmuf4to2.bmuf.npz")
    assert int(new["num_ranks"]) == 2
    assert read_mix_state(f"{out}.mix.npz")["residual"].shape[0] == 2


@pytest.mark.slow
@pytest.mark.parametrize("name, m, extra, named", [
    ("bmuf2", 3, ["--bmuf=true"], "{d}/refuse0.bmuf.npz: BMUF state"),
    ("ma2", 4, ["--mix-compression=fp16"], "{ck}.mix.npz: mixing state"),
    ("ma2", 3, ["--optimizer=ngsgd"], "{ck}.ngsgd.npz: NG-SGD state")])
def test_another_count_refused_without_the_option(task, checkpoints, name, m, extra, named):
    """Without --resume-workers=any: one ERROR line naming the file, no model."""
    d = task[0]
    ck = checkpoints[name]
    i = ["bmuf2", "ma2"].index(name) + (1 if "--optimizer=ngsgd" in extra else 0)
    p, out = _run(task, m, ck, f"refuse{i}", "--learn-rate=0.02", *extra,
                  bmuf_from=f"{d}/bmuf2.bmuf.npz" if name == "bmuf2" else None)
    assert p.returncode != 0
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("ERROR")]
    assert errors, p.stderr
    want = (named.format(d=d, ck=ck) + f" written by 2 ranks, this run has {m} (pass "
            f"--resume-workers=any to resume it at {m} ranks, or run at 2)")
    assert want in errors[0]
    assert "Traceback" not in p.stderr and not out.exists()


@pytest.mark.slow
def test_same_count_is_untouched_by_the_option(task, checkpoints):
    """At the checkpoint's own number of ranks --resume-workers=any changes nothing: the same
    model, bit for bit, and one line saying there is nothing to remap."""
    ck = checkpoints["ma2"]
    common = ["--learn-rate=0.02", "--mix-compression=fp16", "--optimizer=ngsgd"]
    p, a = _run(task, 2, ck, "same_any", *common, "--resume-workers=any")
    q, b = _run(task, 2, ck, "same_same", *common)
    assert p.returncode == 0 and q.returncode == 0, p.stderr + q.stderr
    assert "elastic resume: no state of the checkpoint records another number of ranks than " \
        "2: nothing to remap" in p.stderr
    assert "elastic resume" not in q.stderr
    assert a.read_bytes() == b.read_bytes()


def test_resume_workers_values():
    MpiTrainOptions(resume_workers="any").check()
    with pytest.raises(ParallelError, match="--resume-workers=some: expected same"):
        MpiTrainOptions(resume_workers="some").check()


@pytest.mark.slow
def test_bmuf_keeps_the_checkpoints_global_model(task, checkpoints):
    """In process at one rank (MPI.COMM_SELF): a 2-rank BMUF state resumed with ``any`` puts
    the checkpoint's W_g, W and Delta in place, the ranks' parameters at W_g, and M's eta."""
    from nnetmix.utils.mpi_init import MPI
    import logging
    state = read_bmuf_state(f"{task[0]}/bmuf2.bmuf.npz")
    params = np.array(state["W"], dtype=np.float32)
    bmuf = BMUF(MPI.COMM_SELF, params)
    resume = ElasticResume("any", 1, logging.getLogger("test"))
    resume.bmuf_state(state, "bmuf2.bmuf.npz", bmuf.eta, bmuf.zeta, -1.0)
    bmuf.load_state_dict(state)
    assert resume.from_ranks == 2 and bmuf.eta == 0.0
    np.testing.assert_array_equal(bmuf.W_g, state["W_g"])
    np.testing.assert_array_equal(params, state["W_g"])
    np.testing.assert_array_equal(bmuf.W, state["W"])
    np.testing.assert_array_equal(bmuf.delta, state["delta"])
    assert not np.array_equal(state["W_g"], state["W"])  # NBM: a look-ahead point of its own
    with pytest.raises(ParallelError, match="bmuf2.bmuf.npz: BMUF state written by 2 ranks"):
        ElasticResume("same", 1, logging.getLogger("test")).bmuf_state(
            state, "bmuf2.bmuf.npz", 0.0, 1.0, -1.0)
