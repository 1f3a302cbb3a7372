#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""RESULTS.md of the harbour recipe, from what run.sh left under exp/ and the calibration record.

Reads exp/options and exp/commands (run.sh writes them at each invocation), the corpus's
params.json, every system's decode directories (exp/mono/decode_test_<lm>, exp/dnn_*/
decode_test_<lm>, <lm> in wp and tg), the stage times (exp/stage_seconds/N, for the DNN stages
<dnn-dir>/stage_seconds/N) and exp/fingerprint.md. Each WER comes with its 95% bootstrap interval
and each DNN with its difference from the monophone on the same grammar, the difference's
interval and MAPSSWE p, all through nnetmix.score.compare (what ``compare-wer.py
--decode-dirs=true exp/mono/decode_test_wp exp/dnn_rbm_w2/decode_test_wp`` prints).

The calibration table lists the runs kept in ``--calibration`` (JSON lines, one run each, with
the commands that made it), then the run in exp/ when it is not among them; ``--record`` adds
the run in exp/ to that file. Nothing here is typed by hand: rerun it after run.sh.

With ``--plot FILE`` it also draws the ladder (each system's WER with its interval, from the
rows it wrote: local/plot_ladder.py), e.g. ``--plot ../../../docs/img/harbour_ladder.png``, the
chart docs/recipes.md shows.

Usage: ``local/make_results.py [--exp exp] [--out RESULTS.md] [--calibration FILE] [--record]
[--note TEXT] [--plot FILE]``; files are written to a temporary name and renamed.
"""
from __future__ import annotations

import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import argparse
import json
import os
import re
from pathlib import Path
from typing import Optional

from nnetmix.data.io import atomic_open, c_sorted, write_lines
from nnetmix.errors import DataDirError, NnetmixError
from nnetmix.kaldi import read_gmm_model
from nnetmix.train.recipe_report import (best_wer_line, compare_systems, comparison_cells,
                                         machine_line, stage_seconds, wer_ci)

from local_script import run_script, script_parser
from plot_ladder import draw, ladder

__all__ = ["STAGES", "LMS", "read_options", "run_options", "systems", "run_summary", "results"]

#: run.sh's stages, for the timing table.
STAGES = {0: "corpus synthesis", 1: "data, dict, lang, word-pair and trigram G",
          2: "MFCC + CMVN", 3: "monophone GMM + alignment", 4: "monophone graphs + decoding",
          5: "tri1 (deltas) + alignment", 6: "tri2 (LDA+MLLT) + alignment",
          7: "tri3 (SAT) + fMLLR alignment", 8: "tri1-tri3 graphs + decoding",
          9: "RBM pretraining", 10: "DNN training", 11: "DNN decoding"}
#: the GMM ladder in training order: (directory, what it is); each is compared with the one before
GMMS = (("mono", "monophone GMM"), ("tri1", "triphone GMM on deltas"),
        ("tri2", "triphone GMM on LDA+MLLT"), ("tri3", "triphone SAT GMM on LDA+MLLT+fMLLR"))
#: decoding conditions: run.sh's --lms names and what they are.
LMS = {"wp": "word-pair grammar", "tg": "trigram"}
#: run.sh options a calibration row shows.
ROW_OPTIONS = ("num_train_utts", "num_test_utts", "snr", "clean_share", "reverb_share",
               "mono_subset", "mono_gauss", "dnn_input", "dnn_hid_layers", "dnn_hid_dim",
               "dnn_max_epochs",
               "dnn_num_workers", "beam", "lattice_beam")


def read_options(exp: Path) -> dict[str, str]:
    """exp/options (``name=value`` lines) as a dict; {} when absent."""
    f = exp / "options"
    if not f.is_file():
        return {}
    return dict(line.split("=", 1) for line in f.read_text().splitlines() if "=" in line)


#: the stage whose options a calibration row shows for each option (its stage_options/N)
OWNER = {"num_train_utts": 0, "num_test_utts": 0, "snr": 0, "clean_share": 0, "reverb_share": 0,
         "mono_subset": 3, "mono_gauss": 3, "beam": 4, "lattice_beam": 4, "dnn_input": 10,
         "dnn_hid_layers": 10,
         "dnn_hid_dim": 10, "dnn_max_epochs": 10, "dnn_num_workers": 10}


def run_options(exp: Path, dnn_dir: Optional[Path] = None) -> dict[str, str]:
    """The options each part of the run was made with: each of ROW_OPTIONS from the stage that
    uses it (``<dir>/stage_options/N``, run.sh's stage_done), else from exp/options."""
    opts = read_options(exp)
    for key, n in OWNER.items():
        f = (dnn_dir if n >= 10 and dnn_dir is not None else exp) / "stage_options" / str(n)
        if f.is_file():
            got = dict(x.split("=", 1) for x in f.read_text().splitlines() if "=" in x)
            if key in got:
                opts[key] = got[key]
    return opts


def mono_data(opts: dict[str, str]) -> str:
    """What the monophone trained on: "all" or "N shortest" (run.sh's --mono-subset)."""
    try:
        n, total = int(opts["mono_subset"]), int(opts["num_train_utts"])
    except (KeyError, ValueError):
        return "?"
    return "all" if n <= 0 or n >= total else f"{n} shortest"


def _commands(exp: Path) -> list[str]:
    f = exp / "commands"
    return f.read_text().splitlines() if f.is_file() else []


def systems(exp: Path) -> list[tuple[str, Path]]:
    """(name, directory) of the GMM ladder and every DNN with a decode directory."""
    out = [(g, exp / g) for g, _ in GMMS if (exp / g).is_dir()]
    out += [(d, exp / d) for d in c_sorted(p.name for p in exp.glob("dnn_*") if p.is_dir()
                                           and p.name != "dnn_pretrain")]
    return [(n, d) for n, d in out if any((d / f"decode_test_{lm}").is_dir() for lm in LMS)]


def dnn_notes(d: Path) -> str:
    """Epochs, the kept model's CV frame accuracy and the epochs' wall time, from the result
    files every epoch writes (log/iterNN.tr.json, log/iterNN.cv.json) and final.nnet's name: a
    run stopped and resumed (``--dnn-max-epochs``) has a train_scheduler.log that starts at the
    resume, so that log is not read."""
    def load(f: Path) -> dict:
        try:
            return json.loads(f.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise DataDirError(f"{f}: cannot read the epoch's result ({e})") from None
    tr = sorted(d.glob("log/iter[0-9][0-9].tr.json"))
    cv = sorted(d.glob("log/iter[0-9][0-9].cv.json"))
    kept = re.search(r"_iter(\d+)_", os.readlink(d / "final.nnet")) \
        if (d / "final.nnet").is_symlink() else None
    if not tr or kept is None:
        return "no epochs' results"
    acc = load(d / "log" / f"iter{kept.group(1)}.cv.json")["frame_accuracy"]
    rejected = sum(1 for f in (d / "nnet").glob("*_rejected"))
    wall = sum(load(f)["wall"] for f in tr + cv)
    return (f"{len(tr)} epochs ({rejected} rejected), epoch {int(kept.group(1))} kept, CV frame "
            f"accuracy {acc:.2f}%; training and CV jobs {wall:.0f} s wall")


def network_options(d: Path) -> dict[str, str]:
    """The run.sh options stage 10 trained <d> with (its stage_options/10; {} when absent)."""
    f = d / "stage_options" / "10"
    if not f.is_file():
        return {}
    return dict(x.split("=", 1) for x in f.read_text().splitlines() if "=" in x)


def is_default_dnn(d: Path) -> bool:
    """A feed-forward sigmoid DNN (run.sh's default network, the calibration rows' DNN)."""
    o = network_options(d)
    return o.get("dnn_type", "dnn") == "dnn" and o.get("dnn_activation", "sigmoid") == "sigmoid"


def _csc(train_opts: str) -> str:
    """'CSC-BPTT 21-64+21' from --rnn-train-opts' chunk options; '' without --chunk-size."""
    v = dict(re.findall(r"--chunk-(size|left-context|right-context)=(\d+)", train_opts))
    if not int(v.get("size", 0)):
        return ""
    return f"CSC-BPTT {v.get('left-context', 0)}-{v['size']}+{v.get('right-context', 0)}"


def network_what(name: str, d: Path) -> str:
    """The system cell of a network's row: its kind, shape, workers and mixing, from the options
    of its stage 10."""
    o = network_options(d)
    kind, opts = o.get("dnn_type", "dnn"), o.get("dnn_opts", "")
    mixing = "BMUF" if re.search(r"--bmuf[ =]true", opts) else "model averaging"
    if kind == "dnn":
        act = o.get("dnn_activation", "sigmoid")
        shape = (f"{o.get('dnn_hid_layers', '?')} x {o.get('dnn_hid_dim', '?')} "
                 f"{'ReLU' if act == 'relu' else 'sigmoid'}")
        workers = o.get("dnn_num_workers", "?")
        how = f"{workers} worker{'s' if workers != '1' else ''}" + \
            (f", {mixing} every {o.get('dnn_average_every', '?')} minibatches, "
             f"{o.get('dnn_optimizer', '?')}" if workers != "1" else "")
        what = f"DNN (`{name}`, {shape}; {how})"
    else:
        workers = o.get("rnn_num_workers", "1")
        shape = (f"{o.get('rnn_layers', '?')} x {o.get('rnn_cell_dim', '?')}"
                 f"{'+' + o.get('rnn_cell_dim', '?') if kind == 'blstm' else ''} cells, "
                 f"projection {o.get('rnn_proj_dim', '?')}")
        how = ", ".join(x for x in (_csc(o.get("rnn_train_opts", "")),
                                    f"{workers} worker{'s' if workers != '1' else ''}") if x)
        if workers != "1":
            how += f", {mixing} every {o.get('dnn_average_every', '?')} steps"
        what = f"{kind.upper()} (`{name}`, {shape}; {how})"
    return what + " on " + ("tri3's alignments and fMLLR features" if dnn_gmm(name) == "tri3"
                            else "the monophone alignments and MFCCs")


def network_base(name: str, nets: list[str], default: Optional[str]) -> Optional[str]:
    """The network a network is compared with besides its GMM: a recurrent one over N > 1
    workers with the same network on one worker (``<dir>_wN[_tag]`` against ``<dir>``), any
    other against the run's default DNN; None for the default DNN itself."""
    m = re.match(r"(.*(?:lstm)\d+x\d+)_w\d+(?:_.*)?$", name)
    if m and m.group(1) in nets:
        return m.group(1)
    return default if name != default else None


def _decoded(d: Path) -> bool:
    return any(d.glob("wer_*"))


def dnn_gmm(name: str) -> str:
    """The GMM whose alignments and graphs a DNN used: run.sh names the DNN of --dnn-input fmllr
    ``dnn_fmllr_*`` (tri3's), of --dnn-input mfcc ``dnn_*`` (the monophone's)."""
    return "tri3" if name.startswith("dnn_fmllr_") else "mono"


def gmm_size(d: Path) -> str:
    """'N leaves, M Gaussians' of <d>/final.mdl ('?' when unreadable)."""
    try:
        _, am = read_gmm_model(str(d / "final.mdl"))
    except (OSError, NnetmixError):
        return "?"
    return f"{am.num_pdfs} leaves, {am.num_gauss} Gaussians"


def gmm_row(name: str, d: Path, lm: str, opts: dict[str, str]) -> tuple[str, str]:
    """(system, notes) cells of a GMM's row."""
    what = dict(GMMS)[name]
    if name == "mono":
        return (f"{what} (`mono`, {opts.get('mono_gauss', '?')} Gaussians, trained on "
                f"{mono_data(opts)} utterances)", "acwt 0.083333")
    notes = "acwt 0.083333"
    si = d / f"decode_test_{lm}.si"
    if name == "tri3" and _decoded(si):
        w = wer_ci(si)
        notes += (f"; decode_fmllr.sh, its speaker-independent first pass (final.alimdl): "
                  f"{w.wer:.2f}%")
    return f"{what} (`{name}`, {gmm_size(d)})", notes


def run_summary(exp: Path) -> dict:
    """The run in exp/ as one calibration record: options, WERs with intervals (the monophone
    and the first DNN directory), stage times."""
    wers, secs = {}, {str(n): t.seconds for n, t in stage_seconds(exp).items()}
    sysdirs = systems(exp)
    nets = [(n, d) for n, d in sysdirs if n not in dict(GMMS)]
    dnn = next((x for x in nets if is_default_dnn(x[1])), nets[0] if nets else None)
    opts = run_options(exp, dnn[1] if dnn else None)
    for kind, sd in [(g, exp / g) for g, _ in GMMS] + [("dnn", dnn[1] if dnn else None)]:
        if sd is None:
            continue
        for lm in LMS:
            if _decoded(sd / f"decode_test_{lm}"):
                w = wer_ci(sd / f"decode_test_{lm}")
                wers[f"{kind}/{lm}"] = [w.wer, w.low, w.high, w.errors, w.words]
    if dnn:
        secs.update({str(n): t.seconds for n, t in stage_seconds(dnn[1]).items()})
    return {"commands": _commands(exp), "options": {k: opts[k] for k in ROW_OPTIONS if k in opts},
            "dnn": dnn[0] if dnn else None, "wer": wers, "seconds": secs}


def _cell(w: Optional[list]) -> str:
    return "-" if not w else f"{w[0]:.2f} [{w[1]:.2f}, {w[2]:.2f}]"


def _stage_sum(secs: dict, stages) -> str:
    got = [secs[str(n)] for n in stages if str(n) in secs]
    return str(sum(got)) if got else "-"


def calibration_table(rows: list[dict]) -> list[str]:
    out = ["| run | train / test utts | SNR dB, clean, reverb | mono (training utts, Gaussians) | DNN "
           "(input, layers x units, max epochs, workers) | beam / lattice beam | mono wp | mono tg "
           "| tri3 wp | tri3 tg | DNN wp | DNN tg | seconds: stages 0-2 / 3-8 / 9-11 | commands |",
           "| ---: | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- "
           "| --- |"]
    for i, r in enumerate(rows, 1):
        o, w, s = r["options"], r["wer"], r["seconds"]
        g = o.get
        cmds = "<br>".join(f"`{c}`" for c in r["commands"])
        label = r.get("label", str(i))
        out.append(
            f"| {label} | {g('num_train_utts', '?')} / {g('num_test_utts', '?')} "
            f"| {g('snr', '?')}, {g('clean_share', '?')}, {g('reverb_share', '?')} "
            f"| {mono_data(o)}, {g('mono_gauss', '?')} "
            f"| {g('dnn_input', 'mfcc')}, {g('dnn_hid_layers', '?')} x {g('dnn_hid_dim', '?')}, "
            f"{g('dnn_max_epochs', '?')}, {g('dnn_num_workers', '?')} "
            f"| {g('beam', '?')} / {g('lattice_beam', '?')} "
            f"| {_cell(w.get('mono/wp'))} | {_cell(w.get('mono/tg'))} | {_cell(w.get('tri3/wp'))} "
            f"| {_cell(w.get('tri3/tg'))} | {_cell(w.get('dnn/wp'))} | {_cell(w.get('dnn/tg'))} "
            f"| {_stage_sum(s, (0, 1, 2))} / {_stage_sum(s, range(3, 9))} / "
            f"{_stage_sum(s, (9, 10, 11))} | {cmds} |")
    return out + [""]


def _perplexities(data: Path) -> str:
    """Test-set perplexities of both grammars, from stage 1's files."""
    parts = []
    wp, tg = data / "lang_wp" / "ppl", data / "local" / "lm" / "heldout.ppl"
    if wp.is_file():   # "data/test/text: 1200 sentences, 10993 words, word-pair perplexity 50.12"
        parts.append(wp.read_text().strip().split(": ", 1)[-1])
    m = re.search(r"\bppl= *(\S+)", tg.read_text()) if tg.is_file() else None
    if m:              # compute-perplexity's "... logprob= -15539.5 ppl= 18.8131 ppl1= ..."
        parts.append(f"trigram perplexity {m.group(1)}")
    return "; ".join(parts)


def run_section(exp: Path) -> list[str]:
    """The run in exp/: WERs with intervals, each GMM against the one before it on the ladder
    and the DNN against the monophone, stage times."""
    sysdirs = systems(exp)
    opts = run_options(exp)
    gmms = [g for g, _ in GMMS]
    nets = [n for n, _ in sysdirs if n not in gmms]
    default = next((n for n in nets if is_default_dnn(exp / n)), None)
    rows, lines, cmp_rows, net_rows = [], [], [], []
    for name, d in sysdirs:
        for lm in LMS:
            dec = d / f"decode_test_{lm}"
            if not _decoded(dec):
                continue
            w = wer_ci(dec)
            if name in gmms:
                what, notes = gmm_row(name, d, lm, opts)
            else:
                what, notes = network_what(name, d), f"acwt 0.1; {dnn_notes(d)}"
            rows.append(f"| {what} | {LMS[lm]} (`{lm}`) | {w.cell()} | {w.wer_file} | {notes} |")
            lines.append(best_wer_line(dec))
            # each GMM against the one before it; a DNN against the GMM it learnt from
            base = gmms[gmms.index(name) - 1] if name in gmms[1:] else \
                None if name == "mono" else dnn_gmm(name)
            ref = exp / str(base) / f"decode_test_{lm}"
            if base is not None and _decoded(ref):
                cmp_rows.append(_compare_row(ref, dec, base, name, lm))
            other = None if name in gmms else network_base(name, nets, default)
            if other is not None and _decoded(exp / other / f"decode_test_{lm}"):
                net_rows.append(_compare_row(exp / other / f"decode_test_{lm}", dec, other,
                                             name, lm))
    out = ["## The run in exp/", ""]
    cmds = _commands(exp)
    if cmds:
        out += ["Commands (exp/commands):", "", "```", *cmds, "```", ""]
    ppl = _perplexities(exp.parent / "data")
    if ppl:
        out += [f"Test set: {ppl}.", ""]
    out += ["| system | grammar | %WER [95% interval] (errors/words) | best wer_LMWT_WIP | notes |",
            "| --- | --- | ---: | --- | --- |", *rows, "", "```", *lines, "```", ""]
    if cmp_rows:
        out += ["Each GMM against the one before it on the ladder (mono, tri1, tri2, tri3) and "
                "each DNN against the GMM whose alignments it learnt, on the same test set (`compare-wer.py "
                "--decode-dirs=true exp/<a>/decode_test_<lm> exp/<b>/decode_test_<lm>`): the "
                "difference of WERs in % absolute with its 95% bootstrap interval, and MAPSSWE's "
                "p.", "",
                "| difference | grammar | %WER difference [95% interval] | MAPSSWE p | verdict |",
                "| --- | --- | ---: | ---: | --- |", *cmp_rows, ""]
    if net_rows:
        out += [f"Each other network against the run's sigmoid DNN (`{default}`), and a recurrent "
                "network trained over N > 1 MPI workers against the same network on one worker "
                "(`<dir>_wN` against `<dir>`), in the same way:", "",
                "| difference | grammar | %WER difference [95% interval] | MAPSSWE p | verdict |",
                "| --- | --- | ---: | ---: | --- |", *net_rows, ""]
    times = [(n, STAGES.get(n, f"stage {n}"), t) for n, t in sorted(stage_seconds(exp).items())]
    for name, d in sysdirs:
        if name not in gmms:
            times += [(n, f"{STAGES.get(n, f'stage {n}')} (`{name}`)", t)
                      for n, t in sorted(stage_seconds(d).items())]
    if times:
        out += ["| stage | what | wall seconds | load average at its end |",
                "| ---: | --- | ---: | ---: |"]
        out += [f"| {n} | {what} | {t.seconds} | {'' if t.load is None else t.load} |"
                for n, what, t in times]
        out += [f"| | all of the above | {sum(t.seconds for _, _, t in times)} | |", ""]
    fp = exp / "fingerprint.md"
    if fp.is_file():
        out += ["### Fingerprint (exp/fingerprint.md, `fingerprint-recipe.py .`)", "",
                *fp.read_text().rstrip("\n").splitlines(), ""]
    return out


def _compare_row(ref: Path, dec: Path, base: str, name: str, lm: str) -> str:
    """A comparison table's row: `name` - `base` on one grammar, interval, p and verdict."""
    diff, p, verdict = comparison_cells(compare_systems(ref, dec, (base, name)))
    return f"| `{name}` - `{base}` | {LMS[lm]} (`{lm}`) | {diff} | {p} | {verdict} |"


def read_calibration(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    rows = []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise DataDirError(f"{path}:{i}: not a JSON line ({e})") from None
    return rows


def results(exp: Path, calibration: Path, note: str = "") -> list[str]:
    """The whole RESULTS.md."""
    if not exp.is_dir():
        raise DataDirError(f"no such directory {exp} (run ./run.sh first)")
    if not systems(exp) and not read_calibration(calibration):
        raise DataDirError(f"{exp}: nothing decoded (no mono/decode_test_wp or _tg): run "
                           "./run.sh through stage 4 first")
    rows = read_calibration(calibration)
    if systems(exp):
        now = run_summary(exp)
        if not any(r["commands"] == now["commands"] for r in rows):
            rows.append({**now, "label": "exp/"})
    head = ["# egs/harbour/s5 results", "",
            "The harbour task: read sentences of a 1025-word naval resource-management grammar, "
            "synthesised with espeak-ng voices in noise and reverberation (README, \"The harbour "
            "recipe\"); test speakers and test sentences are never in training. Two decoding "
            "conditions: the grammar's word-pair grammar and a trigram of the training text. "
            "Written by `local/make_results.py` from `exp/` and the calibration record "
            f"(`{calibration}`). Each WER is the best over local/score.sh's LM-weight / "
            "insertion-penalty sweep, with its 95% bootstrap interval (Bisani and Ney, "
            "`compare-wer.py`); a difference whose interval contains 0 is not significant.",
            "", machine_line(Path(__file__).resolve().parent) + (f" {note}" if note else ""), ""]
    out = head + ["## Calibration runs", "",
                  "One row per run (the recorded ones, then exp/ when not recorded): its options, "
                  "each WER [95% interval], and wall seconds of the stage groups on the shared "
                  "2-core machine.", "", *calibration_table(rows)]
    if systems(exp):
        out += run_section(exp)
    return out


def get_args(argv=None) -> argparse.Namespace:
    p = script_parser(__doc__)
    p.add_argument("--exp", default="exp", help="the experiment directory of run.sh")
    p.add_argument("--out", default="RESULTS.md", help="the markdown file to write")
    p.add_argument("--calibration", default="local/calibration.jsonl",
                   help="recorded calibration runs, one JSON object a line")
    p.add_argument("--record", action="store_true",
                   help="add the run in --exp to --calibration (unless recorded already)")
    p.add_argument("--note", default="", help="a sentence after the machine line (e.g. the load)")
    p.add_argument("--plot", default="", help="also draw the ladder's WERs into this PNG "
                   "(local/plot_ladder.py; matplotlib)")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    exp, cal = Path(args.exp), Path(args.calibration)
    if args.record:
        if not systems(exp):
            raise DataDirError(f"{exp}: nothing decoded to record (run ./run.sh through stage 4)")
        now = run_summary(exp)
        rows = read_calibration(cal)
        if not any(r["commands"] == now["commands"] for r in rows):
            with atomic_open(cal) as fh:
                for r in rows + [now]:
                    fh.write(json.dumps(r, sort_keys=True) + "\n")
            print(f"{args.prog}: recorded the run in {exp} in {cal}")
    lines = results(exp, cal, args.note)
    write_lines(args.out, lines)
    print(f"{args.prog}: wrote {args.out}")
    points = ladder("\n".join(lines).splitlines())
    if args.plot and points and draw(points, Path(args.plot)):
        print(f"{args.prog}: wrote {args.plot}")


if __name__ == "__main__":
    run_script(get_args(), main)
