"""egs/yesno/s5/run.sh end to end on Kaldi's yesno corpus (../shared/corpora/yesno) with Kaldi's
trained model (../shared/kaldi-fixtures/yesno): every stage, the same command that wrote the
recipe's RESULTS.md, and the WERs of the monophone, the DNN (2 MPI ranks) and Kaldi's model must
be RESULTS.md's (the runs are reproducible: dither seeded per utterance, seeded training).
About 155 CPU-seconds (Kaldi's 40 monophone passes, the DNN and three decodes), run by the
default suite as the issue asks of Kaldi's "hello world"; the stages' own tests are in
tests/egs/test_yesno_prep.py.
"""
import re

import pytest

from helpers import FIXTURES, ROOT, link_recipe, run_script

RECIPE = ROOT / "egs" / "yesno" / "s5"
YESNO = ROOT.parent / "shared" / "corpora" / "yesno"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (YESNO / "waves_yesno").is_dir(),
                       reason=f"{YESNO}/waves_yesno is not there (Kaldi's yesno corpus, "
                              "../shared/corpora/yesno; a user's clone has no ../shared)"),
    pytest.mark.skipif(not (FIXTURES / "yesno").is_dir(),
                       reason=f"{FIXTURES}/yesno is not there (Kaldi's yesno model; a user's "
                              "clone has no ../shared)"),
]
#: a system row of RESULTS.md: its name, stages, %WER (errors/words) and interval
ROW = re.compile(r"^\| (.+?) \(`(exp/[^`]+)`[^|]*\| ([\d-]+) \| ([\d.]+ \(\d+/\d+\)) "
                 r"\| (\[[\d.]+, [\d.]+\]) \|", re.M)


def rows(text):
    return {m.group(2): (m.group(3), m.group(4), m.group(5)) for m in ROW.finditer(text)}


def test_run_sh_end_to_end_gives_results_md(tmp_path):
    s5 = link_recipe(RECIPE, tmp_path)
    p = run_script(["./run.sh", "--corpus-dir", YESNO, "--kaldi-model-dir", FIXTURES / "yesno"],
                   cwd=s5, timeout=1800)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "holds the corpus, skipping the download" in p.stdout
    ours = rows((s5 / "RESULTS.md").read_text())
    published = rows((RECIPE / "RESULTS.md").read_text())
    assert set(ours) == {"exp/mono0a", "exp/kaldi_mono0a", "exp/dnn_w2"}, ours
    assert ours == published
    # Kaldi's split: 30 test files, 240 words; the monophone makes no error, as Kaldi's does
    assert ours["exp/mono0a"][1] == "0.00 (0/240)"
    assert all(v[1].endswith("/240)") for v in ours.values())
    # the DNN trained over MPI on 2 ranks
    assert (s5 / "exp" / "dnn_w2" / "log" / "iter01.tr.rank1.log").is_file()
