"""Training text for a language model: a Kaldi ``text`` file, OOVs mapped to the lang's OOV word."""
from __future__ import annotations

import logging
import os
from collections import Counter
from dataclasses import dataclass, field

from nnetmix.data.io import ENCODING, split_fields
from nnetmix.lang.symbols import LangError, SymbolTable

__all__ = ["LmText", "read_lm_text"]

logger = logging.getLogger(__name__)

#: Symbols that are never words of a sentence.
_NOT_WORDS = ("<eps>", "#0", "<s>", "</s>")


@dataclass
class LmText:
    sentences: list[list[str]]
    num_tokens: int = 0
    oov: Counter = field(default_factory=Counter)  #: OOV word -> count (before mapping)


def read_lm_text(path: str | os.PathLike, words: SymbolTable | None = None, oov_word: str = "",
                 has_keys: bool = True) -> LmText:
    """Sentences of ``path`` (``utt-id w1 w2 ...`` per line, or just words with has_keys=False).

    With ``words`` (a lang's words.txt), a word it lacks becomes ``oov_word`` (which must be in
    it), as Kaldi's sym2int.pl --map-oov does; the OOVs are counted and logged.
    """
    path = os.fspath(path)
    if words is not None and (not oov_word or oov_word not in words):
        raise LangError(f"OOV word '{oov_word}' is not in {words.name}")
    out = LmText([])
    try:
        fh = open(path, **ENCODING)
    except OSError as e:
        raise LangError(f"cannot read {path}: {e.strerror}") from None
    with fh:
        for n, line in enumerate(fh, 1):
            fields = split_fields(line.rstrip("\n"))
            toks = fields[1:] if has_keys else fields
            if has_keys and not fields:
                continue
            sent = []
            for w in toks:
                if w in _NOT_WORDS:
                    raise LangError(f"{path}:{n}: '{w}' is not allowed in training text")
                if words is not None and w not in words:
                    out.oov[w] += 1
                    w = oov_word
                sent.append(w)
            out.num_tokens += len(sent)
            out.sentences.append(sent)
    if not out.sentences:
        raise LangError(f"{path}: no sentences")
    if out.oov:
        n = sum(out.oov.values())
        top = " ".join(f"{w}({c})" for w, c in out.oov.most_common(10))
        logger.warning("%s: %d of %d tokens (%.2f%%) are not in %s, mapped to %s: %s", path, n,
                       out.num_tokens, 100.0 * n / max(1, out.num_tokens), words.name, oov_word,
                       top)
    return out
