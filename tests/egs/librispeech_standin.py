"""A small stand-in for Mini LibriSpeech and OpenSLR resource 11, generated in code.

The layout and formats are LibriSpeech's: ``LibriSpeech/<part>/<reader>/<chapter>/`` with
``<reader>-<chapter>-<nnnn>.flac`` (16 kHz mono 16-bit FLAC, written by soundfile/libsndfile)
and ``<reader>-<chapter>.trans.txt``, ``LibriSpeech/SPEAKERS.TXT``, ``librispeech-lexicon.txt``
(``WORD<tab>ARPAbet phones``, CMUdict's pronunciations) and the tgsmall LM's file
``3-gram.pruned.3e-7.arpa.gz`` (a gzipped ARPA LM: a Kneser-Ney bigram of the training
transcripts). The words are the digits: the audio is either spoken by espeak-ng voices (the
egs/digits/s5 generator, local/synth_digits.py: a recipe that must learn something) or harmonic
bursts (fast, for the layout and bad-input tests).
"""
from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile

from helpers import ROOT

SAMPLE_RATE = 16000
DIGITS = ROOT / "egs" / "digits" / "s5"
TRAIN, TEST = "train-clean-5", "dev-clean-2"
LM_FILE = "3-gram.pruned.3e-7.arpa.gz"
#: lexicon words beyond the transcripts' (the real lexicon has 200,000)
EXTRA_WORDS = ("HELLO", "WORLD")


@dataclass(frozen=True)
class Utt:
    """One stand-in utterance: its part, reader, chapter, number, words and samples."""

    part: str
    reader: str
    chapter: str
    index: int
    words: str
    samples: np.ndarray

    @property
    def utt_id(self) -> str:
        return f"{self.reader}-{self.chapter}-{self.index:04d}"


def bursts(seed: int, seconds: float = 1.0) -> np.ndarray:
    """Harmonic bursts over low noise: audio that decodes, nothing to recognise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    f0 = 100 + 80 * rng.random()
    x = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 6))
    x = 4000 * x * (0.5 + 0.5 * np.sin(2 * np.pi * 2 * t) ** 2) + 100 * rng.standard_normal(t.size)
    return np.clip(x, -32768, 32767).astype(np.int16)


def synthetic_utts(readers: dict[str, int], chapters: int = 1, per_chapter: int = 2,
                   seed: int = 7) -> list[Utt]:
    """Utterances of harmonic bursts: ``readers`` maps each part to its number of readers."""
    rng = np.random.default_rng(seed)
    words = "ZERO ONE TWO THREE FOUR FIVE SIX SEVEN EIGHT NINE OH".split()
    out = []
    for p, (part, n) in enumerate(readers.items()):
        for r in range(n):
            reader = str(100 + 100 * p + r)
            for c in range(chapters):
                for i in range(per_chapter):
                    text = " ".join(rng.choice(words, size=3))
                    out.append(Utt(part, reader, str(5000 + 10 * r + c), i, text,
                                   bursts(len(out))))
    return out


def spoken_utts(work: Path, num_train: int, num_test: int, num_train_spk: int,
                num_test_spk: int, chapters: int = 2, seed: int = 777) -> list[Utt]:
    """Digit strings spoken by espeak-ng voices (egs/digits/s5/local/synth_digits.py, into
    ``work``), each synthetic speaker a reader whose utterances are spread over ``chapters``."""
    subprocess.run([sys.executable, str(DIGITS / "local" / "synth_digits.py"), "--seed",
                    str(seed), "--num-train", str(num_train), "--num-test", str(num_test),
                    "--num-train-spk", str(num_train_spk), "--num-test-spk", str(num_test_spk),
                    "--max-words", "4", "--nj", "2", str(work)], check=True, capture_output=True)
    out = []
    for p, (split, part) in enumerate((("train", TRAIN), ("test", TEST))):
        wavs = dict(line.split(maxsplit=1) for line in (work / split / "wav.scp").read_text()
                    .splitlines())
        text = dict(line.split(maxsplit=1) for line in (work / split / "text").read_text()
                    .splitlines())
        spk2utt = [line.split() for line in (work / split / "spk2utt").read_text().splitlines()]
        for r, (spk, *utts) in enumerate(spk2utt):
            reader = str(100 + 100 * p + r)
            for i, utt in enumerate(utts):
                x, rate = soundfile.read(wavs[utt].strip(), dtype="int16")
                assert rate == SAMPLE_RATE, (wavs[utt], rate)
                chapter = str(5000 + 10 * r + i % chapters)
                out.append(Utt(part, reader, chapter, i // chapters, text[utt].strip(), x))
    return out


def lexicon_lines(words) -> list[str]:
    """librispeech-lexicon.txt lines (``WORD<tab>phones``) of CMUdict's pronunciations."""
    from nnetmix.lang.cmu import load_cmudict
    cmu = load_cmudict()
    return [f"{w}\t{' '.join(pron)}" for w in sorted(set(words)) for pron in cmu[w.lower()]]


def write_standin(root: Path, utts: list[Utt]) -> Path:
    """The corpus folder (LibriSpeech/, the lexicon, the tgsmall LM) of ``utts`` under
    ``root``; returns ``root``."""
    from nnetmix.lang.arpa import estimate_kn_bigram, write_arpa
    libri = root / "LibriSpeech"
    trans: dict[Path, list[str]] = {}
    readers: dict[str, str] = {}
    for u in utts:
        d = libri / u.part / u.reader / u.chapter
        d.mkdir(parents=True, exist_ok=True)
        soundfile.write(str(d / f"{u.utt_id}.flac"), u.samples, SAMPLE_RATE, subtype="PCM_16",
                        format="FLAC")
        trans.setdefault(d / f"{u.reader}-{u.chapter}.trans.txt", []).append(
            f"{u.utt_id} {u.words}")
        readers[u.reader] = u.part
    for f, lines in trans.items():
        f.write_text("".join(x + "\n" for x in sorted(lines)))
    header = ";ID  |SEX| SUBSET           |MINUTES| NAME\n"
    (libri / "SPEAKERS.TXT").write_text(header + "".join(
        f"{r:<5}| {'F' if int(r) % 2 else 'M'} | {part:<16} | 1.00 | Reader {r}\n"
        for r, part in sorted(readers.items())))
    words = {w for u in utts for w in u.words.split()}
    (root / "librispeech-lexicon.txt").write_text(
        "".join(x + "\n" for x in lexicon_lines(words | set(EXTRA_WORDS))))
    train_text = [u.words.split() for u in utts if u.part == TRAIN]
    write_arpa(root / LM_FILE, estimate_kn_bigram(train_text, vocab=sorted(words)))
    return root
