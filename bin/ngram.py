#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""ngram.py: SRILM's ngram -ppl (perplexity of a text under an ARPA language model)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import run_tool
from nnetmix.cli.srilm import SrilmOptionParser

USAGE = """
Compute the perplexity of a text (one sentence per line, plain or gzipped) under an ARPA
backoff language model, printing SRILM's lines on stdout:
  file TEXT: N sentences, M words, K OOVs
  Z zeroprobs, logprob= L ppl= P ppl1= Q
This tool takes SRILM's single-dash options (-lm x, not --lm=x), unlike the other bin/ tools,
because that is how Kaldi recipes call ngram and how people port those lines. As in SRILM,
-order defaults to 3: give -order 4 for a 4-gram model.
Usage: ngram.py -lm FILE [-order N] -ppl TEXT [-unk] [-map-unk WORD] [-debug 0|1]
 e.g.: ngram.py -order 4 -lm data/local/lm/lm.arpa.gz -ppl data/local/lm/heldout.txt -unk
"""


def make_parser() -> SrilmOptionParser:
    p = SrilmOptionParser(USAGE, prog="ngram.py")
    p.register("lm", "", "ARPA language model (plain or gzipped)")
    p.register("order", 3, "max n-gram order used from the model")
    p.register("ppl", "", "text file to compute perplexity from")
    p.register("unk", False, "the model is open-vocabulary: <unk> is a regular word")
    p.register("map-unk", "", "unknown-word token instead of <unk>")
    p.register("debug", 0, "0: totals only; 1: also each sentence's statistics")
    return p


def main(argv=None) -> int:
    parser = make_parser()

    def body(opts, args):
        import logging

        from nnetmix.errors import UsageError
        from nnetmix.lang.arpa import read_arpa
        from nnetmix.lm import UNK, ppl_file, text_words

        log = logging.getLogger("ngram")
        if not opts.lm:
            raise UsageError("no -lm given")
        if not opts.ppl:
            raise UsageError("no -ppl given (computing perplexity is what this tool does)")
        if opts.order < 1:
            raise UsageError(f"-order {opts.order}: must be at least 1")
        if opts.debug not in (0, 1):
            raise UsageError(f"-debug {opts.debug}: only 0 (totals) and 1 (per sentence) are "
                             "implemented")
        unk_word = opts.map_unk or UNK
        # Only the n-grams made of the text's words can matter: reading just those keeps a
        # Switchboard-sized 4-gram model out of memory.
        lm = read_arpa(opts.lm, max_order=opts.order, only_words=text_words(opts.ppl, unk_word))
        if (unk_word,) in lm.ngrams[0] and lm.ngrams[0][(unk_word,)][0] > -99 and not opts.unk:
            log.warning("%s: non-zero probability for %s in closed-vocabulary LM (give -unk)",
                        opts.lm, unk_word)
        stats = ppl_file(lm, opts.ppl, unk_word, per_sentence=opts.debug >= 1, out=sys.stdout)
        sys.stdout.write(f"file {opts.ppl}: {stats.format()}")
        sys.stdout.flush()
        return 0

    return run_tool(parser, (0, 0), body, argv)


if __name__ == "__main__":
    sys.exit(main())
