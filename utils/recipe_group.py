#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
# Runs a command (a recipe's run.sh, from utils/recipe_signals.sh) as the leader of a session and
# process group of its own and waits for it. SIGTERM, SIGINT (Ctrl-C) or SIGHUP to this process
# sends SIGTERM (SIGHUP for SIGHUP) to that whole group and exits 128 + the signal's number once
# the group's leader has ended; otherwise the command's exit status is this one's. What the leader
# leaves running when it ends (a stage it started in the background, when a later stage failed)
# gets SIGTERM then. The group is signalled once at most: a second SIGTERM would stop the steps'
# exit traps that give back their locks.
#   utils/recipe_group.py <command> [<arg>...]
# Python, not bash, waits: a bash `wait` interrupted by a trapped SIGINT at the wrong moment kept
# waiting (seen on a loaded machine: run.sh outlived its Ctrl-C by minutes). The standard library
# only, so that it runs before path.sh has put the virtual environment on PATH.
"""run.sh's signal supervisor (see the header above)."""
import signal
import sys

try:   # Python's own SIGINT handler (KeyboardInterrupt) is in place until main() sets ours
    import os
    import subprocess
except KeyboardInterrupt:
    sys.exit(128 + signal.SIGINT)


def main(argv: list) -> int:
    forward = {signal.SIGTERM: signal.SIGTERM, signal.SIGINT: signal.SIGTERM,
               signal.SIGHUP: signal.SIGHUP}
    if not argv or argv[0] in ("-h", "--help"):
        sys.stderr.write(f"usage: {sys.argv[0]} <command> [<arg>...]\n")
        return 0 if argv else 1
    child: list = []          # the group's leader, once started
    got: list = []            # the first signal received
    ended: list = []          # the group has been signalled (once only)

    def end_group(sig: int) -> None:
        if ended:
            return
        ended.append(sig)
        try:
            os.killpg(child[0].pid, sig)
        except ProcessLookupError:
            pass

    def handler(signum, _frame) -> None:
        if got:
            return
        got.append(signum)
        if child:
            end_group(forward[signum])

    for s in forward:          # before the start: a signal at any moment is handled
        signal.signal(s, handler)
    child.append(subprocess.Popen(argv, start_new_session=True))
    if got:                    # it came while the group started
        end_group(forward[got[0]])
    rc = child[0].wait()
    signal.pthread_sigmask(signal.SIG_BLOCK, forward)   # no handler between the test and the kill
    end_group(signal.SIGTERM)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, forward)
    if got:
        return 128 + got[0]
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:   # before main() set its handlers: nothing was started
        sys.exit(128 + signal.SIGINT)
