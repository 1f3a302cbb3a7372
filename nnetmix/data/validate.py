"""Check the invariants of a Kaldi data directory (what utils/validate_data_dir.sh checks).

Every table is sorted in C locale with unique keys and ends in a newline; utt2spk and spk2utt
say the same thing; text, segments (or wav.scp), feats.scp, utt2num_frames, utt2dur and the other
per-utterance files cover exactly utt2spk's utterances; cmvn.scp and the other per-speaker files
cover exactly the speakers; segments' recordings are exactly wav.scp's. The first broken
invariant raises DataDirError with a one-line message naming the file and the first bad key and,
where there is one, the fix; things that are allowed but suspicious (a single speaker) come back
as warnings. The order of the checks follows Kaldi's script, so the same directory fails on the
same file.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from nnetmix.data.io import (Entry, c_key, c_sorted, first_unsorted_key, read_entries,
                             read_reco2file_and_channel, read_segments, read_spk2gender,
                             read_spk2utt, read_utt2dur, read_utt2num_frames, read_utt2spk,
                             split_fields)
from nnetmix.errors import DataDirError
from nnetmix.options import option

__all__ = ["ValidateOptions", "KeyListMismatch", "validate_data_dir", "check_sorted",
           "partial_diff"]

#: Symbols the language model and graph reserve; a transcript must not contain them (Kaldi).
ILLEGAL_TEXT_SYMBOLS = ("<s>", "</s>", "#0")
#: Control characters (Unicode Cc, but tab), surrogates (undecodable bytes) and the byte-order mark.
_NON_PRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff\ufeff]")


@dataclass
class ValidateOptions:
    """validate_data_dir.sh's switches: each --no-X makes X optional (still checked if present)."""

    no_feats: bool = option(False, "feats.scp need not exist")
    no_text: bool = option(False, "text need not exist")
    no_wav: bool = option(False, "wav.scp need not exist")
    no_spk_sort: bool = option(False, "utt2spk need not also be sorted by speaker (speaker-ids "
                               "prefixes of utt-ids)")
    non_print: bool = option(False, "allow non-printable characters and invalid UTF-8 in text")


class KeyListMismatch(DataDirError):
    """Two files should list the same keys and do not; ``detail`` holds a partial diff."""

    def __init__(self, message: str, detail: Sequence[str] = ()):
        super().__init__(message)
        self.detail = list(detail)


def partial_diff(name_a: str, keys_a: Sequence[str], name_b: str, keys_b: Sequence[str],
                 context: int = 6) -> list[str]:
    """A short diff of two key lists: the first and last ``context`` differences and both lengths.

    Kaldi prints ``diff -U1 | head; tail`` and ``[Lengths are A=n1 versus B=n2]``; this keeps
    the head/tail shape with one line per key that is in only one of the lists.
    """
    in_a, in_b = set(keys_a), set(keys_b)
    diff = [f"-{k}" for k in keys_a if k not in in_b] + [f"+{k}" for k in keys_b if k not in in_a]
    diff.sort(key=lambda d: c_key(d[1:]))
    if not diff:  # same keys, different order
        diff = [f"-{a} +{b}" for a, b in zip(keys_a, keys_b) if a != b]
    lines = [f"partial diff (- only in {name_a}, + only in {name_b}):"]
    if len(diff) > 2 * context:
        lines += diff[:context] + ["..."] + diff[-context:]
    else:
        lines += diff
    lines.append(f"[Lengths are {name_a}={len(keys_a)} versus {name_b}={len(keys_b)}]")
    return lines


def _ends_in_newline(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return True
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def check_sorted(path: str | os.PathLike, fix_hint: str = "") -> list[Entry]:
    """Read a table and insist on C-locale order, unique keys and a final newline."""
    path = Path(path)
    entries = read_entries(path)
    if not _ends_in_newline(path):
        raise DataDirError(f"{path}: last line does not end in a newline")
    bad = first_unsorted_key([e.key for e in entries])
    if bad is not None:
        raise DataDirError(f"{path}: not sorted or has duplicates (first bad key: {bad})"
                           f"{fix_hint}")
    return entries


def _same_keys(data: Path, name_a: str, keys_a: Sequence[str], name_b: str,
               keys_b: Sequence[str], what: str, fix_hint: str) -> None:
    """Raise KeyListMismatch naming file ``name_b`` and the first key in only one of the lists."""
    if list(keys_a) == list(keys_b):
        return
    in_a, in_b = set(keys_a), set(keys_b)
    only = c_sorted([k for k in keys_a if k not in in_b] + [k for k in keys_b if k not in in_a])
    if only:
        k = only[0]
        where = f"in {name_a}, not in {name_b}" if k in in_a else f"in {name_b}, not in {name_a}"
        first = f"first bad key: {k}, {where}"
    else:
        first = "same keys in a different order"
    raise KeyListMismatch(
        f"{data / name_b}: {what} list differs from {name_a} ({first}; lengths {name_a}="
        f"{len(keys_a)} versus {name_b}={len(keys_b)}){fix_hint}",
        partial_diff(name_a, keys_a, name_b, keys_b))


def _check_text(path: Path, entries: list[Entry], non_print: bool) -> None:
    for e in entries:
        if not e.value:
            raise DataDirError(f"{path}:{e.lineno}: utterance {e.key} has no transcript "
                               f"(first bad key: {e.key})")
        words = split_fields(e.value)
        for sym in ILLEGAL_TEXT_SYMBOLS:
            if sym in words:
                raise DataDirError(f"{path}:{e.lineno}: transcript of {e.key} contains the "
                                   f"reserved symbol {sym} (first bad key: {e.key})")
        if non_print:
            continue
        m = _NON_PRINTABLE.search(e.line)
        if m is None:
            continue
        ch = m.group()
        if "\udc80" <= ch <= "\udcff":
            raise DataDirError(f"{path}:{e.lineno}: line of {e.key} is not valid UTF-8 "
                               f"(if this is by design, specify --non-print)")
        raise DataDirError(f"{path}:{e.lineno}: line of {e.key} contains the non-printable "
                           f"character U+{ord(ch):04X} (if this is by design, specify --non-print)")


def validate_data_dir(data: str | os.PathLike, opts: ValidateOptions | None = None) -> list[str]:
    """Validate ``data``; return its warnings, raise DataDirError at the first broken invariant."""
    opts = opts or ValidateOptions()
    data = Path(data)
    fix = f"; run utils/fix_data_dir.sh {data}"
    warnings: list[str] = []
    if not data.is_dir():
        raise DataDirError(f"no such directory {data}")
    for name in ("utt2spk", "spk2utt"):
        p = data / name
        if not p.is_file():
            hint = (f" (make it with utils/utt2spk_to_spk2utt.pl {data}/utt2spk > {p})"
                    if name == "spk2utt" else "")
            raise DataDirError(f"no such file {p}{hint}")
        if p.stat().st_size == 0:
            raise DataDirError(f"{p}: empty file")

    # speakers
    check_sorted(data / "utt2spk", fix)
    utt2spk = read_utt2spk(data / "utt2spk")
    utts = list(utt2spk)
    if not opts.no_spk_sort:
        spks = list(utt2spk.values())
        for i in range(1, len(spks)):
            if c_key(spks[i]) < c_key(spks[i - 1]):
                raise DataDirError(
                    f"{data}/utt2spk: not in sorted order when sorted first on speaker-id "
                    f"(first bad key: {utts[i]}) (make speaker-ids prefixes of utt-ids, "
                    f"or specify --no-spk-sort)")
    check_sorted(data / "spk2utt", fix)
    spk2utt = read_spk2utt(data / "spk2utt")
    pairs_a = set(utt2spk.items())
    pairs_b = [(u, s) for s, us in spk2utt.items() for u in us]
    bad = [u for u, s in pairs_b if (u, s) not in pairs_a]
    seen: set[str] = set()
    for u, _ in pairs_b:
        if u in seen:
            bad.append(u)
        seen.add(u)
    bad += [u for u in utts if u not in seen]
    if bad:
        raise DataDirError(f"{data}/spk2utt: does not match {data}/utt2spk (first bad key: "
                           f"{c_sorted(bad)[0]}) (remake it with utils/utt2spk_to_spk2utt.pl "
                           f"{data}/utt2spk > {data}/spk2utt)")
    speakers = list(spk2utt)
    if len(speakers) == 1:
        warnings.append(f"WARNING: {data} has only one speaker ({speakers[0]}); speaker-dependent "
                        f"steps (CMVN, adaptation) and split_data.sh need more than one")

    # text
    text = data / "text"
    if not text.is_file():
        if not opts.no_text:
            raise DataDirError(f"no such file {text} (if this is by design, specify --no-text)")
    else:
        entries = check_sorted(text, fix)
        _check_text(text, entries, opts.non_print)
        _same_keys(data, "utt2spk", utts, "text", [e.key for e in entries], "utterance", fix)

    # audio
    wav, segments = data / "wav.scp", data / "segments"
    if segments.is_file() and not wav.is_file():
        raise DataDirError(f"{data}: segments file exists but no wav.scp")
    if not wav.is_file() and not opts.no_wav:
        raise DataDirError(f"no such file {wav} (if this is by design, specify --no-wav)")
    if wav.is_file():
        wav_entries = check_sorted(wav, fix)
        for e in wav_entries:
            if not e.value:
                raise DataDirError(f"{wav}:{e.lineno}: {e.key} has no wav rxfilename")
            if e.value.startswith("~"):
                raise DataDirError(f"{wav}:{e.lineno}: {e.key}: do not use a tilde (~) in wav.scp "
                                   f"(first bad key: {e.key}); write the full path")
        wav_keys = [e.key for e in wav_entries]
        if segments.is_file():
            seg_keys = [e.key for e in check_sorted(segments, fix)]
            segs = read_segments(segments)
            _same_keys(data, "utt2spk", utts, "segments", seg_keys, "utterance", fix)
            in_wav = set(wav_keys)
            for u in seg_keys:
                if segs[u].recording not in in_wav:
                    raise DataDirError(f"{segments}: recording {segs[u].recording} of utterance "
                                       f"{u} is not in {wav} (first bad key: {u}){fix}")
            recordings = c_sorted({s.recording for s in segs.values()})
            _same_keys(data, "segments", recordings, "wav.scp", wav_keys, "recording", fix)
        else:
            recordings = []
            _same_keys(data, "utt2spk", utts, "wav.scp", wav_keys, "utterance", fix)
        r2fc = data / "reco2file_and_channel"
        if r2fc.is_file():
            keys = [e.key for e in check_sorted(r2fc, fix)]
            for reco, (_, channel) in read_reco2file_and_channel(r2fc).items():
                if channel == "1":
                    warnings.append(f"WARNING: {r2fc}: channel of {reco} is 1 "
                                    f"(mark channels A or B)")
                elif channel not in ("A", "B"):
                    raise DataDirError(f"{r2fc}: channel of {reco} is '{channel}' "
                                       f"(expected A or B) (first bad key: {reco})")
            ref_name, ref = (("segments", recordings) if segments.is_file()
                             else ("wav.scp", wav_keys))
            _same_keys(data, ref_name, ref, "reco2file_and_channel", keys, "recording", fix)
        reco2dur = data / "reco2dur"
        if reco2dur.is_file():
            keys = [e.key for e in check_sorted(reco2dur, fix)]
            read_utt2dur(reco2dur)
            _same_keys(data, "wav.scp", wav_keys, "reco2dur", keys, "recording", fix)

    # features
    feats = data / "feats.scp"
    if not feats.is_file():
        if not opts.no_feats:
            raise DataDirError(f"no such file {feats} (if this is by design, specify --no-feats)")
    else:
        entries = check_sorted(feats, fix)
        _same_keys(data, "utt2spk", utts, "feats.scp", [e.key for e in entries], "utterance", fix)

    # per-speaker files
    for name in ("cmvn.scp", "spk2gender", "spk2warp"):
        p = data / name
        if p.is_file():
            entries = check_sorted(p, fix)
            if name == "spk2gender":
                read_spk2gender(p)
            _same_keys(data, "spk2utt", speakers, name, [e.key for e in entries], "speaker", fix)

    # other per-utterance files
    for name in ("utt2num_frames", "utt2dur", "vad.scp", "utt2lang", "utt2uniq", "utt2warp"):
        p = data / name
        if p.is_file():
            entries = check_sorted(p, fix)
            if name == "utt2num_frames":
                read_utt2num_frames(p)
            elif name == "utt2dur":
                read_utt2dur(p)
            _same_keys(data, "utt2spk", utts, name, [e.key for e in entries], "utterance", fix)
    return warnings
