"""Command lines of the scoring helpers: ``python3 -m nnetmix.score.cli <command> <prog> [args]``.

``best_wer`` is utils/best_wer.sh (WER lines on stdin, the best on stdout). ``score_sweep`` is the
lattice-free part of local/score.sh: score per-(LM weight, insertion penalty) hypothesis texts,
write ``wer_LMWT_WIP`` files and the best line. A user mistake prints one ``prog: ...`` line.
"""
from __future__ import annotations

import sys
from typing import Sequence

from nnetmix.script_cli import Commands, ScriptUsage, dispatch

__all__ = ["main", "run", "COMMANDS"]



def best_wer_cmd(prog: str, argv: Sequence[str]) -> int:
    from nnetmix.score.best import best_wer_line

    if argv:
        raise ScriptUsage("")
    best = best_wer_line(sys.stdin)
    if best is not None:
        print(best)
    return 0


def score_sweep_cmd(prog: str, argv: Sequence[str]) -> int:
    from nnetmix.score.sweep import DEFAULT_HYP_PATTERN, lmwt_range, score_sweep

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


_BEST_USAGE = """Usage: {prog} < <wer-lines>
 e.g.: grep WER exp/tri1/decode/wer_* | {prog}
Prints the line with the lowest %WER, the file name moved to the end."""
_SWEEP_USAGE = """Usage: {prog} [options] <ref-text> <decode-dir>
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

COMMANDS: Commands = {
    "best_wer": (best_wer_cmd, _BEST_USAGE),
    "score_sweep": (score_sweep_cmd, _SWEEP_USAGE),
}



def run(command: str, prog: str, argv: Sequence[str]) -> int:
    """Run one command (the utils/*.pl entry points call this)."""
    return dispatch(COMMANDS, __name__, [command, prog, *argv])


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 -m nnetmix.score.cli <command> <prog> [args...]``."""
    return dispatch(COMMANDS, __name__, argv)


if __name__ == "__main__":
    sys.exit(main())
