"""The first run says that it compiles: one line on stderr, and the seconds it took.

numba compiles a kernel the first time a process calls it and keeps the machine code in
its on-disk cache (``cache=True``), so a command's first run on a machine (a fresh
install, a cleared cache) compiles for seconds before it searches, and later runs load
the kernels in milliseconds.  :func:`announce` makes that visible: once installed, the
first compilation of the process prints ::

    stealsearch: compiling kernels, first run only (later runs load them from the cache)

on stderr (never stdout: ``--json`` output stays one object), once however many kernels
compile, and never when every kernel comes from the cache: numba's ``numba:compile``
event fires only on a cache miss.  :func:`compile_seconds` is the time the process has
spent compiling since, counted once per outermost compilation (a kernel's callees
compile inside it), which :func:`stealsearch.engine.app.commandline.solve_from_args`
adds to the result's wall time where it fell before the search's clock started.
"""
from __future__ import annotations

import sys
import threading
import time

from numba.core.event import Listener

NOTICE = "stealsearch: compiling kernels, first run only (later runs load them from the cache)"

_lock = threading.Lock()
_state = {"installed": False, "quiet": False, "compiled": False, "seconds": 0.0}
_local = threading.local()


def announce(quiet: bool = False) -> None:
    """Print :data:`NOTICE` on stderr when this process first compiles a kernel
    (``quiet``: print nothing, still count the seconds).  Idempotent: a later call only
    updates ``quiet``."""
    with _lock:
        _state["quiet"] = bool(quiet)
        if _state["installed"]:
            return
        from numba.core.event import register

        register("numba:compile", _CompileListener())
        _state["installed"] = True


def compile_seconds() -> float:
    """Seconds this process has spent in outermost numba compilations since
    :func:`announce` (a run's share: the difference of two readings)."""
    return float(_state["seconds"])


class _CompileListener(Listener):
    """Counts outermost compilations per thread (lanes may compile beside each other)."""

    def on_start(self, event) -> None:
        depth = getattr(_local, "depth", 0)
        _local.depth = depth + 1
        if depth:
            return
        _local.started = time.perf_counter()
        with _lock:
            first, _state["compiled"] = not _state["compiled"], True
            quiet = _state["quiet"]
        if first and not quiet:
            try:
                print(NOTICE, file=sys.stderr, flush=True)
            except (OSError, ValueError):   # a closed terminal: the notice ends, not the run
                pass

    def on_end(self, event) -> None:
        _local.depth = depth = max(getattr(_local, "depth", 1) - 1, 0)
        if depth == 0:
            elapsed = time.perf_counter() - getattr(_local, "started", time.perf_counter())
            with _lock:
                _state["seconds"] += elapsed
