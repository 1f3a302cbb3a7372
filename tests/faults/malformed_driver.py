"""Run bin/ tools on damaged inputs in one process: tests/faults/test_malformed_inputs.py's driver.

``python malformed_driver.py <world-dir> <cases.json> <results.jsonl>``: builds the world (the
valid files, tests/faults/malformed_world.py) unless it exists, then for each case damages a
copy of one world file, calls the tool's ``main(argv)`` in this process with its stdout and
stderr (file descriptors 1 and 2) going to files, and appends one JSON line per case: first
``{"id": ..., "started": true}``, then the result (exit code, stderr, an exception that escaped
``main``, the files the tool left in its output folder). One process imports numpy, numba and
the FST libraries once for every tool; a tool that kills the process (a segmentation fault) shows
as a case that started and has no result, and the test starts the driver again after it.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import traceback
import zlib
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

from helpers import load_bin  # noqa: E402
from malformed_world import build_world  # noqa: E402


CASE_SECONDS = 120  # a tool that waits (on stdin, a lock) fails its case, not the whole sweep


def _hung(signum, frame):
    raise TimeoutError(f"no exit after {CASE_SECONDS} s")


def damage(src: Path, how: str, dst: Path) -> None:
    """Cut ``src`` short (5/9 of it: not at a record's end in an archive of equal records), make
    it empty, or replace it by 200 random bytes."""
    data = src.read_bytes()
    if how == "truncated":
        data = data[: len(data) * 5 // 9]
    elif how == "empty":
        data = b""
    else:
        # seeded by the file's name, not its bytes: they hold the run's temporary paths
        seed = zlib.crc32(src.name.encode())
        data = np.random.default_rng(seed).integers(0, 256, 200, dtype=np.uint8).tobytes()
    dst.write_bytes(data)


def run_case(world: Path, case: dict, scratch: Path) -> dict:
    out, bad = scratch / "out", scratch / "bad" / case["file"]
    shutil.rmtree(scratch, ignore_errors=True)
    out.mkdir(parents=True)
    if bad.parent == scratch / "bad":
        bad.parent.mkdir()
    else:  # a file of a directory: the damaged file in a copy of the directory
        shutil.copytree(world / Path(case["file"]).parent, bad.parent)
    damage(world / case["file"], case["how"], bad)
    scp = scratch / "bad" / "bad.scp"  # an archive through feats.scp, a wav alone
    scp.write_text((world / "feats.scp").read_text().replace(str(world / case["file"]), str(bad))
                   if bad.suffix == ".ark" else f"{bad.stem} {bad}\n")
    argv = [a.format(w=world, o=out, bad=bad, baddir=bad.parent, badscp=scp)
            for a in case["argv"]]
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    escaped = ""
    with open(scratch / "stdout", "wb") as o, open(scratch / "stderr", "wb") as e:
        os.dup2(o.fileno(), 1)
        os.dup2(e.fileno(), 2)
        signal.alarm(CASE_SECONDS)
        try:
            rc = load_bin(case["tool"]).main(["--print-args=false", *argv]
                                             if case["print_args"] else argv)
        except SystemExit as x:
            rc = x.code if isinstance(x.code, int) else 1
        except BaseException:  # noqa: B036 (whatever escapes main is what the test reports)
            rc, escaped = 1, traceback.format_exc()
        finally:
            signal.alarm(0)
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
    return {"id": case["id"], "rc": rc, "bad": str(bad), "argv": argv,
            "stderr": (scratch / "stderr").read_text(errors="replace"), "escaped": escaped,
            "left": sorted(str(p.relative_to(out)) for p in out.rglob("*"))}


def main(argv: list[str]) -> int:
    world, cases, results = Path(argv[0]), json.loads(Path(argv[1]).read_text()), argv[2]
    if not (world / "done").exists():
        world.mkdir(parents=True, exist_ok=True)
        build_world(world)
        (world / "done").write_text("")
    scratch = Path(tempfile.mkdtemp(prefix="case", dir=world.parent))
    signal.signal(signal.SIGALRM, _hung)
    with open(results, "a") as log:
        for case in cases:
            log.write(json.dumps({"id": case["id"], "started": True}) + "\n")
            log.flush()
            log.write(json.dumps(run_case(world, case, scratch)) + "\n")
            log.flush()
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
