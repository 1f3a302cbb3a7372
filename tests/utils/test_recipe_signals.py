"""utils/recipe_signals.sh: a plain `kill <pid>` (SIGTERM), SIGINT or SIGHUP of a recipe's run.sh
ends its whole process tree (the stage in the foreground, the job it runs) and the stage gives
back its lock; without a signal run.sh's exit status and arguments are its own."""
import os
import signal
import subprocess
import time

import pytest

from helpers import ROOT, run_script, script_env

RUN_SH = """\
#!/usr/bin/env bash
# a stand-in recipe: one stage (a step that takes its directory's lock and runs a job)
. utils/recipe_signals.sh
echo "run.sh $$ args: $*"
[ "${1:-}" = exit ] && exit 7
if [ "${1:-}" = background ]; then   # a stage in the background, then a later stage fails
  bash steps/stage.sh &
  while [ ! -s exp/job.pid ]; do sleep 0.05; done
  exit 3
fi
bash steps/stage.sh
echo "not reached"
"""

STAGE_SH = """\
#!/usr/bin/env bash
. utils/lock_dir.sh exp/mono
python3 -c 'import os, time; open("exp/job.pid", "w").write(str(os.getpid())); time.sleep(300)'
"""


@pytest.fixture
def recipe(tmp_path):
    (tmp_path / "steps").mkdir()
    (tmp_path / "exp" / "mono").mkdir(parents=True)
    os.symlink(ROOT / "utils", tmp_path / "utils")
    (tmp_path / "steps" / "stage.sh").write_text(STAGE_SH)
    (tmp_path / "run.sh").write_text(RUN_SH)
    (tmp_path / "run.sh").chmod(0o755)
    return tmp_path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:         # a zombie is gone for our purposes
        return f.read().split(")")[-1].split()[0] != "Z"


def test_exit_status_and_arguments_are_run_sh_s(recipe):
    p = run_script(["./run.sh", "exit", "a b"], cwd=recipe)
    assert p.returncode == 7 and "args: exit a b" in p.stdout


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130),
                                       (signal.SIGHUP, 129)])
def test_a_signal_to_run_sh_ends_its_tree_and_frees_the_lock(recipe, sig, code):
    p = subprocess.Popen(["./run.sh"], cwd=recipe, env=script_env(), text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    job = recipe / "exp" / "job.pid"
    deadline = time.time() + 60
    while not (job.exists() and job.read_text()) and time.time() < deadline:
        time.sleep(0.1)
    assert job.exists(), "the stage's job never started"
    pid = int(job.read_text())
    assert (recipe / "exp" / "mono" / ".lock").exists()
    p.send_signal(sig)                       # to run.sh's pid alone, as `kill <pid>` does
    # run.sh's output ends once the stage has given back its lock (bin/lock-dir.py, a Python
    # start-up: seconds on a loaded machine, 30 s were seen to fall short at load 25)
    out, err = p.communicate(timeout=180)
    assert p.returncode == code, err
    deadline = time.time() + 10
    while _alive(pid) and time.time() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the stage's job outlived run.sh"
    assert not (recipe / "exp" / "mono" / ".lock").exists()
    assert "not reached" not in out


def test_what_a_failed_run_sh_leaves_running_ends_with_it(recipe):
    """A stage left in the background by a run.sh that failed (as the digits recipe decodes
    beside its training) gets SIGTERM once run.sh has ended, and gives back its lock."""
    p = run_script(["./run.sh", "background"], cwd=recipe, timeout=180)
    assert p.returncode == 3, p.stderr
    pid = int((recipe / "exp" / "job.pid").read_text())
    deadline = time.time() + 10
    while _alive(pid) and time.time() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the background stage's job outlived run.sh"
    assert not (recipe / "exp" / "mono" / ".lock").exists()


def test_every_recipe_sources_it_before_its_options():
    for run_sh in sorted(ROOT.glob("egs/*/s5/run.sh")):
        lines = run_sh.read_text().splitlines()
        src = [i for i, ln in enumerate(lines) if ln.startswith(". utils/recipe_signals.sh")]
        opts = [i for i, ln in enumerate(lines) if ln.startswith(". utils/parse_options.sh")]
        assert src and opts and src[0] < opts[0], run_sh


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.1, 0.3])
def test_a_signal_while_run_sh_starts_leaves_nothing(recipe, delay):
    """SIGINT at moments of run.sh's start once it is its supervisor (utils/recipe_group.py:
    before, while or after the group starts): run.sh ends and no process of it is left. (A
    signal in bash's own first milliseconds, before the exec, bash may take and lose.)"""
    p = subprocess.Popen(["./run.sh"], cwd=recipe, env=script_env(), text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 60
    while b"recipe_group.py" not in open(f"/proc/{p.pid}/cmdline", "rb").read():
        assert p.poll() is None and time.time() < deadline, "run.sh never became its supervisor"
        time.sleep(0.001)
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=180)
    assert p.returncode in (130, -signal.SIGINT), p.returncode
    deadline = time.time() + 10
    while _leftovers(p.pid) and time.time() < deadline:
        time.sleep(0.1)
    assert not _leftovers(p.pid)
    # (a signal between lock-dir.py's acquire and lock_dir.sh's trap can leave exp/mono/.lock
    # with its owner gone: the next run takes it over as stale, nnetmix/utils/lock.py)


def _leftovers(sid: int) -> list:
    """Live processes of session ``sid`` or of the sessions its processes started (the group
    run.sh starts is a session of its own: found by its NNETMIX_RECIPE_GROUP)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            env = open(f"/proc/{d}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if f"NNETMIX_RECIPE_GROUP={sid}".encode() in env and _alive(int(d)):
            out.append(int(d))
    return out
