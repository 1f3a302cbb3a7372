"""wav-to-duration: the length in seconds of every recording of a wave table.

As Kaldi's src/featbin/wav-to-duration.cc: a ``key seconds`` text table, then the count and
the mean, min and max in the log; an entry that cannot be read stops the run (a sequential
Kaldi table read is not permissive).
"""
from __future__ import annotations

import logging

from nnetmix.errors import FormatError
from nnetmix.feat.audio import AudioReadError
from nnetmix.feat.textio import TextTableWriter
from nnetmix.feat.wavetable import iter_wave_table

__all__ = ["wav_to_duration"]

logger = logging.getLogger(__name__)


def wav_to_duration(wav_rspecifier: str, duration_wspecifier: str) -> int:
    """Write each recording's duration (samples / rate) to an ``ark,t:`` table; return how many."""
    total, shortest, longest, num_done = 0.0, float("inf"), 0.0, 0
    with TextTableWriter(duration_wspecifier) as writer:
        for entry in iter_wave_table(wav_rspecifier):
            try:
                duration = float(entry.load().duration)
            except AudioReadError as e:  # Kaldi's wav-to-duration stops at a bad recording too
                raise AudioReadError(f"{wav_rspecifier}: recording {entry.key}: {e}") from None
            writer.write(entry.key, duration)
            total += duration
            shortest, longest = min(shortest, duration), max(longest, duration)
            num_done += 1
        logger.info("Printed duration for %d audio files.", num_done)
        if not num_done:
            raise FormatError(f"{wav_rspecifier}: no recording, so {duration_wspecifier} is "
                              "not written")
    if num_done:
        logger.info("Mean duration was %g, min and max durations were %g, %g",
                    total / num_done, shortest, longest)
    return num_done
