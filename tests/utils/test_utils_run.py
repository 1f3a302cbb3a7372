"""utils/run.py keeps Kaldi run.pl's calling convention, log format and failure summary."""
import os
import re
import subprocess
import sys
import time

import pytest

from helpers import ROOT, run_script
from nnetmix.errors import UsageError
from nnetmix.utils.jobs import default_max_jobs, join_command, parse_job_args

RUN = ROOT / "utils" / "run.py"
RUN_PL = ROOT / "utils" / "run.pl"

HEADER = re.compile(r"^# (?P<cmd>.*)\n# Started at \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d .* \d{4}\n#\n",
                    re.S)
FOOTER = re.compile(r"# Accounting: time=(\d+) threads=(\d+)\n"
                    r"# Ended \(code (\d+)\) at .* \d{4}, elapsed time (\d+) seconds\n$")


def test_substitution_in_command_and_log_name(tmp_path):
    p = run_script([RUN, "JOB=1:3", tmp_path / "log" / "x.JOB.log",
                    "echo", "job", "JOB", ">", tmp_path / "out.JOB"], check=True)
    assert p.stderr == ""
    for j in (1, 2, 3):
        assert (tmp_path / f"out.{j}").read_text() == f"job {j}\n"
        text = (tmp_path / "log" / f"x.{j}.log").read_text()
        m = HEADER.match(text)
        assert m and m.group("cmd") == f"echo job {j} > {tmp_path}/out.{j}"
        assert FOOTER.search(text).group(3) == "0"


def test_any_variable_name_and_run_pl_symlink(tmp_path):
    run_script([RUN_PL, "--mem", "4G", "TASK=2:3", "--num-threads", "4",
                tmp_path / "t.TASK.log", "echo", "TASK"], check=True)
    assert not (tmp_path / "t.1.log").exists()
    text = (tmp_path / "t.3.log").read_text()
    assert "\n3\n" in text and "threads=4" in text
    run_script([RUN, "FOO=1:2", tmp_path / "f.FOO.log", "echo", "FOO"], check=True)
    assert "\n2\n" in (tmp_path / "f.2.log").read_text()
    # a word with a space is one (quoted) word, as in run.pl: "echo 2" is no command
    assert run_script([RUN, "FOO=1:2", tmp_path / "g.FOO.log", "echo FOO"]).returncode == 1


def test_single_job_and_log_dir_created(tmp_path):
    log = tmp_path / "a" / "b" / "single.log"
    run_script([RUN, log, "echo", "hello", "world"], check=True)
    text = log.read_text()
    assert HEADER.match(text).group("cmd") == "echo hello world"
    assert "\nhello world\n" in text and FOOTER.search(text)


def test_log_has_stderr_and_footer_code(tmp_path):
    p = run_script([RUN, tmp_path / "e.log", "echo", "out;", "echo", "err", ">&2;", "exit", "3"])
    assert p.returncode == 1
    text = (tmp_path / "e.log").read_text()
    assert "\nout\nerr\n" in text and FOOTER.search(text).group(3) == "3"
    assert p.stderr == f"run.py: job failed, log is in {tmp_path}/e.log\n"


def test_failure_summary_names_the_log_pattern(tmp_path):
    p = run_script([RUN, "JOB=1:4", tmp_path / "log" / "name.JOB.log", "[", "JOB", "-eq", "2", "]"])
    assert p.returncode == 1
    assert p.stderr == f"run.py: 3 / 4 failed, log is in {tmp_path}/log/name.*.log\n"
    assert "(code 0)" in (tmp_path / "log" / "name.2.log").read_text()
    assert "(code 1)" in (tmp_path / "log" / "name.1.log").read_text()


def test_forgot_job_range_hint(tmp_path):
    p = run_script([RUN, tmp_path / "name.JOB.log", "false"])
    assert p.returncode == 1
    assert f"job failed, log is in {tmp_path}/name.JOB.log" in p.stderr
    assert "probably you forgot to put JOB=1:$nj" in p.stderr
    p = run_script([RUN, "JOB=1:1", tmp_path / "name.JOB.log", "false"])
    assert "name.1.log" in p.stderr and "probably" not in p.stderr


def test_parallel_jobs_overlap_and_max_jobs_run(tmp_path):
    # Each job records its start and end time; with 2 at a time the 4 jobs run as 2 waves.
    cmd = ["date", "+%s.%N", ">", f"{tmp_path}/s.JOB;", "sleep", "0.5;",
           "date", "+%s.%N", ">", f"{tmp_path}/e.JOB"]
    run_script([RUN, "--max-jobs-run", "2", "JOB=1:4", tmp_path / "p.JOB.log", *cmd], check=True)
    spans = [(float((tmp_path / f"s.{j}").read_text()), float((tmp_path / f"e.{j}").read_text()))
             for j in range(1, 5)]
    most = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    assert most == 2  # two at a time, never more: the jobs overlapped (2 waves, not serial)
    run_script([RUN, "--max-jobs-run", "1", "JOB=1:3", tmp_path / "q.JOB.log", *cmd], check=True)
    spans = sorted((float((tmp_path / f"s.{j}").read_text()), float((tmp_path / f"e.{j}").read_text()))
                   for j in range(1, 4))
    assert all(spans[i][1] <= spans[i + 1][0] for i in range(2))


def test_quoting_and_pipes_as_run_pl(tmp_path):
    out = tmp_path / "o.txt"
    # A word with spaces stays one argument; '|' and '>' given as words are shell syntax.
    run_script([RUN, tmp_path / "q.log", "printf", "x %s\\n", "a b", "c", "|", "wc", "-l", ">", out],
               check=True)
    assert out.read_text().strip() == "2"
    run_script([RUN, tmp_path / "r.log", "echo", 'say "hi" $HOME', ">", out], check=True)
    assert out.read_text() == 'say "hi" $HOME\n'  # single-quoted because of the double quote
    run_script([RUN, tmp_path / "s.log", "echo", "ark:gunzip -c x.JOB.gz |"], check=True)
    assert "ark:gunzip -c x.JOB.gz |\n" in (tmp_path / "s.log").read_text()


def test_join_command_rules():
    assert join_command(["a", "b c", 'd "e"', "", "|", "x"]) == "a \"b c\" 'd \"e\"' \"\" | x"


def test_parse_job_args_options_and_errors():
    s = parse_job_args(["--max-jobs-run", "4", "JOB=1:8", "--max-jobs-run", "2", "--gpu", "1",
                        "l.JOB.log", "cmd", "--opt", "x"])
    assert (s.var, s.start, s.end, s.max_jobs_run, s.gpu) == ("JOB", 1, 8, 2, 1)
    assert s.command == ["cmd", "--opt", "x"]
    s = parse_job_args(["JOB=3", "l.JOB.log", "cmd"])
    assert (s.start, s.end, s.substitute(s.log, 3)) == (3, 3, "l.3.log")
    for bad, msg in [(["JOB=3:1", "l.JOB.log", "c"], "invalid job range"),
                     (["JOB=0:2", "l.JOB.log", "c"], "strictly positive"),
                     (["JOB=1:2", "l.log", "c"], "just one log file"),
                     (["--max-jobs-run", "0", "l.log", "c"], "max-jobs-run"),
                     (["l.log"], "expected a log file and a command")]:
        with pytest.raises(UsageError, match=msg):
            parse_job_args(bad)


def test_default_max_jobs_follows_run_pl(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 10)
    assert default_max_jobs(4) == 10
    assert default_max_jobs(13) == 13  # slightly more jobs than CPUs: run them all at once
    assert default_max_jobs(14) == 10


def test_pick_failed_reruns_only_failed(tmp_path):
    marker = tmp_path / "m"
    cmd = ["echo", "ran", ">>", f"{marker}.JOB;", "[", "JOB", "-ne", "2", "]", "||", "[", "-f",
           f"{tmp_path}/ok", "]"]
    assert run_script([RUN, "JOB=1:3", tmp_path / "k.JOB.log", *cmd]).returncode == 1
    (tmp_path / "ok").touch()
    run_script([RUN, "--pick", "failed", "JOB=1:3", tmp_path / "k.JOB.log", *cmd], check=True)
    assert [len((tmp_path / f"m.{j}").read_text().split()) for j in (1, 2, 3)] == [1, 2, 1]


def test_mpi_jobs_side_by_side_are_not_bound_to_the_first_core(tmp_path):
    # Open MPI binds the rank of a one-rank job to the first core; two such jobs side by side
    # (--max-jobs-run, the campaign's --jobs) then share it and leave the other cores idle.
    code = "import os; print('cpus', sorted(os.sched_getaffinity(0)))"
    run_script([RUN, "--num-tasks", "1", "JOB=1:2", tmp_path / "a.JOB.log", "python3", "-c", code],
               check=True)
    for j in (1, 2):
        line = [ln for ln in (tmp_path / f"a.{j}.log").read_text().splitlines()
                if ln.startswith("cpus ")]
        assert line == [f"cpus {sorted(os.sched_getaffinity(0))}"]


def test_the_guard_sees_its_command_end_at_once_not_at_its_next_poll():
    # Every job runs under nnetmix/utils/guard.py, which also watches the wrapper's pipe. It
    # wakes when its command ends (SIGCHLD), not at its next poll: with the poll made 60 s, a
    # command that exits 3 at once still ends the guard, with its code, before the timeout.
    read, write = os.pipe()   # the wrapper's end stays open: the guard must not think it gone
    code = ("import sys; from nnetmix.utils import guard; guard.POLL_S = 60.0; "
            "sys.exit(guard.main(sys.argv[1:]))")
    try:
        p = subprocess.run([sys.executable, "-c", code, str(read), "--", "bash", "-c", "exit 3"],
                           pass_fds=(read,), capture_output=True, text=True, timeout=30)
    finally:
        os.close(read)
        os.close(write)
    assert (p.returncode, p.stderr) == (3, "")
