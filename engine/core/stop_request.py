"""A request to stop the running search, and the signal that made it.

Whoever receives a stop records it here (the signal handlers of
:mod:`stealsearch.engine.deploy.interrupts`: a Ctrl-C, a job manager's SIGTERM); every
search loop reads it between chunks or polls and stops cleanly, reporting the result so
far as ``interrupted``.  A flag, not an exception: a KeyboardInterrupt raised in the
middle of a kernel call's bookkeeping could leave a stack half-updated.

>>> reset(); requested()
False
>>> record(2, at=0.0); requested(), received_signal()
(True, 2)
>>> reset()
"""
from __future__ import annotations

import time

#: the first signal of the pending request (one at most: a second one is either its
#: echo, absorbed, or a demand to exit at once, which never returns)
_signals: list[int] = []
_first_at = [0.0]
#: whether the pending request was raised as a KeyboardInterrupt already
_raised = [False]


def record(signum: int, at: float | None = None, replace: bool = False) -> None:
    """Record a request to stop (the first one counts; later ones are ignored here,
    unless ``replace``: the same request, named by another of its signals)."""
    if replace:
        _signals.clear()
    if not _signals:
        _signals.append(int(signum))
        _first_at[0] = time.monotonic() if at is None else at


def requested() -> bool:
    """True once a stop was recorded (and not reset)."""
    return bool(_signals)


def stop_if_requested() -> None:
    """Raise KeyboardInterrupt if a stop was recorded: for loops that run many
    searches (a sweep) and stop between them."""
    if _signals:
        _raised[0] = True
        raise KeyboardInterrupt


def raised() -> bool:
    """True once the pending request was raised as a KeyboardInterrupt (a handler that
    deferred its raise does not raise it a second time)."""
    return _raised[0]


def mark_raised() -> None:
    _raised[0] = True


def received_signal() -> int | None:
    """The signal of the pending request (for the exit code 128 + n), or None."""
    return _signals[0] if _signals else None


def first_at() -> float:
    """``time.monotonic()`` when the pending request was recorded."""
    return _first_at[0]


def reset() -> None:
    _signals.clear()
    _raised[0] = False
