"""The Dask tasks and worker-side calls of a search: the long-running task of one
worker in one epoch (:func:`run_epoch`), its waits for the search's problem and for
its share of rows, and the client's teardown (:func:`stop_searches`): the thin Dask
adapter of the worker core (:class:`stealsearch.engine.core.worker.WorkerSearch`, whose host
is the ``distributed`` Worker itself).  The problems and shares are the worker's
stealstack extension's (:mod:`.tables`, which says why a share is searched at most once,
and never for a discarded epoch).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ...core.epochs import EpochOutcome, EpochSpec
from ...core.result import WorkerStats
from ...core.stack import make_stack
from ...core.worker import WorkerSearch
from .tables import extension_of
from .wire import ShareTicket


def run_epoch(spec: EpochSpec, ticket: ShareTicket) -> EpochOutcome:
    """The long-running task of one worker in one epoch.  Its rows are not among its
    arguments: they were sent to this worker alone, and are taken from the worker's
    stealstack extension (once)."""
    from distributed import get_worker, secede

    worker = get_worker()
    rank = spec.peers.index(worker.address)
    key = (spec.search_id, spec.epoch)
    secede()   # a long-running task must not hold the worker's only thread slot

    def failed(why: str, problem_missing: bool = False) -> EpochOutcome:
        return EpochOutcome(
            rank=rank, address=worker.address, rows=None, counters=np.zeros(1, np.int64),
            best_value=None, best_buffer=None, history=[],
            stats=WorkerStats(worker=worker.address), rows_left_shared=0, stop_reason=None,
            failure=why, problem_missing=problem_missing)

    stealstack = extension_of(worker)
    if stealstack is None:      # the plugin never reached this worker: nothing can load here
        return failed(f"the problem of search {spec.search_id} is not loaded on "
                      f"{worker.address}", problem_missing=True)
    problem = stealstack.wait_for_problem(key, spec.load_wait)
    if problem is None:
        if stealstack.stop_of(key) is not None or stealstack.is_ended(spec.search_id):
            stealstack.forget_stop(key)
            return failed(f"stopped while loading the problem on {worker.address}")
        return failed(f"the problem of search {spec.search_id} is not loaded on "
                      f"{worker.address}", problem_missing=True)
    share, stopped = stealstack.wait_for_share(key, ticket.wait)
    if share is None:
        stealstack.forget_stop(key)
        if stopped:
            return failed(f"stopped before the rows of epoch {spec.epoch} reached "
                          f"{worker.address}")
        return failed(f"the rows of epoch {spec.epoch} did not reach {worker.address} "
                      f"within {ticket.wait:.0f} s")
    in_place = False
    if spec.proof is not None:
        # a proof: this epoch's parts go into the client's folder named in the spec when
        # this worker shares its filesystem, else into the search's folder on this
        # worker, from which the client pulls them (proof_parts.py)
        in_place = stealstack.proof_in_place(spec.search_id, spec.proof[0], spec.proof_token)
        if in_place is None:
            return failed(f"search {spec.search_id} ended on {worker.address}")
        if not in_place:
            folder = stealstack.proof_folder(spec.search_id)
            if folder is None:
                return failed(f"search {spec.search_id} ended on {worker.address}")
            spec = dataclasses.replace(spec, proof=(str(folder), spec.proof[1]))
    rows = make_stack(problem).codec.decode(share.payload)
    if len(rows) != ticket.n_rows or share.n_rows != ticket.n_rows:
        return failed(f"the share of epoch {spec.epoch} on {worker.address} has {len(rows)} "
                      f"rows, {ticket.n_rows} were dealt")
    search = WorkerSearch(worker, spec, rank, rows, problem)
    del share, rows                 # the stack holds its own copy
    early = stealstack.started(key, search)
    if early is not None:       # stopped ("cut") before it started: return the rows untouched
        search.handle_stop(early)
    try:
        outcome = search.run()
        outcome.proof_in_place = in_place
        search.outcome = outcome
        return outcome
    finally:
        search.stop_event.set()
        search.finished.set()
        stealstack.finished(key)


async def stop_searches(search_id, reason, dask_worker=None):
    """Stop every epoch of ``search_id`` on this worker and forget its problem and its
    shares (the client's teardown; a coroutine so that the client can send it without
    waiting).  A running epoch keeps its own reference to the problem until it returns."""
    stealstack = extension_of(dask_worker)
    if stealstack is not None:
        stealstack.end_search(search_id, reason)
    return "ok"
