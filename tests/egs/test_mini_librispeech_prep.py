"""egs/mini_librispeech/s5: data preparation from LibriSpeech's layout, the dictionary from the
LibriSpeech lexicon, the download stage (checksums, truncation, archives), bad input, run.sh's
stages 0-2 and the RESULTS.md a checkout carries.

Everything runs on stand-ins generated here in LibriSpeech's layout and formats
(tests/egs/librispeech_standin.py: FLAC, .trans.txt, SPEAKERS.TXT, the lexicon, a gzipped ARPA
LM); the audio is harmonic bursts (nothing to recognise: the whole recipe on spoken digits is
tests/egs/test_mini_librispeech_recipe.py).
"""
import hashlib
import os
import shutil
import sys
import tarfile

import pytest

from helpers import ROOT, link_recipe, md5_of_file, read_lines, run_script, script_error_line
from librispeech_standin import LM_FILE, TEST, TRAIN, synthetic_utts, write_standin

RECIPE = ROOT / "egs" / "mini_librispeech" / "s5"
LOCAL = RECIPE / "local"
sys.path.insert(0, str(LOCAL))
from download_corpus import LEXICON, LMS, PARTS  # noqa: E402
from make_results import results  # noqa: E402


def script(name, *args, cwd=None):
    return run_script([sys.executable, LOCAL / name, "--prog", name, *args], cwd=cwd)


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    """Two training readers (two chapters of two utterances each), one dev reader."""
    root = tmp_path_factory.mktemp("minilibri") / "corpus"
    return write_standin(root, synthetic_utts({TRAIN: 2, TEST: 1}, chapters=2, per_chapter=2))


@pytest.fixture
def corpus(standin, tmp_path):
    """A private copy of the stand-in that a test may break."""
    d = tmp_path / "corpus"
    shutil.copytree(standin, d)
    return d


def chapter(corpus, part=TRAIN):
    """The first chapter folder of a part."""
    d = corpus / "LibriSpeech" / part
    reader = sorted(d.iterdir())[0]
    return sorted(reader.iterdir())[0]


# --------------------------------------------------------------------------- data preparation

def test_data_prep_as_kaldi(corpus, tmp_path):
    data = tmp_path / "data"
    p = script("data_prep.py", corpus, data, TRAIN, TEST)
    assert p.returncode == 0, p.stderr
    assert "wrote" in p.stdout
    train = data / "train_clean_5"
    wav = dict(x.split(maxsplit=1) for x in read_lines(train / "wav.scp"))
    assert len(wav) == 8
    utt = "100-5000-0000"
    assert wav[utt] == str(corpus.resolve() / "LibriSpeech" / TRAIN / "100" / "5000" /
                           f"{utt}.flac")
    # each chapter is a speaker, as Kaldi's data_prep.sh; spk2gender from SPEAKERS.TXT
    assert dict(x.split() for x in read_lines(train / "utt2spk"))[utt] == "100-5000"
    assert read_lines(train / "spk2gender") == ["100-5000 m", "100-5001 m", "101-5010 f",
                                                "101-5011 f"]
    trans = read_lines(corpus / "LibriSpeech" / TRAIN / "100" / "5000" / "100-5000.trans.txt")
    assert read_lines(train / "text")[:2] == trans
    assert sorted(os.listdir(data)) == ["dev_clean_2", "train_clean_5"]
    v = run_script([ROOT / "utils" / "validate_data_dir.sh", "--no-feats", train], cwd=RECIPE)
    assert v.returncode == 0, v.stderr
    again = script("data_prep.py", corpus, data, TRAIN, TEST)
    assert again.returncode == 0 and again.stdout.count("kept (unchanged)") == 2


def _no_transcript(corpus):
    d = chapter(corpus)
    f = d / f"{d.parent.name}-{d.name}.trans.txt"
    f.unlink()
    return f"no such file {f} (every chapter folder holds its transcript"


def _truncated_flac(corpus):
    f = sorted(chapter(corpus, TEST).glob("*.flac"))[0]
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])   # a good header, half the frames
    return f"{f}: not a readable FLAC file ("


def _no_audio(corpus):
    f = sorted(chapter(corpus).glob("*.flac"))[1]
    f.unlink()
    trans = f.parent / f"{f.parent.parent.name}-{f.parent.name}.trans.txt"
    return f"{trans}:2: utterance {f.stem} has no audio (no such file {f})"


def _no_line(corpus):
    d = chapter(corpus)
    trans = d / f"{d.parent.name}-{d.name}.trans.txt"
    trans.write_text(read_lines(trans)[0] + "\n")
    return f"{d}/{d.parent.name}-{d.name}-0001.flac: no line in {trans}"


def _bad_reader(corpus):
    d = corpus / "LibriSpeech" / TRAIN / "reader7"
    d.mkdir()
    return f"{d}: unexpected reader folder name (LibriSpeech names reader folders by numbers)"


def _unknown_reader(corpus):
    f = corpus / "LibriSpeech" / "SPEAKERS.TXT"
    f.write_text("\n".join(x for x in read_lines(f) if not x.startswith("200")) + "\n")
    return f"{f}: no line for reader 200"


@pytest.mark.parametrize("damage", [_no_transcript, _truncated_flac, _no_audio, _no_line,
                                    _bad_reader, _unknown_reader])
def test_bad_corpus_is_one_line_and_nothing_written(corpus, tmp_path, damage):
    expected = damage(corpus)
    data = tmp_path / "data"
    p = script("data_prep.py", corpus, data, TRAIN, TEST)
    assert p.returncode == 1
    line = script_error_line(p, "data_prep.py")
    assert line.startswith(f"data_prep.py: {expected}"), line
    assert not data.exists() or not any(data.iterdir())


def test_run_sh_bad_corpus_leaves_no_data(corpus, tmp_path):
    _no_transcript(corpus)
    s5 = link_recipe(RECIPE, tmp_path)
    p = run_script(["./run.sh", "--corpus-dir", corpus, "--stop-stage", "2"], cwd=s5)
    assert p.returncode == 1
    assert "no such file" in p.stderr.strip().splitlines()[-1]
    assert "skipping its download" in p.stdout
    assert sorted(os.listdir(s5 / "data")) == ["local"]           # stage 0's links only
    assert sorted(os.listdir(s5 / "data" / "local")) == ["lm"]


# --------------------------------------------------------------------------- the dictionary

def test_prepare_dict_as_kaldi(standin, tmp_path):
    out = tmp_path / "dict_nosp"
    p = script("prepare_dict.py", standin / LEXICON.name, out)
    assert p.returncode == 0, p.stderr
    lex = read_lines(out / "lexicon.txt")
    assert lex[:3] == ["!SIL SIL", "<SPOKEN_NOISE> SPN", "<UNK> SPN"]
    assert "ZERO Z IH1 R OW0" in lex and "ZERO Z IY1 R OW0" in lex and "HELLO HH AH0 L OW1" in lex
    assert read_lines(out / "silence_phones.txt") == ["SIL", "SPN"]
    assert read_lines(out / "optional_silence.txt") == ["SIL"]
    nonsil = read_lines(out / "nonsilence_phones.txt")
    assert "OW0 OW1" in nonsil and "T" in nonsil      # stress variants share a line (a root)
    questions = read_lines(out / "extra_questions.txt")
    assert questions[0] == "SIL SPN" and "AH0 EH0 OW0" in questions


def test_prepare_dict_bad_line(tmp_path):
    lex = tmp_path / "librispeech-lexicon.txt"
    lex.write_text("ONE\tW AH1 N\nTWO\tT UW9\n")
    p = script("prepare_dict.py", lex, tmp_path / "dict")
    assert p.returncode == 1
    assert script_error_line(p, "prepare_dict.py") == (
        f"prepare_dict.py: {lex}:2: 'UW9' is not an ARPAbet phone (word TWO)")
    assert not (tmp_path / "dict").exists()


# --------------------------------------------------------------------------- the download stage

def site_of(standin, tmp_path, parts=(TRAIN, TEST)):
    """OpenSLR's layout (resources/31/<part>.tar.gz, resources/11/...) of the stand-in, and an
    md5sum file of it."""
    site = tmp_path / "site"
    (site / "31").mkdir(parents=True)
    (site / "11").mkdir()
    for part in parts:
        with tarfile.open(site / "31" / PARTS[part].name, "w:gz") as tar:
            tar.add(standin / "LibriSpeech" / part, f"LibriSpeech/{part}")
            tar.add(standin / "LibriSpeech" / "SPEAKERS.TXT", "LibriSpeech/SPEAKERS.TXT")
    shutil.copy(standin / LEXICON.name, site / "11")
    shutil.copy(standin / LM_FILE, site / "11")
    sums = tmp_path / "md5sum.txt"
    sums.write_text("".join(f"{md5_of_file(f)}  {f.name}\n" for f in sorted(site.glob("*/*"))))
    return site, sums


def test_download_checks_unpacks_and_links(standin, tmp_path):
    site, sums = site_of(standin, tmp_path)
    root, lm = tmp_path / "corpus", tmp_path / "data" / "local" / "lm"
    p = script("download_corpus.py", "--base-url", site.as_uri(), "--checksums", sums,
               "--lm-dir", lm, root)
    assert p.returncode == 0, p.stderr
    assert f"downloaded {site.as_uri()}/31/train-clean-5.tar.gz" in p.stdout
    for part in (TRAIN, TEST):
        a = sorted((standin / "LibriSpeech" / part).rglob("*"))
        b = sorted((root / "LibriSpeech" / part).rglob("*"))
        assert [x.relative_to(standin) for x in a] == [x.relative_to(root) for x in b]
    assert (root / "LibriSpeech" / "SPEAKERS.TXT").is_file()
    assert not list(root.glob("**/*.part")) and not list(root.glob(".*.tmp"))
    assert os.readlink(lm / "lm_tgsmall.arpa.gz") == str((root / LM_FILE).resolve())
    assert (lm / LEXICON.name).read_text() == (standin / LEXICON.name).read_text()
    again = script("download_corpus.py", "--base-url", "file:///nowhere", root)
    assert again.returncode == 0 and again.stdout.count("is there, skipping") == 4


def test_truncated_download_is_one_line(standin, tmp_path):
    site, sums = site_of(standin, tmp_path, parts=(TEST,))
    good = site / "31" / PARTS[TEST].name
    data = good.read_bytes()
    good.write_bytes(data[: len(data) // 2])
    root = tmp_path / "corpus"
    p = script("download_corpus.py", "--parts", TEST, "--base-url", site.as_uri(),
               "--checksums", sums, root)
    assert p.returncode == 1
    part = root / f"{PARTS[TEST].name}.part"
    line = script_error_line(p, "download_corpus.py")
    assert line.startswith(f"download_corpus.py: {part}: MD5 {md5_of_file(good)} ({len(data) // 2} "
                           f"bytes), expected {md5_of(data)}: a truncated or failed download "
                           f"of {site.as_uri()}/31/{PARTS[TEST].name}"), line
    assert not part.exists() and not (root / "LibriSpeech").exists()


def md5_of(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def test_published_checksums_and_sizes(standin, tmp_path):
    """Without --checksums the published MD5 and size are checked: the stand-in's lexicon is
    not OpenSLR's."""
    site, _ = site_of(standin, tmp_path, parts=())
    root = tmp_path / "corpus"
    p = script("download_corpus.py", "--parts", "", "--lms", "", "--base-url", site.as_uri(),
               root)
    assert p.returncode == 1
    lex = site / "11" / LEXICON.name
    assert script_error_line(p, "download_corpus.py") == (
        f"download_corpus.py: {root / LEXICON.name}.part: MD5 {md5_of_file(lex)} "
        f"({lex.stat().st_size} bytes), expected {LEXICON.md5} ({LEXICON.size} bytes): a "
        f"truncated or failed download of {site.as_uri()}/11/{LEXICON.name}; the file was "
        "removed (run stage 0 again)")
    assert not (root / LEXICON.name).exists()
    # the published table: Kaldi's sizes, MD5s from the sources the script names
    assert PARTS[TRAIN].size == 332954390 and PARTS[TEST].size == 126046265
    assert LMS["tgsmall"].name == LM_FILE and LMS["tglarge"].size == 759636181
    assert PARTS[TEST].md5 == "6d7ab67ac6a1d2c993d050e16d61080d"


def test_failed_download_and_a_wrong_archive(standin, tmp_path):
    root = tmp_path / "corpus"
    p = script("download_corpus.py", "--parts", TEST, "--base-url",
               (tmp_path / "absent").as_uri(), root)
    assert p.returncode == 1
    line = script_error_line(p, "download_corpus.py")
    assert f"{root / PARTS[TEST].name}.part: download of " in line
    # an archive of another layout: one line naming it, nothing unpacked
    site = tmp_path / "site" / "31"
    site.mkdir(parents=True)
    with tarfile.open(site / PARTS[TEST].name, "w:gz") as tar:
        tar.add(standin / "LibriSpeech" / TEST, TEST)
    sums = tmp_path / "sums"
    sums.write_text(f"{md5_of_file(site / PARTS[TEST].name)}  {PARTS[TEST].name}\n")
    p = script("download_corpus.py", "--parts", TEST, "--lms", "", "--base-url",
               site.parent.as_uri(), "--checksums", sums, root)
    assert p.returncode == 1
    assert script_error_line(p, "download_corpus.py").startswith(
        f"download_corpus.py: {root / PARTS[TEST].name}: unexpected member {TEST} ")
    assert not (root / "LibriSpeech").exists()


# --------------------------------------------------------------------------- run.sh, RESULTS.md

def test_run_sh_stages_0_to_2(standin, tmp_path):
    """The stand-in through data preparation, lang, G and MFCC, as a user's run."""
    s5 = link_recipe(RECIPE, tmp_path)
    p = run_script(["./run.sh", "--corpus-dir", standin, "--stop-stage", "2"], cwd=s5)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    lang = s5 / "data" / "lang_nosp_test_tgsmall"
    assert (lang / "G.fst").is_file()
    words = {x.split()[0] for x in read_lines(lang / "words.txt")}
    assert {"<UNK>", "!SIL", "<SPOKEN_NOISE>", "ZERO", "HELLO"} <= words
    assert read_lines(lang / "oov.txt") == ["<UNK>"]
    for x in ("train_clean_5", "dev_clean_2"):
        assert len(read_lines(s5 / "data" / x / "feats.scp")) == len(
            read_lines(s5 / "data" / x / "wav.scp"))


def test_results_md_is_the_no_run_file():
    """The checkout's RESULTS.md is what make_results.py writes before any run."""
    assert (RECIPE / "RESULTS.md").read_text() == "\n".join(results(RECIPE / "exp", no_run=True)) \
        + "\n"
