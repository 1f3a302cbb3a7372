# Copyright 2026 nnetmix authors. Apache 2.0.
"""A finished run's directory (steps/nnet/train.sh + decode.sh's ``exp/dnn_*_<run-id>``) read
into what the results store keeps: :func:`collect` returns the result dict, the epoch rows and
the per-utterance texts. The logs are read by :mod:`nnetmix.train.runlog`, the one reader of
train.sh's logs; the decodes by :func:`nnetmix.score.best_scoring` (local/score.sh's best
LM weight and penalty, as utils/best_wer.sh picks it)."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional

from nnetmix.score import best_scoring
from nnetmix.train.runlog import read_schedule, read_timings
from nnetmix.utils.fingerprint import md5_file

from bench.experiments.store import StoreError

__all__ = ["collect", "machine", "cpu_model"]

_WER = re.compile(r"%WER ([\d.]+) \[ (\d+) / (\d+), (\d+) ins, (\d+) del, (\d+) sub \]")


def cpu_model() -> str:
    """/proc/cpuinfo's model name ('unknown' elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def machine() -> dict:
    """What the tables name a run's machine by: CPU model and cores."""
    return {"cpu": cpu_model(), "cores": os.cpu_count() or 1}


def _epochs(run_dir: Path) -> tuple[list[dict], dict]:
    """Epoch rows (epoch 0 is the initial model's CV pass) and the kept model's CV numbers."""
    log = run_dir / "log" / "train_scheduler.log"
    if not log.exists():
        raise StoreError(f"{log}: no such file (the run did not train)")
    pre, iters = read_schedule(log.parent)
    if pre is None:
        raise StoreError(f"{log}: no CROSSVAL PRERUN line (not a train.sh log?)")
    train, cv = read_timings(run_dir / "log")
    rows = [{"epoch": 0, "cv_loss": float(pre.group(1)), "cv_acc": float(pre.group(2)),
             "verdict": "initial"}]
    kept = {"cv_loss": float(pre.group(1)), "cv_acc": float(pre.group(2)), "epoch": 0}
    for i, (it, tr_loss, lr, cv_loss, tr_acc, cv_acc, verdict) in enumerate(iters):
        row = {"epoch": int(it), "learn_rate": float(lr), "train_loss": float(tr_loss),
               "train_acc": float(tr_acc), "cv_loss": float(cv_loss), "cv_acc": float(cv_acc),
               "verdict": verdict}
        if i < len(train):
            t = train[i]
            row.update(train_wall=t.wall, optimize=t.optimize, aggregate=t.aggregate, io=t.io,
                       frames=t.frames, minibatches=t.minibatches, mixes=t.mixes,
                       limited=t.limited, updates=t.layer_updates)
        if i < len(cv):
            row.update(cv_wall=cv[i].wall, validate=cv[i].validate)
            row["io"] = round((row.get("io") or 0.0) + cv[i].io, 3)
        rows.append(row)
        if verdict in ("accepted", "kept"):
            kept = {"cv_loss": float(cv_loss), "cv_acc": float(cv_acc), "epoch": int(it)}
    return rows, kept


def _decode(dec: Path) -> tuple[dict, bytes, bytes]:
    best = best_scoring(dec)
    m = _WER.search(best.wer_line)
    if m is None:
        raise StoreError(f"{dec}: cannot read the best %WER line {best.wer_line!r}")
    if best.ref is None:
        raise StoreError(f"{dec}: no scoring/test_filt.txt beside {best.hyp} (local/score.sh "
                         f"keeps it)")
    info = {"wer": float(m.group(1)), "errors": int(m.group(2)), "words": int(m.group(3)),
            "ins": int(m.group(4)), "del": int(m.group(5)), "sub": int(m.group(6)),
            "best": f"wer_{best.lmwt}_{best.wip}"}
    return info, Path(best.ref).read_bytes(), Path(best.hyp).read_bytes()


def collect(run_dir: Path, decodes: tuple[str, ...], result: dict,
            seconds: Optional[dict] = None) -> tuple[dict, list[dict], dict[str, bytes]]:
    """``result`` (run id, spec, command, machine, load: the driver's) completed from
    ``run_dir``: epochs, the kept model's CV loss and frame accuracy, the final model's md5
    and parameter count (the scaling model's message size),
    each decode's best WER; and the texts to store (``ref.<decode>.txt``, ``hyp.<decode>.txt``).
    """
    run_dir = Path(run_dir)
    final = run_dir / "final.nnet"
    if not final.exists():
        raise StoreError(f"{final}: no such file (the run did not finish training)")
    rows, kept = _epochs(run_dir)
    out = dict(result)
    from nnetmix.nnet import read_nnet
    out.update(final_md5=md5_file(str(final)), kept=kept,
               params=int(read_nnet(str(final)).num_params),
               epochs_run=len(rows) - 1,
               epochs_rejected=sum(1 for r in rows if r["verdict"] == "rejected"),
               train_seconds=round(sum((r.get("train_wall") or 0) + (r.get("cv_wall") or 0)
                                       for r in rows), 1))
    if seconds:
        out["seconds"] = seconds
    texts, wers = {}, {}
    for d in decodes:
        info, ref, hyp = _decode(run_dir / d)
        wers[d] = info
        texts[f"ref.{d}.txt"], texts[f"hyp.{d}.txt"] = ref, hyp
    out["decodes"] = wers
    return out, rows, texts
