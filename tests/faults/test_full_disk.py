"""A full disk, played by a file-size limit: one ERROR line naming the file, no traceback, the
temporary file removed, the previous files intact, a model and its state files all or none.

The limit is RLIMIT_FSIZE set in the tool's own process with SIGXFSZ ignored, so a write past
it fails with EFBIG as a write to a full disk fails with ENOSPC; nothing fills a real disk.
"""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys

import numpy as np
import pytest

from helpers import ROOT, class_run_utts, dummy_feats, load_bin, script_env, write_feats, \
    write_tables
from nnetmix.errors import WriteError
from nnetmix.nnet import AffineTransform, Nnet, Sigmoid, Softmax
from nnetmix.outfile import write_together

NGSGD = ["--optimizer=ngsgd", "--ngsgd-rank-in=2", "--ngsgd-rank-out=2", "--minibatch-size=16",
         "--randomizer-size=128"]


def _limited(tool: str, args, limit: int) -> subprocess.CompletedProcess:
    def limit_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    # no .pyc writes under the limit: importlib does not check for short writes, and a cut
    # .pyc renamed into __pycache__ breaks every later import of that module
    env = {**script_env(), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, str(ROOT / "bin" / tool), "--print-args=false",
                           *map(str, args)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, env=env, preexec_fn=limit_files, timeout=300)


def _one_error(r: subprocess.CompletedProcess, path) -> str:
    errors = [line for line in r.stderr.splitlines() if line.startswith("ERROR")]
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert len(errors) == 1 and f"cannot write {path}: File too large" in errors[0], r.stderr
    return errors[0]


def _no_temporaries(d) -> bool:
    return not [p for p in os.listdir(d) if ".tmp" in p]


@pytest.mark.parametrize("tool", ["feat-to-len.py", "copy-feats.py"])
def test_text_table_past_the_limit(tmp_path, tool):
    feats = write_feats(tmp_path / "in", [(f"utt{i:03d}", dummy_feats(3 + i % 4, 2, seed=i))
                                          for i in range(60)])
    out = tmp_path / "lengths"
    out.write_text("old 1\n")
    args = [feats, f"ark,t:{out}"] if tool == "feat-to-len.py" else \
        [f"--write-num-frames=ark,t:{out}", feats, "ark:-"]
    _one_error(_limited(tool, args, 200), out)
    assert out.read_text() == "old 1\n" and _no_temporaries(tmp_path)


def test_utt2dur_past_the_limit(tmp_path):
    """compute-mfcc-feats.py --write-utt2dur, the third text table of issue 34's list."""
    from helpers import write_wav

    (tmp_path / "wav.scp").write_text("".join(
        f"utt{i:03d} {tmp_path}/{i}.wav\n" for i in range(40)))
    for i in range(40):
        write_wav(tmp_path / f"{i}.wav", 800, seed=i)
    out = tmp_path / "utt2dur"
    out.write_text("old 1\n")
    _one_error(_limited("compute-mfcc-feats.py", [f"--write-utt2dur=ark,t:{out}",
                                                  f"scp:{tmp_path}/wav.scp", "ark:-"], 200), out)
    assert out.read_text() == "old 1\n" and _no_temporaries(tmp_path)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model with its NG-SGD state from a run, and the data to train it again."""
    d = tmp_path_factory.mktemp("fulldisk")
    rng = np.random.default_rng(15)
    Nnet([AffineTransform(5, 6, rng.standard_normal((6, 5)) * 0.3, rng.uniform(-1, 1, 6)),
          Sigmoid(6, 6), AffineTransform(6, 3, rng.standard_normal((3, 6)) * 0.3, np.zeros(3)),
          Softmax(3, 3)]).write(str(d / "init.nnet"))
    data = list(write_tables(d, class_run_utts(rng, 8, 5, 3, 15, 30, 0.8)))
    assert load_bin("nnet-train-frmshuff.py").main(
        ["--print-args=false", *NGSGD, *data, str(d / "init.nnet"), str(d / "ng.nnet")]) == 0
    return d, data


def test_model_and_ngsgd_state_committed_together(trained):
    d, data = trained
    model, state = d / "ng.nnet", d / "ng.nnet.ngsgd.npz"
    before = {p: p.read_bytes() for p in (model, state)}
    small, big = sorted(before, key=lambda p: len(before[p]))
    limit = (len(before[small]) + len(before[big])) // 2  # one fits, the other does not
    r = _limited("nnet-train-frmshuff.py", [*NGSGD, *data, d / "init.nnet", model], limit)
    _one_error(r, big)
    assert {p: p.read_bytes() for p in before} == before  # neither replaced
    assert _no_temporaries(d)


def test_write_together_is_all_or_none_model_last(tmp_path):
    model, state = tmp_path / "m", tmp_path / "m.state"
    model.write_text("old model")
    state.write_text("old state")
    order = []

    def fail(path):
        raise WriteError(f"cannot write {path}: No space left on device")

    def write(text):
        def w(path):
            order.append(text)
            with open(path, "w") as fh:
                fh.write(text)
        return w

    with pytest.raises(WriteError, match=f"^cannot write {model}: No space"):
        write_together([(str(state), write("new state")), (str(model), fail)])
    assert (model.read_text(), state.read_text()) == ("old model", "old state")
    assert _no_temporaries(tmp_path)
    write_together([(str(state), write("new state")), (str(model), write("new model"))])
    assert (model.read_text(), state.read_text()) == ("new model", "new state")
    assert order == ["new state", "new state", "new model"] and _no_temporaries(tmp_path)


# A limit set after MPI_Init (Open MPI's start-up writes its own shared-memory files, which a
# small limit breaks): each rank imports MPI, then limits its files, then runs the tool.
_RANK = """import os, resource, runpy, signal, sys
from nnetmix.utils.mpi_init import MPI
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(sys.argv[0]))
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_bmuf_model_and_state_committed_together_over_mpi(tmp_path):
    """A 2-rank BMUF epoch whose BMUF state (or model) does not fit: one ERROR line naming it,
    the job ends, the previous model and state are left as they were."""
    from helpers import mpi_env, mpi_net, mpi_utts, mpiexec, run_mpiexec, write_data

    rng = np.random.default_rng(34)
    data = write_data(tmp_path, mpi_utts(rng))
    init, model, state = tmp_path / "init.nnet", tmp_path / "b.nnet", tmp_path / "b.bmuf.npz"
    mpi_net(rng).write(str(init))
    args = ["--print-args=false", "--minibatch-size=16", "--randomizer-size=64",
            f"--utt2num-frames={data['u2nf']}", "--learn-rate=0.01", "--bmuf=true",
            f"--bmuf-state={state}", data["feats"], data["targets"], str(init), str(model)]
    env = {**mpi_env(), "PYTHONDONTWRITEBYTECODE": "1"}

    def run(limit: int):
        code = _RANK.format(limit=limit)
        return run_mpiexec([mpiexec(), "-n", "2", "--oversubscribe", sys.executable, "-c", code,
                            str(ROOT / "bin" / "nnet-train-mpi.py"), *args],
                           cwd=ROOT, env=env, timeout=300)

    first = run(1 << 30)
    assert first.returncode == 0, first.stderr
    before = {p: p.read_bytes() for p in (model, state)}
    small, big = sorted(before, key=lambda p: len(before[p]))
    assert len(before[small]) < len(before[big])
    r = run((len(before[small]) + len(before[big])) // 2)  # one fits, the other does not
    # Open MPI forwards the ranks' stderr beside its own MPI_ABORT banner and has been seen to
    # put a space before a forwarded line: the line is ours, wherever it starts
    errors = [ln.lstrip() for ln in r.stderr.splitlines() if ln.lstrip().startswith("ERROR")]
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert len(errors) == 1 and f"cannot write {big}: File too large" in errors[0], r.stderr
    assert {p: p.read_bytes() for p in before} == before  # neither replaced
    assert _no_temporaries(tmp_path)
