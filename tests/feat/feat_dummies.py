"""Tiny audio, feature and data-dir fixtures for the feature tests, built in code from a seed."""
from __future__ import annotations

import os
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


def sphere_header(fields: list[tuple[str, object]], size: int = 1024) -> bytes:
    """A NIST_1A header of ``size`` bytes: (name, value) pairs, ints as -i, strings as -sN."""
    lines = ["NIST_1A", f"{size:7d}"]
    for name, value in fields:
        if isinstance(value, int):
            lines.append(f"{name} -i {value}")
        else:
            lines.append(f"{name} -s{len(str(value))} {value}")
    text = ("\n".join(lines + ["end_head"]) + "\n").encode("ascii")
    assert len(text) <= size
    return text + b" " * (size - len(text))


def write_sphere(path: Path, data: np.ndarray, rate: int = 8000, coding: str = "pcm",
                 byte_format: str = "01", sample_count: int | None = None,
                 extra: list[tuple[str, object]] | None = None, body: bytes | None = None) -> Path:
    """Write a SPHERE file of ``data`` (n, channels): int16 for pcm, uint8 codes for ulaw/alaw.

    pcm is stored in ``byte_format`` order (01 little-endian, 10 big-endian); ``body`` replaces
    the sample bytes (e.g. a shorten stream); ``sample_count`` overrides the header's count.
    """
    data = data.reshape(len(data), -1)
    n, channels = data.shape
    width = 2 if coding.startswith("pcm") else 1
    fields: list[tuple[str, object]] = [
        ("database_id", "nnetmix test"), ("channel_count", channels),
        ("sample_count", n if sample_count is None else sample_count), ("sample_rate", rate),
        ("sample_n_bytes", width), ("sample_byte_format", byte_format if width == 2 else "1"),
        ("sample_sig_bits", 8 * width), ("sample_coding", coding)] + (extra or [])
    if body is None:
        dtype = ("<i2" if byte_format == "01" else ">i2") if width == 2 else "u1"
        body = np.ascontiguousarray(data).astype(dtype).tobytes()
    path.write_bytes(sphere_header(fields) + body)
    return path


def g711_ulaw(code: int) -> int:
    """ITU-T G.711 mu-law decoding of one code: ((2m + 33) << e) - 33, in 16-bit units (x4)."""
    c = ~code & 0xFF
    e, m = (c >> 4) & 7, c & 15
    mag = (((2 * m + 33) << e) - 33) * 4
    return -mag if c & 0x80 else mag


def g711_alaw(code: int) -> int:
    """ITU-T G.711 A-law decoding of one code, in 16-bit units (x8)."""
    c = code ^ 0x55
    e, m = (c >> 4) & 7, c & 15
    mag = (2 * m + 1) << 3 if e == 0 else (2 * m + 33) << (e + 2)
    return mag if c & 0x80 else -mag


def path_without_sph2pipe(path: str | None = None) -> str:
    """``$PATH`` minus its directories holding an sph2pipe, to test the in-process reader."""
    dirs = (path if path is not None else os.environ.get("PATH", "")).split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not (Path(d) / "sph2pipe").exists())
