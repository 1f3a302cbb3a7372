"""Command lines of the data-directory scripts in utils/, which hand their arguments here.

``python3 -m nnetmix.data.cli <command> <prog> [args...]``: ``prog`` is the script's ``$0``,
so messages start with the name the user typed (``utils/validate_data_dir.sh: ...``) as Kaldi's
``echo "$0: ..."`` lines do. Options follow each Kaldi script: switches such as ``--no-feats``
stand alone, valued options are ``--name value``, all before the positional arguments. A user
mistake prints one ``prog: ...`` line (plus a partial diff where two key lists differ) on stderr
and exits 1; it never prints a traceback. Progress and success lines go to stdout.
"""
from __future__ import annotations

import sys
from typing import Sequence, TextIO

from nnetmix.data.fix import fix_data_dir
from nnetmix.data.io import (ENCODING, read_entries, read_key_list, split_fields,
                             utt2spk_to_spk2utt)
from nnetmix.data.split import split_data
from nnetmix.data.subset import subset_data_dir
from nnetmix.data.tr_cv import subset_tr_cv
from nnetmix.data.validate import ValidateOptions, validate_data_dir
from nnetmix.script_cli import Commands, ScriptUsage, dispatch, parse_script_options
from nnetmix.errors import UsageError

__all__ = ["main", "COMMANDS"]



def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{what} must be an integer, got '{text}'") from None


def _float(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"{what} must be a number, got '{text}'") from None


def _say(prog: str, msg: str) -> None:
    print(f"{prog}: {msg}", flush=True)


# ---------------------------------------------------------------------------- commands

VALIDATE_USAGE = """\
Usage: {prog} [--no-feats] [--no-text] [--no-wav] [--no-spk-sort] [--non-print] <data-dir>
Checks that a data directory is sorted and consistent (see nnetmix/data/validate.py).
The --no-xxx options mean that xxx need not be present; it is still checked if it is.
 e.g.: {prog} --no-feats data/train
  --no-feats     # feats.scp may be absent
  --no-text      # text may be absent (e.g. test data without transcripts)
  --no-wav       # wav.scp may be absent
  --no-spk-sort  # utt2spk need not also be sorted by speaker (speaker-ids prefixes of utt-ids)
  --non-print    # allow non-printable characters and invalid UTF-8 in text"""


def validate_cmd(prog: str, argv: Sequence[str]) -> int:
    opts, args = parse_script_options(argv, ["no-feats", "no-text", "no-wav", "no-spk-sort", "non-print"], {},
                        (1, 1))
    vopts = ValidateOptions(**{k.replace("-", "_"): v for k, v in opts.items()})
    for w in validate_data_dir(args[0], vopts):
        print(f"{prog}: {w}", file=sys.stderr)
    _say(prog, f"Successfully validated data-directory {args[0]}")
    return 0


FIX_USAGE = """\
Usage: {prog} [--utt-extra-files "<f1> <f2>"] [--spk-extra-files "<f1>"] <data-dir>
Sorts every file of a data directory and keeps only the utterances present in all of them
(those missing features, text, audio or a speaker's cmvn are dropped); originals go to
<data-dir>/.backup.
 e.g.: {prog} data/train"""


def fix_cmd(prog: str, argv: Sequence[str]) -> int:
    opts, args = parse_script_options(argv, [], {"utt-extra-files": "", "spk-extra-files": ""}, (1, 1))
    data = args[0]
    report = fix_data_dir(data, extra_utt_files=str(opts["utt-extra-files"]).split(),
                          extra_spk_files=str(opts["spk-extra-files"]).split())
    for m in report.messages:
        _say(prog, m)
    if report.kept != report.total:
        _say(prog, f"kept {report.kept} utterances out of {report.total}")
    else:
        _say(prog, f"kept all {report.total} utterances.")
    _say(prog, f"old files are kept in {data}/.backup")
    return 0


SPLIT_USAGE = """\
Usage: {prog} [--per-utt] <data-dir> <num-to-split>
Writes <data-dir>/split<N>/{{1..N}} (split<N>utt with --per-utt), each a complete data directory.
By default each speaker goes to exactly one part and parts are balanced by utterance count;
--per-utt ignores speakers. Nothing is done when the split is newer than the data directory.
 e.g.: {prog} data/train 4"""


def split_cmd(prog: str, argv: Sequence[str]) -> int:
    opts, args = parse_script_options(argv, ["per-utt"], {}, (2, 2))
    n = _int(args[1], "<num-to-split>")
    out, written = split_data(args[0], n, per_utt=bool(opts["per-utt"]))
    if written:
        sizes = [len(read_entries(out / str(k) / "utt2spk")) for k in range(1, n + 1)]
        _say(prog, f"split {args[0]} into {n} parts in {out} "
                   f"(utterances per part: min {min(sizes)}, max {max(sizes)})")
    else:
        _say(prog, f"{out} is up to date, skipping")
    return 0


SUBSET_USAGE = """\
Usage: {prog} [--speakers|--shortest|--first|--last|--per-spk] <srcdir> <num-utt> <destdir>
   or: {prog} [--spk-list <speaker-list-file>|--utt-list <utterance-list-file>] <srcdir> <destdir>
By default selects <num-utt> utterances spread evenly through the data (deterministic).
  --speakers   # whole speakers, shuffled with --seed, until there are <num-utt> utterances
  --per-spk    # <num-utt> utterances per speaker, where available
  --first      # the first <num-utt> utterances
  --last       # the last <num-utt> utterances
  --shortest   # the <num-utt> shortest utterances (utt2num_frames, utt2dur, segments or feats)
  --spk-list   # the speakers listed in the file
  --utt-list   # the utterances listed in the file
  --seed <n>   # seed of the --speakers shuffle (default 777)
 e.g.: {prog} --first data/train 1000 data/train_1k"""


def subset_cmd(prog: str, argv: Sequence[str]) -> int:
    modes = ["speakers", "shortest", "first", "last", "per-spk"]
    opts, args = parse_script_options(argv, modes, {"spk-list": None, "utt-list": None, "seed": "777"}, (2, 3))
    chosen = [m for m in modes if opts[m]]
    lists = [k for k in ("spk-list", "utt-list") if opts[k] is not None]
    if len(chosen) + len(lists) > 1:
        raise ScriptUsage("the subset options exclude each other; give one")
    seed = _int(str(opts["seed"]), "--seed")
    if lists:
        if len(args) != 2:
            raise ScriptUsage("")
        src, dest = args
        kept, total = subset_data_dir(src, dest, spk_list=opts["spk-list"],
                                      utt_list=opts["utt-list"], seed=seed)
    else:
        if len(args) != 3:
            raise ScriptUsage("")
        # Kaldi's order is <srcdir> <num-utt> <destdir>; "--first N <src> <dest>" also works
        if not args[1].lstrip("-").isdigit() and args[0].isdigit():
            args = [args[1], args[0], args[2]]
        src, num, dest = args[0], _int(args[1], "<num-utt>"), args[2]
        kept, total = subset_data_dir(src, dest, num, mode=chosen[0] if chosen else "spread",
                                      seed=seed)
    _say(prog, f"reducing #utt from {total} to {kept}")
    return 0


TR_CV_USAGE = """\
Usage: {prog} [--cv-spk-percent P|--cv-utt-percent P] [--seed S] <srcdir> <traindir> <crossvaldir>
Splits a data directory into training and held-out (cross-validation) parts.
  --cv-spk-percent P  # P% of the speakers (at least one, shuffled with --seed) go to CV;
                      # the default, with P=10
  --cv-utt-percent P  # the last P% of the utterances go to CV, moved to a speaker boundary
  --seed S            # seed of the speaker shuffle (default 777)
 e.g.: {prog} data/train data/train_tr90 data/train_cv10"""


def tr_cv_cmd(prog: str, argv: Sequence[str]) -> int:
    opts, args = parse_script_options(argv, [], {"cv-spk-percent": None, "cv-utt-percent": None,
                                   "seed": "777"}, (3, 3))
    spk = opts["cv-spk-percent"]
    utt = opts["cv-utt-percent"]
    src, tr, cv = args
    print(f"{prog} {' '.join(argv)}", flush=True)
    n_tr, n_cv = subset_tr_cv(
        src, tr, cv, seed=_int(str(opts["seed"]), "--seed"),
        cv_spk_percent=None if spk is None else _float(str(spk), "--cv-spk-percent"),
        cv_utt_percent=None if utt is None else _float(str(utt), "--cv-utt-percent"))
    _say(prog, f"{n_tr} utterances for training in {tr}, {n_cv} for cross-validation in {cv}")
    return 0


def _open_inputs(args: Sequence[str]) -> TextIO:
    if not args or args == ["-"]:
        return open(sys.stdin.fileno(), closefd=False, **ENCODING)
    return open(args[0], **ENCODING)


def _stdout() -> TextIO:
    return open(sys.stdout.fileno(), "w", closefd=False, **ENCODING)


U2S_USAGE = """\
Usage: {prog} [<utt2spk>] > <spk2utt>
Reads utt2spk (a file, or stdin) and writes spk2utt: speakers in order of first appearance."""


def utt2spk_to_spk2utt_cmd(prog: str, argv: Sequence[str]) -> int:
    _, args = parse_script_options(argv, [], {}, (0, 1))
    pairs = []
    with _open_inputs(args) as fh:
        for n, line in enumerate(fh, 1):
            f = split_fields(line.rstrip("\r\n"))
            if not f:
                continue
            if len(f) != 2:
                raise UsageError(f"{args[0] if args else 'stdin'}:{n}: expected <utterance> "
                                 f"<speaker>, got '{line.strip()}'")
            pairs.append((f[0], f[1]))
    with _stdout() as out:
        for spk, utts in utt2spk_to_spk2utt(pairs, sort=False).items():
            out.write(f"{spk} {' '.join(utts)}\n")
    return 0


S2U_USAGE = """\
Usage: {prog} [<spk2utt>] > <utt2spk>
Reads spk2utt (a file, or stdin) and writes utt2spk in the same order."""


def spk2utt_to_utt2spk_cmd(prog: str, argv: Sequence[str]) -> int:
    _, args = parse_script_options(argv, [], {}, (0, 1))
    with _open_inputs(args) as fh, _stdout() as out:
        for n, line in enumerate(fh, 1):
            f = split_fields(line.rstrip("\r\n"))
            if not f:
                continue
            if len(f) < 2:
                raise UsageError(f"{args[0] if args else 'stdin'}:{n}: speaker {f[0]} has no "
                                 f"utterances")
            for utt in f[1:]:
                out.write(f"{utt} {f[0]}\n")
    return 0


FILTER_USAGE = """\
Usage: {prog} [--exclude] [-f <field>] <id-list> [<in.scp>] > <out.scp>
Prints the lines of in.scp (or stdin) whose <field>-th field (default 1) is, or with --exclude
is not, the first field of a line of <id-list>."""


def filter_scp_cmd(prog: str, argv: Sequence[str]) -> int:
    argv, field, exclude = list(argv), 1, False
    while argv and argv[0] in ("--exclude", "-f"):
        if argv.pop(0) == "--exclude":
            exclude = True
        elif not argv:
            raise ScriptUsage("-f needs a field number")
        else:
            field = _int(argv.pop(0), "-f")
            if field < 1:
                raise UsageError(f"-f must be a positive field number, got {field}")
    _, args = parse_script_options(argv, [], {}, (1, 2))
    ids = set(read_key_list(args[0]))
    with _open_inputs(args[1:]) as fh, _stdout() as out:
        for line in fh:
            f = split_fields(line.rstrip("\r\n"))
            if len(f) >= field and (f[field - 1] in ids) != exclude:
                out.write(line if line.endswith("\n") else line + "\n")
    return 0


COMMANDS: Commands = {
    "validate_data_dir": (validate_cmd, VALIDATE_USAGE),
    "fix_data_dir": (fix_cmd, FIX_USAGE),
    "split_data": (split_cmd, SPLIT_USAGE),
    "subset_data_dir": (subset_cmd, SUBSET_USAGE),
    "subset_data_dir_tr_cv": (tr_cv_cmd, TR_CV_USAGE),
    "utt2spk_to_spk2utt": (utt2spk_to_spk2utt_cmd, U2S_USAGE),
    "spk2utt_to_utt2spk": (spk2utt_to_utt2spk_cmd, S2U_USAGE),
    "filter_scp": (filter_scp_cmd, FILTER_USAGE),
}



def run(command: str, prog: str, argv: Sequence[str]) -> int:
    """Run one command (the utils/*.pl entry points call this)."""
    return dispatch(COMMANDS, __name__, [command, prog, *argv])


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 -m nnetmix.data.cli <command> <prog> [args...]``."""
    return dispatch(COMMANDS, __name__, argv)


if __name__ == "__main__":
    sys.exit(main())
