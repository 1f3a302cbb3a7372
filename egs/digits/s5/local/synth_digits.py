#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Synthesise a connected-digits corpus (in the manner of TIDIGITS) with espeak-ng and sox.

An utterance is a string of 1 to --max-words words over ZERO..NINE and OH. A speaker is one
espeak-ng voice (an English accent) with one voice variant (``en-gb-x-rp+klatt3``), with its own
pitch and speed range; every utterance draws its pitch and speed inside its speaker's range. Test
speakers are never training speakers. Then, in the manner of Aurora 2 (TIDIGITS in noise), all but
--clean-share of the utterances get additive noise (white, pink or brown, made in numpy from the
utterance's own seed) at an SNR drawn from --snr: espeak-ng's digits in the clear are so easy that
every system makes a handful of errors, mostly on OH (its README section), and no test set of a
size that decodes in minutes can rank them. Everything follows from --seed: utterance i of a split
is drawn from its own generator seeded by (seed, split, i), so the same options give the same
texts and byte-identical wavs, whatever --nj is.

Reads nothing. Writes, under <corpus-dir>:
  wav/<spk>/<utt>.wav                    16 kHz, mono, 16-bit
  {train,test}/{wav.scp,text,utt2spk,spk2utt}   Kaldi lists, C-sorted, wav.scp with absolute paths
  {train,test}/utt2cond                  '<utt> <noise|clean> <snr-dB|->': each utterance's noise
  params.json, .done                     the options the corpus was made with and the versions of
                                         espeak-ng and sox that made it; the done marker

Wavs that exist are not made again (each is written to a temporary name, then renamed), so a
killed run resumes where it stopped, and --num-train/--num-test can change in place. A corpus
directory made with another seed, speaker count or --max-words is refused. The audio also
depends on the espeak-ng and sox versions (Debian 12's espeak-ng 1.51 and sox 14.4.2 made the
published corpus): a corpus made with other versions is used with a warning when complete and
refused when wavs remain to be made (a corpus of two versions' audio would match neither).
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import logging
import os
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nnetmix.data.synth import (SynthError, corpus_is_complete, mix_at_snr, read_wav,
                                start_corpus, write_wav)

WORDS = ["ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE", "OH"]
# One letter per word for utterance ids, as TIDIGITS names its files (z for zero, o for oh).
CODES = dict(zip(WORDS, "z123456789o"))
# Words that start with a vowel: with --glottal-onset each is said with a glottal stop first
# (espeak-ng's phoneme [[?]]), as careful speakers reading digits do; without it espeak-ng runs
# "oh oh" into one long ow and ZERO's final ow into a following OH.
VOWEL_INITIAL = {"OH", "EIGHT"}
# Noise colours: the exponent a of the power spectrum 1/f^a (white 0, pink 1, brown 2).
NOISE_KINDS = {"white": 0.0, "pink": 1.0, "brown": 2.0}

# espeak-ng's English voices (`espeak-ng --voices=en`, the gmw/ ones; the mbrola ones need extra
# data files) with the short accent code used in speaker ids.
ACCENTS = {"en-us": "us", "en-gb": "gb", "en-gb-scotland": "sc", "en-gb-x-gbclan": "lanc",
           "en-gb-x-rp": "rp", "en-gb-x-gbcwmd": "wmid", "en-029": "car", "en-us-nyc": "nyc"}
# Variants from espeak-ng-data/voices/!v that still sound like a talker: whispered (whisper,
# caleb), robotic (robosoft*, UniRobot), effect (croak, Demonic) and odd-formant ones are left out.
VARIANTS = ["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "f1", "f2", "f3", "f4", "f5",
            "klatt", "klatt2", "klatt3", "klatt4", "klatt5", "klatt6", "adam", "Alex", "Andy",
            "Annie", "anika", "aunty", "belinda", "benjamin", "boris", "david", "ed", "edward",
            "Gene", "grandma", "grandpa", "iven", "john", "linda", "max", "Michael", "Mike",
            "norbert", "paul", "quincy", "rob", "robert", "shelby", "steph", "travis", "victor",
            "zac"]


@dataclass(frozen=True)
class Speaker:
    id: str          # <accent>_<variant>, no '-' so that '<spk>-<rest>' utterance ids sort by speaker
    voice: str       # espeak-ng -v argument
    pitch: tuple[int, int]   # espeak -p range (0-99)
    speed: tuple[int, int]   # espeak -s range (words per minute)


@dataclass(frozen=True)
class Utterance:
    id: str
    speaker: Speaker
    words: tuple[str, ...]
    pitch: int
    speed: int
    noise: str | None = None   # a NOISE_KINDS key, None: clean
    snr: float = 0.0           # dB, speech to noise power over the utterance
    noise_seed: int = 0        # seed of the utterance's noise
    glottal_onset: bool = False  # a glottal stop before each VOWEL_INITIAL word

    def cond(self) -> str:
        return f"{self.noise} {self.snr:.1f}" if self.noise else "clean -"

    def command(self, wav: str) -> tuple[list[str], list[str]]:
        """espeak-ng and sox argument lists; piped together they write ``wav`` reproducibly."""
        text = " ".join(("[[?]]" if self.glottal_onset and w in VOWEL_INITIAL else "")
                        + w.lower() for w in self.words)
        espeak = ["espeak-ng", "-v", self.speaker.voice, "-s", str(self.speed), "-p",
                  str(self.pitch), "--stdout", text]
        sox = ["sox", "-D", "-t", "wav", "-", "-r", "16000", "-c", "1", "-b", "16", wav,
               "vol", "0.8"]
        return espeak, sox


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--seed", type=int, default=777, help="random seed of the whole corpus")
    p.add_argument("--num-train", type=int, default=2000, help="training utterances")
    p.add_argument("--num-test", type=int, default=300, help="test utterances")
    p.add_argument("--num-train-spk", type=int, default=40, help="training speakers")
    p.add_argument("--num-test-spk", type=int, default=12, help="test speakers (unseen in training)")
    p.add_argument("--max-words", type=int, default=7, help="longest digit string")
    p.add_argument("--snr", default="0:20", help="SNR range of noisy utterances, dB (low:high)")
    p.add_argument("--clean-share", type=float, default=0.2,
                   help="share of utterances without noise (1: a clean corpus)")
    p.add_argument("--glottal-onset", default="false", choices=("true", "false"),
                   help="a glottal stop before the vowel-initial words (OH, EIGHT)")
    p.add_argument("--nj", type=int, default=2, help="synthesis processes run at once")
    p.add_argument("corpus_dir", type=Path, help="output directory")
    return p.parse_args()


def make_speakers(seed: int, num_train: int, num_test: int) -> tuple[list[Speaker], list[Speaker]]:
    """Draw disjoint training and test speakers from every accent x variant pair."""
    pool = [(voice, var) for voice in ACCENTS for var in VARIANTS]
    if num_train + num_test > len(pool):
        raise ValueError(f"asked for {num_train + num_test} speakers, only {len(pool)} voices exist")
    rng = random.Random(f"{seed}:speakers")
    rng.shuffle(pool)
    speakers = []
    for voice, var in pool[:num_train + num_test]:
        pitch = rng.randint(25, 75)  # espeak's default is 50
        speed = rng.randint(135, 185)  # espeak's default is 175
        speakers.append(Speaker(id=f"{ACCENTS[voice]}_{var.lower()}", voice=f"{voice}+{var}",
                                pitch=(pitch - 8, pitch + 8), speed=(speed - 15, speed + 15)))
    return speakers[:num_train], speakers[num_train:]


def make_utterances(seed: int, split: str, num: int, speakers: list[Speaker],
                    max_words: int, snr: tuple[float, float] = (0.0, 20.0),
                    clean_share: float = 1.0, glottal_onset: bool = False) -> list[Utterance]:
    """Utterance i goes to speaker i mod #speakers; its words, pitch, speed and noise come from a
    generator of its own, so it does not change when --num-train or --num-test does (the noise
    is drawn last: the words, pitch and speed are those of the clean corpus)."""
    utts = []
    for i in range(num):
        rng = random.Random(f"{seed}:{split}:{i}")
        spk = speakers[i % len(speakers)]
        words = tuple(rng.choice(WORDS) for _ in range(rng.randint(1, max_words)))
        code = "".join(CODES[w] for w in words)
        pitch, speed = rng.randint(*spk.pitch), rng.randint(*spk.speed)
        noise = None
        if rng.random() >= clean_share:
            noise = list(NOISE_KINDS)[rng.randrange(len(NOISE_KINDS))]
        utts.append(Utterance(id=f"{spk.id}-{split}{i:05d}_{code}", speaker=spk, words=words,
                              pitch=pitch, speed=speed, noise=noise,
                              snr=round(rng.uniform(*snr), 1), noise_seed=rng.getrandbits(63),
                              glottal_onset=glottal_onset))
    return sorted(utts, key=lambda u: u.id.encode())


def colored_noise(kind: str, n: int, seed: int) -> np.ndarray:
    """``n`` samples of Gaussian noise with power spectrum 1/f^a (NOISE_KINDS), shaped in the
    frequency domain; bins below 1/1000 of the band keep the level there (no DC drift)."""
    rng = np.random.default_rng(seed)
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.maximum(np.arange(spec.size) / max(spec.size, 1), 1e-3)
    return np.fft.irfft(spec * f ** (-NOISE_KINDS[kind] / 2), n)


def _synth_one(utt: Utterance, wav: Path) -> None:
    if wav.exists():
        return
    wav.parent.mkdir(parents=True, exist_ok=True)
    tmp = wav.with_name(wav.stem + ".tmp.wav")
    espeak_cmd, sox_cmd = utt.command(str(tmp))
    espeak = subprocess.Popen(espeak_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sox = subprocess.run(sox_cmd, stdin=espeak.stdout, capture_output=True, text=True)
    espeak.stdout.close()
    err = espeak.stderr.read().decode(errors="replace")
    espeak.wait()
    if espeak.returncode != 0 or sox.returncode != 0 or not tmp.exists():
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"{utt.id}: synthesis failed ({' '.join(espeak_cmd)} | "
                           f"{' '.join(sox_cmd)}): {err.strip()} {sox.stderr.strip()}")
    if utt.noise:
        x, rate = read_wav(tmp)
        write_wav(tmp, mix_at_snr(x, colored_noise(utt.noise, x.size, utt.noise_seed), utt.snr),
                  rate)
    os.replace(tmp, wav)


def _write_lists(split_dir: Path, utts: list[Utterance], wav_dir: Path) -> None:
    split_dir.mkdir(parents=True, exist_ok=True)
    spk2utt: dict[str, list[str]] = {}
    for u in utts:
        spk2utt.setdefault(u.speaker.id, []).append(u.id)
    files = {
        "wav.scp": [f"{u.id} {wav_dir / u.speaker.id / (u.id + '.wav')}" for u in utts],
        "text": [f"{u.id} {' '.join(u.words)}" for u in utts],
        "utt2spk": [f"{u.id} {u.speaker.id}" for u in utts],
        "spk2utt": [f"{s} {' '.join(ids)}" for s, ids in sorted(spk2utt.items(),
                                                                key=lambda kv: kv[0].encode())],
        "utt2cond": [f"{u.id} {u.cond()}" for u in utts],
    }
    for name, lines in files.items():
        tmp = split_dir / (name + ".tmp")
        tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        os.replace(tmp, split_dir / name)


def synth_digits(corpus_dir: Path, seed: int = 777, num_train: int = 2000, num_test: int = 300,
                 num_train_spk: int = 40, num_test_spk: int = 12, max_words: int = 7,
                 snr: tuple[float, float] = (0.0, 20.0), clean_share: float = 1.0,
                 glottal_onset: bool = False, nj: int = 2) -> None:
    """Make (or finish making) the corpus under ``corpus_dir``; see the module docstring.
    The defaults here make the clean corpus; the command line's, the noisy one."""
    if min(num_train, num_test, num_train_spk, num_test_spk, max_words) < 1:
        raise ValueError("--num-train, --num-test, --num-train-spk, --num-test-spk and --max-words "
                         "must all be at least 1")
    if not 0.0 <= clean_share <= 1.0 or snr[0] > snr[1]:
        raise ValueError(f"--clean-share {clean_share} must be in [0, 1] and --snr "
                         f"{snr[0]:g}:{snr[1]:g} a range low:high")
    corpus_dir = corpus_dir.resolve()
    # What decides the content of a wav with a given id; the counts only decide how many exist,
    # so a corpus can be grown or shrunk in place.
    params = {"seed": seed, "num_train_spk": num_train_spk, "num_test_spk": num_test_spk,
              "max_words": max_words}
    if clean_share < 1.0:   # a clean corpus keeps the params.json it had before noise existed
        params.update(snr=list(snr), clean_share=clean_share)
    if glottal_onset:       # so does a corpus without glottal stops
        params.update(glottal_onset=True)
    counts = f"num_train={num_train} num_test={num_test}\n"
    done = corpus_dir / ".done"
    if corpus_is_complete(corpus_dir, params, counts):
        logging.info(f"{done} exists - skipping")
        return
    start_corpus(corpus_dir, params)

    train_spk, test_spk = make_speakers(seed, num_train_spk, num_test_spk)
    splits = {split: make_utterances(seed, split, num, spk, max_words, snr, clean_share,
                                     glottal_onset)
              for split, num, spk in (("train", num_train, train_spk),
                                      ("test", num_test, test_spk))}
    wav_dir = corpus_dir / "wav"
    jobs = [(u, wav_dir / u.speaker.id / (u.id + ".wav")) for utts in splits.values() for u in utts]
    todo = [(u, w) for u, w in jobs if not w.exists()]
    logging.info(f"{len(jobs)} utterances, {len(jobs) - len(todo)} already made, "
                 f"synthesising {len(todo)} with {nj} jobs")
    start, step = time.time(), max(1, len(todo) // 10)
    # Threads only wait on espeak-ng and sox processes, so nj threads keep nj pipelines busy.
    with ThreadPoolExecutor(max_workers=max(1, nj)) as pool:
        for n, _ in enumerate(pool.map(lambda uw: _synth_one(*uw), todo), 1):
            if n % step == 0 or n == len(todo):
                logging.info(f"synthesised {n}/{len(todo)} ({time.time() - start:.1f} s)")
    for split, utts in splits.items():
        _write_lists(corpus_dir / split, utts, wav_dir)
    done.write_text(counts)
    nspk = {k: len({u.speaker.id for u in v}) for k, v in splits.items()}
    logging.info(f"done: {corpus_dir} ({len(splits['train'])} train utterances from "
                 f"{nspk['train']} speakers, {len(splits['test'])} test utterances from "
                 f"{nspk['test']} other speakers)")


if __name__ == "__main__":
    logging.basicConfig(format="%(asctime)s %(levelname)s [%(filename)s:%(lineno)d] %(message)s",
                        level=logging.INFO)
    args = get_args()
    logging.info(vars(args))
    try:
        try:
            low, high = (float(v) for v in args.snr.split(":"))
        except ValueError:
            raise ValueError(f"--snr {args.snr}: expected low:high in dB, e.g. 0:20") from None
        synth_digits(args.corpus_dir, seed=args.seed, num_train=args.num_train,
                     num_test=args.num_test, num_train_spk=args.num_train_spk,
                     num_test_spk=args.num_test_spk, max_words=args.max_words,
                     snr=(low, high), clean_share=args.clean_share,
                     glottal_onset=args.glottal_onset == "true", nj=args.nj)
    except (ValueError, RuntimeError, OSError, SynthError) as e:
        logging.error(str(e))
        sys.exit(1)
