"""The digits recipe end to end through Slurm: a copy of egs/digits/s5 whose cmd.sh has its one
line changed to utils/slurm.py, run with small options on the one-node test Slurm.

Every $cmd call is a Slurm job (about 250 of them), so it takes a few minutes on 2 cores; the
shipped conf/slurm.conf's --export=ALL halves that (see the comment there).
"""
import os
import re
import shutil

import pytest

from cluster_fixtures import ROOT, run, slurm  # noqa: F401 (slurm is a fixture)

S5 = ROOT / "egs" / "digits" / "s5"

pytestmark = [
    pytest.mark.skipif(not (shutil.which("espeak-ng") and shutil.which("sox")),
                       reason="espeak-ng and sox synthesise the corpus (make install)"),
]


def link_recipe(dest):
    """egs/digits/s5 with its links, path.sh and local/ linked, run.sh copied (bash reads a
    script as it runs it) and cmd.sh copied with the wrapper line changed to utils/slurm.py."""
    dest.mkdir()
    for name in ("steps", "utils", "bin", "conf", "local", "path.sh"):
        os.symlink(os.path.realpath(S5 / name), dest / name)
    shutil.copy(S5 / "run.sh", dest / "run.sh")
    text = (S5 / "cmd.sh").read_text()
    new, n = re.subn(r"^cmd=utils/run\.py\b", "cmd=utils/slurm.py", text, flags=re.M)
    assert n == 1, "cmd.sh has no 'cmd=utils/run.py' line"
    (dest / "cmd.sh").write_text(new)
    return dest


@pytest.mark.slow
def test_digits_recipe_through_slurm(slurm, tmp_path):
    s5 = link_recipe(tmp_path / "s5")
    # stages 0-7 (up to the DNN's WER): stage 8's tri1 adds nothing the cluster wrapper needs
    p = run(slurm, ["./run.sh", "--stop-stage", "7", "--num-train-utts", "200", "--num-test-utts", "40", "--nj", "2",
                    "--dnn-num-workers", "2", "--dnn-hid-dim", "64", "--pretrain", "false",
                    "--scoring-opts", "--min-lmwt 9 --max-lmwt 11 --word-ins-penalty 0.0",
                    "--corpus", tmp_path / "corpus"], s5, timeout=1500)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "--cmd utils/slurm.py" in p.stdout
    wers = [float(w) for w in re.findall(r"%WER ([\d.]+)", p.stdout)]
    assert len(wers) >= 2 and wers[-1] < 30, p.stdout[-2000:]  # GMM and DNN decodes
    # the jobs ran as Slurm jobs: the logs carry Slurm's variables and slurm.pl's lines
    for log in (s5 / "exp/make_mfcc/train/make_mfcc_train.2.log",
                s5 / "exp/mono/log/acc.1.2.log",
                s5 / "exp/dnn_rand_w2/log/iter01.tr.log"):
        text = log.read_text()
        assert "# SLURM_JOB_ID=" in text and text.endswith("with status 0\n"), log
    assert "# SLURM_NTASKS=2" in (s5 / "exp/dnn_rand_w2/log/iter01.tr.log").read_text()
