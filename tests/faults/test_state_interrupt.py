"""Ctrl-C (SIGINT) in a bin/ tool: one ERROR line, status 130, no traceback, nothing written.

The real case is nnet-train-frmshuff.py reading features through a pipe while numba compiles:
the whole foreground process group gets SIGINT, llvmlite's C callbacks used to swallow the
KeyboardInterrupt (printing a traceback) and the tool then died of the killed pipe ("truncated
FM matrix"). The subprocess tests send SIGINT to a real process group at two moments of
start-up; the in-process tests hit the two mechanisms directly with a real ctypes callback and
a real signal.
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from helpers import ROOT, script_env
from helpers import class_run_utts, write_tables

from nnetmix.cli import OptionParser, run_tool
from nnetmix.errors import FormatError
from nnetmix.nnet import AffineTransform, Nnet, Sigmoid, Softmax


@pytest.fixture(autouse=True)
def _sigint_as_in_a_terminal():
    """SIGINT handled as in a terminal's foreground job, even where the suite itself was started
    in the background (a non-interactive shell's ``cmd &`` inherits SIGINT ignored, and so
    would the tools these tests start)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _errors(err: str, prog: str = "") -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith(f"ERROR ({prog}")]


def _tool(body) -> int:
    return run_tool(OptionParser("Usage: fake.py\n", prog="fake.py"), (0, 0), body, [])


def test_interrupt_inside_a_c_callback_unwinds_the_tool(capsys):
    """SIGINT while Python runs inside a C callback (llvmlite's, during numba's compile):
    Python would print 'Exception ignored ...' and carry on; the tool instead stops."""
    callback = ctypes.CFUNCTYPE(None)(lambda: signal.raise_signal(signal.SIGINT))
    reached = []

    def body(opts, args):
        callback()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:       # ordinary code: the interrupt lands here
            reached.append(1)
        return 0

    assert _tool(body) == 130
    err = capsys.readouterr().err
    assert _errors(err) == [e for e in _errors(err) if "interrupted (SIGINT)" in e]
    assert len(_errors(err)) == 1, err
    assert "Exception ignored" not in err and "Traceback" not in err, err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler   # restored


def test_error_after_the_interrupt_is_marked_as_its_consequence(capsys):
    def body(opts, args):
        try:
            signal.raise_signal(signal.SIGINT)
            time.sleep(60)
        except KeyboardInterrupt:
            pass                                  # swallowed by some library
        raise FormatError("feats.ark: byte 120, key utt1: truncated FM matrix")

    assert _tool(body) == 130
    err = capsys.readouterr().err
    errors = _errors(err)
    assert len(errors) == 1 and errors[0].endswith("interrupted (SIGINT)"), err
    assert "WARNING" in err and "after the interrupt: feats.ark: byte 120" in err


def test_errors_without_an_interrupt_are_unchanged(capsys):
    def body(opts, args):
        raise FormatError("feats.ark: truncated FM matrix")

    assert _tool(body) == 1
    err = capsys.readouterr().err
    assert len(_errors(err)) == 1 and "truncated FM matrix" in err
    assert "interrupted (SIGINT)" not in err and "after the interrupt" not in err


@pytest.fixture
def task(tmp_path):
    rng = np.random.default_rng(4)
    utts = class_run_utts(rng, 200, 5, 3, 40, 80, 0.8)
    write_tables(tmp_path, utts)
    Nnet([AffineTransform(5, 6, rng.standard_normal((6, 5)), rng.uniform(-1, 1, 6)),
          Sigmoid(6, 6), AffineTransform(6, 3, rng.standard_normal((3, 6)), np.zeros(3)),
          Softmax(3, 3)]).write(str(tmp_path / "init.nnet"))
    return tmp_path


def _start(d: Path) -> subprocess.Popen:
    """nnet-train-frmshuff.py reading features through a copy-feats.py pipe, in its own process
    group (as a shell's foreground job), with an empty numba cache: it compiles at start-up."""
    env = script_env()
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["NUMBA_CACHE_DIR"] = str(d / "numba-cache")
    cmd = [sys.executable, str(ROOT / "bin" / "nnet-train-frmshuff.py"), "--minibatch-size=16",
           f"ark:copy-feats.py scp:{d}/data.feats.scp ark:- |", f"ark:{d}/data.post.ark",
           str(d / "init.nnet"), str(d / "out.nnet")]
    return subprocess.Popen(cmd, cwd=d, env=env, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _ctrl_c(p: subprocess.Popen, before: str) -> tuple[int, str]:
    os.killpg(p.pid, signal.SIGINT)
    rest = p.communicate(timeout=120)[1]
    return p.returncode, before + rest


def _assert_one_interrupt_line(rc: int, err: str, d: Path, while_starting: bool) -> None:
    assert rc == -signal.SIGINT, err            # ended by SIGINT: the shell sees 130
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert "truncated" not in err, err
    mine = _errors(err, "nnet-train-frmshuff.py")
    assert len(mine) == 1, err
    assert mine[0].endswith("interrupted (SIGINT)" + (" while starting up" if while_starting
                                                      else "")), err
    # any other ERROR line is the pipe's own tool saying the same, never a consequence
    assert all(ln.endswith("interrupted (SIGINT)") or ln.endswith("while starting up")
               for ln in _errors(err)), err
    assert not (d / "out.nnet").exists()
    assert not [p for p in os.listdir(d) if p.endswith(".tmp")]


def test_ctrl_c_while_compiling(task):
    """SIGINT to the process group as soon as training starts (numba compiles its kernels) and
    the feature pipe's copy-feats.py has started up (it prints its command line): a Ctrl-C
    reaches the processes that run when it is pressed; a pipe still inside Python's own start-up
    prints Python's traceback, and one started a moment later only sees its reader gone."""
    p = _start(task)
    seen = []
    for line in p.stderr:
        seen.append(line)
        if any("TRAINING STARTED" in ln for ln in seen) and \
                any(ln.startswith("copy-feats.py ") for ln in seen):
            break
    assert p.poll() is None, "".join(seen)
    rc, err = _ctrl_c(p, "".join(seen))
    _assert_one_interrupt_line(rc, err, task, while_starting=False)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc")
def test_ctrl_c_while_importing(task):
    """SIGINT while the tool still imports its modules (once mpi4py's library is loaded)."""
    p = _start(task)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and p.poll() is None:
        try:
            if "mpi4py" in Path(f"/proc/{p.pid}/maps").read_text():
                break
        except OSError:
            pass
        time.sleep(0.005)
    rc, err = _ctrl_c(p, "")
    if "TRAINING STARTED" in err:
        pytest.skip("the imports were over before the signal (a fast machine)")
    _assert_one_interrupt_line(rc, err, task, while_starting=True)
