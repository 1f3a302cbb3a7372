"""Tiny GMM-HMM training inputs built in code: a lang directory from the yesno fixtures (Kaldi's
own L.fst, phones.txt, words.txt; the topology taken from its 40.mdl) and data directories of
synthetic features in which every phone has its own mean, so a monophone system learns them in a
few passes."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from nnetmix.kaldi import TableWriter, read_gmm_model

SIL = 1
# yesno's lexicon: YES = K EH N, NO = L OW (phones.txt: SIL 1 K 2 EH 3 L 4 OW 5 N 6)
PRONS = {"YES": [2, 3, 6], "NO": [4, 5]}
NUM_PHONES = 6


def make_lang(fixtures: Path, lang: Path) -> Path:
    """A lang directory as utils/prepare_lang.sh lays it out, with what train_mono.sh reads."""
    yesno = fixtures / "yesno"
    (lang / "phones").mkdir(parents=True, exist_ok=True)
    for f in ("L.fst", "phones.txt", "words.txt"):
        shutil.copy(yesno / f, lang / f)
    tm, _ = read_gmm_model(str(yesno / "40.mdl"))
    (lang / "topo").write_text(tm.topo.to_text())
    (lang / "phones" / "sets.int").write_text("".join(f"{p}\n" for p in range(1, 7)))
    (lang / "phones" / "disambig.int").write_text("7\n8\n")
    (lang / "phones" / "optional_silence.csl").write_text(f"{SIL}\n")
    (lang / "phones" / "optional_silence.int").write_text(f"{SIL}\n")
    (lang / "oov.int").write_text("1\n")  # <SIL>: yesno has no <UNK>
    (lang / "oov.txt").write_text("<SIL>\n")
    return lang


def phone_means(dim: int, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 3.0, size=(NUM_PHONES + 1, dim))


def synth_utterance(words: list[str], rng: np.random.Generator, means: np.ndarray,
                    frames_per_phone: tuple[int, int] = (7, 12)) -> np.ndarray:
    """Silence, the words' phones, silence; each phone a run of frames around its mean."""
    phones = [SIL] + [p for w in words for p in PRONS.get(w, PRONS["NO"])] + [SIL]
    rows = []
    for p in phones:
        n = int(rng.integers(*frames_per_phone))
        rows.append(means[p] + rng.normal(0.0, 1.0, size=(n, means.shape[1])))
    return np.concatenate(rows).astype(np.float32)


def make_utts(n: int, seed: int = 0) -> list[tuple[str, list[str]]]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        spk = f"spk{i % 3}"
        words = [str(w) for w in rng.choice(["YES", "NO"], size=int(rng.integers(1, 4)))]
        out.append((f"{spk}-utt{i:03d}", words))
    return sorted(out)


def write_feats_ark(path: Path, utts, dim: int = 39, seed: int = 1,
                    short: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """Features of dimension ``dim`` straight into an ark (for the bin tools); the utterances in
    ``short`` get 2 frames, too few for any transcript."""
    rng = np.random.default_rng(seed)
    means = phone_means(dim)
    feats = {}
    with TableWriter(f"ark:{path}", "mat") as w:
        for key, words in utts:
            m = synth_utterance(words, rng, means)
            if key in short:
                m = m[:2]
            feats[key] = m
            w.write(key, m)
    return feats


def write_text(path: Path, utts, extra: dict[str, str] | None = None) -> None:
    extra = extra or {}
    path.write_text("".join(f"{k} {extra.get(k, ' '.join(w))}\n" for k, w in utts))


def make_data_dir(data: Path, utts, dim: int = 13, seed: int = 1, short: tuple[str, ...] = (),
                  text_override: dict[str, str] | None = None) -> Path:
    """A Kaldi data directory with raw (pre-delta) features and per-speaker CMVN stats."""
    from conftest import load_bin

    data.mkdir(parents=True, exist_ok=True)
    write_feats_ark(data / "raw.ark", utts, dim, seed, short)
    # feats.scp with offsets, as make_mfcc.sh writes it
    from nnetmix.kaldi import SequentialReader
    with SequentialReader(f"ark:{data / 'raw.ark'}", "mat") as r, \
            TableWriter(f"ark,scp:{data / 'feats.ark'},{data / 'feats.scp'}", "mat") as w:
        for k, m in r:
            w.write(k, m)
    (data / "raw.ark").unlink()
    write_text(data / "text", utts, text_override)
    (data / "utt2spk").write_text("".join(f"{k} {k.split('-')[0]}\n" for k, _ in utts))
    spk2utt: dict[str, list[str]] = {}
    for k, _ in utts:
        spk2utt.setdefault(k.split("-")[0], []).append(k)
    (data / "spk2utt").write_text("".join(f"{s} {' '.join(u)}\n"
                                          for s, u in sorted(spk2utt.items())))
    rc = load_bin("compute-cmvn-stats.py").main(
        ["--print-args=false", f"--spk2utt=ark:{data / 'spk2utt'}", f"scp:{data / 'feats.scp'}",
         f"ark,scp:{data / 'cmvn.ark'},{data / 'cmvn.scp'}"])
    assert rc == 0
    return data


def check_alignment(tm, ali: np.ndarray) -> list[int]:
    """Assert that a transition-id sequence follows the topology; returns its phone sequence.

    Reordered graphs (compile-train-graphs' default) give, per HMM state, its forward
    transition first and then its self-loops; the forward transition's destination is the next
    state, and the phone ends on a transition into the final state. The sequence starts in
    state 0 of a phone and ends with such a final transition.
    """
    ali = np.asarray(ali)
    assert len(ali) and ali.min() >= 1 and ali.max() <= tm.num_transition_ids
    phones: list[int] = []
    i, n = 0, len(ali)
    while i < n:
        phone, state = int(tm.tid2phone[ali[i]]), 0
        phones.append(phone)
        entry = tm.topo.topology_for_phone(phone)
        while True:
            t = int(ali[i])
            assert tm.tid2phone[t] == phone and tm.tid2hmm_state[t] == state, \
                f"frame {i}: tid {t} is not in phone {phone} state {state}"
            assert not tm.tid_is_selfloop[t], f"frame {i}: state {state} entered by a self-loop"
            dest = entry[state].transitions[int(tm.tid2index[t])][0]
            i += 1
            while i < n and tm.tid_is_selfloop[ali[i]] and tm.tid2phone[ali[i]] == phone \
                    and tm.tid2hmm_state[ali[i]] == state:
                i += 1
            if tm.tid_is_final[t]:
                break
            assert i < n, f"alignment ends inside phone {phone} (state {dest} not final)"
            state = dest
    return phones
