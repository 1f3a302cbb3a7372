"""utils/slurm.py against a real one-node Slurm: array jobs, Kaldi's log lines, failure summary,
option mapping through conf/slurm.conf, a task killed by the scheduler, feature extraction and a
2-rank MPI training job in an allocation of 2 tasks."""
import os
import re
import shutil
import subprocess
import time

import numpy as np

from cluster_fixtures import ROOT, env, run, slurm  # noqa: F401 (slurm is a fixture)
from helpers import make_wav_data_dir, mpi_net, mpi_utts, read_params, write_data

from nnetmix.kaldi import SequentialReader

SLURM = ROOT / "utils" / "slurm.py"
RUN = ROOT / "utils" / "run.py"


def job_id(qlog) -> str:
    return re.search(r"Submitted batch job (\d+)", qlog.read_text()).group(1)


def scontrol(slurm, job) -> str:
    return subprocess.run(["scontrol", "-o", "show", "job", job], env=slurm.env(), text=True,
                          capture_output=True).stdout


def test_array_job_logs_and_failure_summary(slurm, tmp_path):
    p = run(slurm, [SLURM, "JOB=1:3", "exp/log/x.JOB.log", "echo", "task", "JOB", ">", "out.JOB",
                    "&&", "[", "JOB", "-ne", "2", "]"], tmp_path)
    assert p.returncode == 1
    assert p.stderr == "slurm.py: 1 / 3 failed, log is in exp/log/x.*.log\n"
    for t in (1, 2, 3):
        assert (tmp_path / f"out.{t}").read_text() == f"task {t}\n"
        text = (tmp_path / f"exp/log/x.{t}.log").read_text()
        lines = text.splitlines()
        assert lines[0] == f"# Running on {slurm.host}"
        assert re.match(r"# Started at \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \w+ \d{4}$", lines[1])
        assert f"# SLURM_ARRAY_TASK_ID={t}" in lines and "# SLURM_ARRAY_TASK_COUNT=3" in lines
        assert f"# echo task {t} > out.{t} && [ {t} -ne 2 ]" in lines
        assert re.match(r"# Accounting: time=\d+ threads=1$", lines[-2])
        assert re.match(rf"# Finished at .* \d{{4}} with status {int(t == 2)}$", lines[-1])
    script = (tmp_path / "exp/q/x.sh").read_text()
    assert re.search(r"^# sbatch --export=PATH .*--array 1-3 \S+/exp/q/x.sh$", script, re.M)
    assert not list((tmp_path / "exp/q").glob("done.*"))  # done files are cleaned up
    # a single job through the slurm.pl name: Kaldi's single-job message
    p = run(slurm, [ROOT / "utils" / "slurm.pl", "exp/log/one.log", "exit", "3"], tmp_path)
    assert p.returncode == 1
    assert p.stderr == "slurm.pl: job failed with status 3, log is in exp/log/one.log\n"
    assert (tmp_path / "exp/log/one.log").read_text().endswith("with status 3\n")


def test_option_mapping_into_sbatch(slurm, tmp_path):
    cmd = ["date", "+%s.%N", ">", "s.JOB;", "sleep", "0.5;", "date", "+%s.%N", ">", "e.JOB"]
    p = run(slurm, [SLURM, "--mem", "100M", "--num-threads", "2", "--gpu", "0", "--time", "5",
                    "--max-jobs-run", "1", "JOB=1:3", "exp/log/o.JOB.log", *cmd], tmp_path)
    assert p.returncode == 0, p.stderr
    submitted = (tmp_path / "exp/q/o.sh").read_text().splitlines()[-1]
    assert submitted.startswith("# sbatch --export=PATH --mem-per-cpu 100M --cpus-per-task 2 "
                                "--time 5 --open-mode=append")
    assert "--array 1-3%1" in submitted and "gres" not in submitted
    text = (tmp_path / "exp/log/o.2.log").read_text()
    assert "# SLURM_CPUS_PER_TASK=2" in text and "# SLURM_MEM_PER_CPU=100" in text
    assert "threads=2" in text
    shown = scontrol(slurm, job_id(tmp_path / "exp/q/o.log"))
    assert "TimeLimit=00:05:00" in shown and "ArrayTaskThrottle=1" in shown
    spans = sorted((float((tmp_path / f"s.{j}").read_text()),
                    float((tmp_path / f"e.{j}").read_text())) for j in (1, 2, 3))
    assert all(spans[i][1] <= spans[i + 1][0] for i in range(2))  # one at a time

    # an option the config does not describe, a bad config line, a missing --config
    p = run(slurm, [SLURM, "--foo", "bar", "l.log", "true"], tmp_path)
    assert p.returncode == 1
    assert p.stderr == ("slurm.py: command line option foo not described in default config "
                        "file (or value 'bar' not allowed)\n")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf/slurm.conf").write_text("command sbatch\noption mem=* --mem $0\nbogus\n")
    p = run(slurm, [SLURM, "l.log", "true"], tmp_path)
    assert p.returncode == 1 and "conf/slurm.conf:3: unable to parse line 'bogus'" in p.stderr
    p = run(slurm, [SLURM, "--config", "nope.conf", "l.log", "true"], tmp_path)
    assert p.returncode == 1 and "could not open config file nope.conf" in p.stderr
    # the toolkit's example config (egs/digits/s5/conf is conf/), and a GPU this node lacks
    shutil.copy(ROOT / "conf" / "slurm.conf", tmp_path / "conf" / "slurm.conf")
    p = run(slurm, [SLURM, "--gpu", "1", "l.log", "true"], tmp_path)
    assert p.returncode == 1 and "error submitting jobs to queue (return status was 1)" in p.stderr
    assert "--gres=gpu:1" in p.stderr
    p = run(slurm, [SLURM, "--mem", "4G", "JOB=2:3", "l.JOB.log", "echo", "JOB"], tmp_path)
    assert p.returncode == 0 and "\n3\n" in (tmp_path / "l.3.log").read_text()
    assert not (tmp_path / "l.1.log").exists()


def test_task_killed_by_scheduler_fails_the_run(slurm, tmp_path):
    proc = subprocess.Popen([str(SLURM), "JOB=1:2", "exp/log/k.JOB.log", "[", "JOB", "-eq", "1",
                             "]", "||", "sleep", "60"], cwd=tmp_path, env=env(slurm), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    log2 = tmp_path / "exp/log/k.2.log"
    try:
        t0 = time.monotonic()
        while not log2.exists() or "sleep 60" not in log2.read_text():
            assert proc.poll() is None and time.monotonic() - t0 < 60, "task 2 did not start"
            time.sleep(0.2)
        jid = job_id(tmp_path / "exp/q/k.log")
        subprocess.run(["scancel", f"{jid}_2"], env=slurm.env(), check=True)
        t1 = time.monotonic()
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1
    assert f"slurm.py: job {jid}_2 ended (CANCELLED) without writing its status" in err
    assert err.endswith("slurm.py: 1 / 2 failed, log is in exp/log/k.*.log\n")
    assert time.monotonic() - t1 < 40
    assert "with status 0" in (tmp_path / "exp/log/k.1.log").read_text()
    assert "Finished at" not in log2.read_text()


def test_make_mfcc_array_job(slurm, tmp_path):
    utts = {"s1-a": ("s1", 4000), "s1-b": ("s1", 5000), "s2-a": ("s2", 6000), "s2-b": ("s2", 3000)}
    feats = {}
    for wrapper in ("slurm", "run"):
        d = tmp_path / wrapper
        d.mkdir()
        for link in ("steps", "utils", "conf"):
            os.symlink(ROOT / link, d / link)
        make_wav_data_dir(d, utts)
        p = run(slurm, ["steps/make_mfcc.sh", "--nj", "2", "--cmd", f"utils/{wrapper}.py",
                        "data/train", "exp/make_mfcc/train", "mfcc"], d)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "done, mfcc features for 4 utterances" in p.stdout
        with SequentialReader(f"scp:{d}/data/train/feats.scp", "mat") as r:
            feats[wrapper] = {k: np.array(v) for k, v in r}
    assert list(feats["slurm"]) == sorted(utts)
    for k in utts:
        np.testing.assert_array_equal(feats["slurm"][k], feats["run"][k])
    for j in (1, 2):
        text = (tmp_path / f"slurm/exp/make_mfcc/train/make_mfcc_train.{j}.log").read_text()
        assert f"# SLURM_ARRAY_TASK_ID={j}" in text and text.endswith("with status 0\n")
        assert f"split2/{j}/wav.scp" in text


def test_mpi_training_in_a_two_task_allocation(slurm, tmp_path):
    rng = np.random.default_rng(5)
    utts = mpi_utts(rng, num_utts=16)
    init = tmp_path / "nnet.init"
    mpi_net(rng).write(str(init))
    tr = write_data(tmp_path, utts, "tr")
    train = ["nnet-train-mpi.py", "--minibatch-size=16", f"--utt2num-frames={tr['u2nf']}",
             tr["feats"], tr["targets"], init]
    p = run(slurm, [SLURM, "--num-tasks", "2", "exp/log/tr.log", *train, "slurm.nnet"], tmp_path)
    log = (tmp_path / "exp/log/tr.log").read_text()
    assert p.returncode == 0, p.stderr + log
    assert "# SLURM_NTASKS=2" in log and "--ntasks 2" in (tmp_path / "exp/q/tr.sh").read_text()
    assert "\n# mpiexec -n 2 nnet-train-mpi.py --minibatch-size=16" in log
    assert log.count("AvgLoss:") == 1 and "MPI summary: 2 ranks" in log
    for r in (0, 1):
        assert f"rank {r}: Done" in (tmp_path / f"exp/log/tr.rank{r}.log").read_text()
    # the same job on this machine through utils/run.py trains the same model
    p = run(slurm, [RUN, "--num-tasks", "2", "exp/log/local.log", *train, "run.nnet"], tmp_path)
    assert p.returncode == 0, p.stderr
    np.testing.assert_array_equal(read_params(tmp_path / "slurm.nnet"),
                                  read_params(tmp_path / "run.nnet"))
