"""The worker side's tables and handlers: the router of the search messages, the
problem and share tables of the set-up path, and the hand-over of a worker that
leaves gracefully.

Router: one comm handler per message name, dispatching to the search object of the
(search, epoch) the message names.

Set-up (``stealsearch_load``): the client pickles the problem once per search and
sends the same bytes to each worker once, with a plain comm call (no future, no task:
a future tied to a dying worker was what made earlier attempts flaky).  The handler
unpickles it and runs the kernel once (numba loads its cache: ~1-2 s on a fresh
process, nothing on a warm one), in a thread so the worker's event loop keeps serving,
and replies only then: the client starts its clock when every worker of the first
epoch has replied.  The problem then stays in :data:`PROBLEMS`, keyed by (worker,
search), until the client's teardown unloads it, or, if the client went away, until
it has not been used by any epoch for the ``keep_idle`` seconds the client asked for
(a periodic reaper): an external cluster never keeps a dead client's problem.  A worker
that lacks it when an epoch arrives answers ``problem_missing`` and is loaded again.

Shares (``stealsearch_share``): each epoch's rows for this worker arrive by one comm
call from the client, beside the epoch's task (whose arguments are only the spec and
a :class:`~.wire.ShareTicket`: nothing row-sized goes through the scheduler's graph).
The share is kept in :data:`SHARES` under (worker, search, epoch) until that epoch's
task takes it (:func:`take_share`).  Why no share is searched twice or searched for a
discarded epoch:

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
  (:mod:`stealsearch.engine.epochs`).  A share whose delivery failed aborts the epoch the same way.
* A stop ``cut`` (a peer left gracefully and the epoch is committed) keeps the
  share: the task waits for it and returns its rows as its outcome.

Waits are event-driven: a task waiting for its problem or its share sleeps on
:data:`CHANGED`, which every load, share, stop and teardown notifies.

Graceful leave: when a worker closes (``retire_workers``, ``cluster.scale`` down, a
SIGTERM), the plugin's ``teardown`` runs while the worker can still talk: it ends its
running epochs as a cut (the same code path as the epoch's own clock) and hands each
outcome over to the epoch's other peers (``stealsearch_handover``), from whom the
client fetches it (``stealsearch_handovers``).  The task's own result cannot be used:
the scheduler forgets a retiring worker before it closes.

The tables are module-global on each worker (keyed by the worker's address, since
workers of one process share them), so re-registering the plugin never drops a
running search; the plugin is registered once per client.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field

from distributed.diagnostics.plugin import WorkerPlugin

from ..epochs import COORDINATOR_OPS, GONE, WORKER_OPS, handler_name
from .wire import SETUP_OPS

logger = logging.getLogger("stealsearch")

PLUGIN_NAME = "stealsearch-stealstack"
#: seconds between two sweeps of the reaper (idle problems, stale hand-overs)
REAP_INTERVAL = 1.0
#: seconds a closing worker waits for its running epochs to end before it hands over
HANDOVER_WAIT = 5.0
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
_LOADING: dict[tuple[str, str], asyncio.Future] = {}
# worker address -> problems it unpickled (a test checks: once per search per worker)
LOADS: dict[str, int] = {}
# (worker address, search id): searches whose client ended them
_ENDED: dict[tuple[str, str], float] = {}
# worker addresses whose plugin was torn down (the worker closes): epoch tasks still
# waiting there for a problem or a share give up at once
_CLOSED: set[str] = set()
# (worker address, search id, epoch) -> {rank: EpochOutcome} handed over by leaving peers
HANDOVERS: dict[tuple[str, str, int], dict] = {}
_HANDOVER_TIMES: dict[tuple[str, str, int], float] = {}


def lookup(worker, search_id, epoch):
    return SEARCHES.get((worker.address, search_id, int(epoch)))


def ended(address: str, search_id: str) -> bool:
    """Has the client ended ``search_id`` on this worker (its teardown arrived), or is
    this worker closing (its plugin torn down)?"""
    return (address, search_id) in _ENDED or address in _CLOSED


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


def _stop_recorded(key, reason: str) -> None:
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


def _worker_handler(worker, op):
    def handler(search_id, epoch, **msg):
        search = lookup(worker, search_id, epoch)
        if search is None and op == "stop" and search_id:
            _stop_recorded((worker.address, search_id, int(epoch)), msg.get("reason", "stop"))
        return GONE if search is None else getattr(search, f"handle_{op}")(**msg)
    handler.__name__ = handler_name(op)
    return handler


def _coordinator_handler(worker, op):
    def handler(search_id, epoch, **msg):
        search = lookup(worker, search_id, epoch)
        if search is None or search.endpoint is None:
            return GONE
        return getattr(search.endpoint, f"handle_{op}")(**msg)
    handler.__name__ = handler_name(op)
    return handler


# -- the set-up path -------------------------------------------------------------------------
def _unpickle_and_warm(blob) -> tuple[object, float]:
    """Runs in a thread: the problem from its bytes, and its kernel run once (numba
    reads its on-disk cache the first time a process runs a kernel class)."""
    from distributed.protocol.pickle import loads

    from ..stack import make_stack

    t0 = time.perf_counter()
    problem = loads(blob)
    make_stack(problem).run(0, int(problem.initial_incumbent()))
    return problem, time.perf_counter() - t0


def _setup_handlers(worker) -> dict:
    async def load(search_id, blob, keep_idle):
        key = (worker.address, search_id)
        if key in PROBLEMS:
            PROBLEMS[key].touch()
            return {"status": "ok", "loaded": False, "seconds": 0.0}
        task = _LOADING.get(key)
        if task is None:
            task = _LOADING[key] = asyncio.ensure_future(
                asyncio.get_running_loop().run_in_executor(None, _unpickle_and_warm, blob))
        try:
            problem, seconds = await asyncio.shield(task)
        except Exception as exc:       # a problem that cannot load here: the client fails
            return {"status": "error", "message": f"{exc.__class__.__name__}: {exc}"}
        finally:
            if task.done():
                _LOADING.pop(key, None)
        with CHANGED:
            if key not in PROBLEMS and key not in _ENDED:
                PROBLEMS[key] = LoadedProblem(problem, float(keep_idle))
                LOADS[worker.address] = LOADS.get(worker.address, 0) + 1
            CHANGED.notify_all()
        return {"status": "ok", "loaded": True, "seconds": seconds}

    def share(search_id, epoch, payload, n_rows, keep):
        key = (worker.address, search_id, int(epoch))
        with CHANGED:
            if (worker.address, search_id) in _ENDED or discards(STOPPED.get(key)):
                return {"status": "dropped"}       # its epoch is discarded already
            SHARES[key] = Share(payload, int(n_rows), float(keep))
            CHANGED.notify_all()
        return {"status": "ok"}

    def unload(search_id):
        _end(worker.address, search_id)
        return "ok"

    def handover(search_id, epoch, rank, outcome):
        key = (worker.address, search_id, int(epoch))
        HANDOVERS.setdefault(key, {})[int(rank)] = outcome
        _HANDOVER_TIMES[key] = time.monotonic()
        return "ok"

    def handovers(search_id, epoch):
        from distributed.protocol import to_serialize

        return {"outcomes": to_serialize(HANDOVERS.get((worker.address, search_id, int(epoch)),
                                                       {}))}

    return {"load": load, "unload": unload, "share": share, "handover": handover,
            "handovers": handovers}


def _end(address: str, search_id: str) -> None:
    """Forget a search on this worker: its problem, its shares and its hand-overs."""
    with CHANGED:
        PROBLEMS.pop((address, search_id), None)
        _ENDED[(address, search_id)] = time.monotonic()
        while len(_ENDED) > ENDED_KEEP:
            _ENDED.pop(next(iter(_ENDED)))
        for key in [k for k in SHARES if k[0] == address and k[1] == search_id]:
            SHARES.pop(key, None)
        CHANGED.notify_all()
    for key in [k for k in HANDOVERS if k[0] == address and k[1] == search_id]:
        HANDOVERS.pop(key, None)
        _HANDOVER_TIMES.pop(key, None)


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
    for key, t in list(_HANDOVER_TIMES.items()):
        if key[0] == address and now - t > HANDOVER_KEEP:
            HANDOVERS.pop(key, None)
            _HANDOVER_TIMES.pop(key, None)


async def _hand_over(worker) -> None:
    """End this worker's running epochs as a cut and give their outcomes to peers."""
    mine = [s for k, s in list(SEARCHES.items()) if k[0] == worker.address]
    if not mine:
        return
    for search in mine:
        search.handle_stop("cut")
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + HANDOVER_WAIT
    for search in mine:
        left = max(0.0, deadline - time.monotonic())
        # the search thread needs this loop for its calls: wait for it off the loop
        await loop.run_in_executor(None, search.finished.wait, left)

    async def give(search, peer):
        from distributed.protocol import to_serialize

        spec = search.spec
        await asyncio.wait_for(worker.rpc(peer).stealsearch_handover(
            search_id=spec.search_id, epoch=spec.epoch, rank=search.rank,
            outcome=to_serialize(search.outcome)), spec.peer_timeout)

    for search in mine:
        if search.outcome is None:
            logger.warning("search %s: epoch %d did not end in time to hand over",
                        search.spec.search_id, search.spec.epoch)
            continue
        others = [a for r, a in enumerate(search.peers) if r != search.rank]
        replies = await asyncio.gather(*(give(search, a) for a in others),
                                       return_exceptions=True)
        if all(isinstance(r, Exception) for r in replies):
            logger.warning("search %s: nobody took the hand-over of epoch %d",
                        search.spec.search_id, search.spec.epoch)


class _HeartbeatNoise(logging.Filter):
    """Drops distributed's "Failed to communicate with scheduler during heartbeat" and
    its three chained tracebacks.  A worker logs it when its scheduler closes while a
    heartbeat is in flight: at the end of a run on a LocalCluster (a race inside
    distributed's shutdown, seen under load in the README's 4-worker example), or when
    the scheduler died, which the client reports itself in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Failed to communicate with scheduler during heartbeat")


def _drop_heartbeat_noise() -> None:
    log = logging.getLogger("distributed.worker")
    if not any(isinstance(f, _HeartbeatNoise) for f in log.filters):
        log.addFilter(_HeartbeatNoise())


class StealstackPlugin(WorkerPlugin):
    """Registers the stealstack's comm handlers on a worker, the reaper of idle
    problems, and the hand-over on a graceful close."""

    name = PLUGIN_NAME
    #: registering it again (another search from the same client, a second client)
    #: is a no-op on workers that have it
    idempotent = True

    def setup(self, worker):
        from tornado.ioloop import PeriodicCallback

        _CLOSED.discard(worker.address)
        _drop_heartbeat_noise()

        for op in WORKER_OPS:
            worker.handlers[handler_name(op)] = _worker_handler(worker, op)
        for op in COORDINATOR_OPS:
            worker.handlers[handler_name(op)] = _coordinator_handler(worker, op)
        for op, fn in _setup_handlers(worker).items():
            assert op in SETUP_OPS
            worker.handlers[handler_name(op)] = fn
        address = worker.address
        reaper = PeriodicCallback(lambda: reap(address), REAP_INTERVAL * 1000)
        worker.periodic_callbacks["stealsearch-reaper"] = reaper
        reaper.start()

    async def teardown(self, worker):
        from distributed.core import Status

        try:
            if worker.status in (Status.closing, Status.closing_gracefully):
                await _hand_over(worker)
        except Exception as exc:     # the client then rolls the epoch back, as for a loss
            logger.warning("hand-over failed: %r", exc)
        finally:
            for op in WORKER_OPS + COORDINATOR_OPS + SETUP_OPS:
                worker.handlers.pop(handler_name(op), None)
            reaper = worker.periodic_callbacks.pop("stealsearch-reaper", None)
            if reaper is not None:
                reaper.stop()
            with CHANGED:
                _CLOSED.add(worker.address)
                for key in [k for k in PROBLEMS if k[0] == worker.address]:
                    PROBLEMS.pop(key, None)
                for key in [k for k in SHARES if k[0] == worker.address]:
                    SHARES.pop(key, None)
                CHANGED.notify_all()


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
    return sum(1 for key in _LOADING if key[0] == dask_worker.address)


def load_count(dask_worker=None) -> int:
    """Problems this worker has unpickled since it started."""
    return LOADS.get(dask_worker.address, 0)
