"""The Dask tasks and worker-side calls of a search: the long-running task of one
worker in one epoch (:func:`run_epoch`), the wait for the search's problem, and the
client's teardown (:func:`stop_searches`).  The search loop itself is
:class:`.worker.WorkerSearch`; the problem table is :mod:`.plugin`.
"""
from __future__ import annotations

import time

import numpy as np

from ..result import WorkerStats
from . import plugin
from .wire import EpochOutcome, EpochSpec
from .worker import WorkerSearch


def run_epoch(spec: EpochSpec, rows) -> EpochOutcome:
    """The long-running task of one worker in one epoch."""
    from distributed import get_worker, secede

    worker = get_worker()
    rank = spec.peers.index(worker.address)
    key = (worker.address, spec.search_id, spec.epoch)
    secede()   # a long-running task must not hold the worker's only thread slot
    problem = _wait_for_problem(worker.address, spec, key)
    if problem is None:
        stopped = plugin.STOPPED.pop(key, None) is not None
        return EpochOutcome(
            rank=rank, address=worker.address, rows=rows, counters=np.zeros(1, np.int64),
            best_value=None, best_buffer=None, history=[],
            stats=WorkerStats(worker=worker.address), rows_left_shared=0, stop_reason=None,
            failure=f"stopped while loading the problem on {worker.address}" if stopped else
            f"the problem of search {spec.search_id} is not loaded on {worker.address}",
            problem_missing=not stopped)
    search = WorkerSearch(worker, spec, rank, rows, problem)
    plugin.SEARCHES[key] = search
    early = plugin.STOPPED.pop(key, None)
    if early is not None:       # stopped before it started: return the rows untouched
        search.handle_stop(early)
    try:
        search.outcome = search.run()
        return search.outcome
    finally:
        search.stop_event.set()
        search.finished.set()
        plugin.SEARCHES.pop(key, None)
        plugin.problem_of(worker.address, spec.search_id)     # used until now


#: how often a first-epoch task looks for its problem while the load runs
LOAD_POLL = 0.005


def _wait_for_problem(address: str, spec: EpochSpec, key):
    """The search's problem on this worker; the first epoch's task waits for the load
    that the client sent with it (at most ``spec.load_wait`` s, less if stopped).
    None: not loaded (never, or dropped: the client loads it again) or stopped.

    A stop that ends the epoch as a cut (a peer left gracefully) keeps it waiting: the
    epoch is committed, so this worker must return its rows as a valid outcome, which
    needs the problem (its counters); any other stop discards the epoch."""
    deadline = time.monotonic() + spec.load_wait
    while True:
        problem = plugin.problem_of(address, spec.search_id)
        if problem is not None:
            return problem
        stop = plugin.STOPPED.get(key)
        if (stop is not None and stop != "cut") or plugin.ended(address, spec.search_id) \
                or time.monotonic() >= deadline:
            return None
        time.sleep(LOAD_POLL)


async def stop_searches(search_id, reason, dask_worker=None):
    """Stop every epoch of ``search_id`` on this worker and forget its problem (the
    client's teardown; a coroutine so that the client can send it without waiting).
    A running epoch keeps its own reference to the problem until it returns."""
    for key, search in list(plugin.SEARCHES.items()):
        if key[0] == dask_worker.address and key[1] == search_id:
            search.handle_stop(reason)
    plugin._end(dask_worker.address, search_id)
    return "ok"
