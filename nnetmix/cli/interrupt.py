"""Ctrl-C in a bin/ tool: one ERROR line, exit status 130, no traceback, nothing half-written.

Python's own handling (KeyboardInterrupt) falls short in three places, each seen on
nnet-train-frmshuff.py:

* During the imports at the top of a tool (mpi4py, numba: seconds) the interrupt prints a
  traceback. :func:`guard_imports`, run when :mod:`nnetmix.cli` is first imported by a bin/ tool,
  turns it into the one line; nothing has been written yet, so the process just ends.
* Inside a C callback (llvmlite's object cache calls Python while numba compiles) Python reports
  the KeyboardInterrupt as "Exception ignored ..." with a traceback and carries on, and the tool
  then dies of a consequence: the feature pipe, killed by the same Ctrl-C, reads as a "truncated
  FM matrix". While a tool runs (:func:`handling`), such an interrupt is delivered again, quietly,
  so it surfaces in ordinary code and unwinds it (temporary outputs are removed on the way).
* An error raised after the interrupt is its consequence: :func:`interrupted` says so, and
  run_tool reports "interrupted" as the one ERROR line and the error after it as a WARNING.

A real command (not ``main(argv)`` called by a test) then ends by SIGINT itself, as Python and
Kaldi binaries do, so the shell sees status 130 and a calling script stops too instead of going
on to its next command (https://www.cons.org/cracauer/sigint.html). An inherited SIG_IGN (a job
started in the background) is left alone.
"""
from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import threading
from typing import Iterator

from nnetmix import __version__

__all__ = ["guard_imports", "handling", "interrupted", "end_by_sigint"]

_state = {"interrupted": False}
_REDELIVER_S = 0.05  #: a swallowed interrupt comes again this much later


def interrupted() -> bool:
    """True once SIGINT arrived while :func:`handling` was active."""
    return _state["interrupted"]


def _ours() -> bool:
    """Whether SIGINT is Python's to handle (not ignored, not defaulted by an embedding host)."""
    return signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, signal.SIG_DFL, None)


def end_by_sigint() -> None:
    """End the process as if SIGINT's default action had run (status 130 to the shell)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
    os._exit(130)  # not reached where SIGINT kills


def _while_importing(signum, frame) -> None:
    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
    while frame is not None and frame.f_globals.get("__name__") != "__main__":
        frame = frame.f_back  # the tool's own line (an import), not importlib's
    where = (f"<module>():{prog}:{frame.f_lineno}" if frame is not None else "<module>()")
    sys.stderr.write(f"ERROR ({prog}[{__version__}]:{where}) interrupted (SIGINT) while "
                     "starting up\n")
    end_by_sigint()


def guard_imports() -> None:
    """Ctrl-C before the tool's main() runs: the one line, then end (see the module docstring).

    Only in a bin/ tool's own process (its ``__main__`` is a file in a ``bin`` directory): a test
    session or a program that imports nnetmix.cli keeps its own Ctrl-C.
    """
    main = getattr(sys.modules.get("__main__"), "__file__", None) or ""
    if os.path.basename(os.path.dirname(os.path.abspath(main))) == "bin" and _ours():
        signal.signal(signal.SIGINT, _while_importing)


def _on_sigint(signum, frame) -> None:
    _state["interrupted"] = True
    raise KeyboardInterrupt


def _unraisable(hook):
    def report(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            # again, a moment later, from another thread: raised here it would be one more
            # unraisable exception; the main thread gets it in its next Python code
            timer = threading.Timer(_REDELIVER_S, _thread.interrupt_main)
            timer.daemon = True
            timer.start()
            return
        hook(unraisable)
    return report


@contextlib.contextmanager
def handling() -> Iterator[None]:
    """While a tool's body runs: SIGINT raises KeyboardInterrupt and is remembered, and one
    swallowed by a C callback is delivered again; the previous handlers come back after."""
    if not _ours():
        yield
        return
    _state["interrupted"] = False
    old_handler, old_hook = signal.getsignal(signal.SIGINT), sys.unraisablehook
    if old_handler is _while_importing:  # started up by now
        old_handler = signal.default_int_handler
    signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _unraisable(old_hook)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_handler)
        sys.unraisablehook = old_hook
