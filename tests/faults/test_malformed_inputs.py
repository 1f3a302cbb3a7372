"""Every bin/ tool that reads a Kaldi table or file, fed a damaged copy of each kind it reads.

Each row of tests/faults/malformed_table.py is run with its input cut short (to 5/9 of its
bytes), empty, and replaced by 200 random bytes. Each case asserts what docs/troubleshooting.md promises: exit
status 1, never a signal; exactly one ``ERROR (...)`` line (utils/-style tools: ``prog: ...``)
naming the damaged file (or, for an empty table, the output there was nothing to write to); no
traceback; nothing left in the output folder. A text file cut short may still be a valid,
shorter file, and malformed_table.py lists the few other damaged files that are still valid
input: there the tool may also succeed (exit 0, no ERROR line).

The valid files come from real tools (tests/faults/malformed_world.py). All cases run in one
driver process (tests/faults/malformed_driver.py), which calls each tool's ``main(argv)`` with
its stderr on a file: one import of numpy, numba and the FST libraries instead of one per case.
A case that kills the driver (a segmentation fault) is reported with its signal (or exit
status), and the driver starts again after it.
"""
from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from malformed_table import (EMPTY_OK, GARBAGE_OK, LEFT_OUT, ROWS, SCRIPT_TOOLS, SRILM_TOOLS,
                             TEXT, TRUNCATED_OK)

from helpers import ROOT

DRIVER = Path(__file__).with_name("malformed_driver.py")
DAMAGES = ("truncated", "empty", "garbage")
CASES = [{"id": f"{tool}:{file}:{how}:{i}", "tool": tool, "argv": shlex.split(argv),
          "file": file, "how": how, "kaldi": tool not in SCRIPT_TOOLS,
          "print_args": tool not in SCRIPT_TOOLS | SRILM_TOOLS}
         for i, (tool, argv, file) in enumerate(ROWS) for how in DAMAGES]


@pytest.fixture(scope="module")
def results(tmp_path_factory, request) -> dict:
    """Run the selected cases in the driver; a case that killed it gets ``{"died": status}``."""
    d = tmp_path_factory.mktemp("malformed")
    done: dict = {}
    selected = {item.callspec.params["case"]["id"] for item in request.session.items
                if item.path == Path(__file__) and hasattr(item, "callspec")}
    todo = [c for c in CASES if c["id"] in selected]
    while todo:
        (d / "cases.json").write_text(json.dumps(todo))
        p = subprocess.run([sys.executable, str(DRIVER), str(d / "world"), str(d / "cases.json"),
                            str(d / "results.jsonl")], cwd=ROOT, capture_output=True, text=True,
                           timeout=1800)
        started = None
        log = d / "results.jsonl"
        for line in log.read_text().splitlines() if log.exists() else []:
            r = json.loads(line)
            if r.get("started"):
                started = r["id"]
            else:
                done[r["id"]], started = r, None
        if p.returncode == 0:
            break
        assert started, f"driver failed outside a case (exit {p.returncode}): {p.stderr[-3000:]}"
        done[started] = {"id": started, "died": p.returncode, "stderr": p.stderr[-3000:]}
        todo = [c for c in todo if c["id"] not in done]
    return done


def _may_succeed(case: dict) -> bool:
    """A damaged file that is still a valid input (see malformed_table.py)."""
    row = (case["tool"], case["file"])
    return {"truncated": case["file"] in TEXT or row in TRUNCATED_OK, "empty": row in EMPTY_OK,
            "garbage": row in GARBAGE_OK}[case["how"]]


def _check(case: dict, r: dict) -> None:
    if "died" in r:
        how = signal.Signals(-r["died"]).name if r["died"] < 0 else f"exit {r['died']}"
        pytest.fail(f"the tool ended its process ({how}): {r['stderr']}")
    err = r["stderr"]
    assert not r["escaped"] and "Traceback" not in err, r["escaped"] or err
    assert r["rc"] in (0, 1), f"exit {r['rc']}: {err}"
    if r["rc"] == 0:
        assert _may_succeed(case), f"exit 0 on a damaged file: {err}"
        return
    prog = case["tool"]
    lines = [ln for ln in err.splitlines() if ln.startswith("ERROR (")] if case["kaldi"] else \
        [ln for ln in err.splitlines() if ln.startswith(f"{prog}: ")][-1:]
    assert len(lines) == 1, f"{len(lines)} error lines:\n{err}"
    names = [r["bad"]]
    if "/" in case["file"]:  # a file of a data directory: the directory named will do
        names.append(r["bad"].rsplit("/", 1)[0])
    if any("{badscp}" in a for a in case["argv"]):  # a file read through an scp: the scp named will do
        names.append(r["bad"].rsplit("/", 1)[0] + "/bad.scp")
    if case["how"] == "empty" or any(r["bad"] in ln for ln in err.splitlines()
                                     if ln.startswith("WARNING (")):
        # each item dropped with a WARNING naming it, then nothing to write: the output named
        names += [a.split(":", 1)[-1].split(",")[0] for a in r["argv"] if "/out/" in a]
    assert any(n in lines[0] for n in names), f"the error does not name {r['bad']}: {lines[0]}"
    assert r["left"] == [], f"left behind: {r['left']}"


@pytest.mark.parametrize("case", CASES, ids=[c["id"].rsplit(":", 1)[0] for c in CASES])
def test_malformed_input(results, case):
    _check(case, results[case["id"]])


def test_every_tool_is_swept():
    """A new bin/ tool gets a row (or a reason in LEFT_OUT) before this passes."""
    tools = {p.name for p in (ROOT / "bin").glob("*.py")}
    swept = {row[0] for row in ROWS}
    assert sorted(tools - swept - set(LEFT_OUT)) == []
    assert sorted((swept | set(LEFT_OUT)) - tools) == []
    assert not swept & set(LEFT_OUT)
