"""Tiny Kaldi data directories built in code from a seed (no checked-in fixtures)."""
from __future__ import annotations

import random
from pathlib import Path

WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "oh", "zero"]


def make_data_dir(path: Path, *, num_spk: int = 5, utts_per_spk: tuple[int, int] = (2, 6),
                  seed: int = 0, segments: bool = False, feats: bool = True, cmvn: bool = True,
                  text: bool = True, extras: bool = True) -> dict[str, str]:
    """Write a valid, C-sorted data directory at ``path``; return its utt2spk.

    Speaker ids are prefixes of utterance ids (Kaldi's convention), and the number of utterances
    per speaker is drawn from ``utts_per_spk`` so that splits have something to balance.
    """
    rng = random.Random(seed)
    path.mkdir(parents=True, exist_ok=True)
    utt2spk: dict[str, str] = {}
    lines: dict[str, list[str]] = {k: [] for k in (
        "text", "wav.scp", "segments", "feats.scp", "utt2num_frames", "utt2dur")}
    recordings = []
    width = max(3, len(str(num_spk - 1)))  # fixed width keeps generation order C-sorted
    for s in range(num_spk):
        spk = f"spk{s:0{width}d}"
        reco = f"{spk}-rec"
        recordings.append(reco)
        t = 0.0
        for u in range(rng.randint(*utts_per_spk)):
            utt = f"{spk}-utt{u:03d}"
            utt2spk[utt] = spk
            dur = round(rng.uniform(0.5, 3.0), 2)
            frames = int(dur * 100) - 2
            words = [rng.choice(WORDS) for _ in range(rng.randint(1, 5))]
            lines["text"].append(f"{utt} {' '.join(words)}")
            if segments:
                lines["segments"].append(f"{utt} {reco} {t:.2f} {t + dur:.2f}")
                t += dur + 0.1
            else:
                lines["wav.scp"].append(f"{utt} /corpus/{spk}/{utt}.wav")
            lines["feats.scp"].append(f"{utt} /feats/raw_mfcc.1.ark:{1000 + len(utt2spk) * 37}")
            lines["utt2num_frames"].append(f"{utt} {frames}")
            lines["utt2dur"].append(f"{utt} {dur}")
    if segments:
        lines["wav.scp"] = [f"{r} sox /corpus/{r}.sph -t wav - |" for r in recordings]
    speakers = sorted(set(utt2spk.values()))
    write(path / "utt2spk", [f"{u} {s}" for u, s in utt2spk.items()])
    spk2utt: dict[str, list[str]] = {}
    for u, s in utt2spk.items():
        spk2utt.setdefault(s, []).append(u)
    write(path / "spk2utt", [f"{s} {' '.join(spk2utt[s])}" for s in speakers])
    write(path / "wav.scp", lines["wav.scp"])
    if segments:
        write(path / "segments", lines["segments"])
    if text:
        write(path / "text", lines["text"])
    if feats:
        write(path / "feats.scp", lines["feats.scp"])
    if cmvn:
        write(path / "cmvn.scp", [f"{s} /feats/cmvn.ark:{i * 50 + 7}"
                                  for i, s in enumerate(speakers)])
    if extras:
        write(path / "utt2num_frames", lines["utt2num_frames"])
        write(path / "utt2dur", lines["utt2dur"])
        write(path / "spk2gender", [f"{s} {'mf'[i % 2]}" for i, s in enumerate(speakers)])
    return utt2spk


def write(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines))


def read_lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def keys(path: Path) -> list[str]:
    return [line.split()[0] for line in read_lines(path)]


def drop_line(path: Path, key: str) -> None:
    write(path, [line for line in read_lines(path) if line.split()[0] != key])
