#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""score-sweep.py: score hypothesis texts for each LM weight and insertion penalty (nnetmix/score/sweep.py)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli.script import ScriptUsage, script_main
from nnetmix.score.sweep import DEFAULT_HYP_PATTERN, lmwt_range, score_sweep

USAGE = """Usage: {prog} [options] <ref-text> <decode-dir>
 e.g.: {prog} --min-lmwt 7 --max-lmwt 17 data/test/text exp/mono/decode_test
Scores <decode-dir>/<hyp-pattern> for each LM weight and insertion penalty, writes
<decode-dir>/wer_LMWT_WIP and <decode-dir>/scoring_kaldi/best_wer, prints the best line.
Options:
  --min-lmwt <n>              # lowest LM weight (default: 7)
  --max-lmwt <n>              # highest LM weight (default: 17)
  --word-ins-penalty <list>   # comma-separated penalties (default: 0.0,0.5,1.0)
  --mode <present|all|strict> # compute-wer's --mode (default: present)
  --hyp-pattern <pattern>     # hypothesis texts under <decode-dir>
                              # (default: scoring_kaldi/penalty_{{wip}}/{{lmwt}}.txt)"""


def sweep(prog: str, argv) -> int:
    """The lattice-free part of local/score.sh, for hypothesis texts already written."""
    opts = {"min-lmwt": "7", "max-lmwt": "17", "word-ins-penalty": "0.0,0.5,1.0",
            "mode": "present", "hyp-pattern": DEFAULT_HYP_PATTERN}
    args = list(argv)
    while args and args[0].startswith("--"):
        name, eq, value = args.pop(0)[2:].partition("=")
        if name not in opts:
            raise ScriptUsage(f"invalid option --{name}")
        if not eq:
            if not args:
                raise ScriptUsage(f"option --{name} needs a value")
            value = args.pop(0)
        opts[name] = value
    if len(args) != 2:
        raise ScriptUsage("")
    try:
        lmwts = lmwt_range(int(opts["min-lmwt"]), int(opts["max-lmwt"]))
    except ValueError:
        raise ScriptUsage("--min-lmwt and --max-lmwt take integers") from None
    wips = [w for w in opts["word-ins-penalty"].split(",") if w]
    ref = args[0] if ":" in args[0] else f"ark:{args[0]}"
    results, best = score_sweep(ref, args[1], lmwts, wips, opts["hyp-pattern"], opts["mode"])
    print(f"{prog}: scored {len(results)} (LM weight, insertion penalty) pairs in {args[1]}")
    print(best)
    return 0


def main(argv=None) -> int:
    return script_main(sweep, USAGE, "score-sweep.py", argv)


if __name__ == "__main__":
    sys.exit(main())
