#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""lock-dir.py: take or give back the lock of an experiment directory (nnetmix.utils.lock).

The bash side of the lock: steps/*.sh take it through utils/lock_dir.sh, which calls this tool
with the step's own pid, exports the printed token and gives the lock back when the step exits."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool
from nnetmix.errors import UsageError

USAGE = """Take (acquire) or give back (release) the lock <dir>/.lock of an experiment directory,
for this process or for --pid (the calling script). acquire prints the job's lock token (the
value of $NNETMIX_LOCK_TOKEN for what the job starts); when another job holds <dir> it prints
one ERROR line naming that job (host, pid, start time, command) and exits 1. A lock left by a
job that is gone (same host) is taken over with a WARNING.
Usage: lock-dir.py [options] (acquire|release) <dir>
 e.g.: lock-dir.py --pid=$$ acquire exp/dnn"""


def _cmdline(pid: int) -> str:
    """The command line of process ``pid`` without its interpreter (``bash steps/x.sh a`` ->
    ``steps/x.sh a``); "" where /proc is absent."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            args = [a.decode("utf-8", "replace") for a in fh.read().split(b"\0") if a]
    except OSError:
        return ""
    if len(args) > 1 and args[0].rsplit("/", 1)[-1] in ("bash", "sh", "python", "python3"):
        args = args[1:]
    return " ".join(args)


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="lock-dir.py")
    parser.register("pid", 0, "The process that holds the lock (0: this one); acquire records "
                    "it, release removes the lock only when that process took it")
    parser.register("command", "", "Command line recorded in the lock (default: that of --pid)")

    def body(opts, args) -> int:
        from nnetmix.utils.lock import DirLock

        action, directory = args
        if action not in ("acquire", "release"):
            raise UsageError(f"expected acquire or release, got '{action}'")
        pid = opts.pid or None
        lock = DirLock(directory, opts.command or (_cmdline(pid) if pid else None), pid)
        if action == "acquire":
            lock.acquire()
            sys.stdout.write(lock.token + "\n")
        else:
            lock.owner = True  # given back on behalf of --pid, which took it
            lock.release()
        return 0

    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
