"""egs/yesno/s5 data preparation, Kaldi's split, the download stage, bad input and the lang stage.

The split is checked on the real corpus (../shared/corpora/yesno, skipped with the reason where
absent); the bad-input and download cases run on a generated stand-in with the corpus's layout
(60 short 8 kHz wavs named by 0/1 transcripts, and README), so they run on any clone.
"""
import os
import sys
import tarfile

import pytest

from helpers import (ROOT, arcs_of, link_recipe, md5_of_file, read_fst, read_lines, run_script,
                     script_error_line, write_wav)

RECIPE = ROOT / "egs" / "yesno" / "s5"
YESNO = ROOT.parent / "shared" / "corpora" / "yesno"
# the recipe's local/*.py modules import each other as run from local/ (sys.path[0])
sys.path.insert(0, str(RECIPE / "local"))
from yesno_data_prep import NUM_WAVS, kaldi_split, prepare_yesno  # noqa: E402

needs_yesno = pytest.mark.skipif(not (YESNO / "waves_yesno").is_dir(),
                                 reason=f"{YESNO}/waves_yesno is not there (Kaldi's yesno corpus, "
                                        "../shared/corpora/yesno; a user's clone has no "
                                        "../shared)")
PREP = RECIPE / "local" / "yesno_data_prep.py"
DOWNLOAD = RECIPE / "local" / "yesno_download.py"
#: 60 distinct 8-word transcripts, as the corpus's file names spell them
NAMES = ["_".join(format(i, "08b")) + ".wav" for i in range(0, 4 * NUM_WAVS, 4)]


def prep(*args):
    return run_script([sys.executable, PREP, "--prog", "yesno_data_prep.py", *args])


def download(*args):
    return run_script([sys.executable, DOWNLOAD, "--prog", "yesno_download.py", *args])


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    """waves_yesno/ with the corpus's layout: 60 wavs of 0.1 s at 8 kHz, and README."""
    root = tmp_path_factory.mktemp("yesno_standin") / "waves_yesno"
    root.mkdir()
    for i, name in enumerate(NAMES):
        write_wav(root / name, num_samples=800, seed=i, rate=8000)
    (root / "README").write_text("This dataset was created for the Kaldi project\n")
    return root


@pytest.fixture
def corpus(standin, tmp_path):
    """A private copy of the stand-in (links to its wavs) that a test may break."""
    d = tmp_path / "corpus" / "waves_yesno"
    d.mkdir(parents=True)
    for f in os.listdir(standin):
        os.symlink(standin / f, d / f)
    return d


def archive_of(folder, path, drop=()):
    """A tar.gz of ``folder`` as waves_yesno/, leaving out the names in ``drop``."""
    with tarfile.open(path, "w:gz") as tar:
        tar.add(folder, arcname="waves_yesno", recursive=False)
        for f in sorted(os.listdir(folder)):
            if f not in drop:
                tar.add(os.path.realpath(folder / f), arcname=f"waves_yesno/{f}")
    return path


# --------------------------------------------------------------------------- Kaldi's split

def test_kaldi_split_is_the_perl_rule():
    """create_yesno_waves_test_train.pl: line i of n trains when i <= n/2."""
    assert kaldi_split(list("abcdef")) == (list("abc"), list("def"))
    assert kaldi_split(list("abcdefg")) == (list("abc"), list("defg"))
    # Kaldi's list holds README too (61 lines, README last): the same 30 wavs train
    wavs = sorted(NAMES)
    train, test = kaldi_split(wavs + ["README"])
    assert train == wavs[:30] and test == wavs[30:] + ["README"]
    assert kaldi_split(wavs) == (wavs[:30], wavs[30:])


@needs_yesno
def test_real_corpus_split(tmp_path):
    assert prepare_yesno(YESNO, tmp_path) == {"train_yesno": (30, True), "test_yesno": (30, True)}
    train = read_lines(tmp_path / "train_yesno" / "text")
    test = read_lines(tmp_path / "test_yesno" / "text")
    assert train[0] == "0_0_0_0_1_1_1_1 NO NO NO NO YES YES YES YES"
    assert train[-1].split()[0] == "0_1_1_1_1_0_1_0" and test[0].split()[0] == "0_1_1_1_1_1_1_1"
    assert test[-1] == "1_1_1_1_1_1_1_1 YES YES YES YES YES YES YES YES"
    assert sum(len(x.split()) - 1 for x in test) == 240
    assert read_lines(tmp_path / "test_yesno" / "spk2utt")[0].startswith("global 0_1_1_1_1_1_1_1 ")
    wav = read_lines(tmp_path / "train_yesno" / "wav.scp")[0].split()[1]
    assert os.path.isabs(wav) and wav.endswith("waves_yesno/0_0_0_0_1_1_1_1.wav")
    # the folder itself is accepted too, and a rerun keeps the directories (and their features)
    (tmp_path / "train_yesno" / "feats.scp").write_text("kept\n")
    assert prepare_yesno(YESNO / "waves_yesno", tmp_path) == {"train_yesno": (30, False),
                                                              "test_yesno": (30, False)}
    assert (tmp_path / "train_yesno" / "feats.scp").read_text() == "kept\n"


# --------------------------------------------------------------------------- bad input

def break_name(c):
    os.rename(c / NAMES[3], c / "0_2_1_0_1_0_1_1.wav")


def break_other_file(c):
    (c / "notes.txt").write_text("x\n")


def break_missing(c):
    os.unlink(c / NAMES[3])


def break_empty(c):
    os.unlink(c / NAMES[3])
    (c / NAMES[3]).write_bytes(b"")


def break_rate(c):
    os.unlink(c / NAMES[3])
    write_wav(c / NAMES[3], num_samples=320, rate=16000)


def break_no_wavs(c):
    for f in NAMES:
        os.unlink(c / f)


@pytest.mark.parametrize("breaker, message", [
    (break_name, "waves_yesno/0_2_1_0_1_0_1_1.wav: not a yesno file name (expected the "
                 "transcript as 0s and 1s joined by _"),
    (break_other_file, "waves_yesno/notes.txt: not a yesno file name"),
    (break_missing, "waves_yesno: 59 wav files, expected 60 (restore the folder waves_yesno/ of "
                    "https://www.openslr.org/resources/1/waves_yesno.tar.gz)"),
    (break_empty, f"waves_yesno/{NAMES[3]}: not a readable wav file"),
    (break_rate, f"waves_yesno/{NAMES[3]}: 16000 Hz, 1 channel(s); yesno is 8000 Hz mono"),
    (break_no_wavs, "waves_yesno: no wav files (--corpus-dir is the folder waves_yesno/ of"),
])
def test_bad_corpus_is_one_line_and_writes_nothing(corpus, tmp_path, breaker, message):
    breaker(corpus)
    p = prep(corpus.parent, tmp_path / "data")
    assert p.returncode == 1, p.stdout + p.stderr
    assert message in script_error_line(p, "yesno_data_prep.py")
    assert not (tmp_path / "data").exists()


def test_missing_corpus_dir_and_an_error_keeps_what_was_written(corpus, tmp_path):
    p = prep(tmp_path / "nowhere", tmp_path / "data")
    assert p.returncode == 1
    assert script_error_line(p, "yesno_data_prep.py") == (
        f"yesno_data_prep.py: no such directory {tmp_path / 'nowhere'} (--corpus-dir: the folder "
        "waves_yesno/ of https://www.openslr.org/resources/1/waves_yesno.tar.gz, or the folder "
        "that holds it)")
    assert prep(corpus, tmp_path / "data").returncode == 0
    before = (tmp_path / "data" / "train_yesno" / "text").read_text()
    break_empty(corpus)
    assert prep(corpus, tmp_path / "data").returncode == 1
    assert (tmp_path / "data" / "train_yesno" / "text").read_text() == before
    assert sorted(os.listdir(tmp_path / "data")) == ["test_yesno", "train_yesno"]


# --------------------------------------------------------------------------- the download stage

def test_download_checks_and_unpacks(standin, tmp_path):
    archive = archive_of(standin, tmp_path / "src.tar.gz")
    root = tmp_path / "corpus"
    p = download("--url", archive.as_uri(), "--md5", md5_of_file(archive), root)
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(root)) == ["waves_yesno", "waves_yesno.tar.gz"]   # nothing partial
    assert sorted(os.listdir(root / "waves_yesno")) == sorted(NAMES + ["README"])
    assert prepare_yesno(root, tmp_path / "data")["test_yesno"] == (30, True)
    again = download("--url", "file:///nowhere.tar.gz", root)          # there: no download
    assert again.returncode == 0 and "is there, skipping the download" in again.stdout


def test_truncated_download_is_removed(standin, tmp_path):
    archive = archive_of(standin, tmp_path / "src.tar.gz")
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(archive.read_bytes()[:20000])
    root = tmp_path / "corpus"
    p = download("--url", cut.as_uri(), "--md5", md5_of_file(archive), root)
    assert p.returncode == 1
    line = script_error_line(p, "yesno_download.py")
    assert line.startswith(f"yesno_download.py: {root}/waves_yesno.tar.gz.part: MD5 "
                           f"{md5_of_file(cut)} (20000 bytes), expected {md5_of_file(archive)}: "
                           "a truncated or failed download of file://"), line
    assert os.listdir(root) == []


def test_failed_download_and_a_wrong_archive(standin, tmp_path):
    root = tmp_path / "corpus"
    p = download("--url", (tmp_path / "absent.tar.gz").as_uri(), root)
    assert p.returncode == 1
    assert f"{root}/waves_yesno.tar.gz.part: download of file://" in script_error_line(
        p, "yesno_download.py")
    assert os.listdir(root) == []
    # the right checksum of an archive without one wav and without README
    short = archive_of(standin, tmp_path / "short.tar.gz", drop=(NAMES[0], "README"))
    p = download("--url", short.as_uri(), "--md5", md5_of_file(short), root)
    assert p.returncode == 1
    assert script_error_line(p, "yesno_download.py") == (
        f"yesno_download.py: {root}/waves_yesno.tar.gz: 59 wav files, no README; expected 60 and "
        "README in waves_yesno/ (remove it and run stage 0 again)")
    assert not (root / "waves_yesno").exists()
    assert [f for f in os.listdir(root) if f.startswith(".")] == []      # no temporary left


def test_default_checksum_is_the_published_one():
    from yesno_download import MD5, URL
    assert URL == "https://www.openslr.org/resources/1/waves_yesno.tar.gz"
    assert MD5 == "962ff6e904d2df1126132ecec6978786"


# --------------------------------------------------------------------------- run.sh stages 0-2

def test_run_sh_bad_corpus_stops_at_stage_1(corpus, tmp_path):
    break_name(corpus)
    s5 = link_recipe(RECIPE, tmp_path)
    p = run_script(["./run.sh", "--corpus-dir", corpus, "--stop-stage", "3"], cwd=s5)
    assert p.returncode == 1
    assert "not a yesno file name" in p.stderr.strip().splitlines()[-1]
    assert "skipping the download" in p.stdout
    assert not (s5 / "data").exists()


def test_run_sh_lang_and_grammar(corpus, tmp_path):
    """Kaldi's lexicon (YES Y, NO N, <SIL> SIL; phones without positions) and unigram G."""
    s5 = link_recipe(RECIPE, tmp_path)
    p = run_script(["./run.sh", "--corpus-dir", corpus, "--stop-stage", "2"], cwd=s5)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    lang = s5 / "data" / "lang_test_tg"
    assert [x.split()[0] for x in read_lines(lang / "phones.txt")][:4] == ["<eps>", "SIL", "Y", "N"]
    words = dict(x.split() for x in read_lines(lang / "words.txt"))
    assert {"<SIL>", "YES", "NO"} <= set(words)
    assert read_lines(lang / "oov.txt") == ["<SIL>"]
    assert read_lines(s5 / "data" / "local" / "dict" / "lexicon.txt") == ["<SIL> SIL", "YES Y",
                                                                          "NO N"]
    # one state: YES and NO at -ln(0.1), final weight (</s>) -ln(0.1), as arpa2fst makes it
    g = read_fst(lang / "G.fst")
    arcs = sorted((a[0], round(a[2], 4)) for a in arcs_of(g)[g.start])
    assert arcs == [(int(words["NO"]), 2.3026), (int(words["YES"]), 2.3026)]
    assert (s5 / "data" / "train_yesno" / "text").is_file()


def test_make_results_needs_a_decode(tmp_path):
    (tmp_path / "exp").mkdir()
    p = run_script([sys.executable, RECIPE / "local" / "make_results.py", "--prog",
                    "make_results.py", "--exp", tmp_path / "exp", "--out", tmp_path / "R.md"])
    assert p.returncode == 1
    assert script_error_line(p, "make_results.py") == (
        f"make_results.py: {tmp_path}/exp/mono0a/decode_test_yesno: no wer_* files (run ./run.sh "
        "through stage 5 first)")
    assert not (tmp_path / "R.md").exists()
