"""Finished egs/digits DNN run directories written in code, as steps/nnet/train.sh, the MPI
trainer and steps/nnet/decode.sh leave them (the files nnetmix/train/runlog.py reads)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from nnetmix.driver import EpochResult  # noqa: E402
from nnetmix.parallel import MpiTrainOptions  # noqa: E402
from nnetmix.train.stats import EpochStats  # noqa: E402


def summary_line(ranks, frames, wall, optimize, aggregate, validate, io, cv=False) -> str:
    """The trainer's own ``MPI summary`` line (its summary() method, so the format is real)."""
    st = EpochStats()
    st.frames = frames
    res = EpochResult(st, st, ranks, 0, optimize, aggregate, validate, io, wall)
    return ("LOG (nnet-train-mpi.py[0.1.0]:work():nnet-train-mpi.py:88) "
            + res.summary(MpiTrainOptions(), cv))


def write_run(d: Path, wer: float, cv_acc: float = 70.0, workers: int = 1, epochs: int = 3,
              rejected_last: bool = True, words: int = 400, wall: float = 10.0,
              aggregate: float = 0.5, minibatches: int = 100, mixes: int = 10,
              seconds: int = 60, done: bool = True) -> Path:
    """A finished run: ``epochs`` ITERATION lines (the last rejected when asked), per-epoch job
    logs with MPI summary lines, wer files (the best = ``wer``), .done and stages67_seconds."""
    log = d / "log"
    log.mkdir(parents=True, exist_ok=True)
    lines = ["# nnet-train-scheduler.py ...",
             "LOG (train_scheduler[0.1.0]:run():scheduler.py:275) CROSSVAL PRERUN AVG.LOSS "
             "4.4943 (Xent), FRAME_ACCURACY 1.22%"]
    for it in range(1, epochs + 1):
        rej = rejected_last and it == epochs and epochs > 1
        acc = cv_acc - (0.5 if rej else (epochs - it) * 2.0)
        loss = 1.5 - 0.1 * it + (0.2 if rej else 0.0)
        what = "rejected" if rej else "accepted"
        lines.append(f"LOG (train_scheduler[0.1.0]:one_epoch():scheduler.py:327) ITERATION "
                     f"{it:02d}: TRAIN AVG.LOSS {loss + 0.3:.4f}, (lrate0.008), CROSSVAL AVG.LOSS "
                     f"{loss:.4f}, FRAME_ACCURACY tr {acc + 5:.2f}% cv {acc:.2f}%, nnet {what} "
                     f"(nnet_iter{it:02d})")
        frames = 25600 * workers
        (log / f"iter{it:02d}.tr.log").write_text("\n".join([
            "# nnet-train-mpi.py ...",
            f"LOG (nnet-train-mpi.py[0.1.0]:dnn_epoch():dnn.py:233) rank 0: {minibatches} "
            f"minibatches agreed ({minibatches} local); learning rate 0.008 (x {workers}); "
            "allreduce mixing every 10",
            f"LOG (nnet-train-mpi.py[0.1.0]:dnn_epoch():dnn.py:283) rank 0: local loss 1.2 "
            f"(Xent) over 25600 frames, frame accuracy 60.0%, {mixes} mixes",
            summary_line(workers, frames, wall, wall - aggregate - 1.0, aggregate, 0.0, 1.0),
            "# Accounting: time=12 threads=1"]) + "\n")
        (log / f"iter{it:02d}.cv.log").write_text(
            summary_line(workers, 2000, 1.0, 0.1, 0.0, 0.6, 0.3, cv=True) + "\n")
        (log / f"iter{it:02d}.tr.rank0.log").write_text("rank logs are not read\n")
    (log / "iter00.initial.log").write_text(
        summary_line(workers, 2000, 1.0, 0.1, 0.0, 0.6, 0.3, cv=True) + "\n")
    (log / "train_scheduler.log").write_text("\n".join(lines) + "\n")
    dec = d / "decode_test"
    dec.mkdir(exist_ok=True)
    errors = round(wer * words / 100)
    best = 100.0 * errors / words
    for name, e in (("wer_10_0.0", errors + 3), ("wer_11_0.5", errors), ("wer_12_1.0", errors + 1)):
        (dec / name).write_text(f"%WER {100.0 * e / words:.2f} [ {e} / {words}, 1 ins, 2 del, "
                                f"{max(0, e - 3)} sub ]\n%SER 10.00 [ 3 / 30 ]\nScored 30 "
                                "sentences, 0 not present in hyp.\n")
    (d / "final.nnet").write_text("")
    if done:
        (d / ".done").write_text("")
    (d / "stages67_seconds").write_text(f"{seconds}\n")
    (d / "loadavg").write_text("1.00 1.00 1.00 -> 2.00 2.00 2.00\n")
    assert abs(best - wer) < 100.0 / words
    return d


def allreduce_rows(alpha: float, beta: float, algorithms=("ring", "tree", "recursive-doubling",
                                                          "mpi"), ranks=(2, 4, 8),
                   sizes=(4096, 65536, 1 << 20, 16 << 20, 64 << 20), noise: float = 0.0,
                   seed: int = 0) -> list[dict]:
    """bench/allreduce.py rows whose times follow each algorithm's alpha-beta form exactly (times
    a seeded relative noise); mpi follows the ring form."""
    import numpy as np

    from bench.allreduce import model_terms
    rng = np.random.default_rng(seed)
    rows = []
    for n in ranks:
        for b in sizes:
            row = {"bytes": b, "ranks": n, "reps": 3}
            for alg in algorithms:
                ka, kb = model_terms("ring" if alg == "mpi" else alg, n)
                row[alg] = (ka * alpha + kb * b * beta) * (1 + noise * rng.standard_normal())
            row["memcpy"] = b / 20e9
            row["sendrecv"] = alpha + b * beta
            rows.append(row)
    return rows


def write_allreduce(d: Path, rows: list[dict]) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "allreduce.json").write_text(json.dumps(rows))
    return d / "allreduce.json"
