"""The embedded digits corpus (egs/digits/s5/local) and the recipe's run.sh skeleton."""
import json
import os
import shutil

import numpy as np
import pytest
import soundfile as sf

from helpers import ROOT, link_recipe, load_script, run_script

from nnetmix.data.synth import SynthError, tool_versions

RECIPE = ROOT / "egs" / "digits" / "s5"

pytestmark = pytest.mark.skipif(not (shutil.which("espeak-ng") and shutil.which("sox")),
                                reason="espeak-ng and sox are needed (utils/install_debian_deps.sh)")


def load_synth():
    return load_script(RECIPE / "local" / "synth_digits.py", "synth_digits")


SMALL = dict(num_train=4, num_test=3, num_train_spk=2, num_test_spk=2, max_words=7, nj=2)


def read_lists(split_dir):
    return {name: (split_dir / name).read_text().splitlines()
            for name in ("wav.scp", "text", "utt2spk", "spk2utt")}


def is_c_sorted(lines):
    keys = [line.split(" ", 1)[0].encode() for line in lines]
    return keys == sorted(keys) and len(set(keys)) == len(keys)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """The same small corpus twice (same seed), and once with another seed."""
    synth = load_synth()
    base = tmp_path_factory.mktemp("digits")
    for name, seed in (("a", 777), ("b", 777), ("c", 5)):
        synth.synth_digits(base / name, seed=seed, **SMALL)
    return base


def test_same_seed_same_text_and_wav_bytes(corpora):
    for split in ("train", "test"):
        a, b = read_lists(corpora / "a" / split), read_lists(corpora / "b" / split)
        assert a["text"] == b["text"] and a["utt2spk"] == b["utt2spk"]
        for la, lb in zip(a["wav.scp"], b["wav.scp"]):
            wa, wb = la.split(" ", 1)[1], lb.split(" ", 1)[1]
            assert open(wa, "rb").read() == open(wb, "rb").read()
    assert read_lists(corpora / "c" / "train")["text"] != read_lists(corpora / "a" / "train")["text"]


def test_lists_are_kaldi_data_dirs(corpora):
    words = {"ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE", "OH"}
    for split, n in (("train", SMALL["num_train"]), ("test", SMALL["num_test"])):
        lists = read_lists(corpora / "a" / split)
        assert all(len(v) > 0 for v in lists.values())
        assert len(lists["text"]) == n
        for name in ("wav.scp", "text", "utt2spk", "spk2utt"):
            assert is_c_sorted(lists[name]), f"{split}/{name} not C-sorted"
        utt2spk = [line.split() for line in lists["utt2spk"]]
        # utterance ids start with the speaker id, so utterance order keeps speakers contiguous
        assert all(u.startswith(s + "-") for u, s in utt2spk)
        assert [s for _, s in utt2spk] == sorted((s for _, s in utt2spk), key=str.encode)
        spk2utt = {line.split()[0]: line.split()[1:] for line in lists["spk2utt"]}
        assert {u: s for u, s in utt2spk} == {u: s for s, us in spk2utt.items() for u in us}
        for line in lists["text"]:
            ws = line.split()[1:]
            assert 1 <= len(ws) <= 7 and set(ws) <= words
        for line in lists["wav.scp"]:
            path = line.split(" ", 1)[1]
            assert os.path.isabs(path)
            info = sf.info(path)
            assert (info.samplerate, info.channels, info.subtype) == (16000, 1, "PCM_16")
            assert 0.2 < info.duration < 10


def test_test_speakers_are_not_training_speakers(corpora):
    synth = load_synth()
    train, test = synth.make_speakers(777, 40, 12)
    assert len({s.id for s in train}) == 40 and len({s.id for s in test}) == 12
    assert not {s.id for s in train} & {s.id for s in test}
    assert not {s.voice for s in train} & {s.voice for s in test}
    spk = {split: {line.split()[0] for line in read_lists(corpora / "a" / split)["spk2utt"]}
           for split in ("train", "test")}
    assert spk["train"] and spk["test"] and not spk["train"] & spk["test"]


def test_resynthesis_skips_finished_wavs(corpora, tmp_path):
    synth = load_synth()
    out = tmp_path / "d"
    shutil.copytree(corpora / "a", out)
    (out / ".done").unlink()
    (out / "params.json").write_text((corpora / "a" / "params.json").read_text())
    wavs = sorted((out / "wav").rglob("*.wav"))
    gone, kept = wavs[0], wavs[1]
    gone.unlink()
    os.utime(kept, (1, 1))
    synth.synth_digits(out, seed=777, **SMALL)
    assert gone.exists() and kept.stat().st_mtime == 1 and (out / ".done").exists()
    with pytest.raises(SynthError, match="other options"):
        synth.synth_digits(out, seed=778, **SMALL)


def test_corpus_records_and_checks_the_tool_versions(corpora, tmp_path, caplog):
    """espeak-ng's and sox's versions decide the audio: recorded in params.json; other versions
    are refused while wavs remain to be made, warned about when the corpus is complete."""
    synth = load_synth()
    params = json.loads((corpora / "a" / "params.json").read_text())
    assert params["tools"] == tool_versions()
    assert params["tools"]["espeak-ng"].startswith("eSpeak NG") and "SoX" in params["tools"]["sox"]
    out = tmp_path / "e"
    shutil.copytree(corpora / "a", out)
    (out / "params.json").write_text(json.dumps({**params, "tools": {"espeak-ng": "eSpeak NG 9",
                                                                     "sox": "SoX v99"}}))
    synth.synth_digits(out, seed=777, **SMALL)          # complete: a warning
    assert "eSpeak NG 9" in caplog.text and "using the existing wavs" in caplog.text
    (out / ".done").unlink()
    with pytest.raises(SynthError, match="install the versions it was made with"):
        synth.synth_digits(out, seed=777, **SMALL)


def test_prepare_digits_writes_data_and_dict(tmp_path):
    p = run_script([RECIPE / "local" / "prepare_digits.sh", "--num-train", "3", "--num-test", "2",
                    "--num-train-spk", "2", "--num-test-spk", "1", tmp_path / "corpus",
                    tmp_path / "data"], cwd=RECIPE)
    assert p.returncode == 0, p.stdout + p.stderr
    data = tmp_path / "data"
    for split, n in (("train", 3), ("test", 2)):
        assert len((data / split / "text").read_text().splitlines()) == n
        assert (data / split / "spk2utt").exists()
    log = (tmp_path / "corpus" / "log" / "synth_digits.log").read_text()
    assert log.startswith("# local/synth_digits.py") and "# Ended (code 0)" in log
    d = data / "local" / "dict"
    lexicon = (d / "lexicon.txt").read_text().splitlines()
    assert lexicon[:2] == ["!SIL sil", "<UNK> spn"] and "ZERO z ih r ow" in lexicon
    assert len(lexicon) == 13 and is_c_sorted(lexicon)
    assert (d / "silence_phones.txt").read_text() == "sil\nspn\n"
    assert (d / "optional_silence.txt").read_text() == "sil\n"
    phones = (d / "nonsilence_phones.txt").read_text().split()
    assert phones == sorted(phones) and {"z", "ih", "r", "ow", "th"} <= set(phones)
    assert {p for line in lexicon[2:] for p in line.split()[1:]} == set(phones)
    assert (d / "extra_questions.txt").read_text() == "sil spn\n"
    p = run_script([RECIPE / "local" / "prepare_digits.sh", "--num-train", "3", "--num-test", "2",
                    "--num-train-spk", "2", "--num-test-spk", "1", tmp_path / "corpus",
                    tmp_path / "data"], cwd=RECIPE)
    assert "exists - skipping" in p.stdout and "matches" in p.stdout


def test_run_sh_options_and_stages_not_written_yet(tmp_path):
    s5 = link_recipe(RECIPE, tmp_path)
    p = run_script(["./run.sh", "--stage", "7", "--stop-stage", "7", "--pretrain", "false"], cwd=s5)
    assert p.returncode == 0, p.stderr
    assert "Stage 7: skipped (--pretrain false)" in p.stdout
    assert not (s5 / "data").exists()
    p = run_script(["./run.sh", "--bogus", "1"], cwd=s5)
    assert p.returncode == 1 and "invalid option --bogus" in p.stderr
    p = run_script(["./run.sh", "--help"], cwd=s5)
    assert p.returncode == 0 and "--stage 2 --stop-stage 2" in p.stderr  # Kaldi: help to stderr
    # each stage names the earlier stage it needs before any work, in Kaldi's order: tri1 the
    # monophone's alignments, the DNN tri1's alignments (and the RBMs), its decoding tri1's graph
    for stage, need in (("5", "exp/mono_ali/ali.1.gz (run stage 3)"),
                        ("6", "exp/tri1/final.mdl (run stage 5)"),
                        ("8", "exp/tri1_ali/ali.1.gz (run stage 5)"),
                        ("9", "exp/dnn_rbm_w2/final.nnet (run stage 8)")):
        p = run_script(["./run.sh", "--stage", stage, "--tri1-leaves", "50"], cwd=s5)
        assert p.returncode == 1 and f"stage {stage} needs {need}" in p.stderr, p.stderr
    assert not (s5 / "exp" / "tri1").exists() and not (s5 / "exp" / "dnn_rbm_w2").exists()


def test_noise_at_the_drawn_snr(tmp_path):
    """Noisy utterances are the clean corpus's speech plus noise at their utt2cond SNR (the
    words, pitch and speed are drawn before the noise); utt2cond lists every utterance."""
    synth = load_synth()
    small = dict(SMALL, num_train=2, num_test=6)
    synth.synth_digits(tmp_path / "clean", seed=777, **small)
    synth.synth_digits(tmp_path / "noisy", seed=777, snr=(8.0, 12.0), clean_share=0.5, **small)
    conds = dict(line.split(" ", 1) for line in
                 (tmp_path / "noisy" / "test" / "utt2cond").read_text().splitlines())
    assert len(conds) == 6 and read_lists(tmp_path / "noisy" / "test")["text"] == \
        read_lists(tmp_path / "clean" / "test")["text"]
    kinds = set()
    for utt, cond in conds.items():
        spk = utt.split("-")[0]
        clean, _ = sf.read(tmp_path / "clean" / "wav" / spk / f"{utt}.wav")
        noisy, _ = sf.read(tmp_path / "noisy" / "wav" / spk / f"{utt}.wav")
        kind, snr = cond.split()
        kinds.add(kind)
        if kind == "clean":
            assert snr == "-" and (clean == noisy).all()
            continue
        assert kind in synth.NOISE_KINDS and 8.0 <= float(snr) <= 12.0
        # 16-bit rounding aside (and a scale-down where the mixture would clip)
        scale = np.dot(noisy, clean) / np.dot(clean, clean)
        noise = noisy / scale - clean
        measured = 10 * np.log10(np.mean(clean ** 2) / np.mean(noise ** 2))
        assert abs(measured - float(snr)) < 0.2, (utt, measured, snr)
    assert "clean" in kinds and len(kinds) > 1
    with pytest.raises(ValueError, match="--clean-share 1.5 must be in"):
        synth.synth_digits(tmp_path / "bad", seed=777, clean_share=1.5, **small)


def test_glottal_onset_changes_only_vowel_initial_words(tmp_path):
    """--glottal-onset: the same texts, voices, pitch and speed; an utterance differs exactly when
    it holds OH or EIGHT (a glottal stop before each), and params.json records it."""
    synth = load_synth()
    small = dict(SMALL, num_train=2, num_test=8)
    synth.synth_digits(tmp_path / "plain", seed=777, **small)
    synth.synth_digits(tmp_path / "glottal", seed=777, glottal_onset=True, **small)
    assert json.loads((tmp_path / "glottal" / "params.json").read_text())["glottal_onset"] is True
    assert "glottal_onset" not in json.loads((tmp_path / "plain" / "params.json").read_text())
    lists = read_lists(tmp_path / "glottal" / "test")
    assert lists["text"] == read_lists(tmp_path / "plain" / "test")["text"]
    changed = 0
    for line in lists["text"]:
        utt, words = line.split(" ", 1)
        spk = utt.split("-")[0]
        a = (tmp_path / "plain" / "wav" / spk / f"{utt}.wav").read_bytes()
        b = (tmp_path / "glottal" / "wav" / spk / f"{utt}.wav").read_bytes()
        vowel_initial = bool(set(words.split()) & synth.VOWEL_INITIAL)
        assert (a != b) == vowel_initial, line
        changed += vowel_initial
    assert 0 < changed < len(lists["text"])


def test_run_sh_stages_0_and_1(tmp_path):
    s5 = link_recipe(RECIPE, tmp_path)
    stop = 1 if (ROOT / "utils" / "validate_data_dir.sh").exists() else 0
    p = run_script(["./run.sh", "--stop-stage", str(stop), "--num-train-utts", "3",
                    "--num-test-utts", "2", "--corpus", tmp_path / "corpus"], cwd=s5)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Stage 0: synthesise" in p.stdout
    assert (tmp_path / "corpus" / ".done").exists()
    if stop == 1:
        assert (s5 / "data" / "train" / "wav.scp").exists()
        assert (s5 / "data" / "local" / "dict" / "lexicon.txt").exists()
