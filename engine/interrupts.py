"""Ctrl-C and SIGTERM: the first stops a search cleanly, a second exits at once; worker
processes never see a terminal's Ctrl-C.  The one place where signals are handled.

**Stopping a search.**  While :func:`handling_interrupts` is active (``stealsearch.engine.solve``
enters it in the main thread), the first SIGINT or SIGTERM only *records* the
request; the backends look at :func:`requested` between chunks (sequential, ramp-up)
or between polls (Dask), stop every worker, and return the result so far with status
``interrupted`` (best solution, proven bound, nodes), writing a final checkpoint if
one was asked for.  A KeyboardInterrupt raised in the middle of a kernel call's
bookkeeping could leave a stack half-updated; a flag cannot.  A second signal ends
every child process of ours by PID and exits with 128 + the signal number at once.

**Starting child processes (one mechanism).**  A terminal's Ctrl-C goes to the whole
foreground process group, worker processes included; their tracebacks were ~60 lines
per Ctrl-C, and a worker killed half-way through its start leaves a cluster nobody
can close (distributed's atexit hook then fails with ``AssertionError: Status.init``).
So every cluster is started through :class:`ShieldedStart` (in the background, for
the ramp-up) or :func:`start_shielded` (waiting for it): the start runs in a helper
thread whose signal mask *blocks* SIGINT.  Every thread created from it (the
cluster's event loop, distributed's process-watcher threads) inherits the mask, and
every process those threads spawn inherits it across fork and exec: a worker process
runs with SIGINT blocked for life (its nanny ends it on close).  The calling thread
keeps SIGINT unblocked, so a Ctrl-C during the start reaches *us*: recorded by
:func:`handling_interrupts` (the ramp-up keeps searching and stops cleanly), or held
by :func:`start_shielded` until the start is over, which then closes what was
started and raises KeyboardInterrupt; a second Ctrl-C abandons the start and ends
the processes it created, by PID.

This replaces two overlapping guards (a signal mask on the caller's thread, and
SIGINT ignored process-wide while spawning): the mask on the caller's thread also
held back the search's own Ctrl-C, and an ignored SIGINT cannot be ignored by the
workers alone while the caller searches on (the ramp-up).
"""
from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from typing import Callable

_received: list[int] = []

log = logging.getLogger(__name__)


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


def _children() -> set[int]:
    try:
        import psutil
        return {p.pid for p in psutil.Process().children(recursive=True)}
    except Exception:   # psutil missing or /proc unreadable
        return set()


def _kill(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


class ShieldedStart:
    """Run ``start()`` in a helper thread whose signal mask blocks SIGINT, so that every
    thread and process it starts inherits the block (see the module docstring).

    ``done()`` / ``wait(timeout)`` poll it; ``result()`` returns what ``start()``
    returned or raises what it raised.  ``abort(close)`` gets rid of a start whose
    result is no longer wanted, quickly and whatever its state: it sets ``cancelled``
    (a ``start`` may look at it between its steps), ends the processes the start
    created (by PID: a LocalCluster whose worker processes die fails its start within
    ~0.1 s, where finishing and closing it would take seconds), and closes what was
    started.  "Created by the start": children of this process that were not there
    when it began (multiprocessing's resource tracker is started first, so it is not
    one of them).
    """

    def __init__(self, start: Callable[[], object], name: str = "stealsearch-start",
                 cancelled: threading.Event | None = None):
        self._value = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self.cancelled = threading.Event() if cancelled is None else cancelled
        # multiprocessing's resource tracker (a child of ours, for every later start too)
        # UNblocks SIGINT in the thread that first starts a process: start it here, in
        # the calling thread, before the helper thread blocks SIGINT and before the
        # processes of this start are told apart from those that were there already
        from multiprocessing import resource_tracker
        resource_tracker.ensure_running()
        self._before = _children()
        self.t_start = time.perf_counter()
        self.t_done: float | None = None

        def run() -> None:
            try:
                if hasattr(signal, "pthread_sigmask"):
                    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
                self._value = start()
            except BaseException as exc:    # handed to whoever asks: result()
                self._error = exc
            finally:
                self.t_done = time.perf_counter()
                self._done.set()

        # a daemon: an abandoned start (second Ctrl-C) must not keep the interpreter alive
        self._thread = threading.Thread(target=run, name=name, daemon=True)
        self._thread.start()

    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float) -> bool:
        return self._done.wait(timeout)

    @property
    def failed(self) -> bool:
        return self.done() and self._error is not None

    @property
    def seconds(self) -> float | None:
        """How long the start took (None while it runs)."""
        return None if self.t_done is None else self.t_done - self.t_start

    def result(self):
        if not self.done():
            raise RuntimeError("the start has not finished")
        if self._error is not None:
            raise self._error
        return self._value

    def abandon(self) -> None:
        """End every process the start created, by PID."""
        _kill(_children() - self._before)

    def abort(self, close: Callable[[object], None], timeout: float) -> None:
        """Cancel the start, end its processes, close what it started; errors are
        logged, not raised (a start whose result stopped mattering must not matter)."""
        self.cancelled.set()
        deadline = time.monotonic() + timeout
        while not self.wait(0.05):
            self.abandon()      # processes spawned since the last look (none: still importing)
            if time.monotonic() > deadline:
                log.warning("the cluster did not finish starting within %.0f s; its processes "
                            "were ended", timeout)
                return
        if self._error is None and self._value is not None:
            self.abandon()      # its workers serve nobody: ended now, closing is then quick
            try:
                close(self._value)
            except Exception as exc:   # closing must not hide the result
                log.debug("closing an aborted start failed: %r", exc)
        self.abandon()          # whatever a nanny restarted meanwhile


def start_shielded(start: Callable[[], object], close: Callable[[object], None],
                   *, timeout: float = 600.0):
    """``start()`` through a :class:`ShieldedStart`, waited for here; its value.

    A Ctrl-C meanwhile is held until the start is over; then what was started is
    closed and KeyboardInterrupt raised (with :func:`handling_interrupts` active, the
    request stays recorded too).  A second Ctrl-C abandons the start at once (its
    processes ended by PID) and raises KeyboardInterrupt.  ``timeout``: seconds the
    start may take before it is abandoned (a ``TimeoutError``)."""
    starter = ShieldedStart(start)
    main = threading.current_thread() is threading.main_thread()
    before = len(_received)
    presses: list[float] = []
    previous = None
    if main and signal.getsignal(signal.SIGINT) is not _handler:
        def record(signum, frame):
            presses.append(time.monotonic())
            if len(presses) > 1:
                raise KeyboardInterrupt
            log.warning("interrupted: stopping once the cluster has started "
                        "(Ctrl-C again to abandon it)")
        previous = signal.signal(signal.SIGINT, record)
    try:
        deadline = time.monotonic() + timeout
        while not starter.wait(0.05):
            if len(_received) > before + 1 or len(presses) > 1:
                raise KeyboardInterrupt
            if time.monotonic() > deadline:
                starter.abandon()
                raise TimeoutError(f"the cluster did not start within {timeout:.0f} s")
    except KeyboardInterrupt:
        starter.abandon()
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if presses or len(_received) > before:
        if not starter.failed:
            close(starter.result())
        raise KeyboardInterrupt
    return starter.result()
