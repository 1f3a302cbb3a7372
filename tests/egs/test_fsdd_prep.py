"""egs/fsdd/s5 data preparation, splits, bad input, the CMUdict lexicon and the one-word grammar.

The real recordings are read from ../shared/corpora/fsdd when that folder is there (skipped with
the reason otherwise); the bad-input cases run on a generated stand-in with FSDD's names and
counts (3000 short 8 kHz wavs), so they run on any clone.
"""
import math
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from nnetmix.lang.symbols import LangError, read_symbol_table

from helpers import (ROOT, arcs_of, best_cost, read_fst, read_lines, link_recipe, run_script,
                     symbol_table, write_decode, write_run, write_wav)

RECIPE = ROOT / "egs" / "fsdd" / "s5"
FSDD = ROOT.parent / "shared" / "corpora" / "fsdd"
# the recipe's local/*.py modules import each other as run from local/ (sys.path[0])
sys.path.insert(0, str(RECIPE / "local"))
from fsdd_data_prep import (NUM_TAKES, SPEAKERS, WORDS, CorpusError, prepare_fsdd,  # noqa: E402
                            scan_fsdd, split_fsdd)
from fsdd_prepare_dict import cmudict_prons, dict_files  # noqa: E402
from fsdd_prepare_grammar import grammar_text  # noqa: E402

needs_fsdd = pytest.mark.skipif(not (FSDD / "recordings").is_dir(),
                                reason=f"{FSDD}/recordings is not there (the FSDD corpus, "
                                       "../shared/corpora/fsdd; a user's clone has no ../shared)")
PREP = RECIPE / "local" / "fsdd_data_prep.py"


def prep(*args, cwd=None):
    return run_script([sys.executable, PREP, "--prog", "fsdd_data_prep.py", *args], cwd=cwd)


def error_lines(p) -> list[str]:
    """The lines of stderr that are not the INFO line of the arguments; the error is last."""
    lines = p.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("fsdd_data_prep.py: "), p.stderr
    return [x for x in lines if " INFO [" not in x]


def table(path: Path) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in read_lines(path))


def is_c_sorted(lines):
    keys = [line.split(" ", 1)[0].encode() for line in lines]
    return keys == sorted(keys) and len(set(keys)) == len(keys)


# --------------------------------------------------------------------------- a stand-in corpus

@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    """A folder with FSDD's 3000 file names, each a 0.1 s 8 kHz mono wav (8 MFCC frames)."""
    root = tmp_path_factory.mktemp("fsdd_standin")
    rec = root / "recordings"
    rec.mkdir()
    for s in SPEAKERS:
        for d in range(len(WORDS)):
            for i in range(NUM_TAKES):
                write_wav(rec / f"{d}_{s}_{i}.wav", num_samples=800, rate=8000)
    return root


@pytest.fixture
def corpus(standin, tmp_path):
    """A private copy of the stand-in (links to its wavs) that a test may break."""
    rec = tmp_path / "fsdd" / "recordings"
    rec.mkdir(parents=True)
    for f in os.listdir(standin / "recordings"):
        os.symlink(standin / "recordings" / f, rec / f)
    return tmp_path / "fsdd"


def test_standin_splits(standin, tmp_path):
    assert prepare_fsdd(standin, tmp_path / "off")[:2] == (2700, 300)
    assert prepare_fsdd(standin, tmp_path / "theo", "speaker", "theo")[:2] == (2500, 500)
    test = table(tmp_path / "theo" / "test" / "utt2spk")
    assert set(test.values()) == {"theo"}
    assert "theo" not in set(table(tmp_path / "theo" / "train" / "utt2spk").values())


def test_rerun_keeps_an_unchanged_directory(standin, tmp_path):
    assert prepare_fsdd(standin, tmp_path)[2] == ["train", "test"]
    (tmp_path / "train" / "feats.scp").write_text("kept\n")
    assert prepare_fsdd(standin, tmp_path)[2] == []
    assert (tmp_path / "train" / "feats.scp").read_text() == "kept\n"
    # another split replaces the directories whole: no stale feats.scp
    prepare_fsdd(standin, tmp_path, "speaker", "lucas")
    assert not (tmp_path / "train" / "feats.scp").exists()


def break_missing(c):
    os.unlink(c / "recordings" / "3_george_17.wav")


def break_renamed(c):
    os.rename(c / "recordings" / "3_george_17.wav", c / "recordings" / "3_george_17.WAV")


def break_speaker(c):
    os.rename(c / "recordings" / "3_george_17.wav", c / "recordings" / "3_georgia_17.wav")


def break_index(c):
    os.rename(c / "recordings" / "3_george_17.wav", c / "recordings" / "3_george_50.wav")


def break_rate(c):
    os.unlink(c / "recordings" / "3_george_17.wav")
    write_wav(c / "recordings" / "3_george_17.wav", num_samples=320, rate=16000)


def break_empty(c):
    os.unlink(c / "recordings" / "3_george_17.wav")
    (c / "recordings" / "3_george_17.wav").write_bytes(b"")


def break_no_recordings(c):
    shutil.rmtree(c / "recordings")


@pytest.mark.parametrize("breaker, args, first_line", [
    (break_missing, [], "recordings: 2999 recordings, expected 3000 (6 speakers x 10 digits x 50); "
                        "missing 3_george_17.wav (restore"),
    (break_renamed, [], "recordings/3_george_17.WAV: not an FSDD file name (expected "
                        "{digit}_{speaker}_{index}.wav"),
    (break_speaker, [], "recordings/3_georgia_17.wav: unknown speaker 'georgia'"),
    (break_index, [], "recordings/3_george_50.wav: index 50 out of range (FSDD has takes 0-49"),
    (break_rate, [], "recordings/3_george_17.wav: 16000 Hz, 1 channel(s); FSDD is 8000 Hz mono"),
    (break_empty, [], "recordings/3_george_17.wav: not a readable wav file"),
    (break_no_recordings, [], "recordings (--fsdd-dir is the folder that holds recordings/"),
    (None, ["--split", "speaker", "--test-speaker", "zohar"],
     "test speaker 'zohar' is not in the corpus (one of: jackson nicolas theo yweweler george "
     "lucas)"),
    (None, ["--split", "speaker"], "--split speaker needs --test-speaker NAME"),
    (None, ["--test-speaker", "theo"], "--test-speaker theo goes with --split speaker"),
    (None, ["--split", "random"], "--split must be official or speaker, got 'random'"),
])
def test_bad_input_is_one_line_and_writes_nothing(corpus, tmp_path, breaker, args, first_line):
    if breaker:
        breaker(corpus)
    p = prep(*args, corpus, tmp_path / "data")
    assert p.returncode == 1, p.stdout + p.stderr
    err = error_lines(p)
    assert len(err) == 1 and first_line in err[0], p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "data").exists()


def test_error_keeps_an_existing_data_dir(corpus, tmp_path):
    assert prep(corpus, tmp_path / "data").returncode == 0
    before = {f: (tmp_path / "data" / "train" / f).read_text() for f in ("wav.scp", "text")}
    break_missing(corpus)
    assert prep("--split", "speaker", "--test-speaker", "theo", corpus,
                tmp_path / "data").returncode == 1
    assert {f: (tmp_path / "data" / "train" / f).read_text() for f in before} == before
    assert sorted(os.listdir(tmp_path / "data")) == ["test", "train"]    # no temporary left


def test_missing_directory(tmp_path):
    p = prep(tmp_path / "nowhere", tmp_path / "data")
    assert p.returncode == 1
    assert error_lines(p) == [(f"fsdd_data_prep.py: no such directory {tmp_path / 'nowhere'} "
                                "(--fsdd-dir: a clone of github.com/Jakobovski/"
                                "free-spoken-digit-dataset at commit "
                                "26eb9aaf76e81b692f806f9140c2d2777410d7a1)")]


@pytest.mark.parametrize("args, message", [
    ([], "--fsdd-dir is required: a clone of github.com/Jakobovski/free-spoken-digit-dataset"),
    (["--fsdd-dir", "x", "--split", "speaker"], "--split speaker needs --test-speaker NAME"),
    (["--fsdd-dir", "x", "--test-speaker", "theo"], "--test-speaker goes with --split speaker"),
    (["--fsdd-dir", "x", "--dnn-cv", "random"], "--dnn-cv must be auto, takes or speaker, got "
                                               "'random'"),
    (["--fsdd-dir", "x", "--dnn-input", "plp"], "--dnn-input must be fmllr or mfcc, got 'plp'"),
    (["--fsdd-dir", "nowhere"], "local/fsdd_data_prep.py: no such directory nowhere (--fsdd-dir: "
                                "a clone of github.com/Jakobovski/free-spoken-digit-dataset"),
])
def test_run_sh_option_errors(tmp_path, args, message):
    s5 = link_recipe(RECIPE, tmp_path)
    p = run_script(["./run.sh", *args], cwd=s5)
    assert p.returncode == 1
    assert message in p.stderr.strip().splitlines()[-1]
    assert not (s5 / "data").exists() and not (s5 / "exp").exists()


def test_run_sh_stages_0_2_leave_one_speaker_out(standin, tmp_path):
    """The held-out speaker's test set is one speaker: its jobs are capped at one."""
    s5 = link_recipe(RECIPE, tmp_path)
    p = run_script(["./run.sh", "--fsdd-dir", standin, "--split", "speaker", "--test-speaker",
                    "lucas", "--stop-stage", "2", "--nj", "2"], cwd=s5)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    test = s5 / "data" / "loso_lucas" / "test"
    assert len(read_lines(test / "feats.scp")) == 500 and len(read_lines(test / "cmvn.scp")) == 1
    assert len(read_lines(s5 / "data" / "loso_lucas" / "train" / "feats.scp")) == 2500
    assert "WER" not in p.stdout and (s5 / "data" / "lang_test" / "G.fst").is_file()
    assert sorted(os.listdir(s5 / "exp" / "loso_lucas" / "stage_seconds")) == ["0", "1", "2"]
    assert (s5 / "exp" / "loso_lucas" / "commit").read_text().strip() not in ("", "unknown")


def test_run_sh_help_names_the_source():
    p = run_script(["./run.sh", "--help"], cwd=RECIPE)
    assert p.returncode == 0   # Kaldi's parse_options.sh prints --help to stderr
    assert "Jakobovski/free-spoken-digit-dataset" in p.stderr
    assert "26eb9aaf76e81b692f806f9140c2d2777410d7a1" in p.stderr
    for opt in ("--fsdd-dir", "--split official|speaker", "--test-speaker", "--nj"):
        assert opt in p.stderr


# --------------------------------------------------------------------------- the real corpus

@needs_fsdd
def test_real_corpus_official_split(tmp_path):
    p = prep(FSDD, tmp_path)
    assert p.returncode == 0, p.stderr
    train, test = tmp_path / "train", tmp_path / "test"
    assert len(read_lines(train / "text")) == 2700 and len(read_lines(test / "text")) == 300
    for d in (train, test):
        for f in ("wav.scp", "text", "utt2spk"):
            assert is_c_sorted(read_lines(d / f)), f"{d}/{f}"
        for utt, spk in table(d / "utt2spk").items():
            assert utt.startswith(spk + "_")
        spk2utt = {line.split()[0]: line.split()[1:] for line in read_lines(d / "spk2utt")}
        assert sorted(spk2utt) == sorted(SPEAKERS)
    # takes 0-4 of each speaker and digit are the test set; the transcript is the file's digit
    for utt, path in table(test / "wav.scp").items():
        spk, digit, take = utt.split("_")
        assert Path(path).name == f"{digit}_{spk}_{take}.wav" and int(take) < 5
    assert all(int(u.split("_")[2]) >= 5 for u in table(train / "text"))
    assert {w for w in table(test / "text").values()} == set(WORDS)
    assert table(test / "text")["jackson_7_3"] == "SEVEN"
    v = run_script([ROOT / "utils" / "validate_data_dir.sh", "--no-feats", train])
    assert v.returncode == 0, v.stdout + v.stderr


@needs_fsdd
def test_real_corpus_leave_one_speaker_out():
    recs = scan_fsdd(FSDD)
    assert len(recs) == 3000
    for spk in SPEAKERS:
        train, test = split_fsdd(recs, "speaker", spk)
        assert len(test) == 500 and {r.speaker for r in test} == {spk}
        assert len(train) == 2500 and spk not in {r.speaker for r in train}
    with pytest.raises(CorpusError, match="test speaker 'zohar' is not in the corpus"):
        split_fsdd(recs, "speaker", "zohar")


# --------------------------------------------------------------------------- lexicon and grammar

def test_cmudict_lexicon_keeps_both_zero_and_stress():
    prons = cmudict_prons()
    assert ("ZERO", ("Z", "IH1", "R", "OW0")) in prons and ("ZERO", ("Z", "IY1", "R", "OW0")) in prons
    assert ("SEVEN", ("S", "EH1", "V", "AH0", "N")) in prons
    assert {w for w, _ in prons} == set(WORDS) and len(prons) == 11
    files = dict_files(prons)
    assert files["lexicon.txt"][:2] == ["!SIL SIL", "<UNK> SPN"]
    assert "ZERO Z IY1 R OW0" in files["lexicon.txt"] and "ONE W AH1 N" in files["lexicon.txt"]
    assert files["lexicon.txt"] == sorted(files["lexicon.txt"], key=str.encode)
    # stress variants of one base phone share a line (one tree root, shared monophone pdfs)
    assert "AH0 AH1" in files["nonsilence_phones.txt"]
    assert files["extra_questions.txt"][0] == "SIL SPN"
    assert files["extra_questions.txt"][1:] == ["F K N R S T TH V W Z", "AH0 OW0",
                                                "AH1 AO1 AY1 EH1 EY1 IH1 IY1 UW1"]
    used = {p for _, ph in prons for p in ph}
    assert {p for line in files["nonsilence_phones.txt"] for p in line.split()} == used


def test_lang_and_one_word_grammar(tmp_path):
    d = tmp_path / "dict"
    p = run_script([sys.executable, RECIPE / "local" / "fsdd_prepare_dict.py", d])
    assert p.returncode == 0, p.stderr
    p = run_script([ROOT / "utils" / "prepare_lang.sh", d, "<UNK>", tmp_path / "tmp",
                    tmp_path / "lang"])
    assert p.returncode == 0, p.stdout + p.stderr
    words = symbol_table(tmp_path / "lang" / "words.txt")
    g = tmp_path / "lang" / "G.fst"
    p = run_script([sys.executable, RECIPE / "local" / "fsdd_prepare_grammar.py",
                    tmp_path / "lang" / "words.txt", d / "lexicon.txt", g])
    assert p.returncode == 0, p.stdout + p.stderr
    fst = read_fst(g)
    arcs = arcs_of(fst)
    assert len(arcs) == 2 and len(arcs[fst.start]) == 10
    assert sorted(a[0] for a in arcs[fst.start]) == sorted(words[w] for w in WORDS)
    # one word is accepted with probability 1/10; none, two words, or !SIL/<UNK> are not
    assert best_cost(fst, [words["SIX"]], [words["SIX"]]) == pytest.approx(math.log(10), abs=1e-5)
    assert best_cost(fst, [], []) == math.inf
    assert best_cost(fst, [words["SIX"]] * 2, [words["SIX"]] * 2) == math.inf
    assert best_cost(fst, [words["<UNK>"]], [words["<UNK>"]]) == math.inf
    with pytest.raises(LangError, match="at least one word"):
        grammar_text(read_symbol_table(tmp_path / "lang" / "words.txt"), vocab=())


# --------------------------------------------------------------------------- RESULTS.md

def test_make_results_reads_every_split(tmp_path):
    """Every WER with its interval, every system against the monophone and each DNN against the
    best GMM through compare-wer.py's tests, and the leave-one-out folds pooled (write_decode:
    nested errors, 40 utterances of 10 words per test set)."""
    exp = tmp_path / "exp"
    dnn = "dnn_fmllr_rbm_w2"
    for split, mono_wer, tri3_wer in (("official", 0.25, 0.5), ("loso_theo", 10.0, 4.0),
                                      ("loso_lucas", 10.0, 4.0)):
        prefix = f"{split}_"
        write_decode(exp / split / "mono" / "decode_test", mono_wer, best=(9, "0.5"),
                     utt_prefix=prefix)
        write_decode(exp / split / "tri3" / "decode_test", tri3_wer, utt_prefix=prefix)
        (exp / split / "tri3" / "decode_test.si").mkdir()   # decode_fmllr.sh's first pass
        write_run(exp / split / dnn, wer=2.0, utt_prefix=prefix)
        (exp / split / "dnn_pretrain_fmllr").mkdir()           # stage 9's RBMs: not a system
        (exp / split / "commit").write_text("abc1234\n")
        (exp / split / dnn / "cv.scp").write_text("jackson_0_5 x\njackson_1_7 x\n")
        for d, n, t in (("", 0, 1), ("", 3, 100), ("", 7, 50), (dnn, 10, 200)):
            (exp / split / d / "stage_seconds").mkdir(exist_ok=True)
            (exp / split / d / "stage_seconds" / str(n)).write_text(f"{t}\n")
    # a fold with the monophone only is left out of the pooled folds
    write_decode(exp / "loso_george" / "mono" / "decode_test", 10.0, utt_prefix="george_")
    (exp / "make_mfcc").mkdir()
    p = run_script([sys.executable, RECIPE / "local" / "make_results.py", "--exp", exp,
                    "--out", tmp_path / "RESULTS.md", "--note", "Loaded machine."])
    assert p.returncode == 0, p.stderr
    text = (tmp_path / "RESULTS.md").read_text()
    assert text.index("## Official split: takes 0-4") < text.index(
        "## Leave one speaker out: test speaker lucas") < text.index(
        "## Leave one speaker out: test speaker theo") < text.index(
        "## Leave one speaker out, 2 folds pooled (lucas, theo)")
    row = r"\| monophone GMM \(`mono`\) \| 3-4 \| {} \| \[(\S+), (\S+)\] \| wer_9_0.5 \| - \|"
    low, high = map(float, re.search(row.format(r"0\.25 \(1/400\)"), text).groups())
    assert low == 0.0 and 0.25 < high < 1.5
    low, high = map(float, re.search(row.format(r"10\.00 \(40/400\)"), text).groups())
    assert 5.0 < low < 10.0 < high < 15.0
    assert re.search(r"\| tri3, SAT \(fMLLR\) \(`tri3`\) \| 7-8 \| 4.00 \(16/400\) \| "
                     r"\[\S+, \S+\] \| wer_11_0.5 \| - \|", text)
    assert re.search(r"\| DNN \(`dnn_fmllr_rbm_w2`\) \| 9-11 \| 2.00 \(8/400\) \| \[\S+, \S+\] "
                     r"\| wer_11_0.5 \| 3 epochs \(1 rejected\), CV frame accuracy 68.00%; CV set "
                     r"2 utterances, held-out speaker jackson \|", text)
    assert "dnn_pretrain" not in text and "decode_test.si" not in text
    # 1 against 8 errors of 400 (nested): 7 segments all one way, sign test p = 2^-6, and the
    # interval above 0; 40 against 8: significant, the DNN better; pooled: 80 against 16
    comps = [ln for ln in text.splitlines() if ln.startswith("| `dnn_fmllr_rbm_w2` - `mono`")]
    assert len(comps) == 5   # official (the monophone also its best GMM), 2 folds, pooled
    assert comps[0].startswith(f"| `{dnn}` - `mono` | 1 vs 8 of 400 | +1.75 | [")
    assert comps[0].endswith("| **significant**: mono better |")
    assert comps[1].startswith(f"| `{dnn}` - `mono` (best GMM) | 1 vs 8 of 400 | +1.75 |")
    assert "| 40 vs 8 of 400 | -8.00 |" in comps[2]
    assert comps[2].endswith(f"| **significant**: {dnn} better |")
    assert "| 80 vs 16 of 800 | -8.00 |" in comps[4] and "pooled" in comps[4]
    # in each fold and pooled, tri3 is the best GMM: the DNN is compared with it too
    best = [ln for ln in text.splitlines() if ln.startswith(f"| `{dnn}` - `tri3` (best GMM)")]
    assert len(best) == 3 and "| 16 vs 8 of 400 | -2.00 |" in best[0]
    assert "| 32 vs 16 of 800 | -2.00 |" in best[2] and "pooled" in best[2]
    tri3 = [ln for ln in text.splitlines() if ln.startswith("| `tri3` - `mono`")]
    assert len(tri3) == 4 and "| 1 vs 2 of 400 | +0.25 |" in tri3[0]
    assert tri3[3].endswith("| **significant**: tri3 better |") and "80 vs 32 of 800" in tri3[3]
    for what, wer in (("monophone GMM (`mono`)", "10.00 (80/800)"),
                      ("tri3, SAT (fMLLR) (`tri3`)", "4.00 (32/800)"),
                      (f"DNN (`{dnn}`)", "2.00 (16/800)")):
        assert f"| {what} | {wer} | [" in text
    summary = text.split("## Summary: every system against the monophone GMM, each DNN against "
                         "the best GMM")[1].split("## ")[0]
    rows = [ln for ln in summary.splitlines() if ln.startswith("| `") or ln.startswith("| 2 ")]
    assert [r.split(" | ")[0] for r in rows] == (["| `official`"] * 3 + ["| `loso_lucas`"] * 3
                                                 + ["| `loso_theo`"] * 3
                                                 + ["| 2 left-out speakers pooled"] * 3)
    assert rows[3].startswith("| `loso_lucas` | 400 | `mono` | 10.00 [") and "| `tri3` | 4.00 [" in rows[3]
    assert rows[5].startswith("| `loso_lucas` | 400 | `tri3` | 4.00 [") and "| -2.00 [" in rows[5]
    assert rows[10].endswith(f"| **significant**: {dnn} better |")
    assert "%WER 0.25 [ 1 / 400, 0 ins, 0 del, 1 sub ] exp/official/mono/decode_test/wer_9_0.5" in text
    assert "| 7 | tri3 (SAT) + fMLLR alignment | 50 |" in text
    assert f"| 10 | DNN training (`{dnn}`) | 200 |" in text
    assert "| | all of the above | 351 |" in text
    assert "cores" in text and "Loaded machine." in text
    assert re.search(r"Run at commit abc1234 on \d+ cores \(.*\), finished 20\d\d-\d\d-\d\d, by "
                     r"`unknown`; recipe fingerprint unknown\.", text)
    assert "Leave-one-speaker-out folds here: george, lucas, theo; still to be run: jackson, " \
           "nicolas, yweweler. The official split: here." in text


def test_make_results_tie_and_pooled_duplicates(tmp_path):
    """A difference of one word is not significant (a tie) whichever WER is lower; folds whose
    utterance ids repeat cannot be pooled."""
    exp = tmp_path / "exp"
    for split in ("loso_theo", "loso_lucas"):
        write_decode(exp / split / "mono" / "decode_test", 2.0)
        write_run(exp / split / "dnn_rbm_w2", wer=1.75)
    p = run_script([sys.executable, RECIPE / "local" / "make_results.py", "--prog",
                    "make_results.py", "--exp", exp, "--out", tmp_path / "RESULTS.md"])
    assert p.returncode == 1 and not (tmp_path / "RESULTS.md").exists()
    assert p.stderr.strip().splitlines()[-1].startswith("make_results.py: ")
    assert "utt0000 is in the test sets of two folds" in p.stderr
    (exp / "loso_lucas").rename(tmp_path / "lucas")
    p = run_script([sys.executable, RECIPE / "local" / "make_results.py", "--exp", exp,
                    "--out", tmp_path / "RESULTS.md"])
    assert p.returncode == 0, p.stderr
    comp = next(ln for ln in (tmp_path / "RESULTS.md").read_text().splitlines()
                if ln.startswith("| `dnn_rbm_w2` - `mono`"))
    assert "| 8 vs 7 of 400 | -0.25 |" in comp and comp.endswith("| not significant (a tie) |")


def test_make_results_without_runs(tmp_path):
    (tmp_path / "exp").mkdir()
    p = run_script([sys.executable, RECIPE / "local" / "make_results.py", "--prog",
                    "make_results.py", "--exp", tmp_path / "exp", "--out", tmp_path / "R.md"])
    assert p.returncode == 1
    assert p.stderr.strip().splitlines()[-1].startswith(
        f"make_results.py: {tmp_path / 'exp'}: no decoded split")
    assert not (tmp_path / "R.md").exists()
