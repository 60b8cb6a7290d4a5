"""The rule for one request that arrives as several signals, driven in-process (the
handlers called as Python calls them; no timing), and which signals are stop signals."""
import signal
import subprocess
import sys

import pytest

from stealsearch import cli
from stealsearch.engine.core import stop_request
from stealsearch.engine.deploy import interrupts


@pytest.fixture
def recording():
    stop_request.reset()
    with interrupts.handling_interrupts():
        yield
    stop_request.reset()


@pytest.mark.parametrize("first, second", [(signal.SIGINT, signal.SIGTERM),
                                           (signal.SIGTERM, signal.SIGINT),
                                           (signal.SIGTERM, signal.SIGTERM)])
def test_a_request_with_a_sigterm_in_it_is_a_sigterm(recording, first, second):
    """A job manager's SIGTERM and a SIGINT together are one request, named SIGTERM
    (exit 143) in whichever order the handlers run: CPython runs pending handlers in
    signal-number order, SIGINT first."""
    interrupts._handler(first, None)
    interrupts._handler(second, None)          # an echo: absorbed, no exit
    assert stop_request.requested()
    assert stop_request.received_signal() == signal.SIGTERM


def test_two_sigints_are_two_key_presses(recording, monkeypatch):
    exits = []
    monkeypatch.setattr(interrupts, "_end_children_and_exit", exits.append)
    interrupts._handler(signal.SIGINT, None)
    interrupts._handler(signal.SIGINT, None)
    assert exits == [signal.SIGINT] and stop_request.received_signal() == signal.SIGINT


def test_the_early_handler_names_a_request_with_a_sigterm_sigterm(monkeypatch):
    """The command line's handler while the engine loads keeps the same rule."""
    monkeypatch.setattr(cli, "_EARLY", [])
    with pytest.raises(KeyboardInterrupt):
        cli._early_handler(signal.SIGINT, None)
    cli._early_handler(signal.SIGTERM, None)   # the echo: no exit, no raise
    assert [s for s, _ in cli._EARLY] == [signal.SIGTERM]


STOP_SIGNALS = ("import sys; from stealsearch.engine.deploy.interrupts import stop_signals; "
                "print(sorted(s.name for s in stop_signals()))")


def test_sighup_and_sigquit_stop_a_search_unless_ignored_or_debugged():
    """SIGHUP and SIGQUIT are stop signals (as SIGTERM); not when the process started
    with them ignored (``nohup``), and SIGQUIT not when Python's fault handler is on."""
    def stops(*python, ignore=()):
        def preexec():      # (as in a terminal, whatever this test run was started with)
            for s in (signal.SIGHUP, signal.SIGQUIT):
                signal.signal(s, signal.SIG_IGN if s in ignore else signal.SIG_DFL)
        return subprocess.run([sys.executable, *python, "-c", STOP_SIGNALS], capture_output=True,
                              text=True, check=True, preexec_fn=preexec, timeout=60).stdout.strip()

    assert stops() == "['SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGTERM']"
    assert stops("-X", "faulthandler") == "['SIGHUP', 'SIGINT', 'SIGTERM']"
    assert stops(ignore=(signal.SIGHUP,)) == "['SIGINT', 'SIGQUIT', 'SIGTERM']"


def test_a_sighup_after_a_sigterm_is_its_echo_and_two_key_presses_are_not(recording,
                                                                         monkeypatch):
    """A closed terminal sends SIGHUP to the group and its shell another: one request."""
    exits = []
    monkeypatch.setattr(interrupts, "_end_children_and_exit", exits.append)
    interrupts._handler(signal.SIGHUP, None)
    interrupts._handler(signal.SIGHUP, None)
    interrupts._handler(signal.SIGTERM, None)
    assert exits == [] and stop_request.received_signal() == signal.SIGTERM
    stop_request.reset()
    interrupts._handler(signal.SIGQUIT, None)
    interrupts._handler(signal.SIGINT, None)
    assert exits == [signal.SIGINT]      # a second key press exits at once


@pytest.mark.timeout(120, method="thread")     # SIGALRM free, as in the command line
def test_a_stop_while_a_kernel_compiles_waits_for_the_compile():
    """The command line's first Ctrl-C outside a search stops where it is -- except inside
    numba's compiler (a first run compiles for seconds): a KeyboardInterrupt there leaves
    LLVM objects half-built ("no compiled object yet", tracebacks from their finalizers, a
    crash at exit).  Forced: the signal is sent from numba's own compile-start event, so
    it lands inside the compiler; the compile completes, then the stop is raised."""
    import os
    import time

    import numba
    from numba.core import event

    stop_request.reset()
    previous = {s: signal.getsignal(s) for s in interrupts.stop_signals()}
    add_one = numba.njit(lambda x: x + 1)       # a new function: compiled here, not cached
    results = []

    class SignalOnCompile(event.Listener):
        def on_start(self, ev):
            if not results:
                results.append("signalled")
                os.kill(os.getpid(), signal.SIGINT)

        def on_end(self, ev):
            pass

    interrupts.own_process_signals()
    try:
        with pytest.raises(KeyboardInterrupt):
            with event.install_listener("numba:compile", SignalOnCompile()):
                results.append(add_one(41))
            for _ in range(1000):                # the deferred stop arrives within 50 ms
                time.sleep(0.01)
        # raised once the compile was done: the function is compiled, and works
        assert results[0] == "signalled" and len(add_one.signatures) == 1
        assert add_one(41) == 42
        assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
        assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    finally:
        interrupts.release_process_signals(previous)
        stop_request.reset()
