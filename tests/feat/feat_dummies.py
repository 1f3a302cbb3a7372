"""Tiny audio, feature and data-dir fixtures for the feature tests, built in code from a seed."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf


def dummy_samples(num_samples: int, seed: int = 0, rate: int = 16000) -> np.ndarray:
    """int16 samples: a few sines plus noise, so every mel band has energy."""
    rng = np.random.default_rng(seed)
    t = np.arange(num_samples) / rate
    x = sum(np.sin(2 * np.pi * f * t + rng.uniform(0, 6)) for f in rng.uniform(100, 6000, 4))
    x = 2500 * x + 300 * rng.standard_normal(num_samples)
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def write_wav(path: Path, num_samples: int = 8000, seed: int = 0, rate: int = 16000,
              channels: int = 1) -> np.ndarray:
    """Write a 16-bit PCM wav and return its int16 samples (num_samples,) or (n, channels)."""
    data = dummy_samples(num_samples * channels, seed, rate)
    if channels > 1:
        data = data.reshape(num_samples, channels)
    sf.write(str(path), data, rate, subtype="PCM_16")
    return data


def dummy_feats(num_frames: int, dim: int = 13, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((num_frames, dim)) * 3 + rng.uniform(-5, 5, dim)).astype(np.float32)


def make_data_dir(root: Path, utts: dict[str, tuple[str, int]], seed: int = 0) -> Path:
    """A Kaldi data dir: utts maps utt-id -> (speaker, num_samples); wavs go in root/wav."""
    data = root / "data" / "train"
    wavs = root / "wav"
    data.mkdir(parents=True)
    wavs.mkdir(exist_ok=True)
    wav_scp, utt2spk, text, spk2utt = [], [], [], {}
    for i, (utt, (spk, n)) in enumerate(sorted(utts.items())):
        write_wav(wavs / f"{utt}.wav", n, seed + i)
        wav_scp.append(f"{utt} {wavs / (utt + '.wav')}")
        utt2spk.append(f"{utt} {spk}")
        text.append(f"{utt} ONE TWO")
        spk2utt.setdefault(spk, []).append(utt)
    (data / "wav.scp").write_text("\n".join(wav_scp) + "\n")
    (data / "utt2spk").write_text("\n".join(utt2spk) + "\n")
    (data / "text").write_text("\n".join(text) + "\n")
    (data / "spk2utt").write_text("".join(f"{s} {' '.join(u)}\n" for s, u in sorted(spk2utt.items())))
    return data
