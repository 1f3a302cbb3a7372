"""Perplexity (SRILM's ngram -ppl) against a direct computation from the ARPA file."""
import math

import pytest

from helpers import load_bin, markov_sentences, toy_sentences, write_sentences
from nnetmix.lang.arpa import BOS, EOS, read_arpa, write_arpa
from nnetmix.lm import KnOptions, PplStats, count_sentences, estimate_kn, ppl_file

ngram = load_bin("ngram.py")


def _arpa(tmp_path, order=3, sents=None, **kw):
    lm = estimate_kn(count_sentences(sents or markov_sentences(seed=7), order, **kw),
                     KnOptions(order=order, interpolate=True))
    path = tmp_path / f"lm{order}.arpa"
    write_arpa(path, lm)
    return path


def _direct(lm, sentences, unk="<unk>"):
    """log10 p summed by hand: each word (or the unknown word for one the LM lacks) and </s>
    given everything before it from <s>; a word with no probability at all is an OOV."""
    logprob, words, oovs = 0.0, 0, 0
    for sent in sentences:
        words += len(sent)
        hist = [BOS]
        for w in sent + [EOS]:
            w = w if (w,) in lm.ngrams[0] else unk
            if (w,) in lm.ngrams[0]:
                logprob += lm.log10_prob(w, hist)
            else:
                oovs += 1
            hist.append(w)
    return logprob, words, oovs


def test_ppl_equals_direct_computation(tmp_path):
    arpa = _arpa(tmp_path)
    lm = read_arpa(arpa)
    held = markov_sentences(seed=8, num=40) + [["w00", "notaword", "w01"], ["zzz"]]
    logprob, words, oovs = _direct(lm, held)
    assert oovs >= 2  # a closed-vocabulary model: the unknown word has no probability
    st = ppl_file(lm, write_sentences(tmp_path / "held.txt", held))
    assert (st.sentences, st.words, st.oovs, st.zeroprobs) == (len(held), words, oovs, 0)
    assert st.logprob == pytest.approx(logprob, abs=1e-9)
    assert st.ppl == pytest.approx(10 ** (-logprob / (words - oovs + len(held))), rel=1e-12)
    assert st.ppl1 == pytest.approx(10 ** (-logprob / (words - oovs)), rel=1e-12)


def test_ngram_tool_prints_srilm_lines(tmp_path, capsys):
    arpa = _arpa(tmp_path, order=2, sents=toy_sentences())
    held = write_sentences(tmp_path / "held.txt", [["a", "b"], ["c", "x", "d"], ["a", "<s>"]])
    assert ngram.main(["-lm", str(arpa), "-ppl", str(held)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"file {held}: 3 sentences, 7 words, 1 OOVs"
    # <s> inside a sentence has probability 0 (-99): a zeroprob, left out like the OOV
    lm = read_arpa(arpa)
    lp = sum(lm.log10_prob(w, h) for w, h in [
        ("a", ["<s>"]), ("b", ["a"]), ("</s>", ["b"]), ("c", ["<s>"]), ("d", ["x"]),
        ("</s>", ["d"]), ("a", ["<s>"]), ("</s>", ["<s>"])])
    words = 7 - 1 - 1
    want = (f"1 zeroprobs, logprob= {lp:.6g} ppl= {10 ** (-lp / (words + 3)):.6g} "
            f"ppl1= {10 ** (-lp / words):.6g}")
    assert out[1] == want


def test_order_option_and_per_sentence_output(tmp_path, capsys):
    """-order 2 on a trigram file uses its bigram part (SRILM's ngram defaults to -order 3)."""
    arpa3 = _arpa(tmp_path, order=3)
    arpa2 = _arpa(tmp_path, order=2)
    held = write_sentences(tmp_path / "held.txt", markov_sentences(seed=9, num=5))
    assert ngram.main(["-lm", str(arpa3), "-order", "2", "-ppl", str(held)]) == 0
    via3 = capsys.readouterr().out.splitlines()[1]
    lm3, lm2 = read_arpa(arpa3), read_arpa(arpa2)
    assert lm3.ngrams[:2] != lm2.ngrams  # the unigram and bigram levels differ with the order...
    st = ppl_file(read_arpa(arpa3, max_order=2), held)
    assert via3.startswith(f"0 zeroprobs, logprob= {st.logprob:.6g} ")  # ...-order cuts the file
    assert ngram.main(["-lm", str(arpa3), "-order", "3", "-ppl", str(held), "-debug", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5 * 4 + 2  # words, two stats lines and a blank line per sentence
    assert lines[1].startswith("1 sentences, ") and lines[-2].startswith(f"file {held}: 5 sent")


def test_open_vocabulary_scores_unknown_words(tmp_path, capsys):
    sents = markov_sentences(seed=7)
    vocab = sorted({w for s in sents for w in s})[:-10]
    arpa = _arpa(tmp_path, sents=sents, vocab=vocab, unk_is_word=True)
    held = write_sentences(tmp_path / "held.txt", [["w00", "notaword"]])
    assert ngram.main(["-lm", str(arpa), "-ppl", str(held), "-unk"]) == 0
    out = capsys.readouterr()
    assert "1 sentences, 2 words, 0 OOVs" in out.out
    lm = read_arpa(arpa)
    lp = sum(lm.log10_prob(w, h) for w, h in [("w00", ["<s>"]), ("<unk>", ["<s>", "w00"]),
                                                ("</s>", ["w00", "<unk>"])])
    assert f"logprob= {lp:.6g} " in out.out
    assert ngram.main(["-lm", str(arpa), "-ppl", str(held)]) == 0  # SRILM warns without -unk
    assert "non-zero probability for <unk> in closed-vocabulary LM" in capsys.readouterr().err


def test_stats_format_like_srilm():
    st = PplStats(sentences=5290, words=38238, oovs=681, zeroprobs=0, logprob=-86034.2)
    # SRILM's own reference output for this line (lm/test/reference/ngram-count-kn-int.stdout):
    # 5290 sentences, 38238 words, 681 OOVs / 0 zeroprobs, logprob= -86034.2 ppl= 101.845 ...
    assert st.format() == ("5290 sentences, 38238 words, 681 OOVs\n"
                           "0 zeroprobs, logprob= -86034.2 ppl= 101.845 ppl1= 195.327\n")
    assert PplStats(sentences=1, words=1, oovs=1).format().endswith("ppl1= undefined\n")
    assert math.isnan(PplStats().ppl)
