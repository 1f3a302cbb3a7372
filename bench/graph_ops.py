#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""CPU seconds of each operation of make-lg.py and make-hclga.py on bench/big_graph.py's graph.

mkgraph.sh's tools time a whole step; this splits LG (composition, determinization, encoded
minimization, fstpushspecial) and HCLGa (composition, determinization, fstrmsymbols, epsilon
removal, encoded minimization) into the OpenFst operations and the two written here
(nnetmix/decode/graph.py), to tell which bounds the build. Run after bench/big_graph.py; H is
made again with make-h-transducer.py into --work/graph_ops (mkgraph.sh deletes its Ha.fst).
Usage: nice -n 15 bench/graph_ops.py [--work bench/out/big_graph] [--exp exp/mono]
"""
from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import kaldi_hmm_gmm  # noqa: E402,F401,I001 -- before kaldifst (importing kaldifst first can hang)
import kaldifst  # noqa: E402

from nnetmix.decode import graph  # noqa: E402
from nnetmix.decode.graph import read_int_list  # noqa: E402
from nnetmix.decode.mkgraph import tree_info  # noqa: E402


def timed(label, fn):
    c, w = time.process_time(), time.perf_counter()
    out = fn()
    print(f"| {label} | {time.process_time() - c:.1f} | {time.perf_counter() - w:.1f} | "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} |", flush=True)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", default=str(ROOT / "bench/out/big_graph"))
    p.add_argument("--exp", default="exp/mono")
    args = p.parse_args()
    w = Path(args.work)
    lang, tmp = w / "data/lang_20k", w / "data/lang_20k/tmp"
    out = w / "graph_ops"
    out.mkdir(exist_ok=True)
    info = tree_info(str(w / args.exp / "tree"))
    n_p = f"{info['context-width']}_{info['central-position']}"
    clg, ilabels = tmp / f"CLG_{n_p}.fst", tmp / f"ilabels_{n_p}"
    subprocess.run(["bash", "-c", f". ./path.sh; make-h-transducer.py --print-args=false "
                    f"--disambig-syms-out={out}/disambig_tid.int {ilabels} {args.exp}/tree "
                    f"{args.exp}/final.mdl {out}/Ha.fst"], cwd=w, check=True)
    print("| operation | CPU s | wall s | peak RSS of this process (MiB) |\n| --- | --- | --- | --- |")
    L = kaldifst.StdVectorFst.read(str(lang / "L_disambig.fst"))
    G = kaldifst.StdVectorFst.read(str(lang / "G.fst"))
    kaldifst.arcsort(L, "olabel")
    lg = timed("LG: composition", lambda: kaldifst.compose(L, G))
    timed("LG: determinization (log)", lambda: kaldifst.determinize_star(lg, use_log=True))
    timed("LG: encoded minimization", lambda: kaldifst.minimize_encoded(lg))
    timed("LG: fstpushspecial (ours)", lambda: graph.push_special(lg))
    del lg
    H = kaldifst.StdVectorFst.read(str(out / "Ha.fst"))
    kaldifst.arcsort(H, "olabel")
    CLG = kaldifst.StdVectorFst.read(str(clg))
    x = timed("HCLGa: composition", lambda: kaldifst.compose(H, CLG))
    timed("HCLGa: determinization (log)", lambda: kaldifst.determinize_star(x, use_log=True))
    dis = read_int_list(str(out / "disambig_tid.int"))
    x = timed("HCLGa: fstrmsymbols (ours)", lambda: graph.relabel(x, dis))
    timed("HCLGa: epsilon removal", lambda: kaldifst.rmepsilon(x))
    timed("HCLGa: encoded minimization", lambda: kaldifst.minimize_encoded(x))
    print(f"HCLGa: {x.num_states} states")
    return 0


if __name__ == "__main__":
    sys.exit(main())
