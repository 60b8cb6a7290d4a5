"""What a Dask worker gets when the stealstack plugin is registered: the router of the
search messages, the handlers of the set-up path (problem loads, shares, hand-overs),
the reaper, the hand-over of a worker that leaves gracefully, and a quieter log.  The
tables these fill are :mod:`.tables`; the task that runs an epoch is :mod:`.task`.

Router: one comm handler per message name, dispatching to the search object of the
(search, epoch) the message names.

Set-up (``stealsearch_load``): the client pickles the problem once per search and
sends the same bytes to each worker once, with a plain comm call (no future, no task:
a future tied to a dying worker was what made earlier attempts flaky).  The handler
unpickles it and runs the kernel once (numba loads its cache: ~1-2 s on a fresh
process, nothing on a warm one), in a thread so the worker's event loop keeps serving,
and replies only then: the client starts its clock when every worker of the first
epoch has replied.  The problem then stays in :data:`.tables.PROBLEMS` (how long:
:mod:`.tables`).  Shares (``stealsearch_share``) go to :data:`.tables.SHARES` (why
none is searched twice or for a discarded epoch: :mod:`.tables`).

Graceful leave: when a worker closes (``retire_workers``, ``cluster.scale`` down, a
SIGTERM), the plugin's ``teardown`` runs while the worker can still talk: it ends its
running epochs as a cut (the same code path as the epoch's own clock) and hands each
outcome over to the epoch's other peers (``stealsearch_handover``), from whom the
client fetches it (``stealsearch_handovers``).  The task's own result cannot be used:
the scheduler forgets a retiring worker before it closes.

The plugin is registered once per client (:func:`.calls.register_plugin`).
"""
from __future__ import annotations

import asyncio
import logging
import time

from distributed.diagnostics.plugin import WorkerPlugin

from ...core.epochs import COORDINATOR_OPS, GONE, WORKER_OPS, handler_name
from ...deploy.quiet_logs import drop_heartbeat_noise, quiet_stray_connections
from . import tables
from .wire import SETUP_OPS

logger = logging.getLogger("stealsearch")

PLUGIN_NAME = "stealsearch-stealstack"
#: seconds between two sweeps of the reaper (idle problems, stale hand-overs)
REAP_INTERVAL = 1.0
#: seconds a closing worker waits for its running epochs to end before it hands over
HANDOVER_WAIT = 5.0


def _worker_handler(worker, op):
    def handler(search_id, epoch, **msg):
        search = tables.lookup(worker, search_id, epoch)
        if search is None and op == "stop" and search_id:
            tables.record_stop((worker.address, search_id, int(epoch)), msg.get("reason", "stop"))
        return GONE if search is None else getattr(search, f"handle_{op}")(**msg)
    handler.__name__ = handler_name(op)
    return handler


def _coordinator_handler(worker, op):
    def handler(search_id, epoch, **msg):
        search = tables.lookup(worker, search_id, epoch)
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

    from ...core.stack import make_stack

    t0 = time.perf_counter()
    problem = loads(blob)
    make_stack(problem).run(0, int(problem.initial_incumbent()))
    return problem, time.perf_counter() - t0


def _setup_handlers(worker) -> dict:
    async def load(search_id, blob, keep_idle):
        key = (worker.address, search_id)
        if key in tables.PROBLEMS:
            tables.PROBLEMS[key].touch()
            return {"status": "ok", "loaded": False, "seconds": 0.0}
        task = tables.LOADING.get(key)
        if task is None:
            task = tables.LOADING[key] = asyncio.ensure_future(
                asyncio.get_running_loop().run_in_executor(None, _unpickle_and_warm, blob))
        try:
            problem, seconds = await asyncio.shield(task)
        except Exception as exc:       # a problem that cannot load here: the client fails
            return {"status": "error", "message": f"{exc.__class__.__name__}: {exc}"}
        finally:
            if task.done():
                tables.LOADING.pop(key, None)
        tables.add_problem(key, problem, float(keep_idle))
        return {"status": "ok", "loaded": True, "seconds": seconds}

    def share(search_id, epoch, payload, n_rows, keep):
        key = (worker.address, search_id, int(epoch))
        kept = tables.add_share(key, tables.Share(payload, int(n_rows), float(keep)))
        return {"status": "ok" if kept else "dropped"}     # dropped: its epoch is discarded

    def unload(search_id, reason="teardown"):
        # the client's teardown: stop the search's running epochs, forget its problem
        # and shares (a running epoch keeps its own reference to the problem until it
        # returns)
        for key, search in list(tables.SEARCHES.items()):
            if key[0] == worker.address and key[1] == search_id:
                search.handle_stop(reason)
        tables.end_search(worker.address, search_id)
        return "ok"

    def handover(search_id, epoch, rank, outcome):
        tables.add_handover((worker.address, search_id, int(epoch)), int(rank), outcome)
        return "ok"

    def handovers(search_id, epoch):
        from distributed.protocol import to_serialize

        key = (worker.address, search_id, int(epoch))
        return {"outcomes": to_serialize(tables.HANDOVERS.get(key, {}))}

    return {"load": load, "unload": unload, "share": share, "handover": handover,
            "handovers": handovers}


async def _hand_over(worker) -> None:
    """End this worker's running epochs as a cut and give their outcomes to peers."""
    mine = [s for k, s in list(tables.SEARCHES.items()) if k[0] == worker.address]
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


class StealstackPlugin(WorkerPlugin):
    """Registers the stealstack's comm handlers on a worker, the reaper of idle
    problems, and the hand-over on a graceful close."""

    name = PLUGIN_NAME
    #: registering it again (another search from the same client, a second client)
    #: is a no-op on workers that have it
    idempotent = True

    def setup(self, worker):
        from tornado.ioloop import PeriodicCallback

        tables.CLOSED.discard(worker.address)
        drop_heartbeat_noise()
        quiet_stray_connections()

        for op in WORKER_OPS:
            worker.handlers[handler_name(op)] = _worker_handler(worker, op)
        for op in COORDINATOR_OPS:
            worker.handlers[handler_name(op)] = _coordinator_handler(worker, op)
        for op, fn in _setup_handlers(worker).items():
            assert op in SETUP_OPS
            worker.handlers[handler_name(op)] = fn
        address = worker.address
        reaper = PeriodicCallback(lambda: tables.reap(address), REAP_INTERVAL * 1000)
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
            tables.close_worker(worker.address)


