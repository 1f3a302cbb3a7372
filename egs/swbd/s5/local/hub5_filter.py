#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Hub5 scoring of eval2000 with compute-wer: GLM word mappings and what is not scored.

Kaldi scores eval2000 with sclite (local/score_sclite.sh -> hubscr.pl): a CTM of the best path
against the stm, both filtered through the GLM (``en20000405_hub5.glm``: hesitations to
%HESITATION, spelling variants and contractions to alternations), words in parentheses and
%HESITATION optionally deletable, and the hypotheses first stripped of noise words, <unk>,
hesitations and partial words. sclite is not available here, so :func:`hub5_filter` brings the
reference text (data/eval2000/text, from the stm) and the hypotheses to the same normal form and
compute-wer compares them per utterance:

- lower case; aside markers gone; a group in parentheses (optionally deletable) dropped; an
  stm alternation ``{ a / b }`` becomes its first alternative;
- GLM rules with an empty context (``/ [ ] __ [ ]``) applied left to right, longest left side
  first; an alternation on the right becomes its first alternative (so every variant that maps
  to the same alternation meets in one spelling), ``@`` deletes; rules with a context are not
  applied (:attr:`Glm.skipped` counts them);
- then, on both sides, what Kaldi removes from the CTM: words containing ``[noise``,
  ``laughter`` or ``vocalized-noise]``, ``<unk>``, the hesitations uh um eh mm hm ah huh ha er
  oof hee ach eee ew and %hesitation, partial words (ending in ``-``), and ``!sil``.

Where sclite would accept either of two alternations' spellings of different lengths ("i'm"
against "i am"), this counts errors, so the WERs are close to, not equal to, hubscr.pl's.

Run by local/score_eval2000.sh: ``local/hub5_filter.py <glm> <in-text> <out-text> ...`` reads
Kaldi text files and writes each filtered copy.
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from nnetmix.data.io import ENCODING, write_lines

from local_script import run_script, script_parser
from conversations import CorpusError

__all__ = ["Glm", "read_glm", "apply_glm", "hub5_filter", "filter_texts", "HESITATIONS",
           "SUBSETS"]

#: Hesitations Kaldi's score_sclite.sh removes from the hypotheses.
HESITATIONS = frozenset("uh um eh mm hm ah huh ha er oof hee ach eee ew %hesitation".split())
#: eval2000's scored subsets: name -> utterance-id prefix (Kaldi greps ^sw_ and ^en_).
SUBSETS = {"swbd": "sw_", "callhm": "en_"}
_NOISE_PARTS = ("[noise", "laughter", "vocalized-noise]")
_OTHER_DROPPED = frozenset(("<unk>", "!sil", "<b_aside>", "<e_aside>"))
_RULE = re.compile(r"^(?P<lhs>.+?)\s*=>\s*(?P<rhs>.*?)\s*"
                   r"(?:/\s*\[(?P<left>[^\]]*)\]\s*__\s*\[(?P<right>[^\]]*)\])?\s*$")


@dataclass
class Glm:
    """Context-free GLM rules: left-hand word sequence -> replacement words."""

    rules: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)
    skipped: int = 0  #: rules with a left or right context, not applied

    @property
    def max_len(self) -> int:
        return max((len(k) for k in self.rules), default=0)


def _unbracket(text: str) -> str:
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        return text[1:-1].strip()
    return text


def _first_alternative(text: str) -> tuple[str, ...]:
    """``{ a b / c }`` (braces optional) -> (a, b); ``@`` is the empty alternative."""
    alt = text.strip().lstrip("{").rstrip("}").split("/")[0].split()
    return tuple(w for w in alt if w != "@")


def read_glm(path: str | os.PathLike) -> Glm:
    """Parse a NIST GLM file (``;;`` comments, ``*`` header lines, ``LHS => RHS / [ ] __ [ ]``)."""
    path = Path(path)
    glm = Glm()
    try:
        fh = open(path, **ENCODING)
    except OSError as e:
        raise CorpusError(f"cannot read {path}: {e.strerror}") from None
    with fh:
        for n, line in enumerate(fh, 1):
            line = line.split(";;", 1)[0].strip()
            if not line or line.startswith("*"):
                continue
            m = _RULE.match(line)
            if m is None:
                raise CorpusError(f"{path}:{n}: expected 'LHS => RHS / [ ] __ [ ]', got '{line}'")
            if (m.group("left") or "").strip() or (m.group("right") or "").strip():
                glm.skipped += 1
                continue
            lhs = tuple(_unbracket(m.group("lhs")).lower().split())
            rhs_text = _unbracket(m.group("rhs")).lower()
            if "{" in rhs_text:
                rhs = _first_alternative(rhs_text)
            else:
                rhs = tuple(w for w in rhs_text.split() if w != "@")
            if lhs:
                glm.rules.setdefault(lhs, rhs)
    return glm


def apply_glm(words: Sequence[str], glm: Glm) -> list[str]:
    """Replace, left to right, the longest left side matching at each position."""
    out: list[str] = []
    i, longest = 0, glm.max_len
    while i < len(words):
        for n in range(min(longest, len(words) - i), 0, -1):
            rhs = glm.rules.get(tuple(words[i:i + n]))
            if rhs is not None:
                out.extend(rhs)
                i += n
                break
        else:
            out.append(words[i])
            i += 1
    return out


def _stm_normal_form(words: Sequence[str]) -> list[str]:
    """Drop parenthesised groups, resolve ``{ a / b }`` to ``a``."""
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("(") or w.startswith("{"):
            close = ")" if w.startswith("(") else "}"
            j = i
            while j < len(words) - 1 and not words[j].endswith(close):
                j += 1
            if close == "}":
                out.extend(_first_alternative(" ".join(words[i:j + 1])))
            i = j + 1
            continue
        out.append(w)
        i += 1
    return out


def _scored(w: str) -> bool:
    if w in HESITATIONS or w in _OTHER_DROPPED or w.endswith("-"):
        return False
    return not any(p in w for p in _NOISE_PARTS)


def hub5_filter(words: Sequence[str], glm: Glm) -> list[str]:
    """A reference or hypothesis word sequence in the normal form both sides are scored in."""
    low = [w.lower() for w in words]
    low = [w for w in low if w not in ("<b_aside>", "<e_aside>")]
    return [w for w in apply_glm(_stm_normal_form(low), glm) if _scored(w)]


def filter_texts(glm_path: str | os.PathLike, pairs: Sequence[tuple[str, str]]) -> None:
    """Write each Kaldi text file (utt-id words...) of ``(source, destination)`` pairs in the
    normal form of :func:`hub5_filter`; utterances left without words are kept, empty."""
    glm = read_glm(glm_path)
    for src, dst in pairs:
        lines = []
        with open(src, **ENCODING) as fh:
            for line in fh:
                f = line.split()
                if f:
                    lines.append(" ".join([f[0]] + hub5_filter(f[1:], glm)))
        write_lines(dst, lines)


def get_args() -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("glm", help="the GLM file (data/eval2000/glm)")
    parser.add_argument("pairs", nargs="+", metavar="in-text out-text",
                        help="Kaldi text files to filter and where to write each")
    return parser.parse_args()


def _main(args: argparse.Namespace) -> None:
    if len(args.pairs) % 2:
        raise CorpusError("give the GLM and then pairs of <in-text> <out-text>")
    filter_texts(args.glm, list(zip(args.pairs[::2], args.pairs[1::2])))


if __name__ == "__main__":
    run_script(get_args(), _main)
