"""N-gram language models as SRILM estimates them: the role of ``ngram-count`` and ``ngram -ppl``.

Text -> n-gram counts in numpy tables (:func:`count_text`) -> interpolated (or backoff) Kneser-Ney
model, modified (``-kndiscount``) or original (``-ukndiscount``), orders 1-4 (:func:`estimate_kn`)
-> ARPA file through :func:`nnetmix.lang.arpa.write_arpa`; perplexity of held-out text with
SRILM's output lines (:func:`ppl_file`). bin/ngram-count.py, bin/ngram.py and utils/train_lm.sh
are the command lines.
"""
from nnetmix.lm.counts import (MAX_ORDER, NgramCounts, NgramTable, TextStats, count_lines,
                               count_sentences, count_text)
from nnetmix.lm.discount import KnDiscount, count_of_counts, kn_discount
from nnetmix.lm.estimate import SRILM_GTMIN, BackoffLm, KnOptions, estimate_kn
from nnetmix.lm.ppl import PplStats, ppl_file, ppl_lines, sentence_ppl, text_words
from nnetmix.lm.vocab import UNK, LmError, LmVocab, read_vocab_file

__all__ = [
    "MAX_ORDER", "NgramCounts", "NgramTable", "TextStats", "count_lines", "count_sentences",
    "count_text", "KnDiscount", "count_of_counts", "kn_discount", "SRILM_GTMIN", "BackoffLm",
    "KnOptions", "estimate_kn", "PplStats", "ppl_file", "ppl_lines", "sentence_ppl", "text_words",
    "UNK",
    "LmError", "LmVocab", "read_vocab_file",
]
