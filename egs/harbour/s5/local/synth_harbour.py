#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Synthesise the harbour corpus: read sentences of a 1000-word grammar by espeak-ng voices, in noise.

Sentences come from the grammar file (local/harbour_grammar.txt, nnetmix/lang/sentgram.py) in the
manner of DARPA Resource Management. The sentence space is cut in two by a hash of the text
(--test-share of it is the test side), so no test sentence is ever a training sentence, whatever
the counts. A speaker is an espeak-ng voice (an English accent) with a variant, and its own range
of pitch (-p), speaking rate (-s), formant scale and word gap (-g); test speakers are never
training speakers. The formant scale f is sox's ``speed f`` (all frequencies times f, as a
shorter or longer vocal tract; the duration is kept by asking espeak-ng for rate s/f). Each
utterance then draws its condition: reverberation (sox reverb, --reverb-share of utterances),
and additive noise at an SNR drawn from --snr (white, pink, brown, an engine-like throb, all made
by sox, and babble: a track of several synthesised talkers of the same split) or none
(--clean-share); --telephone true band-limits to 300-3400 Hz at 8 kHz. Everything follows from
--seed: utterance i of a split is drawn from its own generator seeded by (seed, split, i).

Reads the grammar. Writes, under <corpus-dir>:
  wav/<spk>/<utt>.wav                 16 kHz (8 kHz with --telephone true), mono, 16-bit
  noise/<kind>.wav                    the noise tracks utterances take their noise from
  {train,test}/{wav.scp,text,utt2spk,spk2utt,utt2cond}   Kaldi lists, C-sorted; utt2cond is
                                      '<utt> <noise|clean> <snr-dB|-> <reverb|-> <formant-scale>'
  lm/text                             --num-lm-text more training-side sentences (text only)
  vocab.txt                           every word of the grammar
  params.json, .done                  what decides the audio (options, grammar checksum, espeak-ng
                                      and sox versions); the done marker

Wavs that exist are not made again (each is written to a temporary name, then renamed), so a
killed run resumes where it stopped and the counts can change in place. A corpus directory made
with other options is refused; one made with other espeak-ng or sox versions is refused while
wavs remain to be made and used with a warning when complete. A voice or variant espeak-ng does
not have is an error before anything is written.
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import hashlib
import logging
import os
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nnetmix.data.io import (utt2spk_to_spk2utt, write_lines, write_spk2utt, write_table,
                             write_utt2spk)
from nnetmix.data.synth import (SOX, check_voices, corpus_is_complete, mix_at_snr,
                                read_wav, run_pipeline, start_corpus, write_wav)
from nnetmix.errors import NnetmixError
from nnetmix.lang.sentgram import SentenceGrammar, draw_sentence, read_grammar

# espeak-ng's English voices (the gmw/ ones; the mbrola ones need extra data files), with the
# short accent code used in speaker ids.
ACCENTS = {"en-us": "us", "en-gb": "gb", "en-gb-scotland": "sc", "en-gb-x-gbclan": "lanc",
           "en-gb-x-rp": "rp", "en-gb-x-gbcwmd": "wmid", "en-029": "car", "en-us-nyc": "nyc"}
# Variants of espeak-ng-data/voices/!v that still sound like a talker (digits' 50 and 26 more);
# whispered, robotic and effect variants are left out.
VARIANTS = ("m1 m2 m3 m4 m5 m6 m7 m8 f1 f2 f3 f4 f5 klatt klatt2 klatt3 klatt4 klatt5 klatt6 "
            "adam Alex Andy Annie anika aunty belinda benjamin boris david ed edward Gene grandma "
            "grandpa iven john linda max Michael Mike norbert paul quincy rob robert shelby steph "
            "travis victor zac Alicia Andrea antonio Denis Diogo edward2 Gene2 gustave Henrique "
            "Hugo iven2 iven3 iven4 Jacky Lee marcelo Marco Mario michel miguel Nguyen pablo "
            "pedro sandro steph2 steph3").split()
NOISE_KINDS = ("white", "pink", "brown", "engine", "babble")
# sox synth effects of the stationary noises (one track each, repeatable with sox -R)
SOX_NOISE = {"white": ["synth", "{len}", "whitenoise"],
             "pink": ["synth", "{len}", "pinknoise"],
             "brown": ["synth", "{len}", "brownnoise"],
             "engine": ["synth", "{len}", "brownnoise", "tremolo", "7", "60", "lowpass", "500"]}
BABBLE_TALKERS = 6       # talkers summed into a babble track
RATE = 16000


@dataclass(frozen=True)
class Speaker:
    id: str                          # <accent>_<variant>, no '-' so utterance ids sort by speaker
    voice: str                       # espeak-ng -v argument
    pitch: tuple[int, int]           # espeak -p range (0-99)
    speed: tuple[int, int]           # final speaking rate range, words per minute
    formant: tuple[float, float]     # sox speed factor range
    gap: int                         # espeak -g, pause between words in 10 ms units


@dataclass(frozen=True)
class Utterance:
    id: str
    speaker: Speaker
    words: tuple[str, ...]
    pitch: int
    speed: int
    formant: float
    reverb: tuple[int, int, int] | None   # sox reverb: reverberance, HF damping, room scale (%)
    noise: str | None                     # a NOISE_KINDS entry, None: clean
    snr: float
    noise_offset: float                   # where in the noise track the noise starts (0-1)

    def synth_cmds(self, wav: str, rate: int = RATE) -> list[list[str]]:
        """espeak-ng | sox, reproducibly; the utterance before noise and telephone band."""
        espeak = ["espeak-ng", "-v", self.speaker.voice, "-s", str(round(self.speed / self.formant)),
                  "-p", str(self.pitch), "-g", str(self.speaker.gap), "--stdout",
                  " ".join(self.words)]
        sox = [*SOX, "-t", "wav", "-", "-r", str(rate), "-c", "1", "-b", "16", wav,
               "speed", f"{self.formant:.3f}"]
        if self.reverb:
            sox += ["reverb", *map(str, self.reverb)]
        return [espeak, sox + ["vol", "0.7"]]

    def cond(self) -> str:
        snr = f"{self.snr:.1f}" if self.noise else "-"
        rev = ",".join(map(str, self.reverb)) if self.reverb else "-"
        return f"{self.noise or 'clean'} {snr} {rev} {self.formant:.3f}"


@dataclass(frozen=True)
class Conditions:
    snr: tuple[float, float]
    clean_share: float
    noise_kinds: tuple[str, ...]
    reverb_share: float
    telephone: bool
    noise_seconds: int = 120   # length of a noise track; an utterance takes a random stretch


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--grammar", type=Path, default=Path(__file__).parent / "harbour_grammar.txt",
                   help="sentence grammar file")
    p.add_argument("--seed", type=int, default=777, help="random seed of the whole corpus")
    p.add_argument("--num-train", type=int, default=5100, help="training utterances")
    p.add_argument("--num-test", type=int, default=1200, help="test utterances")
    p.add_argument("--num-lm-text", type=int, default=0,
                   help="more training-side sentences for the LM (text only, lm/text)")
    p.add_argument("--num-train-spk", type=int, default=100, help="training speakers")
    p.add_argument("--num-test-spk", type=int, default=40, help="test speakers (unseen in training)")
    p.add_argument("--test-share", type=float, default=0.1,
                   help="share of the sentence space kept for testing")
    p.add_argument("--voices", default=",".join(ACCENTS),
                   help="espeak-ng voices speakers are made from (comma-separated)")
    p.add_argument("--variants", default=",".join(VARIANTS),
                   help="espeak-ng variants speakers are made from (comma-separated)")
    p.add_argument("--snr", default="5:30", help="SNR range of noisy utterances, dB (low:high)")
    p.add_argument("--clean-share", type=float, default=0.2, help="share of utterances with no noise")
    p.add_argument("--noise-kinds", default=",".join(NOISE_KINDS),
                   help=f"noises to draw from (comma-separated, of {','.join(NOISE_KINDS)})")
    p.add_argument("--reverb-share", type=float, default=0.3, help="share of reverberant utterances")
    p.add_argument("--telephone", default="false", choices=["true", "false"],
                   help="true: 300-3400 Hz band at 8 kHz (Switchboard's channel)")
    p.add_argument("--noise-seconds", type=int, default=120,
                   help="length of each noise track (babble: of each talker's stream)")
    p.add_argument("--nj", type=int, default=2, help="synthesis processes run at once")
    p.add_argument("corpus_dir", type=Path, help="output directory")
    return p.parse_args()


def parse_range(text: str, what: str) -> tuple[float, float]:
    try:
        lo, hi = (float(x) for x in text.split(":"))
    except ValueError:
        raise ValueError(f"{what} takes low:high, got '{text}'") from None
    if lo > hi:
        raise ValueError(f"{what} takes low:high with low <= high, got '{text}'")
    return lo, hi


def make_speakers(seed: int, num_train: int, num_test: int, voices: list[str],
                  variants: list[str]) -> tuple[list[Speaker], list[Speaker]]:
    """Disjoint training and test speakers drawn from every voice x variant pair."""
    pool = [(v, var) for v in voices for var in variants]
    if num_train + num_test > len(pool):
        raise ValueError(f"asked for {num_train + num_test} speakers, only {len(pool)} "
                         "voice + variant pairs exist (--voices, --variants)")
    rng = random.Random(f"{seed}:speakers")
    rng.shuffle(pool)
    speakers = []
    for v, var in pool[:num_train + num_test]:
        pitch = rng.randint(20, 80)        # espeak's default is 50
        speed = rng.randint(130, 190)      # espeak's default is 175 words per minute
        formant = rng.uniform(0.88, 1.12)  # about +-12% vocal tract length
        code = ACCENTS.get(v, v.replace("-", ""))
        speakers.append(Speaker(id=f"{code}_{var.lower()}", voice=f"{v}+{var}",
                                pitch=(pitch - 8, pitch + 8), speed=(speed - 15, speed + 15),
                                formant=(round(formant - 0.02, 3), round(formant + 0.02, 3)),
                                gap=rng.randint(0, 3)))
    return speakers[:num_train], speakers[num_train:]


def make_utterances(grammar: SentenceGrammar, seed: int, split: str, num: int,
                    speakers: list[Speaker], test_share: float,
                    cond: Conditions) -> list[Utterance]:
    """Utterance i goes to speaker i mod #speakers; its words and condition come from a
    generator of its own, so it does not change when the counts do."""
    utts = []
    for i in range(num):
        rng = random.Random(f"{seed}:{split}:{i}")
        spk = speakers[i % len(speakers)]
        words = draw_sentence(grammar, rng, split == "test", test_share)
        reverb = None
        if rng.random() < cond.reverb_share:
            reverb = (rng.randint(20, 80), rng.randint(30, 70), rng.randint(30, 100))
        noise = None
        if cond.noise_kinds and rng.random() >= cond.clean_share:
            noise = cond.noise_kinds[rng.randrange(len(cond.noise_kinds))]
        utts.append(Utterance(
            id=f"{spk.id}-{split}{i:05d}", speaker=spk, words=words,
            pitch=rng.randint(*spk.pitch), speed=rng.randint(*spk.speed),
            formant=round(rng.uniform(*spk.formant), 3), reverb=reverb, noise=noise,
            snr=round(rng.uniform(*cond.snr), 1), noise_offset=rng.random()))
    return sorted(utts, key=lambda u: u.id.encode())


def make_noise_track(path: Path, kind: str, split: str, seed: int, grammar: SentenceGrammar,
                     speakers: list[Speaker], test_share: float, seconds: int) -> None:
    """One noise track: sox's generator for the stationary kinds; for babble, BABBLE_TALKERS
    streams of the split's speakers reading the split's sentences, summed."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.wav")
    if kind != "babble":
        effects = [a.format(len=seconds) for a in SOX_NOISE[kind]]
        run_pipeline([[*SOX, "-n", "-r", str(RATE), "-c", "1", "-b", "16", str(tmp), *effects,
                       "vol", "0.5"]], f"noise track {path}")
        os.replace(tmp, path)
        return
    total = np.zeros(seconds * RATE)
    for k in range(BABBLE_TALKERS):
        rng = random.Random(f"{seed}:{split}:babble:{k}")
        spk = speakers[rng.randrange(len(speakers))]
        stream, j = [], 0
        while sum(len(s) for s in stream) < total.size:
            u = Utterance(id=f"babble{k}_{j}", speaker=spk,
                          words=draw_sentence(grammar, rng, split == "test", test_share),
                          pitch=rng.randint(*spk.pitch), speed=rng.randint(*spk.speed),
                          formant=round(rng.uniform(*spk.formant), 3), reverb=None, noise=None,
                          snr=0.0, noise_offset=0.0)
            run_pipeline(u.synth_cmds(str(tmp)), f"babble track {path}")
            x, _ = read_wav(tmp)
            stream.append(x / max(np.sqrt(np.mean(x ** 2)), 1e-9))  # equal loudness per sentence
            j += 1
        total += np.concatenate(stream)[:total.size]
    write_wav(path, total / BABBLE_TALKERS * 0.1, RATE)
    tmp.unlink(missing_ok=True)


def synth_one(utt: Utterance, wav: Path, noise_dir: Path, split: str, telephone: bool) -> None:
    """Speech (espeak-ng | sox), then noise at the utterance's SNR, then the telephone band."""
    if wav.exists():
        return
    wav.parent.mkdir(parents=True, exist_ok=True)
    tmp = wav.with_name(wav.stem + ".tmp.wav")
    try:
        run_pipeline(utt.synth_cmds(str(tmp)), utt.id)
        if utt.noise:
            x, rate = read_wav(tmp)
            track, _ = read_wav(noise_dir / f"{track_name(utt.noise, split)}.wav")
            start = int(utt.noise_offset * max(track.size - x.size, 0))
            write_wav(tmp, mix_at_snr(x, track[start:], utt.snr), rate)
        if telephone:
            band = wav.with_name(wav.stem + ".tmp8k.wav")
            run_pipeline([[*SOX, str(tmp), "-r", "8000", "-b", "16", str(band),
                           "sinc", "300-3400"]], f"{utt.id} (telephone band)")
            os.replace(band, tmp)
        os.replace(tmp, wav)
    finally:
        tmp.unlink(missing_ok=True)


def track_name(kind: str, split: str) -> str:
    """Babble is made per split (its talkers are the split's speakers); the others are shared."""
    return f"babble_{split}" if kind == "babble" else kind


def write_lists(split_dir: Path, utts: list[Utterance], wav_dir: Path) -> None:
    """The split's Kaldi lists, C-sorted, each written atomically (nnetmix/data/io.py)."""
    split_dir.mkdir(parents=True, exist_ok=True)
    utt2spk = {u.id: u.speaker.id for u in utts}
    write_table(split_dir / "wav.scp", {u.id: str(wav_dir / u.speaker.id / (u.id + ".wav"))
                                        for u in utts})
    write_table(split_dir / "text", {u.id: " ".join(u.words) for u in utts})
    write_utt2spk(split_dir / "utt2spk", utt2spk)
    write_spk2utt(split_dir / "spk2utt", utt2spk_to_spk2utt(utt2spk))
    write_table(split_dir / "utt2cond", {u.id: u.cond() for u in utts})


def synth_harbour(corpus_dir: Path, grammar_file: Path, seed: int = 777, num_train: int = 5100,
                  num_test: int = 1200, num_lm_text: int = 0, num_train_spk: int = 100,
                  num_test_spk: int = 40, test_share: float = 0.1,
                  voices: list[str] | None = None, variants: list[str] | None = None,
                  cond: Conditions | None = None, nj: int = 2) -> None:
    """Make (or finish making) the corpus under ``corpus_dir``; see the module docstring."""
    voices = voices or list(ACCENTS)
    variants = variants or list(VARIANTS)
    cond = cond or Conditions((5.0, 30.0), 0.2, NOISE_KINDS, 0.3, False)
    if min(num_train, num_test, num_train_spk, num_test_spk, cond.noise_seconds) < 1 \
            or num_lm_text < 0:
        raise ValueError("--num-train, --num-test, --num-train-spk, --num-test-spk and "
                         "--noise-seconds must be at least 1, --num-lm-text at least 0")
    if not 0.0 < test_share < 1.0:
        raise ValueError(f"--test-share must be between 0 and 1, got {test_share}")
    for name, share in (("--clean-share", cond.clean_share), ("--reverb-share", cond.reverb_share)):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{name} must be between 0 and 1, got {share}")
    bad = [k for k in cond.noise_kinds if k not in NOISE_KINDS]
    if bad:
        raise ValueError(f"--noise-kinds: unknown noise '{bad[0]}' (choose from "
                         f"{','.join(NOISE_KINDS)})")
    # espeak-ng speaks with its default voice when it lacks the one asked for: check first
    check_voices(voices, "--voices")
    check_voices([f"{voices[0]}+{v}" for v in variants], "--variants")
    grammar = read_grammar(grammar_file)

    corpus_dir = corpus_dir.resolve()
    params = {"seed": seed, "num_train_spk": num_train_spk, "num_test_spk": num_test_spk,
              "test_share": test_share, "voices": voices, "variants": variants,
              "grammar_md5": hashlib.md5(grammar_file.read_bytes()).hexdigest(),
              "snr": list(cond.snr), "clean_share": cond.clean_share,
              "noise_kinds": list(cond.noise_kinds), "reverb_share": cond.reverb_share,
              "telephone": cond.telephone, "noise_seconds": cond.noise_seconds}
    counts = f"num_train={num_train} num_test={num_test} num_lm_text={num_lm_text}\n"
    done = corpus_dir / ".done"
    if corpus_is_complete(corpus_dir, params, counts):
        logging.info(f"{done} exists - skipping")
        return
    train_spk, test_spk = make_speakers(seed, num_train_spk, num_test_spk, voices, variants)
    splits = {"train": make_utterances(grammar, seed, "train", num_train, train_spk, test_share,
                                       cond),
              "test": make_utterances(grammar, seed, "test", num_test, test_spk, test_share, cond)}
    start_corpus(corpus_dir, params)

    start = time.time()
    noise_dir = corpus_dir / "noise"
    kinds_used = {(u.noise, split) for split, utts in splits.items() for u in utts if u.noise}
    for kind, split in sorted(kinds_used):
        make_noise_track(noise_dir / f"{track_name(kind, split)}.wav", kind, split, seed, grammar,
                         train_spk if split == "train" else test_spk, test_share,
                         cond.noise_seconds)
    logging.info(f"noise tracks: {len(kinds_used)} ({time.time() - start:.1f} s)")

    wav_dir = corpus_dir / "wav"
    jobs = [(u, wav_dir / u.speaker.id / (u.id + ".wav"), split)
            for split, utts in splits.items() for u in utts]
    todo = [j for j in jobs if not j[1].exists()]
    logging.info(f"{len(jobs)} utterances, {len(jobs) - len(todo)} already made, "
                 f"synthesising {len(todo)} with {nj} jobs")
    start, step = time.time(), max(1, len(todo) // 10)
    # Threads wait on espeak-ng and sox processes (and numpy, which releases the GIL), so nj
    # threads keep about nj pipelines busy.
    with ThreadPoolExecutor(max_workers=max(1, nj)) as pool:
        work = pool.map(lambda j: synth_one(j[0], j[1], noise_dir, j[2], cond.telephone), todo)
        for n, _ in enumerate(work, 1):
            if n % step == 0 or n == len(todo):
                logging.info(f"synthesised {n}/{len(todo)} ({time.time() - start:.1f} s)")
    for split, utts in splits.items():
        write_lists(corpus_dir / split, utts, wav_dir)
    lm_text = [" ".join(draw_sentence(grammar, random.Random(f"{seed}:lmtext:{i}"), False,
                                      test_share)) for i in range(num_lm_text)]
    (corpus_dir / "lm").mkdir(exist_ok=True)
    write_lines(corpus_dir / "lm" / "text", [f"lmtext{i:06d} {s}" for i, s in enumerate(lm_text)])
    write_lines(corpus_dir / "vocab.txt", grammar.words())
    done.write_text(counts)
    nspk = {k: len({u.speaker.id for u in v}) for k, v in splits.items()}
    nwords = {k: sum(len(u.words) for u in v) for k, v in splits.items()}
    logging.info(f"done: {corpus_dir} ({len(splits['train'])} train utterances, "
                 f"{nwords['train']} words, from {nspk['train']} speakers; "
                 f"{len(splits['test'])} test utterances, {nwords['test']} words, from "
                 f"{nspk['test']} other speakers)")


def main() -> int:
    logging.basicConfig(format="%(asctime)s %(levelname)s [%(filename)s:%(lineno)d] %(message)s",
                        level=logging.INFO)
    args = get_args()
    logging.info(vars(args))
    try:
        cond = Conditions(snr=parse_range(args.snr, "--snr"), clean_share=args.clean_share,
                          noise_kinds=tuple(k for k in args.noise_kinds.split(",") if k),
                          reverb_share=args.reverb_share, telephone=args.telephone == "true",
                          noise_seconds=args.noise_seconds)
        synth_harbour(args.corpus_dir, args.grammar, seed=args.seed, num_train=args.num_train,
                      num_test=args.num_test, num_lm_text=args.num_lm_text,
                      num_train_spk=args.num_train_spk, num_test_spk=args.num_test_spk,
                      test_share=args.test_share,
                      voices=[v for v in args.voices.split(",") if v],
                      variants=[v for v in args.variants.split(",") if v], cond=cond, nj=args.nj)
    except (ValueError, NnetmixError, OSError) as e:
        logging.error(str(e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
