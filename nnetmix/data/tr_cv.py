"""Split a data directory into a training part and a held-out (cross-validation) part.

This is utils/subset_data_dir_tr_cv.sh, which nnet1 training uses to get the CV set that drives
Newbob. By speakers (the default here, ``cv_spk_percent=10``): a seeded shuffle of the speakers,
the first P% of them (at least one) held out, so no CV speaker is seen in training. By
utterances (``cv_utt_percent``, Kaldi's default when neither is given): the last P% of the
utterances, with the boundary moved back to a speaker change so speakers still do not straddle.
"""
from __future__ import annotations

import os
import random
from pathlib import Path

from nnetmix.data.filter import filter_data_dir
from nnetmix.data.io import c_sorted, read_utt2spk, utt2spk_to_spk2utt
from nnetmix.errors import DataDirError

__all__ = ["subset_tr_cv"]


def subset_tr_cv(src: str | os.PathLike, train: str | os.PathLike, cv: str | os.PathLike, *,
                 cv_spk_percent: float | None = None, cv_utt_percent: float | None = None,
                 seed: int = 777) -> tuple[int, int]:
    """Write ``train`` and ``cv`` from ``src``; return (#train utterances, #cv utterances).

    Give at most one of the percentages; with neither, 10% of the speakers go to CV.
    """
    src = Path(src)
    if cv_spk_percent is not None and cv_utt_percent is not None:
        raise DataDirError("give --cv-spk-percent or --cv-utt-percent, not both")
    if not (src / "utt2spk").is_file():
        raise DataDirError(f"no such file {src}/utt2spk")
    utt2spk = read_utt2spk(src / "utt2spk")
    spk2utt = utt2spk_to_spk2utt(utt2spk.items(), sort=False)
    if cv_utt_percent is not None:
        if not 0 < cv_utt_percent < 100:
            raise DataDirError(f"--cv-utt-percent must be between 0 and 100, got {cv_utt_percent}")
        total = len(utt2spk)
        head = total - int(total * cv_utt_percent / 100)
        n = 0
        for utts in spk2utt.values():  # move the boundary back to a speaker change
            if n + len(utts) > head:
                break
            n += len(utts)
        head = n or head  # one speaker larger than the training share: split inside it
        utts = list(utt2spk)
        tr_utts, cv_utts = utts[:head], utts[head:]
    else:
        percent = 10.0 if cv_spk_percent is None else cv_spk_percent
        if not 0 < percent < 100:
            raise DataDirError(f"--cv-spk-percent must be between 0 and 100, got {percent}")
        if len(spk2utt) < 2:
            raise DataDirError(f"{src}/utt2spk: {len(spk2utt)} speaker(s); a speaker-based "
                               f"train/CV split needs at least 2 (or use --cv-utt-percent)")
        speakers = c_sorted(spk2utt)
        random.Random(seed).shuffle(speakers)
        n_cv = min(len(speakers) - 1, max(1, int(len(speakers) * percent / 100)))
        cv_spk = set(speakers[:n_cv])
        tr_utts = [u for u, s in utt2spk.items() if s not in cv_spk]
        cv_utts = [u for u, s in utt2spk.items() if s in cv_spk]
    if not tr_utts or not cv_utts:
        raise DataDirError(f"{src}: {len(utt2spk)} utterances are too few to hold out "
                           f"{cv_utt_percent}% (one part would be empty)")
    return filter_data_dir(src, train, tr_utts), filter_data_dir(src, cv, cv_utts)
