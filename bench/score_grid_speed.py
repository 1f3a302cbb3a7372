#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""CPU time of local/score.sh's best-path stage: the three-tool pipeline per grid point against
lattice-best-path-grid.py per word insertion penalty (issue 36).

For a decode directory's lat.*.gz and its graph's words.txt, runs one after the other:
"pipeline", for each (LMWT, WIP) ``lattice-scale.py --inv-acoustic-scale=LMWT | lattice-add-
penalty.py --word-ins-penalty=WIP | lattice-best-path.py | utils/int2sym.pl -f 2-`` (what
score.sh ran before), and "grid", for each WIP one ``lattice-best-path-grid.py`` (what it runs
now); the CPU seconds (user + system) of all child processes, the wall seconds, and a check
that both wrote the same bytes for every grid point. The machine may be shared: the load
average before and after is printed; read the ratio more than the seconds.
Usage: bench/score_grid_speed.py [--decode-dir egs/digits/s5/exp/mono/decode_test]
          [--graph egs/digits/s5/exp/mono/graph] [--min-lmwt 7] [--max-lmwt 17]
          [--word-ins-penalty 0.0,0.5,1.0] [--repeat 1]
"""
from __future__ import annotations

import argparse
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--decode-dir", default=str(ROOT / "egs/digits/s5/exp/mono/decode_test"),
                   help="directory with lat.*.gz")
    p.add_argument("--graph", default=str(ROOT / "egs/digits/s5/exp/mono/graph"),
                   help="directory with words.txt")
    p.add_argument("--min-lmwt", type=int, default=7)
    p.add_argument("--max-lmwt", type=int, default=17)
    p.add_argument("--word-ins-penalty", default="0.0,0.5,1.0")
    p.add_argument("--repeat", type=int, default=1, help="runs of each method (the median)")
    return p.parse_args()


def timed(commands: list[str]) -> tuple[float, float]:
    """(CPU seconds of the children, wall seconds) of running the bash commands in turn."""
    env = dict(os.environ, PATH=f"{ROOT / 'bin'}:{ROOT / 'utils'}:{Path(sys.executable).parent}:"
               + os.environ.get("PATH", ""), LC_ALL="C")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    for cmd in commands:
        subprocess.run(["bash", "-c", "set -o pipefail; " + cmd], env=env, check=True,
                       stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime), wall


def main() -> int:
    args = get_args()
    lats = f"ark:gunzip -c {Path(args.decode_dir).resolve()}/lat.*.gz|"
    words = str(Path(args.graph).resolve() / "words.txt")
    lmwts = range(args.min_lmwt, args.max_lmwt + 1)
    wips = args.word_ins_penalty.split(",")
    q = shlex.quote
    with tempfile.TemporaryDirectory() as tmp:
        old, new = Path(tmp, "pipeline"), Path(tmp, "grid")
        old.mkdir(), new.mkdir()
        pipeline = [f"lattice-scale.py --inv-acoustic-scale={lmwt} {q(lats)} ark:- | "
                    f"lattice-add-penalty.py --word-ins-penalty={wip} ark:- ark:- | "
                    f"lattice-best-path.py --word-symbol-table={q(words)} ark:- ark,t:- | "
                    f"int2sym.pl -f 2- {q(words)} > {q(str(old))}/{lmwt}.{wip}.tra"
                    for lmwt in lmwts for wip in wips]
        grid = [f"lattice-best-path-grid.py --min-lmwt={args.min_lmwt} "
                f"--max-lmwt={args.max_lmwt} --word-ins-penalty={wip} "
                f"--word-symbol-table={q(words)} {q(lats)} {q(str(new))}/LMWT.WIP.tra"
                for wip in wips]
        load0 = os.getloadavg()
        runs: dict[str, list[tuple[float, float]]] = {"pipeline": [], "grid": []}
        for _ in range(args.repeat):  # interleaved, so both see the same machine
            runs["pipeline"].append(timed(pipeline))
            runs["grid"].append(timed(grid))
        load1 = os.getloadavg()
        files = sorted(p.name for p in old.iterdir())
        same = sum((old / f).read_bytes() == (new / f).read_bytes() for f in files)
        assert sorted(p.name for p in new.iterdir()) == files, "the two wrote different files"
    med = {k: sorted(v)[len(v) // 2] for k, v in runs.items()}
    print(f"Machine: {os.cpu_count()} CPUs; load average {' '.join(f'{x:.2f}' for x in load0)}"
          f" -> {' '.join(f'{x:.2f}' for x in load1)}")
    print(f"{args.decode_dir}: LMWT {args.min_lmwt}..{args.max_lmwt} x WIP "
          f"{args.word_ins_penalty} = {len(files)} grid points; median of {args.repeat}\n")
    print("| method | processes | CPU s (user+sys) | wall s |")
    print("|---|---:|---:|---:|")
    print(f"| pipeline | {4 * len(pipeline)} | {med['pipeline'][0]:.2f} | {med['pipeline'][1]:.2f} |")
    print(f"| grid | {len(grid)} | {med['grid'][0]:.2f} | {med['grid'][1]:.2f} |")
    print(f"\nCPU pipeline / grid: {med['pipeline'][0] / med['grid'][0]:.1f}; "
          f"identical files: {same} of {len(files)}")
    return 0 if same == len(files) else 1


if __name__ == "__main__":
    sys.exit(main())
