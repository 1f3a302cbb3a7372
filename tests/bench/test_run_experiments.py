"""bench/run_experiments.sh: its argument checks, --tables-only on finished runs, and (with
NNETMIX_TEST_EXPERIMENTS=1, several minutes on 2 cores) a real --smoke run of seed 000:
    NNETMIX_TEST_EXPERIMENTS=1 .venv/bin/python -m pytest -q tests/bench/test_run_experiments.py
"""
import os
import shutil
import time

import pytest

from helpers import ROOT, experiments_opt_in, run_script, write_run

from bench.experiments import plan

SCRIPT = ROOT / "bench" / "run_experiments.sh"


def test_bad_arguments():
    p = run_script([SCRIPT, "--fast"])
    assert p.returncode == 1 and "unknown argument --fast" in p.stderr and "Usage:" in p.stderr
    p = run_script([SCRIPT, "--only"])
    assert p.returncode == 1 and "--only needs a value" in p.stderr
    p = run_script([SCRIPT, "--only", "seed000,seed042", "--tables-only"])
    assert p.returncode == 1 and "unknown group 'seed042'" in p.stderr


def test_tables_only_on_finished_runs(tmp_path):
    size = plan.SIZES["smoke"]
    for key, run in plan.group_runs("seed002", size).items():
        write_run(tmp_path / "work" / run.dnn_dir, wer=4.0 if run.mix == "nbm" else 5.0,
                  workers=run.workers)
    p = run_script([SCRIPT, "--smoke", "--tables-only", "--only", "seed002", "--work",
                    tmp_path / "work", "--out", tmp_path / "out"])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "estimated time: about" in p.stdout
    text = (tmp_path / "out" / "seed002.md").read_text()
    assert "| BMUF-NBM | 2 | 4.00 (16/400) |" in text
    assert (tmp_path / "out" / "RESULTS_experiments.md").exists()
    assert not (tmp_path / "work" / "run.sh").exists()      # --tables-only sets nothing up


@experiments_opt_in
def test_smoke_seed000(tmp_path):
    t0 = time.time()
    work, out = tmp_path / "work", tmp_path / "out"
    p = run_script([SCRIPT, "--smoke", "--only", "seed000", "--work", work, "--out", out])
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert (work / "run.sh").is_symlink() and (work / "corpus" / ".done").exists()
    text = (out / "seed000.md").read_text()
    for run in plan.group_runs("seed000", plan.SIZES["smoke"]).values():
        assert (work / run.dnn_dir / ".done").exists()
        assert (work / run.dnn_dir / "stages67_seconds").exists()
    table3 = text.split("### Table 3")[1]
    assert "| all-reduce | " in table3 and "-" not in table3.split("\n")[4].split("|")[2]
    # a second call skips everything that is finished
    p = run_script([SCRIPT, "--smoke", "--only", "seed000", "--work", work, "--out", out])
    assert p.returncode == 0 and p.stdout.count("done before, skipping") == 4
    print(f"smoke run of seed000: {time.time() - t0:.0f} s")
