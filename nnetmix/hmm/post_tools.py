"""Posterior tables reweighted by phone: Kaldi's weight-silence-post (src/bin/weight-silence-
post.cc, WeightSilencePost / WeightSilencePostDistributed in hmm/posterior.cc).

fMLLR and MLLT statistics are usually taken with silence down-weighted (steps/train_sat.sh:
``weight-silence-post 0.0 $silphonelist``), so that silence frames do not pull the speaker's
transform. Per entry (transition-id, weight) of a frame:

* default: an entry whose phone is a silence phone gets weight × silence-weight (and is
  dropped when the silence weight is 0);
* ``--distribute``: every entry of the frame is scaled by (p_sil·w + p_nonsil) / (p_sil +
  p_nonsil), p_sil and p_nonsil the frame's silence and non-silence weight sums (a frame whose
  scale is 0 becomes empty; one whose weights sum to 0 is left alone).
"""
from __future__ import annotations

import logging
from typing import Optional, Sequence

import numpy as np

from nnetmix.errors import FormatError, UsageError
from nnetmix.kaldi.table import SequentialReader
from nnetmix.kaldi.transition_model import TransitionModel, read_transition_model
from nnetmix.kaldi.writer import TableWriter

__all__ = ["parse_silence_phones", "weight_silence", "weight_silence_post"]

logger = logging.getLogger(__name__)


def parse_silence_phones(text: str) -> list[int]:
    """Kaldi's SplitStringToIntegers(text, ":"): '1:2:3' -> [1, 2, 3]; '' -> []."""
    if text == "":
        return []
    try:
        return [int(p) for p in text.split(":")]
    except ValueError:
        raise UsageError(f"Invalid silence-phones string {text}") from None


def weight_silence(tm: TransitionModel, post: list, silence: Sequence[int], scale: float,
                   distribute: bool = False, what: str = "posteriors") -> list:
    """One utterance's posterior with silence entries reweighted (see the module docstring)."""
    n = tm.tid2phone.shape[0]
    is_sil = np.zeros(int(tm.tid2phone.max()) + 1, dtype=bool)
    sil = [p for p in silence if 0 <= p < is_sil.size]
    is_sil[sil] = True
    out = []
    for t, frame in enumerate(post):
        for tid, _ in frame:
            if not 1 <= tid < n:
                raise FormatError(f"{what}: frame {t}: transition-id {tid} is not in the model "
                                  f"(1...{n - 1}): posteriors from another model?")
        flags = [bool(is_sil[tm.tid2phone[tid]]) for tid, _ in frame]
        if not distribute:
            out.append([(tid, w * scale) if s else (tid, w)
                        for (tid, w), s in zip(frame, flags) if not (s and scale == 0.0)])
            continue
        sil_w = sum(w for (_, w), s in zip(frame, flags) if s)
        nonsil_w = sum(w for (_, w), s in zip(frame, flags) if not s)
        if sil_w < 0.0 or nonsil_w < 0.0:
            raise FormatError(f"{what}: frame {t}: negative posteriors cannot be weighted with "
                              "--distribute")
        if sil_w + nonsil_w == 0.0:
            out.append(list(frame))
            continue
        frame_scale = (sil_w * scale + nonsil_w) / (sil_w + nonsil_w)
        out.append([(tid, w * frame_scale) for tid, w in frame] if frame_scale != 0.0 else [])
    return out


def weight_silence_post(silence_weight: float, silence_phones: str, model_in: str,
                        rspecifier: str, wspecifier: str, distribute: bool = False,
                        log: Optional[logging.Logger] = None) -> int:
    """Kaldi's weight-silence-post; returns the number of posteriors done."""
    log = log or logger
    silence = parse_silence_phones(silence_phones)
    if not silence:
        log.warning("No silence phones, this will have no effect")
    tm = read_transition_model(model_in)
    done = 0
    with SequentialReader(rspecifier, "post") as reader, \
            TableWriter(wspecifier, "post") as writer:
        for key, post in reader:
            done += 1
            writer.write(key, weight_silence(tm, post, silence, silence_weight, distribute,
                                             f"{rspecifier}: key {key}"))
    log.info("Done %d posteriors.", done)
    return done
