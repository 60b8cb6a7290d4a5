"""How should a steal travel?  Worker-to-worker comm handler vs a Dask actor.

The issue asks to measure before choosing.  From a task running on worker A, time
round trips to worker B: (1) an empty steal through the stealstack's comm handler,
(2) a steal of 64 rows x 6 int64, (3) the same two through an actor living on B.
Median of 300 calls each, in milliseconds.
"""
from __future__ import annotations

import collections
import statistics
import threading
import time

import numpy as np

from stealsearch.engine.deploy.cluster import dask_client

from .common import machine_header, write_section

CALLS = 300


class RowActor:
    def __init__(self):
        self.rows = np.arange(64 * 6, dtype=np.int64).reshape(64, 6)

    def steal(self, k):
        return self.rows[:k] if k else None


def time_handler(peer, k, calls=CALLS):
    from distributed import get_worker
    from distributed.utils import sync

    w = get_worker()

    async def call():
        return await w.rpc(peer).stealsearch_steal(search_id="bench-comm", epoch=0, k=k,
                                                   half=False)

    out = []
    for _ in range(calls):
        t = time.perf_counter()
        sync(w.loop, call)
        out.append(time.perf_counter() - t)
    return statistics.median(out) * 1e3


def fill_shared(dask_worker=None):
    """A fake search entry on the victim whose shared portion never runs dry: the real
    handler method (WorkerSearch.handle_steal) answers, through the real router."""
    from stealsearch.engine.transports.dask import EXTENSION_NAME
    from stealsearch.engine.core.worker import WorkerSearch
    from stealsearch.engine.core.stack import RowCodec
    from stealsearch.engine.core.stealstack import SharedPortion

    from stealsearch.engine.core.policy import StealPolicy

    class Bottomless(SharedPortion):
        def steal(self, k, half, at_least=0):
            return np.zeros((max(k, at_least), 6), dtype=np.int64), 1

    class Stack:
        codec = RowCodec(6)

    entry = WorkerSearch.__new__(WorkerSearch)     # only what handle_steal touches
    entry.stack = Stack()
    entry.shared = Bottomless(Stack.codec)
    entry.policy = StealPolicy().for_workers(2)
    # the replies it gives are remembered as a real worker's are, the last one only
    entry.gifts, entry.gift_lock, entry.gift_memory = collections.deque(), threading.Lock(), 0.0
    dask_worker.extensions[EXTENSION_NAME].searches[("bench-comm", 0)] = entry


def unfill_shared(dask_worker=None):
    """Remove :func:`fill_shared`'s entry (a worker that goes on searching)."""
    from stealsearch.engine.transports.dask import EXTENSION_NAME

    dask_worker.extensions[EXTENSION_NAME].searches.pop(("bench-comm", 0), None)


def time_actor(actor, k):
    out = []
    for _ in range(CALLS):
        t = time.perf_counter()
        actor.steal(k).result()
        out.append(time.perf_counter() - t)
    return statistics.median(out) * 1e3


def main():
    from stealsearch.engine.transports.dask import PLUGIN_NAME, StealstackPlugin, live_workers

    with dask_client(workers=2) as client:
        client.register_plugin(StealstackPlugin(), name=PLUGIN_NAME)   # (idempotent)
        a, b = live_workers(client)
        client.run(fill_shared, workers=[b])
        actor = client.submit(RowActor, workers=[b], actor=True).result()
        rows = []
        for k in (0, 64):
            h = client.submit(time_handler, b, k, workers=[a], pure=False).result()
            act = client.submit(time_actor, actor, k, workers=[a], pure=False).result()
            rows.append(f"| {'empty steal' if k == 0 else f'steal of {k} rows x 6 int64'} "
                        f"| {h:.3f} | {act:.3f} | {act / h:.1f}x |")
    lines = [machine_header(), "",
             f"Round trip from a task on worker A to worker B, median of {CALLS} calls, ms.", "",
             "| message | comm handler | actor method | actor / handler |", "|---|---|---|---|",
             *rows, "",
             "Chosen: comm handlers (registered by a WorkerPlugin). Actors are also lost with "
             "their worker."]
    write_section("benchmarks/results/comm.md", "Steal transport: comm handler vs actor", lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
