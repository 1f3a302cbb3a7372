"""egs/fsdd/s5's results store: local/store_split.py copies a finished split from exp/ into
results/, local/make_results.py writes the same RESULTS.md from the store alone as from exp/,
an unfinished split is refused, and folds of two recipe versions are not pooled.

The splits are fakes of what run.sh leaves (helpers.write_decode and write_run, as
test_fsdd_prep.py's RESULTS.md tests), in a git checkout made here, so the recipe fingerprint is
read from real commits.
"""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, run_script, write_decode, write_run

RECIPE = ROOT / "egs" / "fsdd" / "s5"
DNN = "dnn_fmllr_rbm_w2"
RUN_OPTS = "./run.sh --fsdd-dir /corpora/fsdd --split speaker --test-speaker {} --nj 2"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                           *args], capture_output=True, text=True, check=True).stdout.strip()


def commit_recipe(s5: Path, run_sh: str, message: str, store_code: str = "") -> str:
    """Commit a recipe's run.sh, conf/ and local/fsdd_*.py (the fingerprinted code, but for
    local/fsdd_store.py: ``store_code``); the short hash, as run.sh's stage_done writes it in
    exp/<split>/commit."""
    (s5 / "conf").mkdir(parents=True, exist_ok=True)
    (s5 / "local").mkdir(exist_ok=True)
    (s5 / "run.sh").write_text(run_sh)
    (s5 / "local" / "fsdd_store.py").write_text(store_code or "STORE = 1\n")
    (s5 / "conf" / "mfcc.conf").write_text("--sample-frequency=8000\n")
    (s5 / "local" / "fsdd_data_prep.py").write_text("# prepare\nSPEAKERS = 6\n")
    git(s5, "add", "-A")
    git(s5, "commit", "-q", "-m", message)
    return git(s5, "rev-parse", "--short", "HEAD")


@pytest.fixture
def s5(tmp_path):
    d = tmp_path / "s5"
    d.mkdir()
    git(d, "init", "-q")
    return d


def fake_split(exp: Path, split: str, commit: str, finished: bool = True) -> Path:
    """What run.sh leaves in exp/<split> after stages 0-11 (stage 11 missing unless
    ``finished``): the GMMs' and a DNN's decodes, the DNN's logs and cv.scp, stage times, commit
    and run_opts, plus files the store leaves out (models, alignments, RBMs)."""
    d = exp / split
    prefix = f"{split[5:]}_"
    for g, wer in (("mono", 10.0), ("tri1", 8.0), ("tri2", 6.0), ("tri3", 4.0)):
        write_decode(d / g / "decode_test", wer, utt_prefix=prefix)
        (d / g / "final.mdl").write_bytes(b"\0B<TransitionModel>")
    (d / "tri3" / "decode_test.si").mkdir()
    write_run(d / DNN, wer=2.0, utt_prefix=prefix)
    (d / DNN / "cv.scp").write_text("jackson_0_5 /exp/data-fmllr-tri3/raw.1.ark:17\n"
                                    "jackson_1_7 /exp/data-fmllr-tri3/raw.1.ark:900\n")
    (d / "dnn_pretrain_fmllr").mkdir()
    (d / "dnn_pretrain_fmllr" / "1.rbm").write_bytes(b"\0B")
    for n in range(10):
        (d / "stage_seconds").mkdir(exist_ok=True)
        (d / "stage_seconds" / str(n)).write_text(f"{10 * n + 1} 1.5 1.4 1.3 {5 * n}\n")
    (d / DNN / "stage_seconds").mkdir()
    for n in (10, 11) if finished else (10,):
        (d / DNN / "stage_seconds" / str(n)).write_text(f"{100 + n}\n")
    (d / "commit").write_text(f"{commit}\n")
    (d / "run_opts").write_text(RUN_OPTS.format(split[5:]) + "\n")
    return d


def store(s5: Path, split: str, *args):
    return run_script([sys.executable, RECIPE / "local" / "store_split.py", "--prog",
                       "store_split.py", *args, split], cwd=s5)


def make_results(s5: Path, exp: str, out: str):
    return run_script([sys.executable, RECIPE / "local" / "make_results.py", "--prog",
                       "make_results.py", "--exp", exp, "--out", out], cwd=s5)


def test_store_then_results_from_the_store_alone(s5):
    commit = commit_recipe(s5, "#!/bin/bash\nstage=0\n", "recipe")
    for spk in ("theo", "lucas"):
        fake_split(s5 / "exp", f"loso_{spk}", commit)
    p = make_results(s5, "exp", "from_exp.md")
    assert p.returncode == 0, p.stderr
    for spk in ("theo", "lucas"):
        p = store(s5, f"loso_{spk}")
        assert p.returncode == 0, p.stderr
        assert f"store_split.py: stored exp/loso_{spk} in results/loso_{spk} (" in p.stdout
    stored = s5 / "results" / "loso_theo"
    files = sorted(str(p.relative_to(stored)) for p in stored.rglob("*") if p.is_file())
    assert files == sorted(
        ["commit", "provenance", *(f"stage_seconds/{n}" for n in range(10)),
         *(f"{g}/decode_test/{f}" for g in ("mono", "tri1", "tri2", "tri3", DNN)
           for f in ("wer_10_0.0", "wer_11_0.5", "wer_12_1.0", "scoring/test_filt.txt",
                     "scoring/11.0.5.tra.filt")),
         f"{DNN}/.done", f"{DNN}/cv_utts", f"{DNN}/log/train_scheduler.log",
         f"{DNN}/stage_seconds/10", f"{DNN}/stage_seconds/11"])
    assert (stored / DNN / "cv_utts").read_text() == "jackson_0_5\njackson_1_7\n"
    record = (stored / "provenance").read_text().splitlines()
    assert record[0] == f"commit {commit}" and record[1].startswith("machine ")
    assert record[3] == "run_opts " + RUN_OPTS.format("theo")
    assert record[4].startswith("recipe ") and len(record[4].split()[1]) == 32
    shutil.rmtree(s5 / "exp")
    p = make_results(s5, "results", "from_store.md")
    assert p.returncode == 0, p.stderr
    text = (s5 / "from_store.md").read_text()
    assert text == (s5 / "from_exp.md").read_text()
    assert "## Leave one speaker out, 2 folds pooled (lucas, theo)" in text
    assert f"Run at commit {commit} on " in text and RUN_OPTS.format("lucas") in text
    assert "folds here: lucas, theo; still to be run: jackson, nicolas, yweweler, george." in text
    # storing again replaces the copy whole and leaves no temporary directory
    fake_split(s5 / "exp", "loso_theo", commit)
    assert store(s5, "loso_theo").returncode == 0
    assert sorted(p.name for p in (s5 / "results").iterdir()) == ["loso_lucas", "loso_theo"]


def test_unfinished_split_is_refused(s5):
    commit = commit_recipe(s5, "#!/bin/bash\nstage=0\n", "recipe")
    fake_split(s5 / "exp", "loso_theo", commit, finished=False)
    p = store(s5, "loso_theo")
    assert p.returncode == 1
    assert p.stderr.strip().splitlines()[-1] == (
        "store_split.py: exp/loso_theo: not finished: no dnn_*/ with final.nnet and "
        "stage_seconds/10 and 11 (run.sh's stages 10-11 have not ended)")
    assert not (s5 / "results").exists() or not any((s5 / "results").iterdir())
    (s5 / "exp" / "loso_theo" / DNN / "stage_seconds" / "11").write_text("5\n")
    (s5 / "exp" / "loso_theo" / "stage_seconds" / "7").unlink()
    p = store(s5, "loso_theo")
    assert p.returncode == 1 and p.stderr.strip().splitlines()[-1] == (
        "store_split.py: exp/loso_theo: not finished: no stage_seconds/7 (run.sh's stage 7 has "
        "not ended)")
    p = store(s5, "loso_nobody")
    assert p.returncode == 1 and p.stderr.strip().splitlines()[-1] == (
        "store_split.py: no such directory exp/loso_nobody (run ./run.sh first)")


def test_run_opts_are_needed_from_an_older_run_sh(s5):
    commit = commit_recipe(s5, "#!/bin/bash\nstage=0\n", "recipe")
    (fake_split(s5 / "exp", "loso_theo", commit) / "run_opts").unlink()
    p = store(s5, "loso_theo")
    assert p.returncode == 1 and "give run.sh's command line with --run-opts" in p.stderr
    p = store(s5, "loso_theo", "--run-opts", "./run.sh --test-speaker theo")
    assert p.returncode == 0, p.stderr
    assert "run_opts ./run.sh --test-speaker theo\n" in (
        s5 / "results" / "loso_theo" / "provenance").read_text()


def test_two_recipe_versions_are_not_pooled(s5):
    """A fold of an older run.sh is not pooled with a newer one; a commit that changes only a
    comment, or the store's own code, keeps the fingerprint, so its folds pool."""
    old = commit_recipe(s5, "#!/bin/bash\nstage=0\ntri1_leaves=200\n", "old")
    new = commit_recipe(s5, "#!/bin/bash\nstage=0\ntri1_leaves=300\n", "new")
    same = commit_recipe(s5, "#!/bin/bash\n# how to run the folds\nstage=0\n\ntri1_leaves=300\n",
                         "a comment", store_code="STORE = 2  # the store's code is no result's\n")
    for spk, commit in (("theo", old), ("lucas", new), ("george", same)):
        fake_split(s5 / "exp", f"loso_{spk}", commit)
        assert store(s5, f"loso_{spk}").returncode == 0
    p = make_results(s5, "results", "R.md")
    assert p.returncode == 1 and not (s5 / "R.md").exists()
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("make_results.py: results/loso_theo: recipe fingerprint ")
    assert f"(commit {old}) differs from results/loso_george's " in last
    assert f"(commit {same}): folds of two recipe versions are not pooled" in last
    shutil.rmtree(s5 / "results" / "loso_theo")
    p = make_results(s5, "results", "R.md")
    assert p.returncode == 0, p.stderr
    assert "## Leave one speaker out, 2 folds pooled (george, lucas)" in (s5 / "R.md").read_text()
