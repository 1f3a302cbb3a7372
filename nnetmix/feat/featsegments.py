"""Feature matrices cut by a segments file: Kaldi's extract-feature-segments
(src/featbin/extract-feature-segments.cc).

A line is ``<segment> <utterance> <start> <end> [<channel>]`` (times in seconds). Frame numbers
are Kaldi's: ``round(time * 1000 / --frame-shift)`` (C's round, half away from zero), the end
less ``ceil((--frame-length - --frame-shift) / --frame-shift)`` frames with ``--snip-edges``
(the frames that would not fit inside the segment's audio), an end past the utterance within
``--max-overshoot`` seconds cut to its last frame. A bad line, a missing utterance, a start
outside the features, an end too far past them or a segment not longer than
``--min-segment-length`` is Kaldi's WARNING and the segment is skipped; no segment at all is
one error and no output (Kaldi exits with -1 there).
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np

from nnetmix.errors import NnetmixError
from nnetmix.feat.segments import iter_segment_lines
from nnetmix.kaldi import RandomAccessReader, TableWriter
from nnetmix.options import option

__all__ = ["FeatureSegmentOptions", "FeatureSegmentsError", "extract_feature_segments",
           "frame_range"]

logger = logging.getLogger(__name__)


class FeatureSegmentsError(NnetmixError):
    """A segments file of which no line gave a segment of the features."""


@dataclass
class FeatureSegmentOptions:
    """Options of extract-feature-segments (Kaldi's names, defaults and help)."""

    min_segment_length: float = option(0.1, "Minimum segment length in seconds (reject "
                                       "shorter segments)")
    frame_length: int = option(25, "Frame length in milliseconds")
    frame_shift: int = option(10, "Frame shift in milliseconds")
    max_overshoot: float = option(0.0, "End segments overshooting by less (in seconds) are "
                                  "truncated, else rejected.")
    snip_edges: bool = option(True, "If true, n_frames frames will be snipped from the end of "
                              "each extracted feature matrix, where n_frames = "
                              "ceil((frame_length - frame_shift) / frame_shift), This ensures "
                              "that only the feature vectors that completely fit in the "
                              "segment are extracted. This makes the extracted segment lengths "
                              "match the lengths of the features that have been extracted from "
                              "already segmented audio.")


def _round(x: float) -> int:
    """C's round(): half away from zero (Python's round() goes to even)."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def _f32(x: float) -> float:
    """A BaseFloat option's value as Kaldi holds it (float32)."""
    return float(np.float32(x))


def frame_range(start: float, end: float, num_frames: int, opts: FeatureSegmentOptions,
                segment: str, dim: int) -> tuple[int, int] | None:
    """Kaldi's [first, last) frames of a segment, or None after Kaldi's warning."""
    first = _round(start * 1000.0 / opts.frame_shift)
    last = _round(end * 1000.0 / opts.frame_shift)
    if opts.snip_edges:
        last -= math.ceil((opts.frame_length - opts.frame_shift) / opts.frame_shift)
    if first < 0 or first >= num_frames:
        logger.warning("Start sample out of range %d [length:] %dx%d, skipping segment %s",
                       first, num_frames, dim, segment)
        return None
    if last > num_frames:
        if last >= num_frames + _round(_f32(opts.max_overshoot) * 1000.0 / opts.frame_shift):
            logger.warning("End sample too far out of range %d [length:] %dx%d, skipping "
                           "segment %s", last, num_frames, dim, segment)
            return None
        last = num_frames
    if last <= first + _round(_f32(opts.min_segment_length) * 1000.0 / opts.frame_shift):
        logger.warning("Segment %s too short, skipping it.", segment)
        return None
    return first, last


def extract_feature_segments(rspecifier: str, segments_rxfilename: str, wspecifier: str,
                             opts: FeatureSegmentOptions | None = None) -> tuple[int, int]:
    """Write each valid segment's frames; return (segments written, lines read)."""
    opts = opts or FeatureSegmentOptions()
    if opts.frame_shift <= 0:
        raise FeatureSegmentsError(f"--frame-shift={opts.frame_shift}: expected milliseconds "
                                   "> 0")
    num_lines = num_success = 0
    with RandomAccessReader(rspecifier) as feats, TableWriter(wspecifier) as writer:
        for line, parsed in iter_segment_lines(segments_rxfilename):
            num_lines += 1
            if parsed is None:
                continue
            segment, utterance, start, end, _channel = parsed
            if end <= 0:  # extract-segments' "till the end" -1 is not taken here
                logger.warning("Invalid line in segments file [empty or invalid segment]: "
                               "%s", line)
                continue
            if utterance not in feats:
                logger.warning("Did not find features for utterance %s, skipping segment "
                               "%s", utterance, segment)
                continue
            mat = feats[utterance]
            span = frame_range(start, end, mat.shape[0], opts, segment, mat.shape[1])
            if span is None:
                continue
            writer.write(segment, np.ascontiguousarray(mat[span[0]:span[1]], np.float32))
            num_success += 1
        logger.info("Successfully processed %d lines out of %d in the segments file. ",
                    num_success, num_lines)
        if not num_success:
            raise FeatureSegmentsError(
                f"{segments_rxfilename}: none of its {num_lines} lines is a segment of the "
                f"features of {rspecifier} (see the warnings), so {wspecifier} is not written")
    return num_success, num_lines
