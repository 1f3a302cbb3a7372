"""Command lines behind the Switchboard recipe's local/ scripts and utils/data/remove_dup_utts.sh.

``python3 -m nnetmix.recipes.cli <command> <prog> [args...]``: ``prog`` is the calling script's
``$0``, so lines start with the name the user typed. Progress goes to stdout, warnings to stderr
(``prog: WARNING: ...``); a user mistake is one ``prog: ...`` line and exit code 1.
"""
from __future__ import annotations

import sys
from typing import Sequence

from nnetmix.data.io import ENCODING, read_entries, write_lines
from nnetmix.errors import UsageError
from nnetmix.script_cli import Commands, ScriptUsage, dispatch, parse_script_options

__all__ = ["main", "COMMANDS"]


def _say(prog: str, msg: str) -> None:
    print(f"{prog}: {msg}", flush=True)


def _warn(prog: str, lines: Sequence[str]) -> None:
    for line in lines:
        print(f"{prog}: {line}", file=sys.stderr, flush=True)


def _report(prog: str, data: str, rep) -> None:
    _warn(prog, rep.warnings)
    for m in rep.messages:
        _say(prog, m)
    _say(prog, f"done, {data}: {rep.utterances} utterances, {rep.recordings} recordings "
               f"(conversation sides, one speaker each)")


SWBD_USAGE = """\
Usage: {prog} [--sph2pipe <cmd>] <swbd-dir> <ms98-transcript-dir> <data-dir> <local-dir>
Switchboard-1 Release 2 (LDC97S62) training data: <data-dir> (wav.scp, segments, text, utt2spk,
spk2utt, reco2file_and_channel) and <local-dir>/text (all transcribed utterances, for the LM).
 e.g.: {prog} /export/corpora3/LDC/LDC97S62 \\
         /export/corpora3/LDC/LDC97S62/transcriptions/swb_ms98_transcriptions data/train data/local/train
  --sph2pipe <cmd>   # the sph2pipe command written into wav.scp (default: sph2pipe)"""


def swbd_cmd(prog: str, argv: Sequence[str]) -> int:
    from nnetmix.recipes.swbd_train import prepare_swbd_train

    opts, args = parse_script_options(argv, [], {"sph2pipe": "sph2pipe"}, (4, 4))
    rep = prepare_swbd_train(*args, sph2pipe=str(opts["sph2pipe"]))
    _report(prog, args[2], rep)
    return 0


DICT_USAGE = """\
Usage: {prog} <sw-ms98-dict.text> <dict-dir>
The Switchboard dictionary directory (lexicon.txt, silence/nonsilence/optional-silence phones,
extra_questions.txt) from the MS-State ms98 lexicon.
 e.g.: {prog} /export/corpora3/LDC/LDC97S62/transcriptions/swb_ms98_transcriptions/sw-ms98-dict.text data/local/dict_nosp"""


def dict_cmd(prog: str, argv: Sequence[str]) -> int:
    from nnetmix.recipes.swbd_dict import prepare_swbd_dict

    _, args = parse_script_options(argv, [], {}, (2, 2))
    rep = prepare_swbd_dict(*args)
    _warn(prog, rep.warnings)
    _say(prog, f"done, {args[1]}: {rep.words} words, {rep.prons} pronunciations, "
               f"{rep.phones} phones")
    return 0


EVAL_USAGE = """\
Usage: {prog} [--sph2pipe <cmd>] <speech-dir> <transcript-dir> <data-dir>
Hub5'00 (eval2000): <speech-dir> is LDC2002S09's hub5e_00 (english/*.sph, english/hub5e_00.pem),
<transcript-dir> is LDC2002T43 or its 2000_hub5_eng_eval_tr (reference/*.stm, *.glm).
 e.g.: {prog} /export/corpora2/LDC/LDC2002S09/hub5e_00 /export/corpora2/LDC/LDC2002T43 data/eval2000
  --sph2pipe <cmd>   # the sph2pipe command written into wav.scp (default: sph2pipe)"""


def eval_cmd(prog: str, argv: Sequence[str]) -> int:
    from nnetmix.recipes.eval2000 import prepare_eval2000

    opts, args = parse_script_options(argv, [], {"sph2pipe": "sph2pipe"}, (3, 3))
    rep = prepare_eval2000(*args, sph2pipe=str(opts["sph2pipe"]))
    _report(prog, args[2], rep)
    return 0


DUP_USAGE = """\
Usage: {prog} <max-count> <src-data-dir> <dest-data-dir>
Keeps at most about <max-count> utterances of any one transcript (Kaldi's deterministic rule,
see nnetmix/recipes/dedup.py), e.g. to thin out "uh-huh" in Switchboard.
 e.g.: {prog} 300 data/train_nodev data/train_nodup"""


def dup_cmd(prog: str, argv: Sequence[str]) -> int:
    from nnetmix.data.filter import filter_data_dir
    from nnetmix.recipes.dedup import select_dup_limited

    _, args = parse_script_options(argv, [], {}, (3, 3))
    try:
        max_count = int(args[0])
    except ValueError:
        raise UsageError(f"invalid max-count '{args[0]}' (an integer > 1)") from None
    src, dest = args[1], args[2]
    entries = read_entries(f"{src}/text")
    keep = select_dup_limited(((e.key, e.value) for e in entries), max_count)
    kept = filter_data_dir(src, dest, keep)
    _say(prog, f"Reduced number of utterances from {len(entries)} to {kept}")
    return 0


FILTER_USAGE = """\
Usage: {prog} <glm> <in-text> <out-text> [<in-text> <out-text> ...]
Writes each Kaldi text file (utt-id words...) in the hub5 scoring normal form: GLM mappings,
optionally deletable words, hesitations, noise words and partial words removed
(nnetmix/recipes/hub5_score.py). Utterances left without words are kept, empty.
 e.g.: {prog} data/eval2000/glm data/eval2000/text exp/dnn/decode/scoring_hub5/ref.txt"""


def filter_cmd(prog: str, argv: Sequence[str]) -> int:
    from nnetmix.recipes.hub5_score import hub5_filter, read_glm

    _, args = parse_script_options(argv, [], {}, (3, 1 << 30))
    if len(args) % 2 != 1:
        raise ScriptUsage("give the GLM and then pairs of <in-text> <out-text>")
    glm = read_glm(args[0])
    for src, dst in zip(args[1::2], args[2::2]):
        lines = []
        with open(src, **ENCODING) as fh:
            for line in fh:
                f = line.split()
                if f:
                    lines.append(" ".join([f[0]] + hub5_filter(f[1:], glm)))
        write_lines(dst, lines)
    return 0


COMMANDS: Commands = {
    "swbd1_data_prep": (swbd_cmd, SWBD_USAGE),
    "swbd1_prepare_dict": (dict_cmd, DICT_USAGE),
    "eval2000_data_prep": (eval_cmd, EVAL_USAGE),
    "remove_dup_utts": (dup_cmd, DUP_USAGE),
    "hub5_filter": (filter_cmd, FILTER_USAGE),
}


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 -m nnetmix.recipes.cli <command> <prog> [args...]``."""
    return dispatch(COMMANDS, __name__, argv)


if __name__ == "__main__":
    sys.exit(main())
