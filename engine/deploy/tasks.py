"""Plain functions as Dask tasks: the one runner of the work that is not a stealstack
search (a sweep's small items, the polynomial algorithms of ``stealsearch hrel``).

:func:`run_on_cluster` submits ``fn(*args)`` for each argument tuple, at most one task
per worker thread in flight (so a task's own clock starts when it starts, not while it
queues), takes each as it ends (``distributed.as_completed``) and reports it to the
caller; a task that runs past its own time is abandoned (cancelled), and at the
caller's stop (a deadline) the tasks in flight are cancelled and the rest never start.
Every wait is bounded; a first Ctrl-C / SIGTERM recorded by
:func:`stealsearch.engine.deploy.interrupts.handling_interrupts` stops it between polls.
"""
from __future__ import annotations

import os
import time
from collections import deque
from typing import Callable

from . import interrupts

#: seconds to fetch one finished task's result
FETCH_TIMEOUT = 60.0
#: seconds between two looks at the tasks in flight
POLL = 0.02


def worker_threads(client) -> int:
    """Tasks the cluster runs at once (its worker threads; 1 if it does not say)."""
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001 - an unanswered query: one at a time still works
        return 1


def run_on_cluster(client, fn, argument_lists, *,
                   on_done: Callable[[int, str, object], None],
                   stop: Callable[[], bool] = lambda: False,
                   task_seconds: list | None = None,
                   key: Callable[[int], str] | None = None) -> list[int]:
    """Run ``fn(*argument_lists[i])`` for every ``i`` as tasks on ``client``.

    ``on_done(i, status, value)`` is called in this thread as each ends: status ``"ok"``
    (``value``: what ``fn`` returned), ``"error"`` (``value``: the exception: the task's
    own, or why its result could not be fetched) or ``"timeout"`` (``task_seconds[i]``
    passed: the task was abandoned and cancelled; a late answer is dropped).  An
    exception raised by ``on_done`` ends the run (the tasks in flight are cancelled).
    ``stop()``: asked every poll; True ends the run at once.  ``key(i)``: the task's key.
    Returns the indices that were never reported (not started, or cancelled in flight).
    """
    from distributed import as_completed

    items = [tuple(a) for a in argument_lists]
    pending = deque(range(len(items)))
    slots = worker_threads(client)
    inflight: dict = {}          # future key -> (future, index, abandon at)
    reported: set[int] = set()
    ac = as_completed()
    try:
        while pending or inflight:
            interrupts.stop_if_requested()
            if stop():
                break
            while pending and len(inflight) < slots:
                i = pending.popleft()
                extra = {} if key is None else {"key": key(i)}
                fut = client.submit(fn, *items[i], pure=False, **extra)
                seconds = None if task_seconds is None else task_seconds[i]
                inflight[fut.key] = (fut, i, None if seconds is None
                                     else time.monotonic() + seconds)
                ac.add(fut)
            batch = ac.next_batch(block=False)
            for fut in batch:
                if fut.key not in inflight:
                    continue        # abandoned after its time; its late answer is dropped
                _, i, _ = inflight.pop(fut.key)
                try:
                    status, value = "ok", fut.result(timeout=FETCH_TIMEOUT)
                except Exception as exc:  # noqa: BLE001 - the task's error, a lost worker
                    status, value = "error", exc
                reported.add(i)
                on_done(i, status, value)
            now = time.monotonic()
            for k in [k for k, (_, _, at) in inflight.items() if at is not None and now > at]:
                fut, i, _ = inflight.pop(k)
                fut.cancel()
                reported.add(i)
                on_done(i, "timeout", None)
            if not batch:
                time.sleep(POLL)
    finally:
        for fut, _, _ in inflight.values():
            fut.cancel()
    return [i for i in range(len(items)) if i not in reported]


def task_key(prefix: str) -> str:
    """A fresh task key starting with ``prefix`` (a task of an earlier run never matches)."""
    return f"{prefix}-{os.urandom(3).hex()}"
