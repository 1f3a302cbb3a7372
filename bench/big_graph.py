#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""Build a 20,000-word trigram HCLG for bench/decode_speed.py (issue 18's graph (c)).

The graph is built against a finished harbour run's acoustic model (egs/harbour/s5: ARPAbet
phones from CMUdict, position-dependent), so that the benchmark decodes real speech frames of
the harbour test set. The run is only read: what the benchmark needs (the model, its tree, the
test set's features and CMVN, the dictionary) is copied into --work first, so that a rerun of the
recipe cannot change the inputs under the benchmark. Steps, each timed:

1. vocabulary: every word of the harbour dictionary, then words drawn at random (seeded) from
   CMUdict whose every pronunciation uses only the model's phones, up to --vocab-size words
   (a word with a phone the model lacks, e.g. ER0 when the run never saw it, would make
   prepare_lang's phones.txt differ from the model's); the dictionary directory written with
   nnetmix.lang.cmu, as local/prepare_dict.py does, and utils/prepare_lang.sh;
2. text: --gen-words words from a synthetic trigram source over the vocabulary (below), plus
   the harbour LM text (data/local/lm/train_text), so that the test sentences' n-grams exist;
3. LM: utils/train_lm.sh (interpolated modified Kneser-Ney, bin/ngram-count.py) with the count
   cut-offs of --cutoffs (SRILM's -gt2min/-gt3min, as Kaldi recipes prune with ngram-count),
   then utils/format_lm.sh for G.fst;
4. utils/mkgraph.sh; each bin/ tool the scripts run (ngram-count.py, arpa2fst.py, make-lg.py,
   fstcomposecontext.py, make-h-transducer.py, make-hclga.py, add-self-loops.py) is timed by
   /usr/bin/time (wall, CPU, peak resident memory) through wrappers that --work's path.sh puts
   first on PATH.

Nothing can be downloaded here, and no text corpus of this size ships with a PyPI package we
have, so the text is generated. The source is a fixed trigram model in the shape of natural
language: a Zipf-Mandelbrot unigram over the vocabulary (ranks shuffled, seeded); each one-word
history has its own 50 successors and each two-word history its own 10, drawn from the unigram
by hashing the history, with Zipfian weights among them; a word comes from the trigram
history's successors with probability 0.4, the bigram history's 0.35, the unigram 0.25.
So frequent words have many distinct successors and rare histories few, and new n-grams keep
appearing with more text, as in real text; the counts the LM sees follow from sampling it.

Writes under --work: data/local/dict_20k, data/lang_20k (with G.fst), data/local/lm_20k,
exp/<model>/graph_20k, timings.json; prints a table of the steps and tools (wall and CPU
seconds, peak memory) and of the FSTs' sizes (states, arcs, bytes).
Usage: nice -n 15 bench/big_graph.py [--harbour egs/harbour/s5]
           [--work bench/out/big_graph] [--exp exp/mono] [--vocab-size 20000]
           [--gen-words 2000000] [--cutoffs "-gt2min 1 -gt3min 2"]
then: nice -n 15 bench/decode_speed.py --recipe <work> --exp exp/mono --graph graph_20k
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from nnetmix.lang.cmu import cmudict_lexicon, load_cmudict, write_dict_dir  # noqa: E402

SILENCE_WORDS = {"!sil": "SIL", "<unk>": "SPN"}
_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--harbour", default=str(ROOT / "egs/harbour/s5"),
                   help="a finished egs/harbour/s5 run (read only)")
    p.add_argument("--work", default=str(ROOT / "bench/out/big_graph"),
                   help="output directory")
    p.add_argument("--exp", default="exp/mono", help="model directory inside --harbour "
                   "(exp/mono: kaldi-hmm-gmm's C++ decoder binds monophone trees only)")
    p.add_argument("--decode-dir", default="decode_test_tg", help="decode directory of --exp "
                   "whose feats.JOB.json (feature pipeline options) to copy")
    p.add_argument("--vocab-size", type=int, default=20000)
    p.add_argument("--gen-words", type=int, default=2000000, help="words of generated text")
    p.add_argument("--cutoffs", default="-gt2min 1 -gt3min 2",
                   help="ngram-count.py count cut-offs (SRILM syntax)")
    p.add_argument("--seed", type=int, default=20)
    p.add_argument("--stages", default="copy,dict,text,lm,graph")
    return p.parse_args()


def copy_inputs(harbour: Path, work: Path, exp: str, decode_dir: str) -> None:
    """The model, tree, feature options, test set (scp paths rewritten to the copies) and
    dictionary of the harbour run, copied into ``work``."""
    (work / exp / "decode_test").mkdir(parents=True, exist_ok=True)
    for f in ("final.mdl", "tree", "phones.txt", "cmvn_opts", "delta_opts"):
        if (harbour / exp / f).exists():
            shutil.copy(harbour / exp / f, work / exp / f)
    for f in (harbour / exp / decode_dir).glob("feats.*.json"):
        shutil.copy(f, work / exp / "decode_test" / f.name)
    for d in ("data/test", "data/local/dict", "data/lang"):
        shutil.rmtree(work / d, ignore_errors=True)
        shutil.copytree(harbour / d, work / d)
    shutil.copy(harbour / "data/local/lm/train_text", work / "data/local/harbour_lm_text")
    (work / "mfcc").mkdir(exist_ok=True)
    for f in (harbour / "mfcc").glob("*_test*.ark"):
        shutil.copy(f, work / "mfcc" / f.name)
    old, new = str(harbour / "mfcc"), str(work / "mfcc")
    for scp in (work / "data/test").rglob("*.scp"):
        text = scp.read_text()
        scp.write_text(text.replace(old, new))
    for name in ("steps", "utils"):
        link = work / name
        if not link.exists():
            link.symlink_to(ROOT / "egs/harbour/s5" / name)


def choose_vocabulary(work: Path, size: int, seed: int) -> list[str]:
    """The harbour dictionary's words, then CMUdict words whose phones the model has, drawn
    at random up to ``size``; writes data/local/dict_20k and returns the words (no !sil, <unk>)."""
    base = [ln.split()[0] for ln in open(work / "data/local/dict/lexicon.txt", encoding="utf-8")]
    base = sorted(set(base) - set(SILENCE_WORDS))
    phones = set()
    for ln in open(work / "data/local/dict/nonsilence_phones.txt", encoding="utf-8"):
        phones.update(ln.split())
    cmu = load_cmudict()
    ok = sorted(w for w, prons in cmu.items()
                if re.fullmatch(r"[a-z][a-z']*", w) and w not in base
                and all(p in phones for pron in prons for p in pron))
    rng = np.random.default_rng(seed)
    extra = rng.choice(len(ok), size=size - len(base), replace=False)
    words = base + sorted(ok[i] for i in extra)
    write_dict_dir(work / "data/local/dict_20k", cmudict_lexicon(words, cmu), SILENCE_WORDS,
                   optional_silence="SIL")
    for f in ("nonsilence_phones.txt", "silence_phones.txt"):
        if ((work / "data/local/dict_20k" / f).read_text()
                != (work / "data/local/dict" / f).read_text()):
            sys.exit(f"big_graph.py: data/local/dict_20k/{f} differs from the model's dictionary")
    print(f"vocabulary: {len(base)} harbour words + {len(words) - len(base)} CMUdict words "
          f"(of {len(ok)} whose phones the model has)")
    return words


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: a well-spread 64-bit hash of each element."""
    with np.errstate(over="ignore"):
        x = (x + np.uint64(0x9E3779B97F4A7C15)) & _M64
        x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _M64
        x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _M64
        return x ^ (x >> np.uint64(31))


def _uniform(h: np.ndarray) -> np.ndarray:
    return (h >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def generate_text(words: list[str], num_words: int, seed: int, out: Path,
                  mean_len: float = 15.0, batch: int = 20000) -> int:
    """Sentences from the synthetic trigram source of the module docstring, as a Kaldi text
    file (ids gen-000000001...); returns the number of words written."""
    rng = np.random.default_rng(seed)
    v = len(words)
    rank = rng.permutation(v)                   # rank[i]: the word of unigram rank i
    p1 = 1.0 / (np.arange(v) + 2.7)
    cdf1 = np.cumsum(p1 / p1.sum())
    cdf1[-1] = 1.0

    def zipf_cdf(k):
        p = 1.0 / (np.arange(k) + 1.0) ** 1.1
        c = np.cumsum(p / p.sum())
        c[-1] = 1.0
        return c
    cdf2, cdf3 = zipf_cdf(50), zipf_cdf(10)
    lam3, lam2 = 0.4, 0.35
    bos = np.uint64(v)
    written, n_sent = 0, 0
    tmp = str(out) + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        while written < num_words:
            lens = np.minimum(rng.geometric(1.0 / mean_len, size=batch), 60)
            tmax = int(lens.max())
            toks = np.zeros((batch, tmax), dtype=np.int64)
            h2 = np.full(batch, bos, dtype=np.uint64)
            h1 = np.full(batch, bos, dtype=np.uint64)
            for t in range(tmax):
                comp = rng.random(batch)
                j3 = np.searchsorted(cdf3, rng.random(batch)).astype(np.uint64)
                j2 = np.searchsorted(cdf2, rng.random(batch)).astype(np.uint64)
                k3 = _mix(_mix(_mix(h2) ^ h1) ^ j3)
                k2 = _mix(_mix(h1 + np.uint64(1 << 40)) ^ j2)
                u = np.where(comp < lam3, _uniform(k3),
                             np.where(comp < lam3 + lam2, _uniform(k2), rng.random(batch)))
                w = np.searchsorted(cdf1, u)
                toks[:, t] = w
                h2, h1 = h1, w.astype(np.uint64)
            for i in range(batch):
                n_sent += 1
                sent = " ".join(words[rank[w]] for w in toks[i, :lens[i]])
                fh.write(f"gen-{n_sent:09d} {sent}\n")
                written += int(lens[i])
                if written >= num_words:
                    break
    os.replace(tmp, out)
    return written


TIMED_TOOLS = ("ngram-count.py", "arpa2fst.py", "check-g-properties.py", "make-lg.py",
               "fstcomposecontext.py", "make-h-transducer.py", "make-hclga.py",
               "add-self-loops.py")


class StepTimer:
    """Runs recipe scripts from ``work`` with each bin/ tool of TIMED_TOOLS wrapped in
    /usr/bin/time (work/path.sh puts the wrappers first on PATH), so that every tool the scripts
    call reports its wall seconds, CPU seconds and peak resident memory: on a shared machine the
    CPU seconds are the figure that does not move with the load."""

    def __init__(self, work: Path):
        self.work = work
        self.log = work / "tool_times.txt"
        self.rows: list[tuple[str, float, float, float]] = []   # name, wall, cpu, MiB
        wrap = work / "timed-bin"
        wrap.mkdir(exist_ok=True)
        for tool in TIMED_TOOLS:
            f = wrap / tool
            f.write_text("#!/usr/bin/env bash\n"
                         f"exec /usr/bin/time -a -o {self.log} -f '{tool} %e %U %S %M' "
                         f"{ROOT}/bin/{tool} \"$@\"\n")
            f.chmod(0o755)
        (work / "path.sh").unlink(missing_ok=True)
        (work / "path.sh").write_text(f". {ROOT}/egs/harbour/s5/path.sh\n"
                                      f"export PATH={wrap}:$PATH\n")

    def run(self, name: str, cmd: str) -> str:
        self.log.unlink(missing_ok=True)
        t0 = time.perf_counter()
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(["bash", "-c", f". ./path.sh; {cmd}"], cwd=self.work,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wall = time.perf_counter() - t0
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            sys.exit(f"big_graph.py: {name} failed (exit {proc.returncode}):\n"
                     f"{proc.stdout[-3000:]}")
        cpu = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
        tools = []
        if self.log.exists():
            for ln in self.log.read_text().splitlines():
                f = ln.split()
                if len(f) == 5 and f[0] in TIMED_TOOLS:
                    tools.append((f"  {f[0]}", float(f[1]), float(f[2]) + float(f[3]),
                                  int(f[4]) / 1024))
        peak = max((t[3] for t in tools), default=float("nan"))
        self.rows.append((name, wall, cpu, peak))
        self.rows += tools
        return proc.stdout


def fst_size(path: Path) -> tuple[int, int, int]:
    import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst (importing kaldifst first can hang)
    import kaldifst
    fst = kaldifst.StdVectorFst.read(str(path))
    arcs = sum(fst.num_arcs(s) for s in range(fst.num_states))
    return fst.num_states, arcs, path.stat().st_size


def main() -> int:
    args = get_args()
    harbour, work = Path(args.harbour).resolve(), Path(args.work).resolve()
    stages = args.stages.split(",")
    work.mkdir(parents=True, exist_ok=True)
    timer = StepTimer(work)
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    if "copy" in stages:
        copy_inputs(harbour, work, args.exp, args.decode_dir)
    lm_dir = work / "data/local/lm_20k"
    if "dict" in stages:
        t0 = time.perf_counter()
        choose_vocabulary(work, args.vocab_size, args.seed)
        dt = time.perf_counter() - t0
        timer.rows.append(("vocabulary + dictionary", dt, dt, float("nan")))
        timer.run("prepare_lang.sh", "utils/prepare_lang.sh data/local/dict_20k '<unk>' "
                  "data/local/lang_20k data/lang_20k_nog")
        a = (work / "data/lang/phones.txt").read_text().split("\n")
        b = (work / "data/lang_20k_nog/phones.txt").read_text().split("\n")
        real = [ln for ln in a if ln and not ln.startswith("#")]
        if b[:len(real)] != real:
            sys.exit("big_graph.py: data/lang_20k_nog/phones.txt's phones differ from the model's")
    if "text" in stages:
        lm_dir.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        words = [ln.split()[0] for ln in open(work / "data/lang_20k_nog/words.txt")]
        words = [w for w in words if w not in ("<eps>", "!sil", "<unk>", "<s>", "</s>")
                 and not w.startswith("#")]
        n = generate_text(words, args.gen_words, args.seed, lm_dir / "gen_text")
        with open(lm_dir / "text.tmp", "w") as out:
            for f in (lm_dir / "gen_text", work / "data/local/harbour_lm_text"):
                out.write(open(f).read())
        os.replace(lm_dir / "text.tmp", lm_dir / "text")
        dt = time.perf_counter() - t0
        timer.rows.append((f"text ({n} generated words)", dt, dt, float("nan")))
    if "lm" in stages:
        timer.run("LM (train_lm.sh)", f"utils/train_lm.sh --order 3 --ngram-count-opts "
                  f"'{args.cutoffs}' --heldout data/test/text data/local/lm_20k/text "
                  "data/lang_20k_nog data/local/lm_20k")
        timer.run("G (format_lm.sh)", "utils/format_lm.sh data/lang_20k_nog "
                  "data/local/lm_20k/lm.arpa.gz data/local/dict_20k/lexicon.txt data/lang_20k")
    if "graph" in stages:
        graph = f"{args.exp}/graph_20k"
        # mkgraph.sh reuses data/lang_20k/tmp/LG.fst (and CLG) when newer than G and L, as
        # Kaldi's: a second model's graph then times only the steps it runs
        shutil.rmtree(work / graph, ignore_errors=True)
        timer.run("HCLG (mkgraph.sh)", f"utils/mkgraph.sh data/lang_20k {args.exp} {graph}")
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end; peak RSS of any child "
          f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB")
    print("| step (tools it ran) | wall s | CPU s | peak RSS (MiB) |\n| --- | --- | --- | --- |")
    for name, w, c, m in timer.rows:
        print(f"| {name} | {w:.1f} | {c:.1f} | {'' if m != m else f'{m:.0f}'} |")
    sizes = {}
    print("\n| FST | states | arcs | bytes |\n| --- | --- | --- | --- |")
    for name, path in (("G", "data/lang_20k/G.fst"), ("LG", "data/lang_20k/tmp/LG.fst"),
                       ("CLG", max((work / "data/lang_20k/tmp").glob("CLG_*.fst"),
                                   key=os.path.getmtime, default="CLG_absent")),   # this model's
                       ("HCLG", f"{args.exp}/graph_20k/HCLG.fst")):
        if (work / path).exists():
            sizes[name] = fst_size(work / path)
            print(f"| {name} | {sizes[name][0]} | {sizes[name][1]} | {sizes[name][2]} |")
    with open(work / "timings.json.tmp", "w") as fh:
        json.dump({"steps": timer.rows, "sizes": sizes, "args": vars(args)}, fh, indent=1)
    os.replace(work / "timings.json.tmp", work / "timings.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
