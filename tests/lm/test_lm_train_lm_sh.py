"""utils/train_lm.sh on a tiny lang directory, then utils/format_lm.sh: kaldilm makes G.fst of the
order-3 ARPA file, and G scores sentences as the ARPA file does."""
import math
import os

import pytest

from helpers import ROOT, TOY, g_cost, read_fst, run_script, symbol_table, write_dict

from nnetmix.lang.arpa import normalisation_error, read_arpa

#: The toy corpus in the digits lexicon's words (tests/helpers.py, DIGITS_LEXICON).
DIGITS = {"a": "ONE", "b": "TWO", "c": "FIVE", "d": "SEVEN"}


def _recipe(tmp_path):
    rec = tmp_path / "s5"
    rec.mkdir()
    for link in ("utils", "bin", "steps"):
        os.symlink(ROOT / link, rec / link)
    write_dict(rec / "data/local/dict")
    run_script(["utils/prepare_lang.sh", "data/local/dict", "<UNK>", "data/local/lang",
                "data/lang"], cwd=rec, check=True)
    (rec / "data/train").mkdir(parents=True)
    (rec / "data/train/text").write_text("".join(
        f"utt{i:02d} {' '.join(DIGITS[w] for w in s.split())}\n" for i, s in enumerate(TOY))
        + "utt99\n")  # an utterance with no words: a blank line, which ngram-count skips
    (rec / "data/heldout").write_text("h1 ONE TWO FIVE\nh2 TEN ONE\n")
    return rec


def test_train_lm_then_format_lm(tmp_path):
    rec = _recipe(tmp_path)
    p = run_script(["utils/train_lm.sh", "--order", "3", "--heldout", "data/heldout",
                    "data/train/text", "data/lang", "data/local/lm"], cwd=rec, check=True)
    # open vocabulary (-unk -map-unk <UNK>, from data/lang/oov.txt): TEN is scored as <UNK>
    assert "file data/local/lm/heldout.txt: 2 sentences, 5 words, 0 OOVs" in p.stdout
    assert (rec / "data/local/lm/heldout.ppl").read_text().startswith("file ")
    lm = read_arpa(rec / "data/local/lm/lm.arpa.gz")
    assert lm.order == 3 and normalisation_error(lm)[0] < 2e-6
    # the vocabulary is words.txt's: unseen words and <UNK> have unigrams, #0 and <eps> none
    assert {"!SIL", "<UNK>", "EIGHT", "OH"} <= set(lm.vocab)
    assert not {"#0", "<eps>"} & set(lm.vocab)
    # SRILM's default -gt3min 2: the trigrams seen once are not in the file
    assert ("TWO", "ONE", "</s>") not in lm.ngrams[2] and ("<s>", "ONE", "TWO") in lm.ngrams[2]

    p = run_script(["utils/format_lm.sh", "data/lang", "data/local/lm/lm.arpa.gz",
                    "data/local/dict/lexicon.txt", "data/lang_test"], cwd=rec, check=True)
    assert "fstisstochastic" in p.stdout
    g = read_fst(rec / "data/lang_test/G.fst")
    words = symbol_table(rec / "data/lang_test/words.txt")
    for sent in (["ONE", "TWO"], ["ONE", "TWO", "FIVE", "ONE"], ["FIVE", "FIVE"], ["EIGHT"],
                 ["SEVEN", "OH", "TWO"], []):
        hist, log10p = ["<s>"], 0.0
        for w in sent + ["</s>"]:
            log10p += lm.log10_prob(w, hist)
            hist.append(w)
        assert g_cost(g, words, sent) == pytest.approx(-log10p * math.log(10), abs=1e-4), sent

    # a second run skips the estimation; a different order does not
    p = run_script(["utils/train_lm.sh", "--order", "3", "data/train/text", "data/lang",
                    "data/local/lm"], cwd=rec, check=True)
    assert "exists (same settings" in p.stdout
    p = run_script(["utils/train_lm.sh", "--order", "2", "--discount", "ukn", "--oov-word",
                    "<UNK>", "data/train/text", "data/lang/words.txt", "data/local/lm"], cwd=rec)
    assert p.returncode == 0 and "exists" not in p.stdout, p.stderr
    assert read_arpa(rec / "data/local/lm/lm.arpa.gz").order == 2


def test_train_lm_errors(tmp_path):
    rec = _recipe(tmp_path)
    p = run_script(["utils/train_lm.sh", "--oov-word", "<unk>", "data/train/text", "data/lang",
                    "data/local/lm"], cwd=rec)
    assert p.returncode == 1
    assert "the unknown-word token '<unk>' is not in data/lang/words.txt (use --oov-word)" \
        in p.stderr
    p = run_script(["utils/train_lm.sh", "data/train/nope", "data/lang", "data/local/lm"],
                   cwd=rec)
    assert p.returncode == 1 and "no such file data/train/nope" in p.stderr
    p = run_script(["utils/train_lm.sh", "--order", "5", "data/train/text", "data/lang",
                    "data/local/lm"], cwd=rec)
    assert p.returncode == 1 and "-order 5: orders 1 to 4 are supported" in p.stderr
    p = run_script(["utils/train_lm.sh", "data/train/text"], cwd=rec)
    assert p.returncode == 1 and "Usage: utils/train_lm.sh" in p.stderr
