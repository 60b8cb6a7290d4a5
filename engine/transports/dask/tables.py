"""The worker side's state of the searches on a Dask worker, and the waits on it.

The tables are module-global on each worker, keyed by the worker's address (workers of
one process share them), so re-registering the plugin (:mod:`.plugin`, which fills
them from its handlers) never drops a running search.

Problems (:data:`PROBLEMS`): a search's problem stays here, keyed by (worker, search),
from its load until the client's teardown unloads it, or, if the client went away,
until no epoch used it for the ``keep_idle`` seconds the client asked for (the
reaper, :func:`reap`): an external cluster never keeps a dead client's problem.  A
worker that lacks it when an epoch arrives answers ``problem_missing`` and is loaded
again.

Shares (:data:`SHARES`): each epoch's rows for this worker, kept under (worker, search,
epoch) until that epoch's task takes them (:func:`take_share`).  Why no share is
searched twice or searched for a discarded epoch:

* A share is keyed by its epoch, and epoch numbers are never reused within a search
  (a rolled-back epoch is dealt again under a new number), so only the one task of
  that (search, epoch) on this worker can take it; taking pops it under
  :data:`CHANGED`'s lock, so it is taken at most once.
* A stop that discards the epoch (any reason but ``cut``) drops the share, and a
  share that arrives after such a stop (or after the search's teardown) is dropped
  on arrival and answered ``dropped``; the task of a stopped epoch returns without
  searching.  (A stop that cannot reach a stalled worker cannot stop it: its task may
  search its share until its own epoch clock ends, but the client never commits a
  discarded epoch's outcome, so those nodes are in no cut.)  The reaper drops a share no task took within the keep time the client
  asked for (a task cancelled before it started); a task that then finds no share
  fails its epoch, which rolls back.
* A share delivered to a worker that dies dies with it: the client still holds the
  cut it was dealt from, so the epoch rolls back and the rows are dealt again
  (:mod:`stealsearch.engine.core.epochs`).  A share whose delivery failed aborts the epoch the same way.
* A stop ``cut`` (a peer left gracefully and the epoch is committed) keeps the
  share: the task waits for it and returns its rows as its outcome.

Waits are event-driven: a task waiting for its problem or its share sleeps on
:data:`CHANGED`, which every load, share, stop and teardown notifies.

The probes at the end (:func:`running_searches`, :func:`loaded_problems`, ...) are
``client.run`` functions that read the tables: tests and benchmarks check with them
that nothing is left behind after a search.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field

logger = logging.getLogger("stealsearch")

#: seconds a hand-over is kept for the client to fetch
HANDOVER_KEEP = 120.0
#: searches remembered as ended (a load that completes after the unload is dropped)
ENDED_KEEP = 256

# (worker address, search id, epoch) -> WorkerSearch
SEARCHES: dict[tuple[str, str, int], object] = {}


@dataclass
class LoadedProblem:
    """A search's problem on one worker, and when an epoch last used it."""

    problem: object
    keep_idle: float
    last_used: float = field(default_factory=time.monotonic)

    def touch(self) -> None:
        self.last_used = time.monotonic()


# (worker address, search id) -> the problem of that search
PROBLEMS: dict[tuple[str, str], LoadedProblem] = {}
# (worker address, search id) -> the load under way (concurrent loads share it)
LOADING: dict[tuple[str, str], asyncio.Future] = {}
# worker address -> problems it unpickled (a test checks: once per search per worker)
LOADS: dict[str, int] = {}
# (worker address, search id): searches whose client ended them
ENDED: dict[tuple[str, str], float] = {}
# worker addresses whose plugin was torn down (the worker closes): epoch tasks still
# waiting there for a problem or a share give up at once
CLOSED: set[str] = set()
# (worker address, search id, epoch) -> {rank: EpochOutcome} handed over by leaving peers
HANDOVERS: dict[tuple[str, str, int], dict] = {}
HANDOVER_TIMES: dict[tuple[str, str, int], float] = {}


def lookup(worker, search_id, epoch):
    return SEARCHES.get((worker.address, search_id, int(epoch)))


def ended(address: str, search_id: str) -> bool:
    """Has the client ended ``search_id`` on this worker (its teardown arrived), or is
    this worker closing (its plugin torn down)?"""
    return (address, search_id) in ENDED or address in CLOSED


def problem_of(address: str, search_id: str):
    """The problem of ``search_id`` on this worker (touched), or None if not loaded."""
    entry = PROBLEMS.get((address, search_id))
    if entry is None:
        return None
    entry.touch()
    return entry.problem


# (worker address, search id, epoch) -> reason: stops that arrived before the epoch's
# task started on this worker (it then returns at once); bounded in size
STOPPED: dict[tuple[str, str, int], str] = {}
#: stops remembered (the oldest is forgotten first)
STOPPED_KEEP = 1000


@dataclass
class Share:
    """The rows dealt to this worker for one epoch, as the codec encoded them."""

    payload: object
    n_rows: int
    keep: float
    arrived: float = field(default_factory=time.monotonic)


# (worker address, search id, epoch) -> the share of that epoch, until its task takes it
SHARES: dict[tuple[str, str, int], Share] = {}
#: notified (under its lock) on every change a waiting epoch task may be waiting for:
#: a problem loaded, a share arrived, a stop, a search ended; the tables above are
#: changed under it where a waiter reads them
CHANGED = threading.Condition()


def record_stop(key, reason: str) -> None:
    """A stop for an epoch whose task has not started here: remember it; one that
    discards the epoch drops its share."""
    with CHANGED:
        STOPPED[key] = reason
        while len(STOPPED) > STOPPED_KEEP:
            STOPPED.pop(next(iter(STOPPED)))
        if reason != "cut":
            SHARES.pop(key, None)
        CHANGED.notify_all()


def discards(reason) -> bool:
    """Does a stop for this reason discard the epoch (anything but a cut)?"""
    return reason is not None and reason != "cut"


def take_share(key) -> Share | None:
    """Pop the share of ``key`` (at most once: the caller is that epoch's task)."""
    with CHANGED:
        return SHARES.pop(key, None)


def wait_for(ready, timeout: float) -> bool:
    """Block (a task's thread) until ``ready()`` is true or ``timeout`` s passed;
    ``ready`` is evaluated under :data:`CHANGED`'s lock, after every notification."""
    deadline = time.monotonic() + timeout
    with CHANGED:
        while not ready():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            CHANGED.wait(left)
        return True


def end_search(address: str, search_id: str) -> None:
    """Forget a search on this worker: its problem, its shares and its hand-overs."""
    with CHANGED:
        PROBLEMS.pop((address, search_id), None)
        ENDED[(address, search_id)] = time.monotonic()
        while len(ENDED) > ENDED_KEEP:
            ENDED.pop(next(iter(ENDED)))
        for key in [k for k in SHARES if k[0] == address and k[1] == search_id]:
            SHARES.pop(key, None)
        CHANGED.notify_all()
    for key in [k for k in HANDOVERS if k[0] == address and k[1] == search_id]:
        HANDOVERS.pop(key, None)
        HANDOVER_TIMES.pop(key, None)


def add_problem(key, problem, keep_idle: float) -> None:
    """A search's problem, loaded on this worker (not if the search ended meanwhile)."""
    with CHANGED:
        if key not in PROBLEMS and key not in ENDED:
            PROBLEMS[key] = LoadedProblem(problem, keep_idle)
            LOADS[key[0]] = LOADS.get(key[0], 0) + 1
        CHANGED.notify_all()


def add_share(key, share: Share) -> bool:
    """Keep an epoch's share until its task takes it; False (dropped) if the search
    ended or the epoch was discarded already."""
    with CHANGED:
        if key[:2] in ENDED or discards(STOPPED.get(key)):
            return False
        SHARES[key] = share
        CHANGED.notify_all()
    return True


def add_handover(key, rank: int, outcome) -> None:
    """The outcome a leaving peer of epoch ``key`` handed to this worker."""
    HANDOVERS.setdefault(key, {})[rank] = outcome
    HANDOVER_TIMES[key] = time.monotonic()


def close_worker(address: str) -> None:
    """The worker closes (its plugin is torn down): epoch tasks still waiting here for a
    problem or a share give up at once; its problems and shares go."""
    with CHANGED:
        CLOSED.add(address)
        for key in [k for k in PROBLEMS if k[0] == address]:
            PROBLEMS.pop(key, None)
        for key in [k for k in SHARES if k[0] == address]:
            SHARES.pop(key, None)
        CHANGED.notify_all()


def reap(address: str) -> None:
    """Drop problems no epoch used for their ``keep_idle`` seconds (the client went
    away without its teardown), shares no task took within their keep time, and
    hand-overs nobody fetched."""
    now = time.monotonic()
    with CHANGED:
        for key, share in list(SHARES.items()):
            if key[0] == address and now - share.arrived > share.keep:
                logger.info("dropping the share of search %s epoch %d: not taken in %.0f s",
                            key[1], key[2], now - share.arrived)
                SHARES.pop(key, None)
    running = {k[1] for k in SEARCHES if k[0] == address}
    for (addr, sid), entry in list(PROBLEMS.items()):
        if addr == address and sid not in running and now - entry.last_used > entry.keep_idle:
            logger.info("dropping the problem of search %s: idle for %.0f s", sid,
                        now - entry.last_used)
            PROBLEMS.pop((addr, sid), None)
    for key, t in list(HANDOVER_TIMES.items()):
        if key[0] == address and now - t > HANDOVER_KEEP:
            HANDOVERS.pop(key, None)
            HANDOVER_TIMES.pop(key, None)


def running_searches(dask_worker=None) -> int:
    """Epochs of searches running on this worker now (``client.run`` it to check that
    nothing is left after a search; orphans would show here)."""
    return sum(1 for key in SEARCHES if key[0] == dask_worker.address)


def loaded_problems(dask_worker=None) -> list[str]:
    """Searches whose problem this worker holds now (``client.run`` it: nothing may be
    left after a search's teardown)."""
    return sorted(sid for addr, sid in PROBLEMS if addr == dask_worker.address)


def shares_held(dask_worker=None) -> int:
    """Shares this worker holds that no task took yet (``client.run`` it: none may be
    left after a search)."""
    return sum(1 for key in SHARES if key[0] == dask_worker.address)


def loads_under_way(dask_worker=None) -> int:
    """Loads this worker is unpickling or warming now."""
    return sum(1 for key in LOADING if key[0] == dask_worker.address)


def load_count(dask_worker=None) -> int:
    """Problems this worker has unpickled since it started."""
    return LOADS.get(dask_worker.address, 0)
