"""The Dask tasks and worker-side calls of a search: the long-running task of one
worker in one epoch (:func:`run_epoch`), its wait for the search's problem and for
its share of rows, and the client's teardown (:func:`stop_searches`): the thin Dask
adapter of the worker core (:class:`stealsearch.engine.core.worker.WorkerSearch`, whose host
is the ``distributed`` Worker itself).  The problem and share tables are :mod:`.tables`
(which says why a share is searched at most once, and never for a discarded epoch).
"""
from __future__ import annotations

import numpy as np

from ...core.epochs import EpochOutcome, EpochSpec
from ...core.result import WorkerStats
from ...core.stack import make_stack
from ...core.worker import WorkerSearch
from . import tables
from .wire import ShareTicket


def run_epoch(spec: EpochSpec, ticket: ShareTicket) -> EpochOutcome:
    """The long-running task of one worker in one epoch.  Its rows are not among its
    arguments: they were sent to this worker alone, and are taken from the plugin's
    share table (once)."""
    from distributed import get_worker, secede

    worker = get_worker()
    rank = spec.peers.index(worker.address)
    key = (worker.address, spec.search_id, spec.epoch)
    secede()   # a long-running task must not hold the worker's only thread slot

    def failed(why: str, problem_missing: bool = False) -> EpochOutcome:
        return EpochOutcome(
            rank=rank, address=worker.address, rows=None, counters=np.zeros(1, np.int64),
            best_value=None, best_buffer=None, history=[],
            stats=WorkerStats(worker=worker.address), rows_left_shared=0, stop_reason=None,
            failure=why, problem_missing=problem_missing)

    problem = _wait_for_problem(worker.address, spec, key)
    if problem is None:
        if tables.STOPPED.get(key) is not None or tables.ended(worker.address, spec.search_id):
            tables.STOPPED.pop(key, None)
            return failed(f"stopped while loading the problem on {worker.address}")
        return failed(f"the problem of search {spec.search_id} is not loaded on "
                      f"{worker.address}", problem_missing=True)
    share, why = _wait_for_share(worker.address, spec, key, ticket)
    if share is None:
        tables.STOPPED.pop(key, None)
        return failed(why)
    rows = make_stack(problem).codec.decode(share.payload)
    if len(rows) != ticket.n_rows or share.n_rows != ticket.n_rows:
        return failed(f"the share of epoch {spec.epoch} on {worker.address} has {len(rows)} "
                      f"rows, {ticket.n_rows} were dealt")
    search = WorkerSearch(worker, spec, rank, rows, problem)
    del share, rows                 # the stack holds its own copy
    tables.SEARCHES[key] = search
    early = tables.STOPPED.pop(key, None)
    if early is not None:       # stopped ("cut") before it started: return the rows untouched
        search.handle_stop(early)
    try:
        search.outcome = search.run()
        return search.outcome
    finally:
        search.stop_event.set()
        search.finished.set()
        tables.SEARCHES.pop(key, None)
        tables.problem_of(worker.address, spec.search_id)     # used until now


def _wait_for_problem(address: str, spec: EpochSpec, key):
    """The search's problem on this worker; the first epoch's task waits for the load
    that the client sent with it (at most ``spec.load_wait`` s, less if stopped).
    None: not loaded (never, or dropped: the client loads it again) or stopped.

    A stop that ends the epoch as a cut (a peer left gracefully) keeps it waiting: the
    epoch is committed, so this worker must return its rows as a valid outcome, which
    needs the problem (its counters); any other stop discards the epoch."""
    found = []

    def ready():
        problem = tables.PROBLEMS.get((address, spec.search_id))
        if problem is not None:
            found.append(problem)
            return True
        return tables.discards(tables.STOPPED.get(key)) or tables.ended(address, spec.search_id)

    tables.wait_for(ready, spec.load_wait)
    return tables.problem_of(address, spec.search_id) if found else None


def _wait_for_share(address: str, spec: EpochSpec, key, ticket: ShareTicket):
    """This epoch's share on this worker (taken: no one else gets it), or (None, why):
    not arrived within ``ticket.wait`` s, or the epoch was discarded meanwhile (then
    the share, if it comes, is dropped on arrival).  A stop ``cut`` keeps waiting, as
    for the problem."""
    arrived = tables.wait_for(
        lambda: key in tables.SHARES or tables.discards(tables.STOPPED.get(key))
        or tables.ended(address, spec.search_id), ticket.wait)
    share = tables.take_share(key)
    if share is not None and not tables.discards(tables.STOPPED.get(key)) \
            and not tables.ended(address, spec.search_id):
        return share, None
    if share is not None or arrived:
        return None, f"stopped before the rows of epoch {spec.epoch} reached {address}"
    return None, (f"the rows of epoch {spec.epoch} did not reach {address} within "
                  f"{ticket.wait:.0f} s")


async def stop_searches(search_id, reason, dask_worker=None):
    """Stop every epoch of ``search_id`` on this worker and forget its problem and its
    shares (the client's teardown; a coroutine so that the client can send it without
    waiting).  A running epoch keeps its own reference to the problem until it returns."""
    for key, search in list(tables.SEARCHES.items()):
        if key[0] == dask_worker.address and key[1] == search_id:
            search.handle_stop(reason)
    tables.end_search(dask_worker.address, search_id)
    return "ok"
