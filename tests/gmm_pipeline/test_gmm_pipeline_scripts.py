"""steps/train_mono.sh and steps/align_si.sh end to end on a tiny synthetic data directory (a few
passes through options), run as a recipe runs them."""
from __future__ import annotations

import os
import re
import shutil

import numpy as np
import pytest
from helpers import (FIXTURES, ROOT, check_alignment, make_feats_data_dir, make_lang, make_utts,
                     run_script)

from nnetmix.kaldi import SequentialReader, read_gmm_model

UTTS = make_utts(18, seed=5)


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    """A recipe directory: steps/ utils/ linked, a lang and data/train."""
    if not FIXTURES.is_dir():
        pytest.skip(f"{FIXTURES} not present")
    d = tmp_path_factory.mktemp("recipe")
    for x in ("steps", "utils"):
        os.symlink(ROOT / x, d / x)
    make_lang(FIXTURES, d / "data/lang")
    make_feats_data_dir(d / "data/train", UTTS)
    return d


@pytest.fixture(scope="module")
def mono(recipe):
    proc = run_script(["steps/train_mono.sh", "--nj", "2", "--num-iters", "4", "--totgauss", "40",
                       "--max-iter-inc", "2", "--realign-iters", "1 3", "data/train",
                       "data/lang", "exp/mono"], cwd=recipe)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return recipe / "exp/mono", proc.stdout


def read_alis(rspec: str) -> dict:
    with SequentialReader(rspec, "ivec") as r:
        return {k: np.asarray(a) for k, a in r}


def test_train_mono_outputs(mono):
    exp, out = mono
    for f in ("0.mdl", "1.mdl", "4.mdl", "tree", "fsts.1.gz", "fsts.2.gz", "ali.1.gz",
              "ali.2.gz", "num_jobs", "cmvn_opts", "phones.txt", "log/init.log",
              "log/update.0.log", "log/align.3.2.log", "log/acc.2.1.log", "log/summary.log"):
        assert (exp / f).exists(), f
    assert os.readlink(exp / "final.mdl") == "4.mdl"
    assert not list(exp.glob("*.acc"))
    summary = (exp / "log/summary.log").read_text().splitlines()
    assert [ln.split(":")[0] for ln in summary] == [f"pass {x}" for x in range(4)]
    likes = [float(re.search(r"avg-like-per-frame (\S+)", ln).group(1)) for ln in summary]
    assert likes[-1] > likes[0]
    assert "aligned" in summary[1] and "failed 0" in summary[3] and "aligned" not in summary[2]
    assert "pass 3: avg-like-per-frame" in out and "done training the monophone system" in out
    _, am = read_gmm_model(str(exp / "final.mdl"))
    assert 30 < am.num_gauss <= 45  # --totgauss 40 (SplitByCount never merges: may pass it)


def test_train_mono_alignments_valid(mono, recipe):
    exp, _ = mono
    tm, _ = read_gmm_model(str(exp / "final.mdl"))
    with SequentialReader(f"scp:{recipe}/data/train/feats.scp", "mat") as r:
        lengths = {k: len(m) for k, m in r}
    alis = {}
    for j in (1, 2):
        alis.update(read_alis(f"ark:gunzip -c {exp}/ali.{j}.gz|"))
    assert set(alis) == set(lengths)
    for k, a in alis.items():
        assert len(a) == lengths[k]
        check_alignment(tm, a)


def test_train_mono_restart_and_skip(mono, recipe):
    exp, _ = mono
    before = (exp / "4.mdl").stat().st_mtime_ns
    proc = run_script(["steps/train_mono.sh", "--nj", "2", "--num-iters", "4", "data/train",
                       "data/lang", "exp/mono"], cwd=recipe)
    assert proc.returncode == 0 and "exists, skipping" in proc.stdout
    proc = run_script(["steps/train_mono.sh", "--nj", "2", "--num-iters", "4", "--totgauss", "40",
                       "--max-iter-inc", "2", "--realign-iters", "1 3", "--stage", "3",
                       "data/train", "data/lang", "exp/mono"], cwd=recipe)
    assert proc.returncode == 0, proc.stderr
    assert "Pass 3" in proc.stdout and "Pass 2" not in proc.stdout
    assert (exp / "4.mdl").stat().st_mtime_ns > before
    assert len((exp / "log/summary.log").read_text().splitlines()) == 4


def test_align_si_counts_failures_and_oov(mono, recipe):
    exp, _ = mono
    bad = recipe / "data/train_bad"
    short = UTTS[4][0]
    oov_utt = UTTS[6][0]
    make_feats_data_dir(bad, UTTS, short=(short,),
                  text_override={oov_utt: "MAYBE " + " ".join(UTTS[6][1])})
    proc = run_script(["steps/align_si.sh", "--nj", "2", "data/train_bad", "data/lang", "exp/mono",
                       "exp/mono_ali"], cwd=recipe)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"align_si.sh: 1 of {len(UTTS)} utterances failed to align" in proc.stdout
    assert "Replaced 1 instances of OOVs" in proc.stdout
    ali_dir = recipe / "exp/mono_ali"
    for f in ("final.mdl", "tree", "num_jobs", "ali.1.gz", "ali.2.gz"):
        assert (ali_dir / f).exists(), f
    alis = {}
    for j in (1, 2):
        alis.update(read_alis(f"ark:gunzip -c {ali_dir}/ali.{j}.gz|"))
    assert short not in alis and len(alis) == len(UTTS) - 1 and oov_utt in alis
    log = "".join(p.read_text() for p in (ali_dir / "log").glob("align.*.log"))
    assert f"Did not successfully decode file {short}" in log
    # done once: a second call skips
    proc = run_script(["steps/align_si.sh", "--nj", "2", "data/train_bad", "data/lang", "exp/mono",
                       "exp/mono_ali"], cwd=recipe)
    assert proc.returncode == 0 and "skipping" in proc.stdout


def test_align_si_all_failed_is_fatal(mono, recipe):
    all_short = recipe / "data/train_short"
    utts = UTTS[:4]
    make_feats_data_dir(all_short, utts, short=tuple(k for k, _ in utts))
    proc = run_script(["steps/align_si.sh", "--nj", "1", "data/train_short", "data/lang",
                       "exp/mono", "exp/mono_ali_short"], cwd=recipe)
    assert proc.returncode != 0
    assert "4 of 4 utterances failed to align" in proc.stdout
    assert "no utterance could be aligned" in proc.stderr
    shutil.rmtree(recipe / "exp/mono_ali_short")


def test_usage(recipe):
    for script in ("steps/train_mono.sh", "steps/align_si.sh"):
        proc = run_script([script], cwd=recipe)
        assert proc.returncode == 1 and "Usage:" in proc.stderr
