"""egs/swbd/s5 data preparation on a generated stand-in of the LDC releases (tests/egs/swbd_standin.py)."""
import os
import shutil
import sys
from pathlib import Path

import pytest

from helpers import ROOT, run_script

from nnetmix.data import select_dup_limited

RECIPE = ROOT / "egs" / "swbd" / "s5"
# the recipe's local/*.py modules import each other as run from local/ (sys.path[0])
sys.path[:0] = [str(Path(__file__).resolve().parent), str(RECIPE / "local")]
import swbd_standin  # noqa: E402
from eval2000_data_prep import extend_segments  # noqa: E402
from swbd_text import map_word, ms98_utt_id  # noqa: E402


def link_recipe(tmp_path: Path) -> Path:
    """A recipe directory linked to the real one, so run.sh writes data/ under tmp_path."""
    s5 = tmp_path / "s5"
    s5.mkdir()
    for name in ("run.sh", "cmd.sh", "path.sh", "local", "steps", "utils", "bin", "conf"):
        os.symlink(RECIPE / name, s5 / name)
    return s5


def read(path: Path) -> list[str]:
    return path.read_text().splitlines()


def table(path: Path) -> dict[str, str]:
    return {line.split(" ", 1)[0]: (line.split(" ", 1) + [""])[1] for line in read(path)}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """Stand-in corpora, and run.sh stages 0-2 (dictionary, data/train + lang, data/eval2000)."""
    base = tmp_path_factory.mktemp("swbd")
    swbd = swbd_standin.make_swbd(base / "ldc")
    speech, trans = swbd_standin.make_eval2000(base / "ldc")
    s5 = link_recipe(base)
    p = run_script(["./run.sh", "--stop-stage", "2", "--swbd-dir", swbd,
                    "--eval2000-dirs", f"{speech} {trans}"], cwd=s5)
    assert p.returncode == 0, p.stdout + p.stderr
    return {"s5": s5, "swbd": swbd, "speech": speech, "trans": trans, "proc": p}


# ---------------------------------------------------------------------------- word mapping

@pytest.mark.parametrize("word, mapped", [
    # the examples in the comments of Kaldi's swbd1_prepare_dict.sh / swbd1_map_words.pl
    ("[LAUGHTER-STORY]", "STORY"), ("-[40]1K", "-1K"), ("-[AN]Y", "-Y"), ("-[A]B[OUT]-", "-B-"),
    ("{WOLMANIZED}", "WOLMANIZED"), ("[YEAM/YEAH]", "YEAM"), ("THEM_1", "THEM"),
    ("AB[SOLUTE]-", "AB-"), ("[IT'N/ISN'T]", "IT'N"), ("[LEM[GUINI]-/LINGUINI]", "LEM-"),
    ("THEM_1's", "THEM's"), ("[laughter-abs]-", "abs-"),
    # what the Perl really does where its comment says AMMU-IT- ($3 is unset there)
    ("AMMU[N]IT-", "AMMN-T-"),
    # noise words and plain words pass through
    ("[laughter]", "[laughter]"), ("[noise]", "[noise]"), ("[vocalized-noise]", "[vocalized-noise]"),
    ("uh-huh", "uh-huh"), ("i'd", "i'd"),
])
def test_map_word(word, mapped):
    assert map_word(word) == mapped


def test_ms98_utt_id_and_extend_segments():
    assert ms98_utt_id("sw2001A-ms98-a-0002", 0.977625, 11.561375) == "sw02001-A_000098-001156"
    assert ms98_utt_id("sw4940B-ms98-a-0010", 100.004999, 101.005) == "sw04940-B_010000-010101"
    # the examples at the end of Kaldi's extend_segments.pl
    assert extend_segments([("a1", "A", 0, 1), ("a2", "A", 3, 4), ("b1", "B", 0, 1),
                            ("b2", "B", 2, 3)], 1.0) == [
        ("a1", "A", 0.0, 2.0), ("a2", "A", 2.0, 5.0), ("b1", "B", 0.0, 1.5), ("b2", "B", 1.5, 4.0)]
    assert extend_segments([("a1", "A", 0, 2), ("a2", "A", 1, 3)], 1.0) == [
        ("a1", "A", 0.0, 2.0), ("a2", "A", 1.0, 4.0)]
    assert extend_segments([("a1", "A", 0, 2), ("a2", "A", 5, 6), ("a3", "A", 3, 4)], 1.0) == [
        ("a1", "A", 0.0, 2.5), ("a2", "A", 4.5, 7.0), ("a3", "A", 2.5, 4.5)]


def test_remove_dup_selection_is_kaldis():
    # Kaldi's generator (k += 103349 mod 71147, value k / 71147) gives 0.4526, 0.9052, 0.3578,
    # 0.8104, 0.2631 for the five "uh-huh" (kept below 2/5: the 3rd and 5th), then 0.7157,
    # 0.1683, 0.6209 for the three "yeah" (kept below 2/3: the 2nd and 3rd); "hello there"
    # occurs once (< max-count) and draws nothing.
    text = [(f"u{i}", "uh-huh") for i in range(1, 6)] + [("v1", "yeah"), ("w1", "hello  there"),
                                                         ("v2", "yeah"), ("v3", "yeah")]
    assert select_dup_limited(text, 2) == ["u3", "u5", "w1", "v2", "v3"]
    assert select_dup_limited(text, 10) == [u for u, _ in text]
    with pytest.raises(Exception, match="greater than 1"):
        select_dup_limited(text, 1)


# ---------------------------------------------------------------------------- run.sh

def test_run_sh_help_names_the_ldc_releases(tmp_path):
    p = run_script(["./run.sh", "--help"], cwd=link_recipe(tmp_path))
    assert p.returncode == 0
    for s in ("LDC97S62", "LDC2002S09", "LDC2002T43", "--swbd-dir", "--eval2000-dirs",
              "--gmm-dir", "--stage 2 --stop-stage 2"):
        assert s in p.stderr, s  # Kaldi prints --help to stderr
    p = run_script(["./run.sh", "--bogus", "1"], cwd=tmp_path / "s5")
    assert p.returncode == 1 and "invalid option --bogus" in p.stderr


@pytest.mark.parametrize("stage, needle", [
    (0, "sw-ms98-dict.text"), (1, "LDC97S62"), (2, "LDC2002S09"),
])
def test_missing_corpus_names_the_ldc_path(tmp_path, stage, needle):
    s5 = link_recipe(tmp_path)
    if stage == 1:  # stage 1 also needs stage 0's dictionary: give it one
        d = s5 / "data" / "local" / "dict_nosp"
        d.mkdir(parents=True)
        (d / "lexicon.txt").write_text("a ax\n")
    p = run_script(["./run.sh", "--stage", stage, "--stop-stage", stage,
                    "--swbd-dir", tmp_path / "nowhere" / "LDC97S62",
                    "--eval2000-dirs", f"{tmp_path}/nowhere/LDC2002S09/hub5e_00 "
                                       f"{tmp_path}/nowhere/LDC2002T43"], cwd=s5)
    assert p.returncode == 1
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith(f"./run.sh: stage {stage} needs ") and needle in line
    assert line.endswith(": no such file or directory")
    assert str(tmp_path / "nowhere") in line
    assert not (s5 / "data" / "train").exists()


def test_bad_eval2000_dirs_option(tmp_path):
    p = run_script(["./run.sh", "--stage", "2", "--eval2000-dirs", "/only/one"],
                   cwd=link_recipe(tmp_path))
    assert p.returncode == 1 and "takes two directories" in p.stderr


def test_gmm_dir_skips_our_gmm_stages(tmp_path):
    s5 = link_recipe(tmp_path)
    p = run_script(["./run.sh", "--stage", "6", "--stop-stage", "11", "--gmm-dir", "/k/exp/tri4"],
                   cwd=s5)
    assert p.returncode == 0, p.stderr
    for n in range(6, 12):
        assert (f"Stage {n}: skipped, the DNN uses /k/exp/tri4_ali_nodup and "
                "/k/exp/tri4/graph_sw1_tg") in p.stdout, n
    p = run_script(["./run.sh", "--stage", "14", "--gmm-dir", "/k/exp/tri4"], cwd=s5)
    assert p.returncode == 1 and "stage 14 needs /k/exp/tri4/graph_sw1_tg/HCLG.fst" in p.stderr
    p = run_script(["./run.sh", "--stage", "6", "--ali-dir", "/k/exp/tri4_ali_nodup"], cwd=s5)
    assert p.returncode == 1 and "give both --ali-dir and --graph-dir" in p.stderr
    # without them the DNN decodes with our own tri4's graph
    p = run_script(["./run.sh", "--stage", "14"], cwd=s5)
    assert p.returncode == 1 and "stage 14 needs exp/tri4/graph_nosp_sw1_tg/HCLG.fst" in p.stderr


def test_eval2000_prep_names_missing_transcripts(tmp_path):
    speech, trans = swbd_standin.make_eval2000(tmp_path / "ldc")
    (trans / "2000_hub5_eng_eval_tr" / "reference" / "hub5e00.english.000405.stm").unlink()
    s5 = link_recipe(tmp_path)
    p = run_script(["local/eval2000_data_prep.sh", speech, trans, "data/eval2000"], cwd=s5)
    assert p.returncode == 1
    assert "hub5e00.english.000405.stm" in p.stderr and "LDC2002T43" in p.stderr
    assert "Traceback" not in p.stderr


# ---------------------------------------------------------------------------- data/train

def test_data_dirs_validate(prepared):
    for d in ("data/train", "data/eval2000"):
        p = run_script(["utils/validate_data_dir.sh", "--no-feats", d], cwd=prepared["s5"])
        assert p.returncode == 0, p.stderr


def test_train_text_words_are_mapped(prepared):
    text = table(prepared["s5"] / "data/train/text")
    assert text["sw02001-A_000098-000256"] == "hi um yeah i'd like to talk about [laughter]"
    assert text["sw02001-A_000398-000551"] == "yeah it was ab- -at yuppiedom"  # laughter, partials, {}
    assert text["sw02001-A_000551-000625"] == "[noise] them"                   # asides, them_1
    assert text["sw02001-A_000625-000740"] == "uh-huh"                         # trailing [silence]
    assert text["sw02001-B_000250-000400"] == "[vocalized-noise] it'n that right"
    assert text["sw02001-B_000400-000790"] == "yeah april is fine"             # lower case
    # [silence]-only segments are no utterances; sw02010 has no audio
    assert len(text) == 16
    assert not any(u.startswith("sw02001-A_000000") or u.startswith("sw02010") for u in text)
    assert "no audio for conversation sw02010" in prepared["proc"].stderr
    # the LM's text keeps every transcribed utterance, with or without audio (as Kaldi's)
    local = table(prepared["s5"] / "data/local/train/text")
    assert local["sw02010-A_000000-000150"] == "yeah that right" and len(local) == 17


def test_train_segments_wav_and_speakers(prepared):
    s5, swbd = prepared["s5"], prepared["swbd"]
    segments = read(s5 / "data/train/segments")
    assert segments[:5] == [
        "sw02001-A_000098-000256 sw02001-A 0.98 2.56",
        "sw02001-A_000256-000398 sw02001-A 2.56 3.98",
        "sw02001-A_000398-000551 sw02001-A 3.98 5.51",
        "sw02001-A_000551-000625 sw02001-A 5.51 6.25",
        "sw02001-A_000625-000740 sw02001-A 6.25 7.4",
    ]
    assert "sw02001-B_000250-000400 sw02001-B 2.5 4" in segments   # awk's number format
    sph = (swbd / "swb1/disc2/data/sw04940.sph").resolve()
    wav = table(s5 / "data/train/wav.scp")
    assert wav["sw04940-A"] == f"sph2pipe -f wav -p -c 1 {sph} |"
    assert wav["sw04940-B"] == f"sph2pipe -f wav -p -c 2 {sph} |"
    assert list(wav) == ["sw02001-A", "sw02001-B", "sw02005-A", "sw02005-B", "sw04940-A",
                         "sw04940-B"]
    assert table(s5 / "data/train/reco2file_and_channel")["sw02005-B"] == "sw02005 B"
    utt2spk = table(s5 / "data/train/utt2spk")
    assert all(spk == u[:9] for u, spk in utt2spk.items())
    assert table(s5 / "data/train/spk2utt")["sw04940-A"] == \
        "sw04940-A_000010-000200 sw04940-A_000200-000350"


def test_dictionary(prepared):
    d = prepared["s5"] / "data/local/dict_nosp"
    lexicon = read(d / "lexicon.txt")
    for line in ("!sil sil", "<unk> spn", "[laughter] lau", "[noise] nsn", "[vocalized-noise] spn",
                 "-at ae t", "ab- ae b", "it'n ih n t", "yeah y ae", "yuppiedom y ah p iy d ax m",
                 "april ey p r ih l", "them dh ax m", "them dh eh m", "i ay"):
        assert line in lexicon, line
    assert lexicon == sorted(set(lexicon), key=str.encode)
    assert not any(line.startswith(("file:", "#", "[laughter-")) for line in lexicon)
    assert read(d / "silence_phones.txt") == ["sil", "spn", "nsn", "lau"]
    assert read(d / "optional_silence.txt") == ["sil"]
    nonsil = read(d / "nonsilence_phones.txt")
    assert not {"sil", "spn", "nsn", "lau"} & set(nonsil) and nonsil == sorted(nonsil)
    assert {p for line in lexicon for p in line.split()[1:]} == set(nonsil) | {"sil", "spn", "nsn",
                                                                               "lau"}
    assert (d / "extra_questions.txt").read_text() == ""
    words = {line.split()[0] for line in read(prepared["s5"] / "data/lang_nosp/words.txt")}
    assert {"[laughter]", "<unk>", "-at", "uh-huh"} <= words


def test_flat_layout_and_rerun_skips(tmp_path):
    swbd = swbd_standin.make_swbd(tmp_path / "ldc", flat=True)
    s5 = link_recipe(tmp_path)
    ms98 = swbd / "transcriptions/swb_ms98_transcriptions"
    p = run_script(["local/swbd1_data_prep.sh", swbd, ms98, "data/train"], cwd=s5)
    assert p.returncode == 0, p.stderr
    wav = table(s5 / "data/train/wav.scp")
    assert wav["sw02005-A"] == f"sph2pipe -f wav -p -c 1 {(swbd / 'sw02005.sph').resolve()} |"
    p = run_script(["local/swbd1_data_prep.sh", swbd, ms98, "data/train"], cwd=s5)
    assert p.returncode == 0 and "skipping" in p.stdout


def test_bad_transcript_line_is_one_error(tmp_path):
    swbd = swbd_standin.make_swbd(tmp_path / "ldc")
    ms98 = swbd / "transcriptions/swb_ms98_transcriptions"
    bad = ms98 / "20/2005/sw2005B-ms98-a-trans.text"
    bad.write_text(bad.read_text() + "sw2005B-ms98-a-0003 1.0x 2.0 oops\n")
    p = run_script(["local/swbd1_data_prep.sh", swbd, ms98, "data/train"], cwd=link_recipe(tmp_path))
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert f"{bad}:3: expected '<segment-id> <start> <end> words...'" in p.stderr


# ---------------------------------------------------------------------------- data/eval2000

def test_eval2000_ids_segments_and_scoring_files(prepared):
    e = prepared["s5"] / "data/eval2000"
    # ids from the pem times x 100 truncated (1.15 -> 114, as awk's %d); segments widened by
    # 0.1 s without overlap (1.85/1.91 meet at 1.88); the IGNORE segment is not an utterance
    assert read(e / "segments") == [
        "en_4156-A_000050-000185 en_4156-A 0.40 1.88",
        "en_4156-A_000191-000320 en_4156-A 1.88 3.30",
        "en_4156-B_000430-000595 en_4156-B 4.20 6.05",
        "sw_4390-A_000114-000250 sw_4390-A 1.05 2.60",
        "sw_4390-B_000060-000200 sw_4390-B 0.50 2.03",
        "sw_4390-B_000206-000330 sw_4390-B 2.03 3.40",
    ]
    text = table(e / "text")
    assert text["en_4156-A_000050-000185"] == "oh yeah (%HESITATION) i'm"
    assert list(table(e / "wav.scp")) == ["en_4156-A", "en_4156-B", "sw_4390-A", "sw_4390-B"]
    assert table(e / "wav.scp")["sw_4390-B"].startswith("sph2pipe -f wav -p -c 2 /")
    assert table(e / "utt2spk")["sw_4390-B_000206-000330"] == "sw_4390-B"
    stm = (e / "stm").read_text()
    assert "IGNORE_TIME_SEGMENT_IN_SCORING" in stm and "<B_ASIDE>" not in stm
    assert (e / "glm").read_text().rstrip("\n") == swbd_standin.EVAL2000_GLM.rstrip("\n")


# ---------------------------------------------------------------------------- stage 5: subsets

def test_train_dev_and_nodup_subsets(prepared, tmp_path):
    s5 = link_recipe(tmp_path)
    shutil.copytree(prepared["s5"] / "data", s5 / "data")
    p = run_script(["./run.sh", "--stage", "5", "--stop-stage", "5", "--num-dev-utts", "3",
                    "--nodup-max-count", "2", "--num-short-utts", "8", "--num-mono-utts", "4",
                    "--num-tri-utts", "6", "--tri-dup-max-count", "2"],
                   cwd=s5)
    assert p.returncode == 0, p.stdout + p.stderr
    train = list(table(s5 / "data/train/utt2spk"))
    dev = list(table(s5 / "data/train_dev/utt2spk"))
    nodev = list(table(s5 / "data/train_nodev/utt2spk"))
    assert dev == train[:3] and nodev == train[3:]
    nodup = table(s5 / "data/train_nodup/text")
    # five "uh-huh" in train_nodev, at most about 2 kept (Kaldi's rule: the 3rd and 5th)
    assert [u for u, t in nodup.items() if t == "uh-huh"] == ["sw02005-A_000050-000150",
                                                             "sw04940-A_000200-000350"]
    assert len(nodup) == 10 and set(nodup) <= set(nodev)
    assert "Reduced number of utterances from 13 to 10" in p.stdout
    assert len(table(s5 / "data/train_100kshort/utt2spk")) == 8
    assert len(table(s5 / "data/train_30kshort/utt2spk")) == 4
    # tri1 and tri2's data: the first 6 of train_nodev, at most about 2 of one transcript
    assert list(table(s5 / "data/train_100k/utt2spk")) == nodev[:6]
    assert set(table(s5 / "data/train_100k_nodup/utt2spk")) <= set(nodev[:6])
    for d in ("train_dev", "train_nodev", "train_nodup", "train_30kshort", "train_100k_nodup"):
        q = run_script(["utils/validate_data_dir.sh", "--no-feats", f"data/{d}"], cwd=s5)
        assert q.returncode == 0, q.stderr
        assert (s5 / "data" / d / "segments").exists()
    p = run_script(["./run.sh", "--stage", "5", "--stop-stage", "5", "--num-dev-utts", "16"], cwd=s5)
    assert p.returncode == 1 and "leaves no training data" in p.stderr


# ---------------------------------------------------------------------------- features

def test_features_over_the_standin(prepared, tmp_path):
    """MFCC and fbank of segmented two-channel mu-law SPHERE audio read through the
    ``sph2pipe ... |`` entries (needs make_mfcc.sh's segments support)."""
    s5 = link_recipe(tmp_path)
    for x in ("train", "eval2000"):
        shutil.copytree(prepared["s5"] / "data" / x, s5 / "data" / x)
    p = run_script(["steps/make_mfcc.sh", "--nj", "2", "data/train", "exp/make_mfcc/train", "mfcc"],
                   cwd=s5)
    assert p.returncode == 0, p.stdout + p.stderr
    p = run_script(["steps/make_fbank.sh", "--nj", "1", "data/eval2000", "exp/make_fbank/eval2000",
                    "fbank"], cwd=s5)
    assert p.returncode == 0, p.stdout + p.stderr
    for x, dim in (("train", 13), ("eval2000", 40)):
        d = s5 / "data" / x
        frames = {u: int(n) for u, n in table(d / "utt2num_frames").items()}
        segs = {u: v.split() for u, v in table(d / "segments").items()}
        assert set(frames) == set(segs)
        for u, (_, start, end) in segs.items():
            samples = round(float(end) * 8000) - round(float(start) * 8000)
            assert abs(frames[u] - (1 + (samples - 200) // 80)) <= 1, u  # 25 ms / 10 ms at 8 kHz
        q = run_script(["feat-to-dim.py", f"scp:{d}/feats.scp", "-"], cwd=s5)
        assert q.returncode == 0 and q.stdout.strip() == str(dim), q.stderr
    q = run_script(["utils/validate_data_dir.sh", "data/train"], cwd=s5)
    assert q.returncode == 0, q.stderr


# ---------------------------------------------------------------------------- language model

def add_lm_text(s5: Path) -> None:
    """The stand-in's 17 transcripts are too few for modified Kneser-Ney's count-of-counts
    (n3 = 0); 150 more, Zipf-distributed over its 28 words, give counts it can discount (seeded:
    such small texts can also give a zero count-of-counts or a negative discount, as in SRILM)."""
    import numpy as np
    vocab = [w for w in table(s5 / "data/lang_nosp/words.txt")
             if w[0] not in "<#!["]
    rng = np.random.default_rng(5)
    p_w = 1.0 / np.arange(1, len(vocab) + 1) ** 2.0
    lines = read(s5 / "data/local/train/text")
    for i in range(150):
        sent = rng.choice(vocab, size=rng.integers(2, 9), p=p_w / p_w.sum())
        lines.append(f"synth-{i:04d} " + " ".join(sent))
    (s5 / "data/local/train/text").write_text("\n".join(lines) + "\n")


def test_trigram_lm_and_grammar_over_the_standin(prepared, tmp_path):
    """Stage 3's script: utils/train_lm.sh (modified Kneser-Ney) on the transcripts less the
    held-out ones, the perplexity of those, and G.fst through utils/format_lm.sh."""
    s5 = link_recipe(tmp_path)
    shutil.copytree(prepared["s5"] / "data", s5 / "data")
    add_lm_text(s5)
    p = run_script(["local/swbd1_train_lms.sh", "--heldout-sents", "3", "data/local/train/text",
                    "data/lang_nosp", "data/local/dict_nosp/lexicon.txt", "data/local/lm",
                    "data/lang_nosp_sw1_tg"], cwd=s5)
    assert p.returncode == 0, p.stdout + p.stderr
    arpa = s5 / "data/local/lm/sw1_o3g/lm.arpa.gz"
    assert arpa.exists() and (s5 / "data/lang_nosp_sw1_tg/G.fst").exists()
    from nnetmix.lang import read_arpa
    lm = read_arpa(arpa)
    words = set(table(s5 / "data/lang_nosp/words.txt"))
    assert set(lm.vocab) <= words | {"<s>", "</s>"}
    assert "ppl=" in (s5 / "data/local/lm/sw1_o3g/heldout.ppl").read_text()


# ---------------------------------------------------------------------------- GMM ladder and DNN

#: a quick ladder: 4 passes per system, realignment at 1 and 2, LDA to 20 dimensions (the
#: stand-in's trees have too few leaves for 40 classes)
QUICK_GMM = """num_iters=4
max_iter_inc=3
realign_iters="1 2"
mllt_iters="2"
fmllr_iters="2"
dim=20
"""
TINY = ["--nj", "2", "--lm-heldout-sents", "3", "--num-dev-utts", "3", "--nodup-max-count", "2",
        "--num-short-utts", "8", "--num-mono-utts", "6", "--num-tri-utts", "12",
        "--tri-dup-max-count", "3", "--gmm-config", "quick_gmm.conf",
        "--tri1-leaves", "60", "--tri1-gauss", "120", "--tri2-leaves", "70", "--tri2-gauss", "140",
        "--tri3-leaves", "80", "--tri3-gauss", "160", "--tri4-leaves", "90", "--tri4-gauss", "180",
        "--gmm-decode", "tri1 tri4", "--scoring-opts", "--min-lmwt 10 --max-lmwt 10 "
        "--word-ins-penalty 0.0"]


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("NNETMIX_TEST_SWBD") != "1",
                    reason="7-11 minutes on the loaded 2-core machine, over the default suite's "
                           "budget: set NNETMIX_TEST_SWBD=1 to run it")
def test_gmm_ladder_and_dnn_over_the_standin(prepared, tmp_path):
    """Stages 3-14 at a tiny size: mono -> tri1 -> tri2 -> tri3 (LDA+MLLT) -> tri4 (SAT), eval2000
    decoded with tri1 and tri4 (three passes), then a one-epoch DNN on tri4's alignments of
    train_nodup decoded with tri4's graph, none of it given on the command line."""
    s5 = link_recipe(tmp_path)
    shutil.copytree(prepared["s5"] / "data", s5 / "data")
    add_lm_text(s5)
    (s5 / "quick_gmm.conf").write_text(QUICK_GMM)
    p = run_script(["./run.sh", "--stage", "3", "--stop-stage", "11", *TINY], cwd=s5)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    exp = s5 / "exp"
    for n, what in ((7, "tri1, triphones on deltas (60 leaves"), (9, "tri3, LDA+MLLT (80 leaves"),
                    (10, "tri4, speaker-adaptive training (90 leaves")):
        assert f"Stage {n}: {what}" in p.stdout
    # each system trains on the alignments of the one before, on Kaldi s5c's subsets
    nodup = set(table(s5 / "data/train_nodup/utt2spk"))
    for sys, ali, data in (("tri1", "mono_ali", "train_100k_nodup"),
                           ("tri2", "tri1_ali", "train_100k_nodup"),
                           ("tri3", "tri2_ali_nodup", "train_nodup"),
                           ("tri4", "tri3_ali_nodup", "train_nodup")):
        assert (exp / sys / "final.mdl").exists() and (exp / sys / "tree").exists(), sys
        assert f"{data} data/lang_nosp exp/{ali} exp/{sys}" in p.stdout, sys
    assert (exp / "tri3" / "final.mat").exists() and (exp / "tri4" / "final.alimdl").exists()
    assert (exp / "tri4" / "trans.1").exists()
    from nnetmix.kaldi import SequentialReader, read_gmm_model
    aligned = set()
    for f in (exp / "tri4_ali_nodup").glob("ali.*.gz"):
        with SequentialReader(f"ark:gunzip -c {f} |", "ivec") as r:
            aligned |= {key for key, _ in r}
    assert aligned == nodup
    tm, am = read_gmm_model(str(exp / "tri4" / "final.mdl"))
    assert (exp / "tri4_ali_nodup" / "final.mdl").read_bytes() == \
        (exp / "tri4" / "final.mdl").read_bytes()
    for sys, dec in (("tri1", "decode_eval2000_nosp_sw1_tg"),
                     ("tri4", "decode_eval2000_nosp_sw1_tg.si"),
                     ("tri4", "decode_eval2000_nosp_sw1_tg")):
        d = exp / sys / dec
        assert (d / "wer_10_0.0").exists() and (d / "score_swbd" / "wer_10_0.0").exists(), d
    assert (exp / "tri4" / "decode_eval2000_nosp_sw1_tg" / "trans.1").exists()
    assert not (exp / "tri2" / "decode_eval2000_nosp_sw1_tg").exists()   # not in --gmm-decode
    # the DNN stages take tri4's alignments and graph by default
    p = run_script(["./run.sh", "--stage", "12", *TINY, "--pretrain", "false", "--dnn-hid-layers",
                    "1", "--dnn-hid-dim", "16", "--dnn-num-workers", "1", "--dnn-minibatch-size",
                    "64", "--dnn-backend", "cpu", "--dnn-opts", "--max-iters 1"], cwd=s5)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    assert "DNN decoding of eval2000 with exp/tri4/graph_nosp_sw1_tg" in p.stdout
    from nnetmix.nnet.network import read_nnet
    (dnn,) = exp.glob("dnn1x16_rand_w1/final.nnet")
    assert read_nnet(str(dnn)).output_dim == am.num_pdfs == tm.num_pdfs
    assert am.num_pdfs != read_gmm_model(str(exp / "mono" / "final.mdl"))[1].num_pdfs
    assert (dnn.parent / "decode_eval2000_nosp_sw1_tg" / "wer_10_0.0").exists()
