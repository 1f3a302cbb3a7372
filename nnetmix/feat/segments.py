"""extract-segments: cut utterances out of recordings by a Kaldi ``segments`` file.

Line for line Kaldi's src/featbin/extract-segments.cc (the version with the 2019 rounding fix,
kaldi-asr/kaldi#3321 and #3331), so the same segments give the same samples and hence the same
features:

* a line is ``<utt> <recording> <start> <end> [<channel>]`` (split on space, tab, CR); a bad
  line, an unknown or unreadable recording, a start outside the recording, an end more than
  ``--max-overshoot`` past its end, or a segment shorter than ``--min-segment-length`` is a
  WARNING and the segment is skipped; an end of -1, or within the overshoot, means the end;
* times compare in seconds with the recording length in float32 (Kaldi's BaseFloat), and the
  sample range is ``[int(start * rate + 0.5), int(end * rate + 0.5))``, end clipped to the
  recording, which is the rounding that makes ``0 <dur>`` segments from utt2dur exact;
* a segment of a multi-channel recording with no channel field is an error, as in Kaldi;
* the run ends with ``Successfully processed N lines out of M in the segments file.``
"""
from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from typing import Iterator, Optional

import numpy as np

from nnetmix.errors import NnetmixError
from nnetmix.feat.audio import Audio
from nnetmix.feat.wavetable import WaveRandomAccess, WaveWriter
from nnetmix.kaldi.stream import open_input
from nnetmix.options import option

__all__ = ["SegmentOptions", "SegmentsError", "extract_segments", "iter_segment_lines",
           "parse_segment_line", "segment_range"]

logger = logging.getLogger(__name__)

_SPLIT = re.compile(r"[ \t\r]+")


class SegmentsError(NnetmixError):
    """A segments file that cannot be used at all (not a single bad line, which is skipped)."""


@dataclass
class SegmentOptions:
    """Options of extract-segments (Kaldi's names and defaults)."""

    min_segment_length: float = option(0.1, "Minimum segment length in seconds (reject "
                                       "shorter segments)")
    max_overshoot: float = option(0.5, "End segments overshooting audio by less than this (in "
                                  "seconds) are truncated, else rejected.")


def _real(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def segment_range(start: float, end: float, num_samples: int, rate: float,
                  opts: SegmentOptions, segment: str, line: str) -> tuple[int, int] | None:
    """Kaldi's sample range [first, last) for a valid segment line, or None after a warning."""
    f32 = np.float32
    file_length = float(f32(num_samples) / f32(rate))
    if start < 0 or start > file_length:
        logger.warning("Segment start is out of file data range [0, %gs]; skipping segment "
                       "'%s'", file_length, line)
        return None
    if end > float(f32(file_length) + f32(opts.max_overshoot)):
        logger.warning("Segment end is too far out of file data range [0,%gs]; skipping "
                       "segment '%s'", file_length, line)
        return None
    if end < 0 or end > file_length:
        end = file_length
    if end - start < float(f32(opts.min_segment_length)):
        logger.warning("Segment %s too short, skipping it.", segment)
        return None
    rate = float(f32(rate))
    first, last = int(start * rate + 0.5), int(end * rate + 0.5)
    return first, min(last, num_samples)


def parse_segment_line(line: str) -> tuple[str, str, float, float, int] | None:
    """(segment, recording, start, end, channel or -1), or None after a warning."""
    fields = [f for f in _SPLIT.split(line) if f]
    if len(fields) not in (4, 5):
        logger.warning("Invalid line in segments file: %s", line)
        return None
    segment, recording = fields[0], fields[1]
    start, end = _real(fields[2]), _real(fields[3])
    if start is None:
        logger.warning("Invalid line in segments file [bad start]: %s", line)
        return None
    if end is None:
        logger.warning("Invalid line in segments file [bad end]: %s", line)
        return None
    if start < 0 or (end != -1.0 and end <= 0) or (start >= end and end > 0):
        logger.warning("Invalid line in segments file [empty or invalid segment]: %s", line)
        return None
    channel = -1
    if len(fields) == 5:
        try:
            channel = int(fields[4])
        except ValueError:
            channel = -1
        if channel < 0:
            logger.warning("Invalid line in segments file [bad channel]: %s", line)
            return None
    return segment, recording, start, end, channel


def iter_segment_lines(rxfilename: str) -> Iterator[tuple[str, Optional[tuple]]]:
    """Each line of a segments file with :func:`parse_segment_line`'s result (None after its
    warning); the file is closed, and a failed pipe reported, when the lines run out."""
    src = open_input(rxfilename)
    ok = False
    try:
        for raw in iter(src.readline, b""):
            line = raw.decode("utf-8", errors="surrogateescape").rstrip("\n")
            yield line, parse_segment_line(line)
        ok = True
    finally:
        src.close(check=ok)


def extract_segments(wav_rspecifier: str, segments_rxfilename: str, wav_wspecifier: str,
                     opts: SegmentOptions | None = None) -> tuple[int, int]:
    """Write each valid segment of the recordings as a wave object; return (done, lines)."""
    opts = opts or SegmentOptions()
    reader = WaveRandomAccess(wav_rspecifier)
    num_lines = num_success = 0
    with WaveWriter(wav_wspecifier) as writer:
        for line, parsed in iter_segment_lines(segments_rxfilename):
            num_lines += 1
            if parsed is None:
                continue
            segment, recording, start, end, channel = parsed
            if not reader.has_key(recording):
                logger.warning("Could not find recording %s, skipping segment %s",
                               recording, segment)
                continue
            audio = reader.value(recording)
            span = segment_range(start, end, audio.num_samples, audio.sample_rate, opts,
                                 segment, line)
            if span is None:
                continue
            if channel == -1:
                if audio.num_channels != 1:
                    raise SegmentsError(
                        f"{segments_rxfilename}: recording {recording} has "
                        f"{audio.num_channels} channels: give the channel as a 5th field "
                        f"of the segments file, or one channel per wav.scp entry "
                        f"(sph2pipe ... -c 1). Processing segment {segment}")
                channel = 0
            elif channel >= audio.num_channels:
                logger.warning("Invalid channel %d >= %d. Skipping segment %s", channel,
                               audio.num_channels, segment)
                continue
            first, last = span
            piece = audio.samples[channel:channel + 1, first:last]
            writer.write(segment, Audio(piece, audio.sample_rate))
            num_success += 1
        logger.info("Successfully processed %d lines out of %d in the segments file. ",
                    num_success, num_lines)
        if not num_success:  # before the writer closes: no empty archive is left
            raise SegmentsError(f"{segments_rxfilename}: none of its {num_lines} lines is a "
                                f"segment of a recording of {wav_rspecifier} (see the "
                                f"warnings), so {wav_wspecifier} is not written")
    return num_success, num_lines
