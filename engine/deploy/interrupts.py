"""Ctrl-C, SIGTERM, SIGHUP and SIGQUIT: the first stops a search cleanly, a second exits
at once; worker processes never see a terminal's Ctrl-C nor a job manager's group
SIGTERM.  The one place where signals are handled.

**The stop signals** (:func:`stop_signals`): SIGINT (Ctrl-C), SIGTERM (``kill``, a job
manager), SIGHUP (the terminal closed, an ssh connection dropped, a tmux session
killed) and SIGQUIT (Ctrl-\\), each one request to stop with the result so far and a
final checkpoint, exit code 128 + n.  SIGQUIT's default (a core dump, for debugging) is
left alone when Python's fault handler is asked for (``PYTHONFAULTHANDLER``, ``-X
faulthandler``): whoever asked debugs.  A SIGHUP or SIGQUIT this process was started
with ignored (``nohup``) stays ignored.

**Stopping a search.**  While :func:`handling_interrupts` is active (``stealsearch.engine.solve``
enters it in the main thread), the first stop signal only *records* the
request; the backends look at :func:`requested` between chunks (sequential, ramp-up)
or between polls (Dask), stop every worker, and return the result so far with status
``interrupted`` (best solution, proven bound, nodes), writing a final checkpoint if
one was asked for.  A KeyboardInterrupt raised in the middle of a kernel call's
bookkeeping could leave a stack half-updated; a flag cannot.  A second signal ends
every child process of ours by PID and exits with 128 + the signal number at once.

**One request, several signals.**  GNU ``timeout``, SLURM, PBS, Kubernetes and systemd
stop a job by signalling its process *and then its process group* (or every process of
the job at once), so one request arrives as two SIGTERMs microseconds apart, or as a
SIGTERM and a SIGINT.  Taking the second as "exit at once" lost the result of exactly
the runs that are stopped this way; a closed terminal likewise sends SIGHUP to the
foreground group and its shell sends another.  So a signal that arrives within
:data:`ECHO_WINDOW` seconds of a first one is the same request (an *echo*): it is
absorbed, unless both are key presses (SIGINT, SIGQUIT: a second press exits at once,
however close).  The exit code stays 128 + the first signal (a SIGTERM among them names
the request).

**Before the search (the command line).**  ``stealsearch.cli`` installs a handler of
its own before its first heavy import (numba, Dask: seconds) and hands the signals it
saw to :func:`own_process_signals`, which installs this module's handler for the rest of
the command.  Outside a search the handler records the signal *and* raises
KeyboardInterrupt (the command stops where it is: reading a graph, a local search); a
KeyboardInterrupt that a callback swallows (an ``Exception ignored ...`` from llvmlite or
importlib while numba loads) is still recorded, so the next search does not start
(:func:`handling_interrupts` raises at its entry) and the command's exit code says it
(the command line keeps those swallowed interrupts' "Exception ignored" off the terminal).

**Starting child processes (one mechanism).**  A terminal's Ctrl-C goes to the whole
foreground process group, worker processes included; their tracebacks were ~60 lines
per Ctrl-C, and a worker killed half-way through its start leaves a cluster nobody
can close (distributed's atexit hook then fails with ``AssertionError: Status.init``).
A job manager's SIGTERM to the group killed the workers mid-epoch, so the client could
only roll the epoch back.  So every cluster is started through :class:`ShieldedStart`
(in the background, for the ramp-up) or :func:`start_shielded` (waiting for it): the
start runs in a helper thread whose signal mask *blocks* the stop signals.  Every
thread created from it (the cluster's event loop, distributed's process-watcher
threads) inherits the mask, and every process those threads spawn inherits it across
fork and exec: a worker process runs with them blocked for life, and the client
decides when it ends (its nanny stops it with a message, or SIGKILL after a timeout;
:func:`_kill_started_at_exit` makes sure none outlives this process, since
multiprocessing's own exit hook would SIGTERM it and wait forever).  The calling thread
keeps them unblocked, so a signal during the start reaches *us*: recorded by
:func:`handling_interrupts` (the ramp-up keeps searching and stops cleanly), or by
:func:`start_shielded`, which says so in one line, ends the start at once (its
processes by PID, what it started closed: a stalled start must not hold a ``kill``)
and raises KeyboardInterrupt; a second Ctrl-C abandons even that tidying and exits.

multiprocessing's resource tracker (one helper process per client process) is started
with its stderr on ``/dev/null``: its only words are "leaked semaphore" warnings after
our process was ``kill -9``-ed (it still cleans the semaphores up).
"""
from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from typing import Callable

from ..core import stop_request
from ..core.stop_request import received_signal, requested, reset, stop_if_requested  # noqa: F401

#: seconds after a first signal within which a second one, when either is a SIGTERM, is
#: the same request (a job manager signalling the process and then its group)
ECHO_WINDOW = 1.0
#: the key presses among the stop signals: a second one is never an echo
KEY_PRESSES = (signal.SIGINT, getattr(signal, "SIGQUIT", signal.SIGINT))
#: seconds a start ended by a signal may take to end its processes and close
ABORT_TIMEOUT = 30.0


def stop_signals() -> tuple:
    """The signals a first press records and a shielded start keeps away from its
    processes (see the module docstring)."""
    import faulthandler

    names = ["SIGINT", "SIGTERM", "SIGHUP"]
    if not faulthandler.is_enabled():
        names.append("SIGQUIT")
    return tuple(s for s in (getattr(signal, n) for n in names if hasattr(signal, n))
                 if s not in _IGNORED_AT_START)


def _ignored_at_start() -> frozenset:
    """SIGHUP and SIGQUIT if this process started with them ignored: they stay ignored
    (``nohup``: the run is meant to outlive its terminal; a script's ``cmd &`` ignores
    SIGQUIT)."""
    out = set()
    for name in ("SIGHUP", "SIGQUIT"):
        s = getattr(signal, name, None)
        try:
            if s is not None and signal.getsignal(s) == signal.SIG_IGN:
                out.add(s)
        except (ValueError, OSError):
            pass
    return frozenset(out)


_IGNORED_AT_START = _ignored_at_start()

#: > 0 while a search (or a shielded start) records signals instead of raising
_recording = [0]
#: True once the command line owns the handlers for the whole process
_owned = [False]
#: True: a second signal raises KeyboardInterrupt instead of exiting (an API caller's
#: cluster start outside a search: :func:`start_shielded`)
_second_raises = [False]

log = logging.getLogger(__name__)


def is_echo(first: int, second: int, seconds_apart: float) -> bool:
    """Is ``second``, ``seconds_apart`` after ``first``, the same request (see the module
    docstring)?  Two key presses (SIGINT, SIGQUIT) never are.

    >>> is_echo(signal.SIGTERM, signal.SIGTERM, 0.001), is_echo(signal.SIGTERM, signal.SIGINT, 0.5)
    (True, True)
    >>> is_echo(signal.SIGHUP, signal.SIGHUP, 0.001), is_echo(signal.SIGINT, signal.SIGHUP, 0.5)
    (True, True)
    >>> is_echo(signal.SIGINT, signal.SIGINT, 0.001), is_echo(signal.SIGTERM, signal.SIGTERM, 5.0)
    (False, False)
    >>> is_echo(signal.SIGINT, signal.SIGQUIT, 0.001)
    False
    """
    return seconds_apart <= ECHO_WINDOW and not (first in KEY_PRESSES and second in KEY_PRESSES)


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
    now = time.monotonic()
    if stop_request.requested():
        if is_echo(stop_request.received_signal(), signum, now - stop_request.first_at()):
            # the same request again (a group signal).  Its SIGTERM names it: CPython runs
            # pending handlers in signal-number order, so a SIGTERM and a SIGINT that
            # arrive together are handled SIGINT first, whichever was sent first
            if signum == signal.SIGTERM:
                stop_request.record(signum, stop_request.first_at(), replace=True)
            return
        if _second_raises[0]:
            _second_raises[0] = False
            raise KeyboardInterrupt     # an API caller's cluster start: abandoned, raised
        _end_children_and_exit(signum)
    stop_request.record(signum, now)
    if not _recording[0] and _owned[0]:
        # the command line, outside a search: stop where we are (recorded as well, so
        # a KeyboardInterrupt that a callback swallows is not lost) -- unless that is
        # inside the kernel compiler: then as soon as it is done
        if _in_compiler(frame) and _defer_the_stop():
            return
        raise KeyboardInterrupt


#: where a KeyboardInterrupt must not land: numba's compiler and its cache, and llvmlite
#: under them.  A compile interrupted half-way leaves LLVM objects half-built: their
#: finalizers print tracebacks, numba turns the interrupt into "RuntimeError: no compiled
#: object yet", and the interpreter's exit can crash on them (a first run compiles every
#: kernel it calls, for seconds)
_COMPILER_PACKAGES = ("numba", "llvmlite")
#: how often a deferred stop looks whether the compiler is done
_DEFER_POLL_SECONDS = 0.05


def _in_compiler(frame) -> bool:
    """Whether ``frame`` (the main thread's, where a handler runs) or a caller of it is in
    :data:`_COMPILER_PACKAGES`."""
    while frame is not None:
        if (frame.f_globals.get("__name__") or "").split(".", 1)[0] in _COMPILER_PACKAGES:
            return True
        frame = frame.f_back
    return False


def _defer_the_stop() -> bool:
    """Raise the recorded stop once the main thread has left the compiler: a SIGALRM
    every :data:`_DEFER_POLL_SECONDS` looks.  Only where SIGALRM is free (no handler or
    timer of anyone else's, e.g. a sweep's hard stop); False otherwise, and the caller
    raises at once.  A second stop signal meanwhile still ends the process at once."""
    if not hasattr(signal, "setitimer") or signal.getsignal(signal.SIGALRM) not in (
            signal.SIG_DFL, None) or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        return False
    signal.signal(signal.SIGALRM, _stop_once_out_of_compiler)
    signal.setitimer(signal.ITIMER_REAL, _DEFER_POLL_SECONDS)
    return True


def _stop_once_out_of_compiler(signum, frame):
    # pending: still ours to raise (not taken by a search, which reads the request, nor
    # raised by a loop's stop_if_requested)
    pending = _owned[0] and not _recording[0] and stop_request.requested() \
        and not stop_request.raised()
    if pending and _in_compiler(frame):
        signal.setitimer(signal.ITIMER_REAL, _DEFER_POLL_SECONDS)
        return
    _cancel_deferred_stop()
    if pending:
        stop_request.mark_raised()
        raise KeyboardInterrupt


def _cancel_deferred_stop() -> None:
    """No deferred stop any more: its timer off (else its SIGALRM, once the interpreter
    has put the default handlers back at its exit, would kill the process)."""
    if hasattr(signal, "setitimer") and \
            signal.getsignal(signal.SIGALRM) is _stop_once_out_of_compiler:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)


def own_process_signals(seen=(), first_at: float | None = None) -> None:
    """The command line's handlers for the rest of the process (main thread only):
    ``seen`` are the signals its early handler got before this module could be imported
    (the first one counts as received).  See the module docstring."""
    if threading.current_thread() is not threading.main_thread():
        return
    _owned[0] = True
    if seen and not stop_request.requested():
        stop_request.record(int(seen[0]), first_at)
    for s in stop_signals():
        signal.signal(s, _handler)


def release_process_signals(previous: dict | None = None) -> None:
    """Undo :func:`own_process_signals` (``previous``: {signal: handler} to put back;
    None: keep this module's handler, recording only, for the process's last moments)."""
    if threading.current_thread() is not threading.main_thread():
        return
    _cancel_deferred_stop()
    if previous is None:
        _recording[0] += 1          # from now on: record (and absorb echoes), never raise
        return
    _owned[0] = False
    for s, h in previous.items():
        signal.signal(s, h)
    reset()


@contextlib.contextmanager
def _recording_signals(api_reset: bool = True, second_raises: bool = False):
    """Record the stop signals (never raise) in the body; nested regions share the record.
    ``api_reset``: a fresh record when the handlers are not the command line's nor an
    outer region's.  ``second_raises``: when this region installed the handlers (an API
    caller, no search around it), a second signal raises KeyboardInterrupt rather than
    exiting."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    installed = None
    if signal.getsignal(signal.SIGINT) is not _handler:
        installed = {s: signal.getsignal(s) for s in stop_signals()}
        if api_reset and not _recording[0]:
            reset()
        for s in installed:
            signal.signal(s, _handler)
    raising = _second_raises[0]
    _second_raises[0] = bool(second_raises and installed is not None)
    _recording[0] += 1
    try:
        yield
    finally:
        _recording[0] -= 1
        _second_raises[0] = raising
        if installed is not None:
            for s, h in installed.items():
                signal.signal(s, h)


@contextlib.contextmanager
def handling_interrupts():
    """Record the stop signals instead of raising (main thread only; else a no-op).

    Nested (a sweep running searches in this process): the outer context owns the
    record, so a Ctrl-C that stopped this search also stops the loop around it.  Under
    the command line's handlers (:func:`own_process_signals`) a signal that arrived
    before the search started stops it at once: KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _owned[0] and not _recording[0] and stop_request.requested() \
            and signal.getsignal(signal.SIGINT) is _handler:
        raise KeyboardInterrupt
    with _recording_signals(api_reset=True):
        yield


def _children() -> set[int]:
    try:
        import psutil
        return {p.pid for p in psutil.Process().children(recursive=True)}
    except Exception:   # psutil missing or /proc unreadable
        return set()


def _direct_children() -> set[int]:
    try:
        import psutil
        return {p.pid for p in psutil.Process().children()}
    except Exception:
        return set()


def _trees(pids) -> set[int]:
    """``pids`` and all their descendants."""
    try:
        import psutil
    except ImportError:
        return set(pids)
    out = set()
    for pid in pids:
        out.add(pid)
        try:
            out.update(p.pid for p in psutil.Process(pid).children(recursive=True))
        except Exception:   # ended meanwhile
            pass
    return out


def _is_resource_tracker(pid: int) -> bool:
    """Is ``pid`` a multiprocessing resource tracker (``... resource_tracker import main``)?"""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"resource_tracker" in f.read()
    except OSError:
        return False


def _kill(pids) -> None:
    """SIGKILL ``pids``; resource trackers last.  Every process that uses multiprocessing
    (a nanny, a worker) has a tracker of its own among its children; one killed while
    its owner still runs makes the owner warn "resource_tracker: process died
    unexpectedly, relaunching" on the terminal (a ramp-up that ends its cluster's start
    kills both).  Killed after their owners, they warn no one."""
    pids = list(pids)
    trackers = {pid for pid in pids if _is_resource_tracker(pid)}
    for pid in [p for p in pids if p not in trackers] + sorted(trackers):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _blocks_sigterm(pid: int) -> bool:
    """Does process ``pid`` run with SIGTERM blocked (a process of a shielded start)?"""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("SigBlk:"):
                    return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    except (OSError, ValueError):
        pass
    return False


def _kill_started_at_exit() -> None:
    """At interpreter exit, SIGKILL every process of ours that blocks SIGTERM and is
    still running (a cluster whose close failed): multiprocessing's exit hook, which
    runs next, SIGTERMs its daemonic children and then waits for them without a
    timeout.  Registered as a multiprocessing finalizer, so it runs after every other
    exit hook (distributed closes the clusters left open first) and just before that.

    Never multiprocessing's own resource tracker: it is started with SIGTERM blocked too
    (``ensure_running`` blocks it around the spawn), it ends by itself when this process
    closes its pipe, and killing it first made every later semaphore release warn
    "resource_tracker: process died unexpectedly, relaunching" (Python 3.12)."""
    from multiprocessing import resource_tracker

    # (the interpreter is exiting: a nanny that sees its worker end here would log a
    # traceback while it tries to start it again, see ShieldedStart.abort)
    logging.getLogger("distributed.nanny").setLevel(logging.CRITICAL)
    tracker = getattr(resource_tracker._resource_tracker, "_pid", None)
    _kill(pid for pid in _children() if pid != tracker and _blocks_sigterm(pid))


_exit_hook = [False]


@contextlib.contextmanager
def _stop_signals_blocked():
    """The stop signals blocked in this thread, so that a process started meanwhile keeps
    them blocked for life.  For the resource tracker: it ignores SIGINT and SIGTERM by
    itself, but a group's SIGHUP (a closed terminal) would end it mid-run (its "died
    unexpectedly" warning, then a traceback per semaphore); it ends with its pipe."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, set(stop_signals()))
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (once per process) in this thread, with
    its stderr on /dev/null (see the module docstring), and the exit hook above."""
    from multiprocessing import resource_tracker, util

    if not _exit_hook[0]:
        _exit_hook[0] = True
        util.Finalize(None, _kill_started_at_exit, exitpriority=0)
    tracker = resource_tracker._resource_tracker
    if getattr(tracker, "_fd", None) is not None:
        with _stop_signals_blocked():
            resource_tracker.ensure_running()       # running (or restarted if it died)
        return
    try:
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    saved = devnull = None
    try:
        saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
    except OSError:         # no fd 2 to borrow: start it as it is
        saved = None
    try:
        with _stop_signals_blocked():
            resource_tracker.ensure_running()
    finally:
        if saved is not None:
            os.dup2(saved, 2)
            os.close(saved)
        if devnull is not None:
            os.close(devnull)


class ShieldedStart:
    """Run ``start()`` in a helper thread whose signal mask blocks the stop signals, so
    that every thread and process it starts inherits the block (see the module docstring).

    ``done()`` / ``wait(timeout)`` poll it; ``result()`` returns what ``start()``
    returned or raises what it raised.  ``abort(close)`` gets rid of a start whose
    result is no longer wanted, quickly and whatever its state: it sets ``cancelled``
    (a ``start`` may look at it between its steps), ends the processes the start
    created (by PID: a LocalCluster whose worker processes die fails its start within
    ~0.1 s, where finishing and closing it would take seconds), and closes what was
    started.  "Created by the start": children of this process that were not there
    when it began, and their descendants (multiprocessing's resource tracker is started
    first, so it is not one of them).
    """

    def __init__(self, start: Callable[[], object], name: str = "stealsearch-start",
                 cancelled: threading.Event | None = None):
        self._value = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self.cancelled = threading.Event() if cancelled is None else cancelled
        # multiprocessing's resource tracker (a child of ours, for every later start too)
        # UNblocks SIGINT and SIGTERM in the thread that first starts a process: start it
        # here, in the calling thread, before the helper thread blocks them and before the
        # processes of this start are told apart from those that were there already
        _quiet_resource_tracker()
        # a stray connection to the scheduler's port (an HTTP GET) logs a traceback per
        # connection from this process: one line instead
        from .quiet_logs import quiet_stray_connections
        quiet_stray_connections()
        self._before = _direct_children()
        self.t_start = time.perf_counter()
        self.t_done: float | None = None
        # a start made inside another start (a config's local cluster, the ramp-up's)
        # is cancelled with it too
        events = getattr(_starting, "events", ()) + (self.cancelled,)

        def run() -> None:
            _starting.events = events
            try:
                if hasattr(signal, "pthread_sigmask"):
                    signal.pthread_sigmask(signal.SIG_BLOCK, set(stop_signals()))
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
        """End every process the start created, by PID: the children of this process
        that were not there when it began, with their descendants.  Not the new
        descendants of children that were there: another child's own processes (the
        test suite's background package check had a client's resource tracker killed
        this way while an in-process ramp-up ended its cluster's start)."""
        _kill(_trees(_direct_children() - self._before))

    def abort(self, close: Callable[[object], None], timeout: float) -> None:
        """Cancel the start, end its processes, close what it started; errors are
        logged, not raised (a start whose result stopped mattering must not matter).
        While it runs, distributed's nanny logs nothing below CRITICAL: a nanny whose
        worker process this ends tries to start it again and, cancelled by the close,
        logs a ~30-line traceback (a SIGTERM that lands during a ramp-up's start); those
        workers are ended on purpose."""
        nanny_log = logging.getLogger("distributed.nanny")
        level = nanny_log.level
        nanny_log.setLevel(logging.CRITICAL)
        try:
            self._abort(close, timeout)
        finally:
            nanny_log.setLevel(level)

    def _abort(self, close: Callable[[object], None], timeout: float) -> None:
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


#: the cancelled events of the starts the current thread runs in (:func:`start_cancelled`)
_starting = threading.local()


def start_cancelled() -> bool:
    """Is the start this thread runs in (a :class:`ShieldedStart`'s, or one around it)
    being cancelled?  Its failures are then no news: what it started is being ended."""
    return any(e.is_set() for e in getattr(_starting, "events", ()))


def start_shielded(start: Callable[[], object], close: Callable[[object], None],
                   *, timeout: float = 600.0):
    """``start()`` through a :class:`ShieldedStart`, waited for here; its value.

    A first stop signal meanwhile ends the start at once: one line says so (from the
    main thread: a start waited for elsewhere, the ramp-up's in the background, is its
    waiter's to report), its processes are ended by PID and what it started is closed
    (:meth:`ShieldedStart.abort`), then KeyboardInterrupt is raised (the record stays,
    for the exit code 128 + n).  A second one abandons even that: KeyboardInterrupt for
    an API caller outside a search, an immediate exit under a search or the command line
    (:func:`_handler`).  ``timeout``: seconds the start may take before it is ended the
    same way (a ``TimeoutError``)."""
    main = threading.current_thread() is threading.main_thread()
    if main and _owned[0] and not _recording[0] and stop_request.requested():
        raise KeyboardInterrupt          # a signal before the start (one a callback swallowed)
    starter = ShieldedStart(start)
    try:
        with _recording_signals(api_reset=True, second_raises=True):
            before = stop_request.requested()
            deadline = time.monotonic() + timeout
            while not starter.wait(0.05):
                if stop_request.requested() and not before:
                    if main:
                        log.warning("interrupted: ending the cluster's start (Ctrl-C again "
                                    "to abandon it at once)")
                    starter.abort(close, ABORT_TIMEOUT)
                    raise KeyboardInterrupt
                if time.monotonic() > deadline:
                    starter.abort(close, ABORT_TIMEOUT)
                    raise TimeoutError(f"the cluster did not start within {timeout:.0f} s")
            interrupted = stop_request.requested() and not before
    except KeyboardInterrupt:
        starter.abandon()
        raise
    if interrupted:
        if not starter.failed:
            close(starter.result())
        raise KeyboardInterrupt
    return starter.result()
