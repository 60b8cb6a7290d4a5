"""The thin router: one comm handler per message name, dispatching to the search
object of the (search, epoch) the message names.

The table of running searches is module-global on each worker, so re-registering
the plugin never drops a running search; the plugin is registered once per client.
"""
from __future__ import annotations

from distributed.diagnostics.plugin import WorkerPlugin

from .wire import COORDINATOR_OPS, GONE, WORKER_OPS, handler_name

PLUGIN_NAME = "stealsearch-stealstack"

# (worker address, search id, epoch) -> WorkerSearch
SEARCHES: dict[tuple[str, str, int], object] = {}


def lookup(worker, search_id, epoch):
    return SEARCHES.get((worker.address, search_id, int(epoch)))


# (worker address, search id, epoch) -> reason: stops that arrived before the epoch's
# task started on this worker (it then returns at once); bounded in size
STOPPED: dict[tuple[str, str, int], str] = {}


def _worker_handler(worker, op):
    def handler(search_id, epoch, **msg):
        search = lookup(worker, search_id, epoch)
        if search is None and op == "stop" and search_id:
            if len(STOPPED) > 1000:
                STOPPED.clear()
            STOPPED[(worker.address, search_id, int(epoch))] = msg.get("reason", "stop")
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


class StealstackPlugin(WorkerPlugin):
    """Registers the stealstack's comm handlers on a worker."""

    name = PLUGIN_NAME
    #: registering it again (another search from the same client, a second client)
    #: is a no-op on workers that have it
    idempotent = True

    def setup(self, worker):
        for op in WORKER_OPS:
            worker.handlers[handler_name(op)] = _worker_handler(worker, op)
        for op in COORDINATOR_OPS:
            worker.handlers[handler_name(op)] = _coordinator_handler(worker, op)

    def teardown(self, worker):
        for op in WORKER_OPS + COORDINATOR_OPS:
            worker.handlers.pop(handler_name(op), None)


def running_searches(dask_worker=None) -> int:
    """Epochs of searches running on this worker now (``client.run`` it to check that
    nothing is left after a search; orphans would show here)."""
    return sum(1 for key in SEARCHES if key[0] == dask_worker.address)
