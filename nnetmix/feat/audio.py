"""The recording type every audio reader returns, its errors, and decoding through soundfile.

Kept apart from the readers (wav.py, sphere.py, sph2pipe.py, wavetable.py) so that each of them
can use it without importing the others.

Kaldi's WaveData (src/feat/wave-reader.cc) hands the feature code the integer sample values
as they are stored: a 16-bit file gives values in [-32768, 32767], not floats in [-1, 1].
The scale matters: log energies and log mel energies shift by log(32768^2) ~= 20.8 between the
two, and the energy floor and log floor (float epsilon) act at different levels, so features
computed from [-1, 1] floats are NOT Kaldi's. :func:`read_soundfile` therefore returns integer
PCM of any width as its raw integer values (mu-law and A-law as the 16-bit values they decode
to); float WAV/FLAC data (which Kaldi cannot read at all) is scaled by 32768 to the 16-bit range.
"""
from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import soundfile as sf

from nnetmix.errors import NnetmixError

__all__ = ["Audio", "AudioReadError", "SampleRateError", "from_int16", "read_soundfile"]

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
    def num_samples(self) -> int:
        return self.samples.shape[1]

    @property
    def duration(self) -> float:
        return self.samples.shape[1] / self.sample_rate


def from_int16(frames: np.ndarray, rate: float) -> Audio:
    """Audio from interleaved int16 frames (num_samples, channels), as soundfile returns them."""
    return Audio(np.ascontiguousarray(frames.T, dtype=np.float32), float(rate))


def read_soundfile(src: bytes | str, where: str) -> Audio:
    """Decode a whole audio file (a path, or its bytes) on Kaldi's scale; ``where`` names it in
    the AudioReadError raised for anything soundfile cannot decode."""
    fh = io.BytesIO(src) if isinstance(src, bytes) else src
    try:
        with sf.SoundFile(fh) as f:
            subtype = f.subtype
            data = f.read(dtype="float32", always_2d=True)
            rate = float(f.samplerate)
    except (sf.LibsndfileError, RuntimeError, ValueError) as e:
        raise AudioReadError(f"cannot read audio from {where}: {e}") from None
    scale = _INT_SCALE.get(subtype, 32768.0)
    samples = np.ascontiguousarray(data.T)
    samples *= np.float32(scale)
    return Audio(samples, rate)
