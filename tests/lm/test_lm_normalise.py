"""Every history's distribution sums to one, in memory and in the ARPA file read back."""
import pytest

from helpers import markov_sentences
from nnetmix.lang.arpa import normalisation_error, read_arpa, write_arpa
from nnetmix.lm import SRILM_GTMIN, KnOptions, count_sentences, estimate_kn

SENTS = markov_sentences(seed=1)
WORDS = sorted({w for s in SENTS for w in s})


@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("modified,interpolate,gtmin", [
    (True, True, SRILM_GTMIN), (False, True, SRILM_GTMIN), (True, False, SRILM_GTMIN),
    (True, True, (1, 1, 1, 1)), (True, True, (1, 2, 3, 3))])
def test_distributions_sum_to_one(tmp_path, order, modified, interpolate, gtmin):
    lm = estimate_kn(count_sentences(SENTS, order),
                     KnOptions(order=order, modified=modified, interpolate=interpolate,
                               gtmin=gtmin))
    err, hist = normalisation_error(lm.to_arpa_lm())
    assert err < 1e-12, hist
    write_arpa(tmp_path / "lm.arpa", lm)
    back = read_arpa(tmp_path / "lm.arpa")
    assert back.num_ngrams() == lm.num_ngrams() and back.order == order
    err, hist = normalisation_error(back)
    assert err < 2e-6, hist  # 7 decimals of log10 in the file
    # an ARPA file needs every prefix of an n-gram in the model (SRILM's fixupProbs)
    for n in range(2, order + 1):
        assert all(k[:-1] in back.ngrams[n - 2] for k in back.ngrams[n - 1])


@pytest.mark.parametrize("unk_is_word", [False, True])
def test_closed_vocabulary_sums_to_one(tmp_path, unk_is_word):
    vocab = WORDS[:-20] + ["never1", "never2"]  # 20 OOV words, 2 words never seen
    lm = estimate_kn(count_sentences(SENTS, 4, vocab=vocab, unk_is_word=unk_is_word),
                     KnOptions(order=4, interpolate=True))
    write_arpa(tmp_path / "lm.arpa.gz", lm)
    back = read_arpa(tmp_path / "lm.arpa.gz")
    assert normalisation_error(back)[0] < 2e-6
    assert (("<unk>",) in back.ngrams[0]) == unk_is_word
    assert ("never1",) in back.ngrams[0] and ("never2",) in back.ngrams[0]
