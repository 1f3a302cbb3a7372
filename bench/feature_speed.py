#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Frames per second of nnetmix's MFCC extraction against kaldi-native-fbank called directly,
and of its PLP beside MFCC.

Reads the wavs of a wav.scp (default: egs/digits/s5/data/train/wav.scp when it exists, else a
few dozen wavs synthesised here with sox, so it runs anywhere) and times, in one run:

* ``ours, end to end``: nnetmix.feat.compute_feats_table, what compute-mfcc-feats.py does (read
  each wav, compute, write an ark), with nj=1 and nj=2 (two processes, each on half the list);
* ``ours, compute only``: nnetmix.feat.Extractor on audio already in memory;
* ``knf direct``: knf.OnlineMfcc on the same in-memory audio, frames copied out with get_frame;
* PLP (compute-plp-feats.py, conf/plp.conf), end to end and compute only, beside the MFCC
  figures of the same run; PLP is knf's linear fbank plus numpy (nnetmix/feat/plp.py), whose
  part is also timed alone, in this process, on the front end's output for all the audio.

Each figure is the median of --repeat runs (this machine is shared and noisy: medians, and
ratios measured side by side in one run, are what to read). Prints a markdown table and the ratio ours/direct.
With ``--json FILE`` the measurements are also written there (bench/plans/speed.toml stores
them; :func:`report` renders the same tables from them).
Usage: bench/feature_speed.py [--wav-scp FILE] [--config conf/mfcc.conf]
                              [--plp-config conf/plp.conf] [--repeat 3] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import statistics
import time
from pathlib import Path

import kaldi_native_fbank as knf
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nnetmix.data.io import read_wav_scp  # noqa: E402
from nnetmix.feat import (Extractor, compute_feats_table, read_audio,  # noqa: E402
                          read_feature_config)
from nnetmix.feat.plp import PlpTransform  # noqa: E402

from bench.experiments.report import write_atomic  # noqa: E402


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_scp = ROOT / "egs/digits/s5/data/train/wav.scp"
    p.add_argument("--wav-scp", default=str(default_scp) if default_scp.exists() else "",
                   help="wav.scp to read (default: the digits train set if present, else synthesise)")
    p.add_argument("--config", default=str(ROOT / "conf/mfcc.conf"), help="MFCC config file")
    p.add_argument("--plp-config", default=str(ROOT / "conf/plp.conf"), help="PLP config file")
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is reported")
    p.add_argument("--num-synth", type=int, default=48, help="wavs to synthesise without a wav.scp")
    p.add_argument("--json", default="", help="also write the measurements to this file (JSON; "
                   "report() renders them)")
    return p.parse_args()


def synthesise(dirname: Path, n: int) -> Path:
    """n reproducible 3-8 s 16 kHz wavs (tones plus noise) made with sox; returns the wav.scp."""
    rng = np.random.default_rng(777)
    lines = []
    for i in range(n):
        wav = dirname / f"utt{i:03d}.wav"
        dur = float(rng.uniform(3.0, 8.0))
        f0, f1 = (int(x) for x in rng.integers(100, 4000, 2))
        subprocess.run(["sox", "-R", "-n", "-r", "16000", "-b", "16", "-c", "1", str(wav),
                        "synth", f"{dur:.2f}", "sine", f"{f0}-{f1}", "whitenoise", "vol", "0.3"],
                       check=True)
        lines.append(f"utt{i:03d} {wav}\n")
    scp = dirname / "wav.scp"
    scp.write_text("".join(lines))
    return scp


def _end_to_end(args: tuple) -> int:
    kind, config_path, scp, ark = args
    import logging
    logging.disable(logging.WARNING)
    config = read_feature_config(kind, config_path)
    return compute_feats_table(config, f"scp:{scp}", f"ark:{ark}").num_frames


def _knf_direct(args: tuple) -> int:
    opts, signals = args
    frames = 0
    for x in signals:
        comp = knf.OnlineMfcc(opts)
        comp.accept_waveform(opts.frame_opts.samp_freq, x)
        comp.input_finished()
        n = comp.num_frames_ready
        feats = np.empty((n, comp.dim), np.float32)
        for i in range(n):
            feats[i] = comp.get_frame(i)
        frames += n
    return frames


def _ours_compute(args: tuple) -> int:
    kind, config_path, signals = args
    ext = Extractor(read_feature_config(kind, config_path))
    return sum(ext.compute(x, ext.sample_frequency).shape[0] for x in signals)


def _plp_numpy_part(config_path: str, signals: list, repeat: int) -> float:
    """Median seconds of PlpTransform alone over the front end's rows of every signal."""
    config = read_feature_config("plp", config_path)
    transform = PlpTransform(config.frame, config.mel, config.feat)
    opts = config.to_knf()
    rows = []
    for x in signals:
        comp = knf.OnlineFbank(opts)
        comp.accept_waveform(opts.frame_opts.samp_freq, x)
        comp.input_finished()
        rows.append(np.stack([comp.get_frame(i) for i in range(comp.num_frames_ready)]))
    energy = config.feat.use_energy
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for r in rows:
            transform(r[:, 1:] if energy else r, r[:, 0] if energy else None)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def median_of(repeat: int, fn, jobs: list) -> tuple[int, float]:
    """(frames, median wall seconds) of fn over jobs: in this process, or one worker process per job.

    The worker pool is started (and warmed with one untimed pass) before the clock starts, so
    the figure is throughput, not process start-up.
    """
    pool = mp.get_context("fork").Pool(len(jobs)) if len(jobs) > 1 else None
    run = (lambda: fn(jobs[0])) if pool is None else (lambda: sum(pool.map(fn, jobs)))
    try:
        frames = run()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            frames = run()
            times.append(time.perf_counter() - t0)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return frames, statistics.median(times)


def report(data: dict) -> str:
    """The markdown tables of one run's ``--json`` output (what the script prints, and what
    bench/RESULTS.md renders from the stored output)."""
    out = [f"MFCC ({data['config']}) over {data['wavs']} wavs, {data['audio_seconds']:.1f} s of "
           f"audio, {data['cpus']} CPUs, median of {data['repeat']}", "",
           "| nj | frames | ours end to end (frames/s) | ours compute only (frames/s) "
           "| knf direct (frames/s) | ours e2e / direct | ours compute / direct |",
           "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in data["mfcc"]:
        n = r["frames"]
        fe, fo, fk = n / r["ours_e2e_s"], n / r["ours_compute_s"], n / r["knf_s"]
        out.append(f"| {r['nj']} | {n} | {fe:,.0f} | {fo:,.0f} | {fk:,.0f} | {fe / fk:.2f} "
                   f"| {fo / fk:.2f} |")
    out += ["", f"PLP ({data['plp_config']}) beside the MFCC above, same audio and run", "",
            "| nj | PLP end to end (frames/s) | PLP compute only (frames/s) | PLP e2e / MFCC e2e "
            "| PLP compute / MFCC compute |", "|---:|---:|---:|---:|---:|"]
    for r, m in zip(data["plp"], data["mfcc"]):
        n = r["frames"]
        out.append(f"| {r['nj']} | {n / r['plp_e2e_s']:,.0f} | {n / r['plp_compute_s']:,.0f} "
                   f"| {m['ours_e2e_s'] / r['plp_e2e_s']:.2f} "
                   f"| {m['ours_compute_s'] / r['plp_compute_s']:.2f} |")
    out += ["", f"PLP's numpy part alone (nnetmix/feat/plp.py, one process): "
            f"{data['plp'][0]['frames'] / data['plp_numpy_s']:,.0f} frames/s"]
    return "\n".join(out) + "\n"


def main() -> int:
    args = get_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        scp = Path(args.wav_scp) if args.wav_scp else synthesise(tmp, args.num_synth)
        entries = list(read_wav_scp(scp).items())
        halves = [entries[0::2], entries[1::2]]
        scps = []
        for j, part in enumerate([entries, *halves]):
            p = tmp / f"part{j}.scp"
            p.write_text("".join(f"{k} {v}\n" for k, v in part))
            scps.append(p)
        signals = [read_audio(rx).samples[0] for _, rx in entries]
        seconds = sum(len(x) for x in signals) / 16000
        knf_opts = read_feature_config("mfcc", args.config).to_knf()

        rows, plp_rows = [], []
        for nj in (1, 2):
            sig_parts = [signals] if nj == 1 else [signals[0::2], signals[1::2]]

            def e2e(kind, config):
                return ([(kind, config, scps[0], tmp / "all.ark")] if nj == 1 else
                        [(kind, config, scps[1 + j], tmp / f"h{j}.ark") for j in range(2)])

            def compute(kind, config):
                return [(kind, config, s) for s in sig_parts]

            f_e2e, t_e2e = median_of(args.repeat, _end_to_end, e2e("mfcc", args.config))
            f_our, t_our = median_of(args.repeat, _ours_compute, compute("mfcc", args.config))
            f_knf, t_knf = median_of(args.repeat, _knf_direct, [(knf_opts, s) for s in sig_parts])
            assert f_e2e == f_our == f_knf, (f_e2e, f_our, f_knf)
            rows.append((nj, f_e2e, t_e2e, t_our, t_knf))
            f_pe, t_pe = median_of(args.repeat, _end_to_end, e2e("plp", args.plp_config))
            f_pc, t_pc = median_of(args.repeat, _ours_compute, compute("plp", args.plp_config))
            assert f_pe == f_pc == f_e2e, (f_pe, f_pc, f_e2e)
            plp_rows.append((nj, f_pe, t_pe, t_pc, t_e2e, t_our))
        t_numpy = _plp_numpy_part(args.plp_config, signals, args.repeat)

    data = {"config": Path(args.config).name, "plp_config": Path(args.plp_config).name,
            "wavs": len(entries), "audio_seconds": round(seconds, 2), "cpus": os.cpu_count(),
            "repeat": args.repeat,
            "mfcc": [{"nj": nj, "frames": frames, "ours_e2e_s": t_e2e, "ours_compute_s": t_our,
                      "knf_s": t_knf} for nj, frames, t_e2e, t_our, t_knf in rows],
            "plp": [{"nj": nj, "frames": frames, "plp_e2e_s": t_pe, "plp_compute_s": t_pc}
                    for nj, frames, t_pe, t_pc, _, _ in plp_rows],
            "plp_numpy_s": t_numpy}
    print(report(data))
    if args.json:
        write_atomic(Path(args.json), json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
