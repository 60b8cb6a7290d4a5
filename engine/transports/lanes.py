"""Several search threads in this process, without Dask: the sequential backend with
``threads > 1`` (``--sequential --threads-per-worker T``).

:class:`Lanes` is a transport of the epoch loop (:mod:`stealsearch.engine.core.loop`) that
runs the very worker core of a Dask worker (:class:`stealsearch.engine.core.worker.WorkerSearch`,
whose docstring gives the exactness argument) on :class:`InProcessWorker`, a host that
is a one-peer search's whole world: an asyncio loop in a thread for the search's
messages, and the coordinator's handlers (credit, reports, stops) served by the search
itself.  No scheduler, no nanny, no client, no ``distributed`` import: this is the
"1 process x T threads" of benchmarks/results/threads.md with nothing else around it.

Epochs work as on Dask (:mod:`stealsearch.engine.core.epochs`): each ends as a consistent cut after
``checkpoint_every`` seconds (written to ``checkpoint`` if given), the next resumes from
it.  Limits: the time limit is the epochs' ``time_left``, the node limit the
coordinator's grant (the count never passes it), Ctrl-C stops the running epoch with
the result so far.

A proof (``solve(..., proof=PREFIX)``): each lane of each epoch writes its own part
(:class:`stealsearch.engine.core.worker.WorkerSearch`), a local file already, so
nothing here moves records; the epoch loop keeps or deletes them with the epoch.

The ramp-up's first phase (:mod:`stealsearch.engine.transports.rampup`) runs here too, for a problem
whose node code does not hold the GIL: ``hand_over`` is asked by the main thread every
``HANDOVER_POLL`` seconds (with the chunks run so far); True stops the running epoch with
stop reason ``"handover"``, exactly as a Ctrl-C stops it: the lanes end their chunks, the
outcome's open rows (the shared portion's and every lane's) become the cut, and the
epoch loop ends there.  A hand-over at a node count (``hand_over.hold_nodes``) is an
epoch whose node limit is the nodes left before it: the lanes stop there as at any
node limit, and the main thread asks ``hand_over.hold`` what that stop is (a
hand-over, or a cut the search goes on from).
"""
from __future__ import annotations

import asyncio
import dataclasses
import threading
import time

from ..core import stop_request
from ..core.epochs import COORDINATOR_OPS, GONE, PEER_TIMEOUT, Cut, EpochSpec, handler_name
from ..core.errors import SearchFailed
from ..core.loop import EpochRun, Transport
from ..core.problem import Problem
from ..core.proof import attach_scaffold
from ..core.stack import make_stack
from ..core.worker import WorkerSearch

#: the address of the in-process "worker"
ADDRESS = "in-process"
#: seconds between the main thread's looks at Ctrl-C and the live line
POLL = 0.1
#: seconds between the main thread's questions to the ramp-up's hand-over (a cluster
#: ready, or the caller's, is used within this; the question itself costs microseconds)
HANDOVER_POLL = 0.01


class _Loop:
    """The part of a tornado IOLoop the search uses: ``add_callback`` of a coroutine
    function, run on an asyncio loop in its own thread."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                       name="stealsearch-lanes-loop")
        self.thread.start()

    def add_callback(self, fn, *args):
        def start():
            r = fn(*args)
            if asyncio.iscoroutine(r):
                self.loop.create_task(r)
        self.loop.call_soon_threadsafe(start)

    def close(self):
        async def drain():     # messages still retrying end (their search has stopped)
            tasks = [t for t in asyncio.all_tasks(self.loop) if t is not asyncio.current_task()]
            if tasks:
                await asyncio.wait(tasks, timeout=1.0)
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            self.loop.stop()

        self.loop.call_soon_threadsafe(lambda: self.loop.create_task(drain()))
        self.thread.join(PEER_TIMEOUT)   # a local loop: this only bounds a wedged one
        if not self.thread.is_alive():
            self.loop.close()


class InProcessWorker:
    """What :class:`WorkerSearch` touches of a distributed Worker, for a one-peer search
    in this process: ``address``, ``loop``, ``handlers`` (its own coordinator's)."""

    def __init__(self, address: str = ADDRESS):
        self.address = address
        self.loop = _Loop()
        self.search = None
        self.handlers = {handler_name(op): self._coordinator(op) for op in COORDINATOR_OPS}

    def _coordinator(self, op):
        def handler(search_id, epoch, **msg):
            s = self.search
            if s is None or s.endpoint is None or s.spec.epoch != epoch:
                return GONE
            return getattr(s.endpoint, f"handle_{op}")(**msg)
        return handler

    def rpc(self, addr):        # one peer: a search never calls another
        raise SearchFailed(f"an in-process search has no peer {addr}")

    def close(self):
        self.loop.close()


class Lanes(Transport):
    """``threads`` search threads in this process, one worker core per epoch."""

    def __init__(self, threads: int, *, desc: str | None = None, hand_over=None):
        self.threads = int(threads)
        self.label = f"sequential[{self.threads} threads]"
        self.idle_worker = f"{ADDRESS} ({self.threads} threads)"
        self.worker: InProcessWorker | None = None
        self._desc = desc
        #: the ramp-up's question (see the module docstring); None: never hand over
        self.hand_over = hand_over
        self.chunks = 0            # over all epochs (the lanes' chunks summed)
        #: per lane, its busy and its whole seconds over all epochs (the result's one
        #: WorkerStats sums the lanes: these give the least busy lane's share)
        self.lane_busy = [0.0] * self.threads
        self.lane_seconds = [0.0] * self.threads

    def prepare(self, loop) -> None:
        self.worker = InProcessWorker(self.idle_worker)
        # load the kernel (numba's cache: up to ~1 s cold) before the search clock starts;
        # a proof's lanes run the proof kernel (an empty budget records nothing)
        stack = make_stack(loop.problem)
        if loop.proof is not None:
            attach_scaffold(stack)
        stack.run(0, loop.cut.incumbent(loop.problem))

    def desc(self, problem: Problem) -> str:
        return self._desc or f"{problem.name} on {self.threads} threads"

    def peers(self, loop) -> list[str]:
        return [self.idle_worker]

    def run_epoch(self, loop, spec: EpochSpec, cut: Cut) -> EpochRun:
        deadline = None if spec.time_left is None else time.perf_counter() + spec.time_left
        hold = getattr(self.hand_over, "hold_nodes", None)
        held = hold is not None and (spec.node_limit is None or
                                     hold - (cut.nodes - loop.carried) < spec.node_limit)
        if held:        # the ramp-up's hold: a node limit of this epoch
            spec = dataclasses.replace(spec, node_limit=max(0, hold - (cut.nodes - loop.carried)))
        search = WorkerSearch(self.worker, spec, 0, cut.rows(loop.codec), loop.problem)
        self.worker.search = search
        out = _run_epoch(search, loop.live, cut.nodes, self.hand_over, self.chunks)
        self.chunks += out.stats.chunks
        if held and out.failure is None and out.stop_reason == "node_limit":
            # the lanes stopped at the hold (a cut): hand it over, or go on from it (with
            # no row left, the loop then finds the search complete)
            verdict = self.hand_over.hold(self.chunks, deadline) if len(out.rows) else "released"
            out.stop_reason = "cut" if verdict == "released" else verdict
            if out.coordinator is not None:
                out.coordinator["stop_reason"] = out.stop_reason
        epoch = (out.stats.busy_seconds + out.stats.idle_seconds) / len(search.lanes)
        for lane in search.lanes:
            self.lane_busy[lane.index] += max(0.0, epoch - lane.idle_seconds)
            self.lane_seconds[lane.index] += epoch
        if out.failure is not None:       # no peer can fail here: a bug, not a rollback
            raise SearchFailed(f"an in-process epoch failed: {out.failure}")
        return EpochRun([out])

    def close(self, loop) -> None:
        if self.worker is not None:
            self.worker.search = None
            self.worker.close()

    def info(self, loop) -> dict:
        shares = [round(b / t, 4) if t > 0 else None
                  for b, t in zip(self.lane_busy, self.lane_seconds)]
        return {"threads": self.threads, "rows_left_shared": loop.rows_left_shared,
                "lane_busy_shares": shares,
                **({"carried_nodes": loop.carried} if loop.carried else {})}


def _run_epoch(search, live, base: int, hand_over=None, chunks_before: int = 0):
    """Run one epoch in a thread; the main thread forwards Ctrl-C as a stop, keeps the
    live line, and asks ``hand_over`` (with the chunks run so far) whether the ramp-up
    hands the rows over now (then the epoch stops with reason "handover").  Every wait
    is bounded: the epoch ends by its own clock."""
    box = {}

    def target():
        try:
            box["out"] = search.run()
        except BaseException as exc:        # reaches the caller as a failed epoch
            box["error"] = exc
        finally:
            search.finished.set()

    t = threading.Thread(target=target, daemon=True, name="stealsearch-lanes-epoch")
    t.start()
    limit = search.spec.epoch_seconds + search.spec.peer_timeout + 30.0
    started = time.monotonic()
    poll = POLL if hand_over is None else HANDOVER_POLL
    next_live = started
    try:
        while not search.finished.wait(poll):
            if stop_request.requested():
                search.handle_stop("interrupted")
            if hand_over is not None and not search.stop_event.is_set() and hand_over(
                    chunks_before + sum(lane.chunks for lane in search.lanes)):
                search.handle_stop("handover")
            now = time.monotonic()
            if now >= next_live:
                live.update(base + search.nodes, search.best_value)
                next_live = now + POLL
            if time.monotonic() - started > limit:
                search.handle_stop("stalled")
                if not search.finished.wait(search.spec.peer_timeout):
                    raise SearchFailed("an in-process epoch did not end")
    except KeyboardInterrupt:
        search.handle_stop("interrupted")
        search.finished.wait(search.spec.peer_timeout + 10)
    except BaseException:
        # the hand-over's question raised (a cluster asked for did not start): the lanes
        # stop first, so that no search thread outlives the error that reaches the caller
        search.handle_stop("failed")
        search.finished.wait(search.spec.peer_timeout + 10)
        t.join(search.spec.peer_timeout)
        raise
    t.join(search.spec.peer_timeout)
    if "error" in box:
        raise SearchFailed(f"an in-process epoch failed: {box['error']!r}") from box["error"]
    if "out" not in box:
        raise SearchFailed("an in-process epoch did not end")
    if box["out"].stop_reason == "stalled":
        raise SearchFailed("an in-process epoch ran far past its end and was stopped")
    return box["out"]
