"""Pieces a synthetic corpus shares: espeak-ng voices, the tool versions, sox pipelines, mixing.

Synthesised corpora (egs/harbour/s5) are made by espeak-ng piped into sox, so the audio depends
on their versions: :func:`tool_versions` reads them and :func:`check_tool_versions` refuses to add
wavs to a corpus made with other versions (a corpus of two versions' audio would match neither)
and only warns when the corpus is complete. espeak-ng falls back to its default voice, silently
and with exit status 0, on a voice or variant it does not have, so voices are checked against
its own lists first (:func:`check_voices`). sox runs with ``-R`` (repeatable: its noise generator
and dither are seeded the same on every run) and ``-D`` (no dither), so the same command gives
the same bytes. Noise is added in numpy at an exact SNR (:func:`mix_at_snr`).
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import soundfile

from nnetmix.errors import NnetmixError

__all__ = ["SynthError", "SOX", "tool_versions", "check_tool_versions", "corpus_is_complete",
           "start_corpus", "espeak_voice_lists",
           "check_voices", "run_pipeline", "read_wav", "write_wav", "mix_at_snr", "to_int16"]

logger = logging.getLogger(__name__)

#: sox with repeatable random numbers and no dither: the same command, the same bytes.
SOX = ("sox", "-R", "-D")


class SynthError(NnetmixError):
    """A synthesis tool is missing, refuses its input, or differs from the corpus's record."""


def _first_line(cmd: Sequence[str]) -> str:
    try:
        p = subprocess.run(list(cmd), capture_output=True, text=True)
    except FileNotFoundError:
        raise SynthError(f"{cmd[0]} not found (install it: utils/install_debian_deps.sh "
                         "espeak-ng sox)") from None
    lines = (p.stdout or p.stderr).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def tool_versions() -> dict[str, str]:
    """The first line of ``espeak-ng --version`` and ``sox --version``: what makes the audio."""
    return {"espeak-ng": _first_line(["espeak-ng", "--version"]),
            "sox": _first_line(["sox", "--version"])}


def check_tool_versions(params_file: str | os.PathLike, recorded: Mapping[str, str] | None,
                        current: Mapping[str, str], complete: bool) -> None:
    """Compare the versions a corpus was made with (``recorded``) with this machine's.

    A complete corpus made elsewhere is used with a warning; one that still needs wavs is
    refused (SynthError), since the new wavs would differ from what the other versions made.
    """
    if dict(recorded or {}) == dict(current):
        return
    msg = (f"{params_file}: the corpus was made with {dict(recorded) if recorded else 'unrecorded versions'}, "
           f"this machine has {dict(current)}")
    if not complete:
        raise SynthError(msg + "; wavs made now would differ from the existing ones: remove the "
                         "corpus or install the versions it was made with")
    logger.warning(msg + ": using the existing wavs")


def corpus_is_complete(corpus_dir: Path, params: Mapping, counts: str) -> bool:
    """Whether ``corpus_dir`` already holds the corpus of ``params`` (what decides each wav's
    content) at the sizes ``counts`` (its ``.done`` marker's text). A corpus made with other
    params is refused, as is one made with other tool versions that still needs wavs
    (:func:`check_tool_versions`)."""
    params_file, done = corpus_dir / "params.json", corpus_dir / ".done"
    if not params_file.exists():
        return False
    old = json.loads(params_file.read_text())
    if {k: v for k, v in old.items() if k != "tools"} != dict(params):
        raise SynthError(f"{corpus_dir} was made with other options ({old}); remove it or "
                         "choose another corpus directory")
    complete = done.exists() and done.read_text() == counts
    check_tool_versions(params_file, old.get("tools"), tool_versions(), complete)
    return complete


def start_corpus(corpus_dir: Path, params: Mapping) -> None:
    """Make (or reopen) ``corpus_dir`` for synthesis: its ``.done`` marker removed, and
    ``params.json`` written atomically with this machine's tool versions."""
    (corpus_dir / ".done").unlink(missing_ok=True)
    corpus_dir.mkdir(parents=True, exist_ok=True)
    tmp = corpus_dir / "params.json.tmp"
    tmp.write_text(json.dumps({**params, "tools": tool_versions()}, indent=1) + "\n")
    os.replace(tmp, corpus_dir / "params.json")


@lru_cache(maxsize=1)
def espeak_voice_lists() -> tuple[frozenset, frozenset]:
    """(voices, variants) espeak-ng has: language codes and voice files of ``--voices``, and the
    variant names of ``--voices=variant`` (the part after ``+`` in ``en-us+klatt``)."""
    def table(arg: str) -> list[list[str]]:
        try:
            p = subprocess.run(["espeak-ng", arg], capture_output=True, text=True, check=True)
        except (FileNotFoundError, subprocess.CalledProcessError) as e:
            raise SynthError(f"cannot list espeak-ng's voices (espeak-ng {arg}): {e}") from None
        return [line.split() for line in p.stdout.splitlines()[1:] if line.split()]

    voices = set()
    for row in table("--voices"):
        if len(row) >= 5:
            voices.update((row[1], row[4]))
    variants = {row[4].split("/", 1)[1] for row in table("--voices=variant")
                if len(row) >= 5 and row[4].startswith("!v/")}
    return frozenset(voices), frozenset(variants)


def check_voices(voices: Iterable[str], where: str = "voice") -> None:
    """SynthError naming the first ``voice[+variant]`` espeak-ng does not have."""
    have, variants = espeak_voice_lists()
    for v in voices:
        base, _, variant = v.partition("+")
        if base not in have:
            raise SynthError(f"{where} '{v}': espeak-ng has no voice '{base}' "
                             "(espeak-ng --voices lists them)")
        if variant and variant not in variants:
            raise SynthError(f"{where} '{v}': espeak-ng has no variant '{variant}' "
                             "(espeak-ng --voices=variant lists them)")


def run_pipeline(cmds: Sequence[Sequence[str]], what: str) -> None:
    """Run ``cmds[0] | cmds[1] | ...``; SynthError naming ``what`` and every command when any
    of them fails (their stderr included)."""
    procs: list[subprocess.Popen] = []
    prev = None
    try:
        for i, cmd in enumerate(cmds):
            last = i == len(cmds) - 1
            p = subprocess.Popen(list(cmd), stdin=prev, stderr=subprocess.PIPE,
                                 stdout=subprocess.DEVNULL if last else subprocess.PIPE)
            if prev is not None:
                prev.close()
            prev = p.stdout
            procs.append(p)
        errs = [p.stderr.read().decode(errors="replace").strip() for p in reversed(procs)]
        codes = [p.wait() for p in procs]
    except FileNotFoundError as e:
        raise SynthError(f"{what}: {e.filename} not found (install it: "
                         "utils/install_debian_deps.sh espeak-ng sox)") from None
    if any(codes):
        cmdline = " | ".join(" ".join(c) for c in cmds)
        raise SynthError(f"{what}: synthesis failed ({cmdline}): {' '.join(e for e in errs if e)}")


def read_wav(path: str | os.PathLike) -> tuple[np.ndarray, int]:
    """Samples as float64 in [-1, 1) and the sampling rate."""
    x, rate = soundfile.read(os.fspath(path), dtype="float64", always_2d=False)
    return x, rate


def to_int16(x: np.ndarray, peak: float = 0.95) -> np.ndarray:
    """Scale down to ``peak`` only when the mixture would clip; round to 16-bit integers."""
    m = float(np.max(np.abs(x))) if x.size else 0.0
    if m > peak:
        x = x * (peak / m)
    return np.round(x * 32767.0).astype(np.int16)


def write_wav(path: str | os.PathLike, x: np.ndarray, rate: int) -> None:
    """16-bit PCM wav, written to a temporary name and renamed into place."""
    path = Path(path)
    tmp = path.with_name(path.stem + ".tmp.wav")
    soundfile.write(os.fspath(tmp), to_int16(x) if x.dtype != np.int16 else x, rate,
                    subtype="PCM_16")
    os.replace(tmp, path)


def mix_at_snr(speech: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    """speech + g * noise with g such that 10 log10(P_speech / P_noise) = ``snr_db``, powers
    taken over the whole utterance (noise is cut or tiled to the speech's length)."""
    if speech.size == 0:
        return speech.copy()
    reps = -(-speech.size // max(noise.size, 1))
    noise = np.tile(noise, reps)[:speech.size]
    ps, pn = float(np.mean(speech ** 2)), float(np.mean(noise ** 2))
    if pn == 0.0 or ps == 0.0:
        return speech.copy()
    gain = np.sqrt(ps / (pn * 10.0 ** (snr_db / 10.0)))
    return speech + gain * noise
