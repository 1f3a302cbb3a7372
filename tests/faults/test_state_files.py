"""Damaged state files end a tool with exit status 1 and one ERROR line naming the file.

Each kind of state a run keeps beside its models (NG-SGD ``<model>.ngsgd.npz``, the BMUF
checkpoint, the scheduler's ``.scheduler_state.json``, an epoch's result file) is damaged the ways
a file gets damaged (cut short, empty, overwritten with other bytes, a pickle or an object array,
an array of the wrong shape or dtype, a field of the wrong type), then read by the real tool. Each
case asserts exit status 1, exactly one ERROR line naming the file, no traceback, and that no
output model (nor a temporary file) was left behind. The good files come from real runs.
"""
from __future__ import annotations

import io
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import ROOT, load_bin, script_env
from helpers import class_run_utts, write_tables

from nnetmix.driver.dnn import read_result
from nnetmix.nnet import AffineTransform, Nnet, Sigmoid, Softmax
from nnetmix.parallel import read_bmuf_state
from nnetmix.utils.state import StateError

NGSGD = ["--optimizer=ngsgd", "--ngsgd-rank-in=2", "--ngsgd-rank-out=2", "--minibatch-size=16",
         "--randomizer-size=128"]


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    """Tiny data, a model, and the good state files of real runs (NG-SGD, BMUF, scheduler)."""
    d = tmp_path_factory.mktemp("state")
    rng = np.random.default_rng(15)
    utts = class_run_utts(rng, 8, 5, 3, 15, 30, 0.8)
    Nnet([AffineTransform(5, 6, rng.standard_normal((6, 5)) * 0.3, rng.uniform(-1, 1, 6)),
          Sigmoid(6, 6), AffineTransform(6, 3, rng.standard_normal((3, 6)) * 0.3, np.zeros(3)),
          Softmax(3, 3)]).write(str(d / "init.nnet"))
    data = list(write_tables(d, utts))
    assert load_bin("nnet-train-frmshuff.py").main(
        NGSGD + data + [str(d / "init.nnet"), str(d / "ng.nnet")]) == 0
    p = _mpi_tool(["--bmuf=true", "--minibatch-size=16", f"--bmuf-state={d}/good.bmuf.npz",
                   *data, d / "init.nnet", d / "bm.nnet"])
    assert p.returncode == 0, p.stderr
    assert _scheduler(d, data, d / "exp") == 0
    return d, data


def _scheduler(d: Path, data: list[str], exp: Path) -> int:
    """One epoch of bin/nnet-train-scheduler.py in process (the training set is the CV set)."""
    return load_bin("nnet-train-scheduler.py").main(
        ["--max-iters=1", "--minibatch-size=16", "--prefetch=false", str(d / "init.nnet"),
         data[0], data[0], data[1], data[1], str(exp)])


def _mpi_tool(args) -> subprocess.CompletedProcess:
    """bin/nnet-train-mpi.py as one process (a world of one rank, no mpiexec needed)."""
    env = script_env()
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, str(ROOT / "bin" / "nnet-train-mpi.py"),
                           *map(str, args)], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=300)


def _one_error(rc: int, err: str, path: Path) -> str:
    """The ERROR line, after checking there is exactly one, naming ``path``, and no traceback."""
    errors = [ln for ln in err.splitlines() if ln.startswith("ERROR")]
    assert rc == 1, err
    assert len(errors) == 1, err
    assert str(path) in errors[0], errors[0]
    assert "Traceback" not in err, err
    return errors[0]


def _no_leftovers(d: Path, before: set[str]) -> None:
    """Nothing new in ``d``: no output model, no temporary file."""
    assert set(os.listdir(d)) == before, set(os.listdir(d)) - before


# -- damage --------------------------------------------------------------------------------------
def _npz(good: Path, **change) -> bytes:
    """The arrays of ``good`` with ``change`` applied (None drops an array), as .npz bytes."""
    with np.load(good) as z:
        arrays = {k: z[k] for k in z.files}
    for k, v in change.items():
        if v is None:
            arrays.pop(k)
        else:
            arrays[k] = v
    out = good.with_name("damage.tmp.npz")
    np.savez(out, **arrays)
    data = out.read_bytes()
    out.unlink()
    return data


def _damaged_npz(good: Path, key: str, bad_shape, bad_dtype: dict) -> dict[str, bytes]:
    data = good.read_bytes()
    return {
        "truncated": data[: len(data) // 2],
        "truncated-end": data[:-1],
        "zero-byte": b"",
        "garbage": np.random.default_rng(0).bytes(700),
        "text": b"this is not a state file\n",
        "pickle": pickle.dumps({"W": [1, 2, 3]}),
        "npy": _npy(np.zeros(3)),
        "object-array": _npz(good, **{key: np.array([1, "a", None], dtype=object)}),
        "missing-key": _npz(good, **{key: None}),
        "wrong-shape": _npz(good, **bad_shape),
        "wrong-dtype": _npz(good, **bad_dtype),
    }


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def _ngsgd_cases(task):
    d, _ = task
    good = d / "ng.nnet.ngsgd.npz"
    with np.load(good) as z:
        R = z["c0.in.R"]
    return _damaged_npz(good, "c0.in.R", {"c0.in.R": np.zeros((R.shape[0] + 1, R.shape[1]))},
                        {"c0.in.t": np.float64(3.5)})


def _bmuf_cases(task):
    d, _ = task
    good = d / "good.bmuf.npz"
    with np.load(good) as z:
        n = z["W"].shape[0]
    return _damaged_npz(good, "W", {"W_g": np.zeros(n - 1, np.float32)},
                        {"nesterov": np.float64(1.0)})


KINDS = ["truncated", "truncated-end", "zero-byte", "garbage", "text", "pickle", "npy",
         "object-array", "missing-key", "wrong-shape", "wrong-dtype"]


@pytest.mark.parametrize("damage", KINDS)
def test_ngsgd_state(task, damage, capsys):
    d, data = task
    case = d / damage
    case.mkdir()
    (case / "m.nnet").write_bytes((d / "ng.nnet").read_bytes())
    state = case / "m.nnet.ngsgd.npz"
    state.write_bytes(_ngsgd_cases(task)[damage])
    before = set(os.listdir(case))
    rc = load_bin("nnet-train-frmshuff.py").main(NGSGD + data + [str(case / "m.nnet"),
                                                                 str(case / "out.nnet")])
    line = _one_error(rc, capsys.readouterr().err, state)
    assert "NG-SGD state" in line
    _no_leftovers(case, before)


@pytest.mark.parametrize("damage", KINDS)
def test_bmuf_state(task, damage):
    d, data = task
    case = d / f"bmuf-{damage}"
    case.mkdir()
    (case / "m.nnet").write_bytes((d / "bm.nnet").read_bytes())
    state = case / "m.bmuf.npz"
    state.write_bytes(_bmuf_cases(task)[damage])
    before = set(os.listdir(case))
    p = _mpi_tool(["--bmuf=true", "--minibatch-size=16", f"--bmuf-state={state}", *data,
                   case / "m.nnet", case / "out.nnet"])
    line = _one_error(p.returncode, p.stderr, state)
    assert "BMUF state" in line
    _no_leftovers(case, before)


SCHED_GOOD = {"learn_rate": 0.008, "loss": 1.25, "mlp_best": "nnet.init", "halving": False,
              "last_iter": 1, "finished": False}
SCHED_CASES = {
    "truncated": json.dumps(SCHED_GOOD, indent=1)[:40],
    "zero-byte": "",
    "garbage": "\x00\xff\xfe binary",
    "not-an-object": "[1, 2, 3]\n",
    "missing-field": json.dumps({k: v for k, v in SCHED_GOOD.items() if k != "mlp_best"}),
    "wrong-type": json.dumps({**SCHED_GOOD, "learn_rate": "fast"}),
    "bool-for-int": json.dumps({**SCHED_GOOD, "last_iter": True}),
}


@pytest.mark.parametrize("damage", sorted(SCHED_CASES))
def test_scheduler_state(task, damage, capsys):
    d, data = task
    exp = d / f"exp-{damage}"
    (exp / "log").mkdir(parents=True)
    (exp / "nnet").mkdir()
    state = exp / ".scheduler_state.json"
    if damage == "garbage":
        state.write_bytes(SCHED_CASES[damage].encode("latin-1"))
    else:
        state.write_text(SCHED_CASES[damage])
    before = set(os.listdir(exp))
    rc = _scheduler(d, data, exp)
    line = _one_error(rc, capsys.readouterr().err, state)
    assert "scheduler state" in line
    _no_leftovers(exp, before)
    assert not os.listdir(exp / "nnet") and not os.listdir(exp / "log")


def test_good_scheduler_state_is_what_the_reader_checks(task):
    """The fields the reader checks are those the scheduler writes (a real run's file)."""
    d, _ = task
    written = json.loads((d / "exp" / ".scheduler_state.json").read_text())
    assert set(written) == set(SCHED_GOOD)
    assert all(type(written[k]) is type(v) or {type(written[k]), type(v)} == {int, float}
               for k, v in SCHED_GOOD.items())


@pytest.mark.parametrize("text,problem", [
    ("", "empty"), ('{"cross_validate": false, "avg_loss": 1.', "bad JSON"),
    ('{"cross_validate": false}', "missing fields"),
    ('{"cross_validate": 0, "avg_loss": 1, "frame_accuracy": 50, "frames": 10, '
     '"num_done": 1, "minibatches": 1}', "field 'cross_validate' is 0, expected bool")])
def test_result_file(tmp_path, text, problem):
    """An epoch's result file (what the scheduler reads from an MPI job) is checked the same way."""
    path = tmp_path / "iter01.tr.json"
    path.write_text(text)
    with pytest.raises(StateError, match=problem) as e:
        read_result(str(path))
    assert str(e.value).startswith(f"{path}: result file")


def test_every_truncation_and_byte_flip_is_a_state_error(task):
    """The reader, not the cases above, is what keeps this true: cut a real BMUF file at every
    length and flip random bytes; each read returns checked arrays or raises StateError."""
    d, _ = task
    good = (d / "good.bmuf.npz").read_bytes()
    path = d / "fuzz.bmuf.npz"
    rng = np.random.default_rng(7)
    damaged = [good[:n] for n in range(len(good))]
    for _ in range(400):
        b = bytearray(good)
        for i in rng.integers(0, len(b), int(rng.integers(1, 5))):
            b[i] = int(rng.integers(0, 256))
        damaged.append(bytes(b))
    errors = 0
    for data in damaged:
        path.write_bytes(data)
        try:
            read_bmuf_state(path)
        except StateError as e:
            assert str(e).startswith(f"{path}: BMUF state: ")
            errors += 1
    assert errors >= len(good)          # every truncation is refused, most flips too


def test_real_process_prints_no_traceback(task):
    """A real process, as a recipe runs it: exit 1, the one line on stderr, nothing else raised."""
    d, data = task
    case = d / "process"
    case.mkdir()
    (case / "m.nnet").write_bytes((d / "ng.nnet").read_bytes())
    state = case / "m.nnet.ngsgd.npz"
    state.write_bytes((d / "ng.nnet.ngsgd.npz").read_bytes()[:-100])
    env = script_env()
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    p = subprocess.run([sys.executable, str(ROOT / "bin" / "nnet-train-frmshuff.py"), *NGSGD,
                        *data, str(case / "m.nnet"), str(case / "out.nnet")], env=env,
                       text=True, capture_output=True, timeout=300)
    line = _one_error(p.returncode, p.stderr, state)
    assert "NG-SGD state: truncated (the .npz archive ends before its zip directory)" in line
    assert not (case / "out.nnet").exists()
