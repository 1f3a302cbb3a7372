"""NIST SPHERE audio (LDC corpora such as Switchboard): the header ours, the samples soundfile's.

A SPHERE file is a text header (``NIST_1A``, its size, usually 1024, then ``name -type value``
lines up to ``end_head``) followed by interleaved samples. libsndfile (through soundfile) reads
uncompressed SPHERE correctly, mu-law and 2-channel interleaved data included (checked), but it
reports a shorten-compressed file only as "unimplemented format" and its header rules are its
own. So the header is ours, read with the rules of LDC's sph2pipe 2.5 (file_headers.c,
readSphHeader), since sph2pipe decides what Kaldi's features see, and errors name the field:

* needed: ``sample_rate``, ``channel_count``, ``sample_count``; ``sample_coding`` ``pcm``,
  ``ulaw`` or ``alaw`` (a suffix such as ``,embedded-shorten-v2.00`` names the compression;
  a missing coding means pcm when ``sample_n_bytes`` is 2), ``sample_byte_format`` ``01``
  (little-endian) or ``10`` (big-endian) for pcm; ``sample_n_bytes`` defaults to 2 for pcm and
  1 for ulaw/alaw;
* the data is shorten-compressed when it starts with shorten's magic ``ajkg``;
* when the file size disagrees with ``sample_count`` the size wins (sph2pipe warns likewise).

The samples are decoded by soundfile (libsndfile) reading the data as RAW PCM_16/ULAW/ALAW with
the header's byte order and channel count: checked to give the integers sph2pipe gives (its
ulaw2pcm/alaw2pcm tables are ITU G.711's; tests compare all 256 codes), for both byte orders
and interleaved 2-channel data. Only the span asked for is read from disk.

Shorten-compressed data is not decoded here (neither libsndfile nor any pinned package has a
shorten decoder): :meth:`SphereFile.read` raises :class:`SphereError` saying so;
nnetmix/feat/sph2pipe.py hands such files to an ``sph2pipe`` program when one is on PATH.
"""
from __future__ import annotations

import io
import logging
import os
import re
from dataclasses import dataclass

import numpy as np
import soundfile as sf

from nnetmix.feat.audio import Audio, AudioReadError, from_int16

__all__ = ["SphereError", "SphereHeader", "SphereFile", "parse_sphere_header", "is_sphere",
           "SPHERE_MAGIC"]

logger = logging.getLogger(__name__)

SPHERE_MAGIC = b"NIST_1A"
_SHORTEN_MAGIC = b"ajkg"
_MIN_HEADER = 1024  # sph2pipe reads 1024 bytes first and refuses a file shorter than that
_MAX_HEADER = 1 << 20
_FIELD = re.compile(r"^(\S+)\s+-(i|r|s\d*)(?:\s(.*))?$")
_SUBTYPE = {"pcm": "PCM_16", "ulaw": "ULAW", "alaw": "ALAW"}
_WIDTH = {"pcm": 2, "ulaw": 1, "alaw": 1}


class SphereError(AudioReadError):
    """A SPHERE file whose header is malformed or whose data we cannot decode."""


def is_sphere(head: bytes) -> bool:
    """True when ``head`` (the first bytes of a file) starts a SPHERE header."""
    return head.startswith(SPHERE_MAGIC)


@dataclass(frozen=True)
class SphereHeader:
    """What the header says about the samples (sample_count per channel, as written)."""

    header_size: int
    sample_rate: int
    channel_count: int
    sample_count: int
    coding: str             #: 'pcm', 'ulaw' or 'alaw'
    sample_coding: str      #: the field as written, e.g. 'ulaw,embedded-shorten-v2.00'
    sample_n_bytes: int
    byte_format: str        #: '01', '10' (pcm), or as written ('1', '') for ulaw/alaw
    shorten: bool           #: the data starts with shorten's magic 'ajkg'

    @property
    def frame_bytes(self) -> int:
        return self.channel_count * self.sample_n_bytes


def _header_size(head: bytes, name: str) -> int:
    if len(head) < _MIN_HEADER or not is_sphere(head):
        raise SphereError(f"{name}: not a NIST SPHERE file (expected 'NIST_1A' and a header of "
                          f"at least {_MIN_HEADER} bytes)")
    m = re.match(rb"\s*(\d+)", head[8:24])
    if not m or not 16 <= int(m.group(1)) <= _MAX_HEADER:
        raise SphereError(f"{name}: bad SPHERE header size {head[8:16]!r} (expected a number "
                          "such as 1024 on the second line)")
    return int(m.group(1))


def _fields(text: str, name: str) -> dict[str, tuple[str, str]]:
    fields: dict[str, tuple[str, str]] = {}
    for line in text.split("\n")[2:]:
        line = line.rstrip("\r")
        if line.strip() == "end_head":
            return fields
        m = _FIELD.match(line)
        if m:
            kind, value = m.group(2), m.group(3) or ""
            if kind.startswith("s") and len(kind) > 1:
                value = value[:int(kind[1:])]  # -sN: exactly N characters, spaces included
            fields[m.group(1)] = (kind[0], value.strip() if kind[0] != "s" else value)
    raise SphereError(f"{name}: SPHERE header has no end_head line")


def _int_field(fields: dict, key: str, name: str) -> int:
    if key not in fields:
        raise SphereError(f"{name}: SPHERE header has no {key} field")
    kind, value = fields[key]
    try:
        number = float(value) if kind == "r" else int(value)
    except ValueError:
        raise SphereError(f"{name}: bad SPHERE field {key} '{value}' (expected a number)") from None
    if number != int(number) or number <= 0:
        raise SphereError(f"{name}: bad SPHERE field {key} '{value}' (expected a positive "
                          "integer)")
    return int(number)


def parse_sphere_header(head: bytes, name: str) -> SphereHeader:
    """Parse the header in ``head`` (the header bytes plus, if present, the first data bytes)."""
    size = _header_size(head, name)
    if len(head) < size:
        raise SphereError(f"{name}: truncated SPHERE header ({len(head)} of {size} bytes)")
    fields = _fields(head[:size].decode("latin-1"), name)
    written = fields.get("sample_coding", ("s", ""))[1].strip()
    base, _, compression = written.partition(",")
    coding = base.strip() if base.strip() in _WIDTH else ""
    byte_format = fields.get("sample_byte_format", ("s", ""))[1].strip()
    n_bytes = _int_field(fields, "sample_n_bytes", name) if "sample_n_bytes" in fields else 0
    if not written and (n_bytes == 2 or len(byte_format) == 2):
        coding = "pcm"  # sph2pipe: no sample_coding but 2-byte samples means linear pcm
    if not coding:
        raise SphereError(f"{name}: unsupported SPHERE sample_coding '{written}' (expected pcm, "
                          "ulaw or alaw)")
    if compression and "shorten" not in compression:
        raise SphereError(f"{name}: unsupported SPHERE compression '{written}' (only "
                          "shorten-compressed files can be read, through sph2pipe)")
    n_bytes = n_bytes or _WIDTH[coding]
    if n_bytes != _WIDTH[coding]:
        raise SphereError(f"{name}: unsupported SPHERE data: {coding} with sample_n_bytes "
                          f"{n_bytes} (Kaldi's sph2pipe reads 2-byte pcm and 1-byte ulaw/alaw)")
    if coding == "pcm" and byte_format not in ("01", "10"):
        raise SphereError(f"{name}: SPHERE pcm data needs sample_byte_format 01 or 10, got "
                          f"'{byte_format}'")
    return SphereHeader(
        header_size=size,
        sample_rate=_int_field(fields, "sample_rate", name),
        channel_count=_int_field(fields, "channel_count", name),
        sample_count=_int_field(fields, "sample_count", name),
        coding=coding, sample_coding=written, sample_n_bytes=n_bytes, byte_format=byte_format,
        shorten=head[size:size + 4] == _SHORTEN_MAGIC)


class SphereFile:
    """A SPHERE file on disk (a path) or in memory (its bytes, e.g. a pipe's output).

    ``num_samples`` is per channel: the header's sample_count, or what the data size allows
    when the two disagree (sph2pipe's rule; we warn as it does).
    """

    def __init__(self, source: str | bytes, name: str | None = None):
        self.name = name or (source if isinstance(source, str) else "SPHERE data")
        self._data = source if isinstance(source, bytes) else None
        self._path = source if isinstance(source, str) else None
        if self._data is not None:
            head, total = self._data[:_MAX_HEADER + 4], len(self._data)
        else:
            try:
                with open(self._path, "rb") as fh:
                    head = fh.read(_MIN_HEADER)
                    if is_sphere(head):
                        size = _header_size(head, self.name)
                        head += fh.read(max(0, size - len(head)) + 4)
                total = os.path.getsize(self._path)
            except OSError as e:
                raise SphereError(f"cannot read {self.name}: {e.strerror}") from None
        self.header = h = parse_sphere_header(head, self.name)
        if total < h.header_size + 4:
            raise SphereError(f"{self.name}: SPHERE file has no sample data")
        self.num_samples = h.sample_count
        if not h.shorten:
            fits = (total - h.header_size) // h.frame_bytes
            if total != h.header_size + h.sample_count * h.frame_bytes:
                logger.warning("%s: sample_count reset to %d to match size (%d bytes)",
                               self.name, fits, total)
                self.num_samples = fits

    @property
    def sample_rate(self) -> int:
        return self.header.sample_rate

    def shorten_error(self) -> SphereError:
        return SphereError(f"{self.name}: shorten-compressed SPHERE data (sample_coding "
                           f"'{self.header.sample_coding}') needs the sph2pipe program, and "
                           "there is none on PATH (put Kaldi's tools/sph2pipe_v2.5 on PATH, or "
                           "uncompress the corpus once with 'sph2pipe -f sph in.sph out.sph')")

    def read(self, start: int = 0, stop: int | None = None,
             channel: int | None = None) -> Audio:
        """Samples ``start:stop`` (per channel) of all channels, or of the 0-based ``channel``."""
        h = self.header
        if h.shorten:
            raise self.shorten_error()
        stop = self.num_samples if stop is None else stop
        if not 0 <= start <= stop <= self.num_samples:
            raise SphereError(f"{self.name}: samples {start}:{stop} asked for, the file has "
                              f"{self.num_samples}")
        if channel is not None and not 0 <= channel < h.channel_count:
            raise SphereError(f"{self.name}: channel {channel + 1} asked for, the file has "
                              f"{h.channel_count}")
        body = self._bytes(h.header_size + start * h.frame_bytes, (stop - start) * h.frame_bytes)
        channels = h.channel_count
        if channel is not None and channels > 1:  # keep one channel's bytes: half the decoding
            width = np.uint16 if h.sample_n_bytes == 2 else np.uint8
            body = np.frombuffer(body, dtype=width).reshape(-1, channels)[:, channel].tobytes()
            channels = 1
        if stop == start:
            frames = np.zeros((0, channels), dtype=np.int16)
        else:
            endian = "BIG" if h.coding == "pcm" and h.byte_format == "10" else "LITTLE"
            try:
                frames, _ = sf.read(io.BytesIO(body), dtype="int16", always_2d=True,
                                    format="RAW", subtype=_SUBTYPE[h.coding], endian=endian,
                                    channels=channels, samplerate=h.sample_rate)
            except (sf.LibsndfileError, RuntimeError, ValueError) as e:
                raise SphereError(f"{self.name}: cannot decode SPHERE samples: {e}") from None
        return from_int16(frames, h.sample_rate)

    def _bytes(self, offset: int, n: int) -> bytes:
        if self._data is not None:
            body = self._data[offset:offset + n]
        else:
            try:
                with open(self._path, "rb") as fh:
                    fh.seek(offset)
                    body = fh.read(n)
            except OSError as e:
                raise SphereError(f"cannot read {self.name}: {e.strerror}") from None
        if len(body) != n:
            raise SphereError(f"{self.name}: truncated SPHERE data ({len(body)} of {n} bytes)")
        return body
