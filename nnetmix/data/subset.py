"""Take a subset of a data directory (what utils/subset_data_dir.sh does).

Modes, as in Kaldi: an even spread of N utterances (the default, deterministic: the same recursive
halving as subset_scp.pl, so no speaker is over-represented), the first or last N, the N
shortest, whole randomly chosen speakers until N utterances are reached (seeded), N per speaker,
or an explicit speaker or utterance list.
"""
from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Sequence

from nnetmix.data.filter import filter_data_dir
from nnetmix.data.io import (c_key, c_sorted, read_key_list, read_segments, read_spk2utt,
                             read_utt2dur, read_utt2num_frames, read_utt2spk,
                             utt2spk_to_spk2utt)
from nnetmix.errors import DataDirError

__all__ = ["SUBSET_MODES", "spread_subset", "per_speaker_subset", "utterance_lengths",
           "subset_data_dir"]

#: Modes that take a number N; "spk-list" and "utt-list" take a file instead.
SUBSET_MODES = ("spread", "first", "last", "shortest", "speakers", "per-spk")


def spread_subset(items: Sequence[str], n: int) -> list[str]:
    """``n`` items spread evenly through ``items`` (order kept), as subset_scp.pl picks them.

    The range is halved recursively, the first half getting floor(n/2) of the picks.
    """
    if not 0 <= n <= len(items):
        raise ValueError(f"cannot pick {n} of {len(items)} items")
    picked: list[str] = []
    stack = [(0, len(items), n)]
    while stack:
        start, end, need = stack.pop()
        if need == 0:
            continue
        if end - start == 1:
            picked.append(items[start])
            continue
        half = (end - start) // 2
        stack.append((start + half, end, need - need // 2))  # popped second
        stack.append((start, start + half, need // 2))
    return picked


def per_speaker_subset(spk2utt: dict[str, Sequence[str]], n: int) -> list[str]:
    """Up to ``n`` utterances per speaker, evenly spaced through each speaker's list (Kaldi's
    --per-spk: the step is the largest s with n*s <= #utts, taking positions 0, s, 2s, ...)."""
    out = []
    for utts in spk2utt.values():
        step = 1
        while n * (step + 1) <= len(utts):
            step += 1
        out += [utts[i] for i in range(0, min(len(utts), n * step), step)]
    return out


def utterance_lengths(data: str | os.PathLike) -> dict[str, float]:
    """Length of each utterance, from the cheapest source there is: utt2num_frames, utt2dur,
    segments, else the matrices in feats.scp (Kaldi runs feat-to-len on feats.scp)."""
    data = Path(data)
    if (data / "utt2num_frames").is_file():
        return {k: float(v) for k, v in read_utt2num_frames(data / "utt2num_frames").items()}
    if (data / "utt2dur").is_file():
        return read_utt2dur(data / "utt2dur")
    if (data / "segments").is_file():
        segs = read_segments(data / "segments")
        if all(s.end != -1 for s in segs.values()):
            return {k: s.end - s.start for k, s in segs.items()}
    if (data / "feats.scp").is_file():
        import kaldiio  # only this fallback needs it

        try:
            return {k: float(m.shape[0]) for k, m in kaldiio.load_scp_sequential(
                str(data / "feats.scp"))}
        except Exception as e:  # kaldiio raises plain exceptions on unreadable arks
            raise DataDirError(f"{data}/feats.scp: cannot read feature lengths: {e}") from None
    raise DataDirError(f"{data}: --shortest needs utt2num_frames, utt2dur, segments or feats.scp")


def subset_data_dir(src: str | os.PathLike, dest: str | os.PathLike, num: int | None = None, *,
                    mode: str = "spread", spk_list: str | os.PathLike | None = None,
                    utt_list: str | os.PathLike | None = None, seed: int = 777) -> tuple[int, int]:
    """Write a subset of ``src`` to ``dest``; return (#utterances kept, #utterances in src).

    ``mode`` is one of SUBSET_MODES and needs ``num``; or give ``spk_list`` or ``utt_list`` (a
    file whose first field per line is a speaker or utterance id). ``seed`` drives the speaker
    shuffle of mode "speakers", so a subset is the same on every run.
    """
    src, dest = Path(src), Path(dest)
    if not (src / "utt2spk").is_file():
        raise DataDirError(f"no such file {src}/utt2spk")
    if Path(os.path.abspath(src)) == Path(os.path.abspath(dest)):
        raise DataDirError(f"{dest}: the destination must differ from the source")
    utt2spk = read_utt2spk(src / "utt2spk")
    utts = list(utt2spk)
    if spk_list is not None or utt_list is not None:
        if spk_list is not None:
            wanted = set(read_key_list(spk_list))
            keep = [u for u, s in utt2spk.items() if s in wanted]
        else:
            wanted = set(read_key_list(utt_list))
            keep = [u for u in utts if u in wanted]
        if not keep:
            raise DataDirError(f"{spk_list or utt_list}: no id in it is in {src} "
                               f"(nothing to keep)")
        return filter_data_dir(src, dest, keep), len(utts)
    if mode not in SUBSET_MODES:
        raise DataDirError(f"unknown subset mode '{mode}' "
                           f"(expected one of {', '.join(SUBSET_MODES)})")
    if num is None or num < 1:
        raise DataDirError(f"the number of utterances must be a positive integer, got {num}")
    if mode == "per-spk":
        keep = per_speaker_subset(utt2spk_to_spk2utt(utt2spk.items(), sort=False), num)
    elif mode == "speakers":
        spk2utt = (read_spk2utt(src / "spk2utt") if (src / "spk2utt").is_file()
                   else utt2spk_to_spk2utt(utt2spk))
        order = list(spk2utt)
        random.Random(seed).shuffle(order)
        chosen, total = [], 0
        for s in order:  # whole speakers until there are num utterances
            if total >= num:
                break
            chosen.append(s)
            total += len(spk2utt[s])
        chosen_set = set(chosen)
        keep = [u for u, s in utt2spk.items() if s in chosen_set]
    else:
        if num > len(utts):
            raise DataDirError(f"{src}/utt2spk: cannot subset to {num} utterances, it has "
                               f"only {len(utts)}")
        if mode == "first":
            keep = utts[:num]
        elif mode == "last":
            keep = utts[len(utts) - num:]
        elif mode == "shortest":
            lengths = utterance_lengths(src)
            missing = [u for u in utts if u not in lengths]
            if missing:
                raise DataDirError(f"{src}: no length for utterance {c_sorted(missing)[0]} "
                                   f"(first bad key: {c_sorted(missing)[0]}); run "
                                   f"utils/fix_data_dir.sh {src}")
            keep = sorted(utts, key=lambda u: (lengths[u], c_key(u)))[:num]
        else:
            keep = spread_subset(utts, num)
    return filter_data_dir(src, dest, keep), len(utts)
