"""utils/run_once.sh: a command skipped when its .done records the same command and inputs,
run again when either changed or when it failed last time."""
from helpers import ROOT, run_script

RUN_ONCE = str(ROOT / "utils" / "run_once.sh")


def _run(tmp_path, inputs, command):
    return run_script([RUN_ONCE, "out", *inputs, "--", *command], cwd=tmp_path)


def test_runs_once_and_again_when_inputs_or_command_change(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    cmd = ["bash", "-c", "mkdir -p out; echo ran >> out/count"]
    count = tmp_path / "out" / "count"
    p = _run(tmp_path, ["a.txt"], cmd)
    assert p.returncode == 0, p.stderr
    assert count.read_text() == "ran\n" and (tmp_path / "out" / ".done").exists()
    p = _run(tmp_path, ["a.txt"], cmd)
    assert p.returncode == 0 and "out: done with these inputs and this command already" in p.stdout
    assert count.read_text() == "ran\n"
    (tmp_path / "a.txt").write_text("two\n")  # an input changed
    assert _run(tmp_path, ["a.txt"], cmd).returncode == 0
    assert count.read_text() == "ran\nran\n"
    cmd2 = cmd[:2] + [cmd[2] + " # other options"]  # the command line changed
    assert _run(tmp_path, ["a.txt"], cmd2).returncode == 0
    assert count.read_text() == "ran\nran\nran\n"
    assert "skipping" in _run(tmp_path, ["a.txt"], cmd2).stdout


def test_a_failed_command_leaves_no_marker(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    ok = ["bash", "-c", "mkdir -p out; echo ran >> out/count"]
    assert _run(tmp_path, ["a.txt"], ok).returncode == 0
    (tmp_path / "a.txt").write_text("changed\n")
    p = _run(tmp_path, ["a.txt"], ["bash", "-c", "exit 3"])
    assert p.returncode == 3
    assert not (tmp_path / "out" / ".done").exists()
    (tmp_path / "a.txt").write_text("one\n")  # back to the first inputs: the marker is gone
    assert _run(tmp_path, ["a.txt"], ok).returncode == 0
    assert (tmp_path / "out" / "count").read_text() == "ran\nran\n"


def test_bad_arguments(tmp_path):
    p = _run(tmp_path, ["missing.txt"], ["true"])
    assert p.returncode == 1 and "utils/run_once.sh: no such file missing.txt" in p.stderr
    p = run_script([RUN_ONCE, "out", "a", "b"], cwd=tmp_path)
    assert p.returncode == 1 and p.stderr.startswith("Usage: ")
