"""Ctrl-C and SIGTERM during a search: the first stops it cleanly, a second exits at once.

While :func:`handling_interrupts` is active (``engine.solve`` enters it in the main
thread), the first SIGINT or SIGTERM only *records* the request; the backends look
at :func:`requested` between chunks (sequential) or between polls (Dask), stop every
worker, and return the result so far with status ``interrupted`` (best solution,
proven bound, nodes), writing a final checkpoint if one was asked for.  A
KeyboardInterrupt raised in the middle of a kernel call's bookkeeping could leave a
stack half-updated; a flag cannot.  A second signal ends every child process of
ours by PID and exits with 128 + the signal number at once.

:func:`children_ignore_sigint` keeps a terminal's Ctrl-C (sent to the whole
foreground process group) away from the worker processes a LocalCluster starts (a
blocked signal mask would not do: the processes are spawned from distributed's own
threads).  Their tracebacks were ~60 lines per Ctrl-C; now the client alone decides.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading

_received: list[int] = []


def requested() -> bool:
    """True once a first SIGINT/SIGTERM arrived inside :func:`handling_interrupts`."""
    return bool(_received)


def stop_if_requested() -> None:
    """Raise KeyboardInterrupt if a first signal was recorded: for loops that run many
    searches (a sweep) and stop between them."""
    if _received:
        raise KeyboardInterrupt


def received_signal() -> int | None:
    """The first signal received (for the exit code 128 + n), or None."""
    return _received[0] if _received else None


def reset() -> None:
    _received.clear()


def _end_children_and_exit(signum: int) -> None:
    try:
        import psutil
        kids = psutil.Process().children(recursive=True)
    except Exception:   # psutil missing or /proc unreadable: exit anyway
        kids = []
    for k in kids:
        try:
            os.kill(k.pid, signal.SIGKILL)
        except OSError:
            pass
    os._exit(128 + signum)


def _handler(signum, frame):
    if _received:
        _end_children_and_exit(signum)
    _received.append(signum)


@contextlib.contextmanager
def handling_interrupts():
    """Record SIGINT/SIGTERM instead of raising (main thread only; else a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if signal.getsignal(signal.SIGINT) is _handler:
        # nested (a sweep running searches in this process): the outer context owns the
        # record, so a Ctrl-C that stopped this search also stops the loop around it
        yield
        return
    reset()
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in old:
        signal.signal(s, _handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def children_ignore_sigint():
    """Ignore SIGINT while worker processes are started: an ignored signal stays ignored
    across fork and exec, and Python keeps it so (it installs its KeyboardInterrupt
    handler only over the default disposition).  A Ctrl-C in this window (the few
    seconds of cluster start-up) is ignored; the next one stops the search."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
