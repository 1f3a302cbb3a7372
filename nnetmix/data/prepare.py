# Copyright 2026 nnetmix authors. Apache 2.0.
"""A corpus's data directory written whole or not at all (the recipes' local/*_data_prep.py).

A recipe's data preparation checks its corpus first, then writes each data directory
(``wav.scp``, ``text``, ``utt2spk``, ``spk2utt``) under a temporary name beside it and renames it
into place, so an error, a full disk or an interrupt leaves nothing half-written under data/, and
an older directory is replaced whole (no stale feats.scp survives a new list). A directory that
already holds the same lists is kept as it is, with its features, so a rerun of a finished
stage changes nothing.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Optional

import soundfile

from nnetmix.data.io import c_key, utt2spk_to_spk2utt, write_lines
from nnetmix.errors import DataDirError

__all__ = ["Utterance", "check_wav", "data_dir_tables", "write_data_dir"]


@dataclass(frozen=True)
class Utterance:
    """One utterance of a data directory: its id, wav file, transcript and speaker."""

    utt_id: str
    wav: Path
    text: str
    speaker: str


def check_wav(path: str | os.PathLike, sample_rate: int, corpus: str, source: str,
              error: type[DataDirError] = DataDirError, kind: str = "wav",
              decode: bool = False) -> None:
    """``error`` naming ``path`` unless it reads as a mono ``kind`` file (wav, FLAC) at
    ``sample_rate``; ``corpus`` names the corpus and ``source`` where a good copy of the file
    comes from. The header alone is read unless ``decode``: then every sample is decoded, which
    catches a compressed file (FLAC) whose frames are damaged behind a good header."""
    try:
        info = soundfile.info(str(path))
        if decode:
            for _ in soundfile.blocks(str(path), blocksize=1 << 16, dtype="int16"):
                pass
    except RuntimeError as e:   # soundfile.LibsndfileError: unreadable, empty, not audio
        raise error(f"{path}: not a readable {kind} file ({e}); replace it from "
                    f"{source}") from None
    if info.samplerate != sample_rate or info.channels != 1:
        raise error(f"{path}: {info.samplerate} Hz, {info.channels} channel(s); {corpus} is "
                    f"{sample_rate} Hz mono (replace it from {source})")


def data_dir_tables(utts: Iterable[Utterance]) -> dict[str, list[str]]:
    """The lines of wav.scp (absolute paths), text, utt2spk and spk2utt, sorted by utterance id
    in the C locale as Kaldi's data directories are."""
    utts = sorted(utts, key=lambda u: c_key(u.utt_id))
    utt2spk = {u.utt_id: u.speaker for u in utts}
    return {"wav.scp": [f"{u.utt_id} {u.wav.resolve()}" for u in utts],
            "text": [f"{u.utt_id} {u.text}" for u in utts],
            "utt2spk": [f"{k} {s}" for k, s in utt2spk.items()],
            "spk2utt": [f"{s} {' '.join(us)}"
                        for s, us in utt2spk_to_spk2utt(utt2spk.items()).items()]}


def _same(out: Path, tables: dict[str, list[str]]) -> bool:
    try:
        return all((out / n).read_text().splitlines() == lines for n, lines in tables.items())
    except OSError:
        return False


def write_data_dir(utts: Iterable[Utterance], out: str | os.PathLike,
                   spk2gender: Optional[Mapping[str, str]] = None) -> bool:
    """Write the data directory ``out`` of ``utts`` (and its spk2gender, when given); False when
    it already holds these lists (kept, with its features). Otherwise a new directory is renamed
    into place from a temporary one next to it, replacing an older ``out`` whole."""
    out = Path(out)
    tables = data_dir_tables(utts)
    if spk2gender is not None:
        tables["spk2gender"] = [f"{s} {spk2gender[s]}"
                                for s in (line.split()[0] for line in tables["spk2utt"])]
    if _same(out, tables):
        return False
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        for name, lines in tables.items():
            write_lines(tmp / name, lines)
        os.chmod(tmp, 0o755)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return True
