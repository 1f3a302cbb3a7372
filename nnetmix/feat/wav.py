"""Reading wav.scp entries into samples on Kaldi's scale.

Kaldi's WaveData (src/feat/wave-reader.cc) hands the feature code the integer sample values
as they are stored: a 16-bit file gives values in [-32768, 32767], not floats in [-1, 1].
The scale matters: log energies and log mel energies shift by log(32768^2) ~= 20.8 between the
two, and the energy floor and log floor (float epsilon) act at different levels, so features
computed from [-1, 1] floats are NOT Kaldi's. We therefore read integer PCM of any width as its
raw integer values; float WAV/FLAC data (which Kaldi cannot read at all) is scaled by 32768 to
the 16-bit range.

An entry is a file name, ``-`` (stdin) or a ``command |`` pipe, read through soundfile.
"""
from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import soundfile as sf

from nnetmix.errors import FormatError, NnetmixError, UsageError

__all__ = ["AudioReadError", "SampleRateError", "Audio", "read_audio", "read_wav_scp",
           "parse_scp_rspecifier"]

# integer PCM subtypes -> the factor that turns soundfile's [-1, 1) floats back into raw values
_INT_SCALE = {"PCM_S8": 128.0, "PCM_U8": 128.0, "PCM_16": 32768.0, "PCM_24": 8388608.0,
              "PCM_32": 2147483648.0}


class AudioReadError(NnetmixError):
    """A wav.scp entry could not be read: missing file, failed pipe, corrupt or empty audio."""


class SampleRateError(NnetmixError):
    """The audio's sample rate differs from --sample-frequency (Kaldi stops here too)."""


@dataclass
class Audio:
    """One recording: samples (channels, num_samples) float32 on Kaldi's scale, and its rate."""

    samples: np.ndarray
    sample_rate: float

    @property
    def num_channels(self) -> int:
        return self.samples.shape[0]

    @property
    def duration(self) -> float:
        return self.samples.shape[1] / self.sample_rate


def _open_bytes(rxfilename: str) -> bytes | str:
    """Bytes of a pipe or stdin, or the path itself for a plain file."""
    rx = rxfilename.strip()
    if rx.endswith("|"):
        cmd = rx[:-1]
        proc = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            tail = f": {err[-1]}" if err else ""
            raise AudioReadError(f"command '{cmd.strip()}' failed with status "
                                 f"{proc.returncode}{tail}")
        return proc.stdout
    if rx == "-":
        return sys.stdin.buffer.read()
    if not Path(rx).is_file():
        raise AudioReadError(f"no such file {rx}")
    return rx


def read_audio(rxfilename: str) -> Audio:
    """Read a whole recording; raise AudioReadError on anything soundfile cannot decode."""
    src = _open_bytes(rxfilename)
    fh = io.BytesIO(src) if isinstance(src, bytes) else src
    try:
        with sf.SoundFile(fh) as f:
            subtype = f.subtype
            data = f.read(dtype="float32", always_2d=True)
            rate = float(f.samplerate)
    except (sf.LibsndfileError, RuntimeError, ValueError) as e:
        where = rxfilename.strip() if not isinstance(src, bytes) else f"output of '{rxfilename}'"
        raise AudioReadError(f"cannot read audio from {where}: {e}") from None
    scale = _INT_SCALE.get(subtype, 32768.0)
    samples = np.ascontiguousarray(data.T)
    samples *= np.float32(scale)
    return Audio(samples, rate)


def parse_scp_rspecifier(rspecifier: str) -> str:
    """The file name of an ``scp[,opts]:file`` rspecifier (wav tables are scp lists)."""
    head, sep, path = rspecifier.partition(":")
    kinds = [t for t in head.split(",") if t]
    if not sep or "scp" not in kinds or not path:
        if sep and "ark" in kinds:
            raise UsageError(f"wav archives are not supported: {rspecifier} (use "
                             "scp:wav.scp with one file or 'command |' per line)")
        raise UsageError(f"bad wav rspecifier '{rspecifier}' (expected scp:wav.scp)")
    return path


def read_wav_scp(rspecifier: str) -> Iterator[tuple[str, str]]:
    """Yield (key, rxfilename) from a wav.scp given as ``scp:path`` (path may be ``-``)."""
    path = parse_scp_rspecifier(rspecifier)
    try:
        fh = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as e:
        raise UsageError(f"cannot open {path}: {e.strerror}") from None
    with fh if path != "-" else contextlib.nullcontext(fh):
        for n, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            parts = line.split(None, 1)
            if len(parts) != 2:
                raise FormatError(f"{path}:{n}: expected '<key> <rxfilename>', got '{line}'")
            yield parts[0], parts[1]

