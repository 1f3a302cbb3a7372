"""Lang directories and language models: what Kaldi's utils/prepare_lang.sh and format_lm.sh make.

``data/local/dict`` -> ``data/lang`` (phones.txt, words.txt, phone sets, topo, L.fst,
L_disambig.fst) through :func:`prepare_lang`; training text -> ARPA bigram for the digits recipe
(:func:`estimate_kn_bigram`; SRILM-style estimation of orders 1-4 is :mod:`nnetmix.lm`); the
one ARPA reader and writer (:func:`read_arpa`, :func:`write_arpa`, plain or gzipped); ARPA ->
``G.fst`` through kaldilm (:func:`arpa2fst`). FSTs are built and written with kaldifst, imported
lazily (after kaldi_hmm_gmm, as docs/design.md requires). Synthetic corpora: a weighted sentence
grammar, its sentences and its word-pair grammar (:mod:`nnetmix.lang.sentgram`), and dictionary
directories from CMUdict with Kaldi wsj's stress handling (:mod:`nnetmix.lang.cmu`).
"""
from nnetmix.lang.arpa import (BOS, EOS, ArpaLm, ArpaSource, atomic_text_writer,
                               estimate_kn_bigram, normalisation_error, open_text, read_arpa,
                               write_arpa)
from nnetmix.lang.cmu import (ARPABET, cmudict_lexicon, load_cmudict, split_stress,
                              write_dict_dir)
from nnetmix.lang.dictdir import Dictionary, LexiconEntry, read_dict_dir
from nnetmix.lang.grammar import Arpa2FstOptions, arpa2fst, check_g, empty_word_cycle, stochasticity
from nnetmix.lang.lexicon_fst import lexicon_fst_text, make_lexicon_fst, write_fst
from nnetmix.lang.lmtext import LmText, read_lm_text
from nnetmix.lang.phones import (add_lex_disambig, apply_phone_map, make_phone_map,
                                 position_dependent_lexicon, word_boundary_class)
from nnetmix.lang.prepare import LangOptions, LangSummary, prepare_lang
from nnetmix.lang.sentgram import (START, Rule, SentenceGrammar, WordPairGrammar, draw_sentence,
                                   is_test_sentence, read_grammar, wordpair_fst_text)
from nnetmix.lang.symbols import (LangError, SymbolTable, map_fields, parse_field_spec,
                                  read_symbol_table, write_symbol_table)
from nnetmix.lang.topo import make_topo
from nnetmix.lang.validate import lang_problems, validate_lang_dir

__all__ = [
    "BOS", "EOS", "ArpaLm", "ArpaSource", "atomic_text_writer", "estimate_kn_bigram",
    "normalisation_error", "open_text", "read_arpa", "write_arpa",
    "Dictionary", "LexiconEntry", "read_dict_dir",
    "Arpa2FstOptions", "arpa2fst", "check_g", "empty_word_cycle", "stochasticity",
    "lexicon_fst_text", "make_lexicon_fst", "write_fst", "LmText", "read_lm_text",
    "add_lex_disambig", "apply_phone_map", "make_phone_map", "position_dependent_lexicon",
    "word_boundary_class", "LangOptions", "LangSummary", "prepare_lang",
    "LangError", "SymbolTable", "map_fields", "parse_field_spec", "read_symbol_table",
    "write_symbol_table", "make_topo",
    "lang_problems", "validate_lang_dir",
    "ARPABET", "cmudict_lexicon", "load_cmudict", "split_stress", "write_dict_dir",
    "START", "Rule", "SentenceGrammar", "WordPairGrammar", "draw_sentence", "is_test_sentence",
    "read_grammar", "wordpair_fst_text",
]
