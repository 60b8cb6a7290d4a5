"""The rule for one request that arrives as several signals, driven in-process (the
handlers called as Python calls them; no timing)."""
import signal

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
