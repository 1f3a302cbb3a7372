"""Tables of token sequences (transcripts) read through rspecifiers, as compute-wer reads them.

Kaldi's TokenVectorHolder: an archive is ``key tok tok ...`` per line (``ark:data/test/text``,
``ark:-``, ``ark:cmd |``); an scp names, per key, a file holding one such line of tokens. Tokens
are split on spaces, tabs and carriage returns.
"""
from __future__ import annotations

import re
from typing import Iterator

from nnetmix.errors import FormatError
from nnetmix.kaldi import open_input, parse_rspecifier

__all__ = ["iter_token_table", "read_token_table"]

_SPLIT = re.compile(r"[ \t\r]+")


def _tokens(text: str) -> list[str]:
    text = text.strip(" \t\r\n")
    return _SPLIT.split(text) if text else []


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="surrogateescape")


def iter_token_table(rspecifier: str) -> Iterator[tuple[str, list[str]]]:
    """Yield (key, tokens) in the order of the archive or script."""
    spec = parse_rspecifier(rspecifier)
    src = open_input(spec.filename, rspecifier)
    try:
        lineno = 0
        while True:
            raw = src.readline()
            if not raw:
                break
            lineno += 1
            line = _decode(raw).rstrip("\n")
            if not line.strip(" \t\r"):
                continue
            fields = _tokens(line)
            key, rest = fields[0], fields[1:]
            if spec.type == "ark":
                yield key, rest
                continue
            if len(rest) != 1:
                raise FormatError(f"{spec.filename}:{lineno}: expected 'key rxfilename', got "
                                  f"'{line[:80]}'")
            inner = open_input(rest[0], rspecifier)
            try:
                yield key, _tokens(_decode(inner.read(1 << 30)))
            finally:
                inner.close()
    finally:
        src.close()


def read_token_table(rspecifier: str) -> dict[str, list[str]]:
    """All entries as a dict; of repeated keys the first is kept (as Kaldi's random access)."""
    out: dict[str, list[str]] = {}
    for key, toks in iter_token_table(rspecifier):
        out.setdefault(key, toks)
    return out
