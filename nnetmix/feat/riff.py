"""Kaldi's WaveData objects: 16-bit PCM RIFF WAV, read and written as src/feat/wave-reader.cc.

A wave archive (``extract-segments ... ark:-``) holds, after each ``key ``, a complete WAV file
with no ``\\0B`` binary marker (WaveHolder is always binary). WaveData::Write writes exactly 44
header bytes: ``RIFF``, 36 + data size, ``WAVE``, a 16-byte ``fmt `` chunk (PCM, channels, int32
sample rate, byte rate, block align, 16 bits), ``data`` and its size, then the samples
interleaved as little-endian int16, each float value truncated toward zero and clipped to the
int16 range (clipped samples counted in a warning). WaveData::Read accepts RIFF (little-endian)
or RIFX (big-endian), PCM or WAVE_FORMAT_EXTENSIBLE with the PCM GUID, 16 bits only, skips any
chunks between ``fmt `` and ``data``, and reads to end of stream when both sizes are 0 or
0xFFFFFFFF ("stream mode").

Written here rather than through soundfile: inside an archive the object must be delimited by
its own header (soundfile decodes whole files), and the writer has to produce Kaldi's bytes.
"""
from __future__ import annotations

import logging
import struct
from typing import Callable

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.feat.audio import Audio

__all__ = ["read_wave", "encode_wave", "WAVE_HEADER_BYTES"]

logger = logging.getLogger(__name__)

WAVE_HEADER_BYTES = 44
_PCM_GUID = (0x00000001, 0x00100000, 0xAA000080, 0x719B3800)
_STREAM_SIZES = ((0, 0), (0xFFFFFFFF, 0xFFFFFFFF))
_BLOCK = 1 << 20


class _Source:
    """Exact reads from ``read(n)`` (a stream's read) with errors naming the object."""

    def __init__(self, read: Callable[[int], bytes], name: str):
        self._read = read
        self.name = name
        self.big = False

    def bytes(self, n: int, what: str) -> bytes:
        data = self._read(n)
        if len(data) != n:
            raise FormatError(f"{self.name}: truncated wave data: expected {n} bytes of {what}, "
                              f"got {len(data)}")
        return data

    def tag(self, what: str) -> bytes:
        return self.bytes(4, what)

    def u32(self, what: str) -> int:
        return struct.unpack(">I" if self.big else "<I", self.bytes(4, what))[0]

    def u16(self, what: str) -> int:
        return struct.unpack(">H" if self.big else "<H", self.bytes(2, what))[0]

    def rest(self) -> bytes:
        parts = []
        while True:
            part = self._read(_BLOCK)
            if not part:
                return b"".join(parts)
            parts.append(part)


def read_wave(read: Callable[[int], bytes], name: str) -> Audio:
    """Read one WaveData object from ``read`` (positioned at its ``RIFF``), as Kaldi does."""
    src = _Source(read, name)
    riff = src.tag("the RIFF tag")
    if riff not in (b"RIFF", b"RIFX"):
        hint = " (a binary Kaldi object such as a feature matrix?)" if riff[:2] == b"\0B" else ""
        raise FormatError(f"{name}: expected wave data starting with RIFF or RIFX, got "
                          f"{riff!r}{hint}")
    src.big = riff == b"RIFX"
    riff_size = src.u32("the RIFF chunk size")
    if src.tag("the WAVE tag") != b"WAVE" or src.tag("the fmt tag") != b"fmt ":
        raise FormatError(f"{name}: not a WAVE file (expected 'WAVE' then 'fmt ')")
    fmt_size = src.u32("the fmt chunk size")
    audio_format, channels = src.u16("fmt"), src.u16("fmt")
    rate, byte_rate = src.u32("fmt"), src.u32("fmt")
    block_align, bits = src.u16("fmt"), src.u16("fmt")
    fmt_read = 16
    if audio_format == 1:
        if fmt_size < 16:
            raise FormatError(f"{name}: PCM wave data needs a fmt chunk of at least 16 bytes")
    elif audio_format == 0xFFFE:
        extra = src.u16("fmt extension")
        if fmt_size < 40 or extra < 22:
            raise FormatError(f"{name}: malformed WAVE_FORMAT_EXTENSIBLE header")
        src.u16("fmt extension"), src.u32("fmt extension")
        guid = tuple(src.u32("fmt GUID") for _ in range(4))
        if guid != _PCM_GUID:
            raise FormatError(f"{name}: unsupported WAVE_FORMAT_EXTENSIBLE format "
                              "(only PCM can be read)")
        fmt_read = 40
    else:
        raise FormatError(f"{name}: can read only PCM wave data, format id is {audio_format}")
    src.bytes(max(0, fmt_size - fmt_read), "the fmt chunk")
    if channels == 0:
        raise FormatError(f"{name}: wave data with no channels")
    if bits != 16:
        raise FormatError(f"{name}: unsupported bits per sample {bits} (Kaldi reads 16-bit PCM; "
                          "convert with sox ... -b 16)")
    if byte_rate != rate * 2 * channels or block_align != 2 * channels:
        raise FormatError(f"{name}: inconsistent wave header (byte rate {byte_rate}, block "
                          f"align {block_align} for {channels} channels at {rate} Hz)")
    riff_read = 4 + 8 + fmt_size + 4
    chunk = src.tag("a chunk name")
    while chunk != b"data":  # skip 'fact', 'LIST', ... as Kaldi does
        size = src.u32("a chunk size")
        src.bytes(size, f"the {chunk!r} chunk")
        riff_read += 8 + size
        chunk = src.tag("a chunk name")
    data_size = src.u32("the data chunk size")
    riff_read += 4
    if (riff_size, data_size) in _STREAM_SIZES:
        data = src.rest()
    else:
        if abs(riff_read + data_size - riff_size) > 1:
            logger.warning("%s: expected %d bytes in RIFF chunk, but after first data block "
                           "there will be %d + %d bytes (we do not support reading multiple "
                           "data chunks).", name, riff_size, riff_read, data_size)
        data = src.bytes(data_size, "samples")
    if not data:
        raise FormatError(f"{name}: empty wave data (no samples)")
    n = len(data) // block_align
    frames = np.frombuffer(data[:n * block_align], dtype=">i2" if src.big else "<i2")
    samples = frames.reshape(n, channels).T.astype(np.float32)
    return Audio(np.ascontiguousarray(samples), float(rate))


def encode_wave(audio: Audio, name: str = "wave data") -> tuple[bytes, int]:
    """Kaldi's WaveData::Write bytes for ``audio``, and how many samples were clipped."""
    samples = np.asarray(audio.samples)
    if samples.ndim != 2 or samples.size == 0:
        raise FormatError(f"{name}: attempting to write empty WAVE data")
    channels, num = samples.shape
    rate = int(audio.sample_rate)
    if rate <= 0:
        raise FormatError(f"{name}: bad sample rate {audio.sample_rate}")
    values = np.trunc(samples.astype(np.float64))
    clipped = int(np.count_nonzero((values < -32768) | (values > 32767)))
    pcm = np.clip(values, -32768, 32767).astype("<i2").T.tobytes()
    size = channels * num * 2
    head = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + size, b"WAVE", b"fmt ", 16, 1,
                       channels, rate, rate * channels * 2, channels * 2, 16, b"data", size)
    return head + pcm, clipped
