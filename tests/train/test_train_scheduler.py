"""run_schedule: Newbob/exponential end to end, restart safety (bit-exact), NaN epochs."""
import os
from pathlib import Path

import numpy as np
import pytest
from helpers import load_bin, separable_utts, tiny_net, write_tables

from nnetmix.driver import EpochSpec, ScheduleOptions, run_schedule
from nnetmix.nnet import NnetTrainOptions
from nnetmix.train import TrainError, TrainOptions, parse_report

OPTS = TrainOptions(minibatch_size=32, randomizer_size=256)


@pytest.fixture
def task(tmp_path):
    rng = np.random.default_rng(11)
    utts = separable_utts(rng, 80, noise=1.2)
    tr = write_tables(tmp_path / "data", utts[:60], "tr")
    cv = write_tables(tmp_path / "data", utts[60:], "cv")
    init = tmp_path / "nnet.init"
    tiny_net(rng).write(str(init))
    return tmp_path, str(init), tr, cv


def _run(task, d, sched=None, hook=None, lr=0.004, **kw):
    tmp, init, tr, cv = task
    return run_schedule(init, tr[0], cv[0], tr[1], cv[1], str(tmp / d),
                        EpochSpec(OPTS, NnetTrainOptions(learn_rate=lr, momentum=0.5)),
                        sched or ScheduleOptions(max_iters=6), hook=hook, **kw)


def test_newbob_end_to_end(task):
    final = Path(_run(task, "exp"))
    d = final.parent
    assert final.is_symlink() and final.resolve().exists()
    best = (d / ".mlp_best").read_text().strip()
    assert final.resolve() == Path(best).resolve()
    assert Path(best).name.startswith("nnet_iter") and "_learnrate" in Path(best).name
    names = sorted(p.name for p in (d / "nnet").iterdir())
    assert names[0].startswith("nnet_iter01_learnrate0.004_tr") and "_cv" in names[0]
    for log in ["iter00.initial.log", "iter01.tr.log", "iter01.cv.log"]:
        rep = parse_report((d / "log" / log).read_text())
        assert rep is not None and rep["avg_loss"] > 0 and 0 <= rep["frame_accuracy"] <= 100
    tr_log = (d / "log" / "iter01.tr.log").read_text()
    assert "[TRAINING, RANDOMIZED," in tr_log and "i/o time" in tr_log
    assert "[CROSS-VALIDATION, NOT-RANDOMIZED," in (d / "log" / "iter01.cv.log").read_text()
    assert (d / ".done_iter01").exists() and (d / ".learn_rate").exists()
    mtime = final.resolve().stat().st_mtime_ns
    assert _run(task, "exp") == str(final)  # final.nnet exists: skipped
    assert final.resolve().stat().st_mtime_ns == mtime


class _Killed(Exception):
    pass


def _schedule_lines(text: str) -> list[str]:
    """The PRERUN and ITERATION lines of a scheduler's log, as the log readers take them."""
    from nnetmix.train.runlog import ITER, PRERUN
    return [m.group(0) for line in text.splitlines()
            for m in (PRERUN.search(line), ITER.search(line)) if m]


def test_killed_mid_epoch_resumes_bit_exact(task, caplog):
    import logging
    with caplog.at_level(logging.INFO):
        ref = Path(_run(task, "ref", ScheduleOptions(max_iters=8), lr=0.03)).resolve()
    ref_lines = _schedule_lines(caplog.text)
    assert len(ref_lines) > 5
    calls = [0]
    log = (ref.parent.parent / "log" / "iter01.tr.log").read_text()
    per_epoch = int(log.split(" minibatches, ")[0].rsplit("(", 1)[1])

    def kill(step, nnet):
        calls[0] += 1
        if calls[0] == 4 * per_epoch + per_epoch // 2:  # mid epoch 5 (4 was rejected)
            raise _Killed

    with pytest.raises(_Killed):
        _run(task, "exp", ScheduleOptions(max_iters=8), hook=kill, lr=0.03)
    d = task[0] / "exp"
    assert not (d / "final.nnet").exists()
    assert sorted(p.name for p in d.glob(".done_iter*")) == [f".done_iter0{i}" for i in range(1, 5)]
    assert (d / ".halving").read_text() == "1\n"
    caplog.clear()
    with caplog.at_level(logging.INFO):
        got = Path(_run(task, "exp", ScheduleOptions(max_iters=8), lr=0.03)).resolve()
    # the resumed run's log (written afresh by a job wrapper) holds the whole schedule again:
    # the epochs before the kill from their result files and model names, as the first run
    # logged them (bench/experiments and nnetmix.train.runlog read these lines)
    assert "resuming after epoch 4" in caplog.text
    assert _schedule_lines(caplog.text) == ref_lines
    assert got.name == ref.name
    assert got.read_bytes() == ref.read_bytes()
    assert sorted(p.name for p in (d / "nnet").iterdir()) == \
        sorted(p.name for p in (ref.parent).iterdir())


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_epoch_saves_nothing(task):
    with pytest.raises(TrainError, match="'nan' or 'inf'"):
        _run(task, "exp", lr=1e38)
    d = task[0] / "exp"
    assert list((d / "nnet").iterdir()) == []
    assert not list(d.glob(".done_iter*")) and not (d / "final.nnet").exists()


def test_exponential_schedule(task):
    final = Path(_run(task, "exp", ScheduleOptions(scheduler="exponential", num_epochs=3),
                      lr=0.01))
    names = sorted(p.name for p in (final.parent / "nnet").iterdir())
    assert [n[:30] for n in names if not n.endswith("_final_")] == [
        "nnet_iter01_learnrate0.01_tr0.", "nnet_iter02_learnrate0.001_tr0",
        "nnet_iter03_learnrate0.0001_tr"]
    assert final.resolve().name.startswith("nnet_iter03_")


def test_scheduler_cli(task, capsys):
    main = load_bin("nnet-train-scheduler.py").main

    tmp, init, tr, cv = task
    rc = main(["--learn-rate=0.004", "--minibatch-size=32", "--randomizer-size=256",
               "--max-iters=2", "--prefetch=false", init, tr[0], cv[0], tr[1], cv[1],
               str(tmp / "cli")])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "ITERATION 01: TRAIN AVG.LOSS" in err and "nnet accepted" in err
    assert os.path.islink(tmp / "cli" / "final.nnet")


def test_raising_max_iters_resumes_and_trains_the_new_epoch(task, caplog):
    """README: a finished run resumes when --max-iters is raised; it used to say "resuming after
    epoch 2" and "Succeeded" without training epoch 3."""
    import logging

    sched = dict(keep_lr_iters=2)  # no convergence stop in epochs 1-2: only --max-iters ends
    final = Path(_run(task, "exp", ScheduleOptions(max_iters=2, **sched)))
    d = final.parent
    assert not (d / "log" / "iter03.tr.log").exists()
    final.unlink()
    with caplog.at_level(logging.INFO):
        _run(task, "exp", ScheduleOptions(max_iters=3, **sched))
    assert "resuming after epoch 2" in caplog.text
    assert (d / "log" / "iter03.tr.log").exists() and (d / ".done_iter03").exists()


def test_missing_best_model_is_an_error_and_leaves_no_final(task):
    final = Path(_run(task, "exp", ScheduleOptions(max_iters=1)))
    best = final.resolve()
    final.unlink()
    best.unlink()
    with pytest.raises(TrainError, match=rf"\.scheduler_state\.json: the best model .*{best.name} "
                                         "is missing"):
        _run(task, "exp", ScheduleOptions(max_iters=1))
    assert not os.path.lexists(final)
