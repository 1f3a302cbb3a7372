"""Repair a data directory in place (what utils/fix_data_dir.sh does).

Data preparation and feature extraction lose utterances (a failed wav read, a segment past the
end of its recording), and the directory then fails validation. Kaldi's answer, kept here: sort
every file in C locale (keeping the first line of a repeated key, as ``sort -u -k1,1`` does),
keep only the utterances present in every per-utterance file whose speaker is in every
per-speaker file and whose recording is in wav.scp, rebuild spk2utt from utt2spk (utt2spk is the
primary file), and copy the originals to ``<data>/.backup/`` first.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from nnetmix.data.filter import filter_data_dir
from nnetmix.data.io import c_key, read_entries, split_fields, write_lines
from nnetmix.data.layout import ALL_FILES, SPK_FILES, has_segments, utt_files
from nnetmix.errors import DataDirError

__all__ = ["FixReport", "fix_data_dir"]


@dataclass
class FixReport:
    """What fix_data_dir changed: utterance counts and one message per file it had to change."""

    kept: int
    total: int
    messages: list[str] = field(default_factory=list)


def _sorted_unique(path: Path) -> tuple[list[str], bool]:
    """Lines sorted by key, first line of each key kept; and whether that changed the file."""
    entries = read_entries(path, allow_blank=True)
    seen: set[str] = set()
    unique = []
    for e in entries:
        if e.key not in seen:
            seen.add(e.key)
            unique.append(e)
    unique.sort(key=lambda e: c_key(e.key))
    lines = [e.line for e in unique]
    return lines, lines != [e.line for e in entries]


def fix_data_dir(data: str | os.PathLike, *, extra_utt_files: Iterable[str] = (),
                 extra_spk_files: Iterable[str] = ()) -> FixReport:
    """Sort, intersect and filter the files of ``data`` in place; return the counts.

    Raises DataDirError when there is no utt2spk, when segments exist without wav.scp, or when
    no utterance survives (the directory is then left as it was, apart from the backup).
    """
    data = Path(data)
    extra_utt_files, extra_spk_files = list(extra_utt_files), list(extra_spk_files)
    if not data.is_dir():
        raise DataDirError(f"no such directory {data}")
    if not (data / "utt2spk").is_file():
        raise DataDirError(f"no such file {data}/utt2spk")
    if has_segments(data) and not (data / "wav.scp").is_file():
        raise DataDirError(f"{data}/segments exists but not {data}/wav.scp")
    report = FixReport(0, 0)
    names = [n for n in dict.fromkeys([*ALL_FILES, *extra_utt_files, *extra_spk_files])
             if (data / n).is_file()]

    # read and sort everything before touching anything
    tables: dict[str, list[str]] = {}
    for name in names:
        tables[name], changed = _sorted_unique(data / name)
        if changed:
            report.messages.append(f"file {data}/{name} is not in sorted order or not unique, "
                                   f"sorting it")
    keys = {n: [split_fields(line, 1)[0] for line in lines] for n, lines in tables.items()}

    utt2spk = {}
    for line in tables["utt2spk"]:
        f = split_fields(line)
        if len(f) != 2:
            raise DataDirError(f"{data}/utt2spk: expected <utterance> <speaker>, got '{line}'")
        utt2spk[f[0]] = f[1]
    report.total = len(utt2spk)

    speakers = set(utt2spk.values())
    for name in SPK_FILES:
        if name != "spk2utt" and name in keys:
            speakers &= set(keys[name])
    utts = {u for u, s in utt2spk.items() if s in speakers}
    for name in utt_files(data):
        if name != "utt2spk" and name in keys:
            utts &= set(keys[name])
    if has_segments(data):
        recordings = set(keys["wav.scp"])
        for line in tables["segments"]:
            f = split_fields(line)
            if len(f) < 2 or f[1] not in recordings:
                utts.discard(f[0])
    if not utts:
        raise DataDirError(f"{data}: no utterances remained: not proceeding further "
                           f"(utt2spk, text, feats.scp, wav.scp/segments share no utterance)")

    backup = data / ".backup"
    backup.mkdir(exist_ok=True)
    for name in names:
        shutil.copy2(data / name, backup / name)
    for name, lines in tables.items():
        write_lines(data / name, lines)
    before = {n: len(lines) for n, lines in tables.items()}
    report.kept = filter_data_dir(data, data, utts, extra_utt_files=extra_utt_files,
                                  extra_spk_files=extra_spk_files)
    for name in names:
        after = len(read_entries(data / name, allow_blank=True))
        if name != "spk2utt" and after != before[name]:
            report.messages.append(f"filtered {data}/{name} from {before[name]} to {after} lines")
    return report
