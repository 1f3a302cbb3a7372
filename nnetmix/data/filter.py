"""Copy the part of a data directory that belongs to a set of utterances.

This is the one operation behind subset_data_dir.sh, split_data.sh and fix_data_dir.sh: keep the
lines of every per-utterance file whose key is kept, the per-speaker lines of the speakers those
utterances have, and, with segments, the per-recording lines of the recordings they use. Lines
are copied verbatim and in source order (as Kaldi's filter_scp.pl does), so a sorted source gives
sorted outputs; spk2utt is rebuilt from the kept utt2spk.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Collection, Iterable, Sequence

from nnetmix.data.io import (read_entries, split_fields, utt2spk_to_spk2utt, write_lines,
                             write_spk2utt)
from nnetmix.data.layout import ALL_FILES, SPK_FILES, reco_files, utt_files
from nnetmix.errors import DataDirError

__all__ = ["filter_data_dir", "filter_data_dir_parts", "filter_file"]


def filter_file(src: str | os.PathLike, dst: str | os.PathLike, keep: Collection[str],
                *, field: int = 0) -> int:
    """Write the lines of ``src`` whose ``field``-th field is in ``keep`` to ``dst``; return #lines.

    ``field=0`` is filter_scp.pl; ``field=1`` filters segments by recording.
    """
    lines = []
    for e in read_entries(src, allow_blank=True):
        f = split_fields(e.line, field + 1) if field else [e.key]
        if len(f) > field and f[field] in keep:
            lines.append(e.line)
    write_lines(dst, lines)
    return len(lines)


def filter_data_dir(src: str | os.PathLike, dst: str | os.PathLike, utts: Collection[str],
                    *, extra_utt_files: Iterable[str] = (),
                    extra_spk_files: Iterable[str] = ()) -> int:
    """Write into ``dst`` the data directory ``src`` restricted to ``utts``; return #utterances.

    ``src`` and ``dst`` may be the same directory (every file is read before it is replaced).
    Per-speaker and per-recording files follow the kept utterances. Raises DataDirError when
    ``src`` has no utt2spk or when nothing is kept.
    """
    return filter_data_dir_parts(src, [dst], [utts], extra_utt_files=extra_utt_files,
                                 extra_spk_files=extra_spk_files)[0]


def filter_data_dir_parts(src: str | os.PathLike, dsts: Sequence[str | os.PathLike],
                          parts: Sequence[Collection[str]], *, extra_utt_files: Iterable[str] = (),
                          extra_spk_files: Iterable[str] = ()) -> list[int]:
    """:func:`filter_data_dir` into several destinations at once, reading each source file once.

    ``parts[i]`` are the utterances of ``dsts[i]``; parts must not share an utterance (a speaker
    may span parts, as with split_data.sh --per-utt). Returns #utterances per part.
    """
    src, dsts = Path(src), [Path(d) for d in dsts]
    utt_part: dict[str, int] = {}
    for i, utts in enumerate(parts):
        for u in utts:
            if utt_part.setdefault(u, i) != i:
                raise ValueError(f"utterance {u} is in parts {utt_part[u]} and {i}")
    nparts = len(dsts)

    def distribute(name: str, owners: dict[str, set[int]] | dict[str, int]) -> list[list[str]]:
        """The lines of ``src/name`` for each part, by the part(s) owning each line's key."""
        out: list[list[str]] = [[] for _ in range(nparts)]
        for e in read_entries(src / name, allow_blank=True):
            owner = owners.get(e.key)
            if owner is None:
                continue
            for i in (owner,) if isinstance(owner, int) else owner:
                out[i].append(e.line)
        return out

    # utt2spk first: it decides which utterances exist and who their speakers are
    u2s_lines = distribute("utt2spk", utt_part)
    utt2spk: list[dict[str, str]] = [{} for _ in range(nparts)]
    for i, lines in enumerate(u2s_lines):
        for line in lines:
            f = split_fields(line)
            if len(f) != 2:
                raise DataDirError(f"{src}/utt2spk: expected <utterance> <speaker>, got '{line}'")
            utt2spk[i][f[0]] = f[1]
        if not lines:
            raise DataDirError(f"{src}: none of the requested utterances of {dsts[i]} is in "
                               f"{src}/utt2spk")
    kept = {u: i for i, u2s in enumerate(utt2spk) for u in u2s}
    spk_parts: dict[str, set[int]] = {}
    for i, u2s in enumerate(utt2spk):
        for s in u2s.values():
            spk_parts.setdefault(s, set()).add(i)

    outputs: dict[str, list[list[str]]] = {"utt2spk": u2s_lines}
    for name in dict.fromkeys([*utt_files(src), *extra_utt_files]):
        if name != "utt2spk" and (src / name).is_file():
            outputs[name] = distribute(name, kept)
    for name in dict.fromkeys([*SPK_FILES, *extra_spk_files]):
        if name != "spk2utt" and (src / name).is_file():
            outputs[name] = distribute(name, spk_parts)
    if reco_files(src):
        reco_parts: dict[str, set[int]] = {}
        for i, lines in enumerate(outputs["segments"]):
            for line in lines:
                f = split_fields(line)
                if len(f) > 1:
                    reco_parts.setdefault(f[1], set()).add(i)
        for name in reco_files(src):
            if (src / name).is_file():
                outputs[name] = distribute(name, reco_parts)

    for i, dst in enumerate(dsts):
        dst.mkdir(parents=True, exist_ok=True)
        for name, per_part in outputs.items():
            write_lines(dst / name, per_part[i])
        write_spk2utt(dst / "spk2utt", utt2spk_to_spk2utt(utt2spk[i]))
        if dst != src:
            # a destination reused from an earlier run must not keep files the source lacks
            for name in ALL_FILES:
                if not (src / name).exists() and (dst / name).is_file():
                    (dst / name).unlink()
    return [len(u2s) for u2s in utt2spk]
