#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""ngram-count.py: SRILM's ngram-count for Kneser-Ney LMs (text -> ARPA), orders 1-4."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import run_tool
from nnetmix.cli.srilm import SrilmOptionParser

USAGE = """
Estimate a Kneser-Ney backoff n-gram language model (ARPA format, .gz by name) from text, one
sentence per line, as SRILM's ngram-count does with -kndiscount (modified KN, three discounts)
or -ukndiscount (original KN), with or without -interpolate; orders 1 to 4.
This tool takes SRILM's single-dash options (-order 3, not --order=3), unlike the other bin/
tools, because that is how Kaldi recipes call ngram-count and how people port those lines.
SRILM's defaults hold: -order 3, -gt3min 2 and -gt4min 2 (n-grams seen once are left out at
orders 3 and 4; give -gt3min 1 -gt4min 1 to keep them), no interpolation unless -interpolate.
Usage: ngram-count.py -order N -text FILE -lm OUT [-kndiscount|-ukndiscount] [-interpolate]
                      [-vocab FILE [-unk] [-map-unk WORD]] [-write-vocab FILE] [-gtNmin K]
 e.g.: ngram-count.py -order 4 -kndiscount -interpolate -text data/local/lm/train.txt \\
         -vocab data/local/lm/vocab -unk -map-unk '<unk>' -lm data/local/lm/lm.arpa.gz
"""


def make_parser() -> SrilmOptionParser:
    p = SrilmOptionParser(USAGE, prog="ngram-count.py")
    p.register("order", 3, "max n-gram order, 1-4")
    p.register("text", "", "text file to read (plain or gzipped), one sentence per line")
    p.register("lm", "", "ARPA language model to write (gzipped if it ends in .gz)")
    p.register("kndiscount", False, "modified Kneser-Ney discounting (Chen & Goodman)")
    p.register("ukndiscount", False, "original Kneser-Ney discounting (one discount per order)")
    p.register("interpolate", False, "interpolate with the lower order")
    p.register("vocab", "", "closed vocabulary (first word of each line); other words become "
                            "the unknown word")
    p.register("unk", False, "keep the unknown word in the LM as a regular word (open vocab)")
    p.register("map-unk", "", "unknown-word token instead of <unk>")
    p.register("limit-vocab", False, "SRILM: limit counts read with -read to -vocab; with -text "
                                     "it changes nothing (accepted for compatibility)")
    p.register("write-vocab", "", "write the vocabulary to this file")
    for n, default in enumerate((1, 1, 2, 2), 1):
        p.register(f"gt{n}min", float(default), f"minimum count of {n}-grams kept in the LM "
                                                 "(SRILM's default)")
    p.register("debug", 0, "debugging level (1: also log the counts of counts per order)")
    return p


def main(argv=None) -> int:
    parser = make_parser()

    def body(opts, args):
        import logging

        from nnetmix.errors import UsageError
        from nnetmix.lang.arpa import atomic_text_writer, write_arpa
        from nnetmix.lm import MAX_ORDER, UNK, KnOptions, count_text, estimate_kn, read_vocab_file

        log = logging.getLogger("ngram-count")
        if not 1 <= opts.order <= MAX_ORDER:
            raise UsageError(f"-order {opts.order}: orders 1 to {MAX_ORDER} are supported")
        if not opts.text:
            raise UsageError("no -text given (reading counts files with -read is not supported)")
        if not opts.lm and not opts.write_vocab:
            raise UsageError("nothing to write: give -lm (writing counts is not supported)")
        if opts.kndiscount and opts.ukndiscount:
            raise UsageError("conflicting default discounting options: -kndiscount and "
                             "-ukndiscount")
        if opts.lm and not (opts.kndiscount or opts.ukndiscount):
            raise UsageError("give -kndiscount or -ukndiscount (SRILM's default, Good-Turing "
                             "discounting, is not implemented)")
        gtmin = tuple(getattr(opts, f"gt{n}min") for n in range(1, MAX_ORDER + 1))
        if any(g < 0 for g in gtmin):
            raise UsageError(f"-gtNmin must not be negative, got {gtmin}")
        if opts.limit_vocab:
            log.warning("-limit-vocab only limits counts and models read from files (-read, "
                        "-init-lm); with -text it changes nothing, as in SRILM")
        if opts.unk and not opts.vocab:
            log.info("-unk without -vocab: the unknown word gets only its share of the unigram "
                     "left-over mass, as in SRILM")
        vocab = read_vocab_file(opts.vocab) if opts.vocab else None
        unk_word = opts.map_unk or UNK
        counts = count_text(opts.text, opts.order, vocab, unk_word, opts.unk)
        log.info("file %s: %s", opts.text, counts.stats)
        if opts.lm:
            kn = KnOptions(order=opts.order, modified=opts.kndiscount,
                           interpolate=opts.interpolate, gtmin=tuple(int(g) for g in gtmin))
            lm = estimate_kn(counts, kn)
            write_arpa(opts.lm, lm)
            log.info("wrote %s: %s", opts.lm,
                     ", ".join(f"ngram {n}={c}" for n, c in enumerate(lm.num_ngrams(), 1)))
        if opts.write_vocab:
            with atomic_text_writer(opts.write_vocab) as fh:
                fh.write("".join(w + "\n" for w in counts.vocab.words))
            log.info("wrote %s: %d words", opts.write_vocab, len(counts.vocab.words))
        return 0

    return run_tool(parser, (0, 0), body, argv)


if __name__ == "__main__":
    sys.exit(main())
