"""A small stand-in for the Switchboard LDC releases, generated in code (no corpus is shipped).

The directory layouts and file formats are those of LDC97S62 (Switchboard-1 Release 2 with the
MS-State ms98 transcripts and dictionary), LDC2002S09 (Hub5'00 audio and pem) and LDC2002T43
(Hub5'00 stm, GLM and per-conversation transcripts); the contents are a few seconds of
synthetic two-channel mu-law audio per conversation and a handful of transcript lines chosen to
exercise the word mapping, the duplicate limit and the segment arithmetic.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

SAMPLE_RATE = 8000
DURATION = 8.0  # seconds of audio per conversation

# ---------------------------------------------------------------------------- audio


def mulaw_encode(x: np.ndarray) -> np.ndarray:
    """G.711 mu-law bytes of 16-bit samples (bias 0x84, clip 32635, bits inverted), the coding of
    the Switchboard SPHERE files. Written out here because Python's audioop is gone in 3.13."""
    x = x.astype(np.int32)
    sign = (x < 0).astype(np.int32) << 7
    mag = np.minimum(np.abs(x), 32635) + 0x84
    exponent = np.floor(np.log2(mag)).astype(np.int32) - 7
    mantissa = (mag >> (exponent + 3)) & 0x0F
    return (~(sign | (exponent << 4) | mantissa) & 0xFF).astype(np.uint8)


def write_sphere_ulaw(path: Path, channels: np.ndarray, *, conversation: str = "") -> None:
    """A NIST SPHERE file: 1024-byte ``NIST_1A`` header, then interleaved 8-bit mu-law."""
    num_ch, n = channels.shape
    fields = [
        "NIST_1A", "   1024",
        "database_id -s6 SWB1R2" if conversation else "database_id -s4 HUB5",
        f"conversation_id -s{len(conversation)} {conversation}" if conversation else None,
        f"channel_count -i {num_ch}",
        f"sample_count -i {n}",
        f"sample_rate -i {SAMPLE_RATE}",
        "sample_n_bytes -i 1",
        "sample_coding -s4 ulaw",
        "channels_interleaved -s4 TRUE",
        "sample_sig_bits -i 8",
        "end_head",
    ]
    header = ("\n".join(f for f in fields if f) + "\n").encode("ascii")
    header += b" " * (1024 - len(header))
    body = mulaw_encode(channels.T.reshape(-1))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(header + body.tobytes())


def synth_conversation(seed: int, duration: float = DURATION) -> np.ndarray:
    """Two channels of 'speech-like' signal: harmonic bursts over low noise, different per side."""
    rng = np.random.default_rng(seed)
    n = int(duration * SAMPLE_RATE)
    t = np.arange(n) / SAMPLE_RATE
    out = np.empty((2, n))
    for ch in range(2):
        f0 = 110 + 60 * ch + 20 * rng.random()
        envelope = 0.5 + 0.5 * np.sin(2 * np.pi * (1.3 + 0.4 * ch) * t) ** 2
        voiced = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 8))
        out[ch] = 3000 * envelope * voiced + 200 * rng.standard_normal(n)
    return np.clip(out, -32768, 32767).astype(np.int16)


# ---------------------------------------------------------------------------- Switchboard-1

#: ms98 segments: (conversation, side) -> [(start, end, words)]. Times within DURATION.
SWBD_TRANSCRIPTS = {
    ("2001", "A"): [
        (0.0, 0.977625, "[silence]"),
        (0.977625, 2.561375, "hi um yeah i'd like to talk about [laughter]"),
        (2.561375, 3.98, "uh-huh"),
        (3.98, 5.5125, "[laughter-yeah] it was ab[solute]- -[th]at {yuppiedom}"),
        (5.5125, 6.25, "[noise] <b_aside> them_1 <e_aside>"),
        (6.25, 7.4, "uh-huh [silence]"),
    ],
    ("2001", "B"): [
        (0.0, 1.25, "[silence]"),
        (1.25, 2.5, "uh-huh"),
        (2.5, 4.003125, "[vocalized-noise] [it'n/isn't] that right"),
        (4.003125, 7.9, "yeah April is fine"),
    ],
    ("2005", "A"): [
        (0.5, 1.5, "uh-huh"),
        (1.5, 3.0, "[laughter] yeah"),
        (3.0, 4.75, "i think about that"),
    ],
    ("2005", "B"): [
        (0.25, 1.0, "uh-huh"),
        (1.0, 2.1, "yeah"),
    ],
    ("4940", "A"): [
        (0.1, 2.0, "it was about them"),
        (2.0, 3.5, "uh-huh"),
    ],
    ("4940", "B"): [
        (0.0, 1.0, "[silence]"),
        (1.0, 2.75, "i'd like that"),
    ],
    # transcribed, but its audio is missing from the release: dropped by data preparation
    ("2010", "A"): [(0.0, 1.5, "yeah that right")],
}

#: ms98 dictionary lines after the header (mixed case as in the release, lower-case phones).
SWBD_DICT = """\
-[th]at ae t
[it'n/isn't] ih n t
[laughter-yeah] y ae
[silence] sil
ab[solute]- ae b
about ax b aw t
April ey p r ih l
hi hh ay
i ay
i'd ay d
is ih z
it ih t
it'n ih n
like l ay k
right r ay t
talk t ao k
that dh ae t
them dh eh m
them_1 dh ax m
think th ih ng k
to t uw
uh-huh ah hh ah
um ah m
was w ax z
yeah y ae
fine f ay n
{yuppiedom} y ah p iy d ax m
"""

DISC_OF = {"2001": "disc1", "2005": "disc1", "4940": "disc2", "2010": "disc1"}
HAS_AUDIO = ("2001", "2005", "4940")


def make_swbd(root: Path, *, flat: bool = False) -> Path:
    """LDC97S62 under ``root/LDC97S62``: swb1/discN/data/sw0NNNN.sph (or flat: sw0NNNN.sph),
    transcriptions/swb_ms98_transcriptions/NN/NNNN/swNNNN[AB]-ms98-a-{trans,word}.text, the
    dictionary and AAREADME.text. Returns the LDC97S62 directory."""
    swbd = Path(root) / "LDC97S62"
    for k, conv in enumerate(HAS_AUDIO):
        sph = (swbd / f"sw0{conv}.sph" if flat
               else swbd / "swb1" / DISC_OF[conv] / "data" / f"sw0{conv}.sph")
        write_sphere_ulaw(sph, synth_conversation(100 + k), conversation=conv)
    ms98 = swbd / "transcriptions" / "swb_ms98_transcriptions"
    for (conv, side), segs in SWBD_TRANSCRIPTS.items():
        d = ms98 / conv[:2] / conv
        d.mkdir(parents=True, exist_ok=True)
        lines, words = [], []
        for n, (start, end, text) in enumerate(segs, 1):
            seg = f"sw{conv}{side}-ms98-a-{n:04d}"
            lines.append(f"{seg} {start:.6f} {end:.6f} {text}")
            step = (end - start) / max(1, len(text.split()))
            for i, w in enumerate(text.split()):  # word alignments: present, not used
                words.append(f"{seg} {start + i * step:.6f} {start + (i + 1) * step:.6f} {w}")
        (d / f"sw{conv}{side}-ms98-a-trans.text").write_text("\n".join(lines) + "\n")
        (d / f"sw{conv}{side}-ms98-a-word.text").write_text("\n".join(words) + "\n")
    (ms98 / "sw-ms98-dict.text").write_text(
        " file: $SWB/data/dictionary/sw-ms98-dict.text\n#\n# stand-in of the ms98 lexicon\n#\n"
        + SWBD_DICT)
    (ms98 / "AAREADME.text").write_text("Switchboard ms98 transcriptions (stand-in)\n")
    return swbd


# ---------------------------------------------------------------------------- Hub5'00

#: pem segments (conversation, channel, start, end) and their stm words.
EVAL2000_SEGMENTS = [
    ("en_4156", "A", "0.50", "1.85", "oh yeah (%HESITATION) i'm"),
    ("en_4156", "A", "1.91", "3.20", "<B_ASIDE> um i don't know ok <E_ASIDE>"),
    ("en_4156", "B", "0.00", "4.00", "IGNORE_TIME_SEGMENT_IN_SCORING"),
    ("en_4156", "B", "4.30", "5.95", "it's (th-) fine"),
    ("sw_4390", "A", "1.15", "2.50", "uh right"),
    ("sw_4390", "B", "0.60", "2.00", "i think so"),
    ("sw_4390", "B", "2.06", "3.30", "okay [laughter]"),
]
EVAL2000_GLM = """\
;;
;;  File: en20000405_hub5.glm (stand-in: the format of the NIST hub5 GLM)
;;
* name "en20000405_hub5.glm"
* desc "Hub5 English transcript filtering rules"
* format = 'NIST1'
* max_nrules = '5000'
* copy_no_hit = 'T'
* case_sensitive = 'F'
;; hesitations
UH        =>  %HESITATION        / [ ] __ [ ]
UM        =>  %HESITATION        / [ ] __ [ ]
;; spelling and contractions
OK        =>  OKAY               / [ ] __ [ ]
[I'M]     =>  [{I'M / I AM}]     / [ ] __ [ ]
[IT'S]    =>  [{IT'S / IT IS}]   / [ ] __ [ ]
YEAH      =>  YEAH               / [ ] __ [ ]   ;; a rule that keeps its word
GONNA     =>  GOING TO           / [ ] __ [ ]
"""


def make_eval2000(root: Path) -> tuple[Path, Path]:
    """LDC2002S09/hub5e_00/english/{en_4156,sw_4390}.sph + hub5e_00.pem and
    LDC2002T43/2000_hub5_eng_eval_tr/reference/{hub5e00.english.000405.stm,
    en20000405_hub5.glm, english/*.txt}. Returns (speech dir, transcript dir) as given to
    --eval2000-dirs."""
    speech = Path(root) / "LDC2002S09" / "hub5e_00"
    trans = Path(root) / "LDC2002T43"
    english = speech / "english"
    for k, conv in enumerate(sorted({s[0] for s in EVAL2000_SEGMENTS})):
        write_sphere_ulaw(english / f"{conv}.sph", synth_conversation(200 + k))
    pem = [";; hub5e_00.pem: partitioned evaluation map (stand-in)",
           ";; <file> <channel> <speaker> <begin> <end>"]
    stm = [';; CATEGORY "0" "" ""', ';; LABEL "O" "Overall" "Overall"']
    txt: dict[str, list[str]] = {}
    for conv, ch, start, end, words in EVAL2000_SEGMENTS:
        pem.append(f"{conv} {ch} unknown_speaker {start} {end}")
        stm.append(f"{conv} {ch} {conv}_{ch} {start} {end} <O,en,F,en-F>  {words}")
        if "IGNORE" not in words:
            txt.setdefault(conv, []).append(f"{start} {end} {ch}: {words}")
    (english / "hub5e_00.pem").write_text("\n".join(pem) + "\n")
    ref = trans / "2000_hub5_eng_eval_tr" / "reference"
    (ref / "english").mkdir(parents=True, exist_ok=True)
    (ref / "hub5e00.english.000405.stm").write_text("\n".join(stm) + "\n")
    (ref / "en20000405_hub5.glm").write_text(EVAL2000_GLM)
    for conv, lines in txt.items():
        header = [f"#Language: eng", f"#File id: {conv.split('_')[1]}", ""]
        (ref / "english" / f"{conv}.txt").write_text("\n".join(header + lines) + "\n")
    return speech, trans
