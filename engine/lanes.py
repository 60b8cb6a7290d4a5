"""Several search threads in this process, without Dask: the sequential backend with
``threads > 1`` (``--sequential --threads-per-worker T``).

It runs the very lanes of a Dask worker (:class:`stealsearch.engine.dask_backend.worker.WorkerSearch`,
whose docstring gives the exactness argument) on :class:`InProcessWorker`, a stand-in
for a distributed Worker that is a one-peer search's whole world: an asyncio loop in a
thread for the search's messages, and the coordinator's handlers (credit, reports,
stops) served by the search itself.  No scheduler, no nanny, no client: this is the
"1 process x T threads" of benchmarks/results/threads.md with nothing else around it.

Epochs work as on Dask (:mod:`stealsearch.engine.epochs`): each ends as a consistent cut after
``checkpoint_every`` seconds (written to ``checkpoint`` if given), the next resumes from
it.  Limits: the time limit is the epochs' ``time_left``, the node limit the
coordinator's grant (the count never passes it), Ctrl-C stops the running epoch with
the result so far.  The fraction-done estimate of the one-thread backend is not run
here (the live line shows nodes and the incumbent).
"""
from __future__ import annotations

import asyncio
import threading
import time
import uuid

from . import interrupts
from .checkpoint import CheckpointWriter
from .epochs import Cut
from .errors import SearchFailed
from .outcome import INTERRUPT_REASONS, build_result, remaining_bound
from .policy import StealPolicy
from .problem import Mode, Problem
from .progress import Progress
from .result import SearchResult, WorkerStats
from .stack import make_stack

#: the address of the in-process "worker"
ADDRESS = "in-process"
#: seconds between the main thread's looks at Ctrl-C and the live line
POLL = 0.1
#: a message to the own coordinator is a local call: this only bounds a wedged loop
PEER_TIMEOUT = 10.0


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
        self.thread.join(PEER_TIMEOUT)
        if not self.thread.is_alive():
            self.loop.close()


class InProcessWorker:
    """What :class:`WorkerSearch` touches of a distributed Worker, for a one-peer search
    in this process: ``address``, ``loop``, ``handlers`` (its own coordinator's)."""

    def __init__(self):
        self.address = ADDRESS
        self.loop = _Loop()
        self.search = None
        self.handlers = {f"stealsearch_{op}": self._coordinator(op)
                         for op in ("credit", "report", "request_stop", "progress")}

    def _coordinator(self, op):
        def handler(search_id, epoch, **msg):
            s = self.search
            if s is None or s.endpoint is None or s.spec.epoch != epoch:
                return "gone"
            return getattr(s.endpoint, f"handle_{op}")(**msg)
        return handler

    def rpc(self, addr):        # one peer: a search never calls another
        raise SearchFailed(f"an in-process search has no peer {addr}")

    def close(self):
        self.loop.close()


def run_lanes(problem: Problem, threads: int, *, policy: StealPolicy | None = None,
              time_limit: float | None = None, node_limit: int | None = None,
              progress: bool = False, checkpoint: str | None = None,
              checkpoint_every: float | None = None, checkpoint_info: dict | None = None,
              cut: Cut | None = None) -> SearchResult:
    """Search ``problem`` with ``threads`` lanes in this process (see the module docstring)."""

    from .epochs import DEFAULT_CHECKPOINT_EVERY, EpochSpec
    from .worker import WorkerSearch

    policy = policy or StealPolicy()
    t0 = time.perf_counter()
    codec = make_stack(problem).codec
    carried = 0 if cut is None else cut.nodes
    cut = cut or Cut.root(problem)
    writer = CheckpointWriter.open(checkpoint, problem, codec, policy, checkpoint_info)
    every = DEFAULT_CHECKPOINT_EVERY if checkpoint_every is None else float(checkpoint_every)
    stats = WorkerStats(worker=f"{ADDRESS} ({threads} threads)", rows_dealt=cut.n_rows())
    bar = Progress(progress, desc=f"{problem.name} on {threads} threads")
    worker = InProcessWorker()
    search_id = uuid.uuid4().hex[:12]
    elapsed0 = cut.elapsed
    stop_reason = None
    epoch = 0
    left_shared = 0       # rows the portion held at each cut (the conservation identity)
    t_search = time.perf_counter()
    try:
        if problem.mode is Mode.DECIDE and cut.best_value is not None:
            stop_reason = "found"
        while stop_reason is None:
            if cut.n_rows() == 0:
                break
            spent = time.perf_counter() - t_search
            if time_limit is not None and spent >= time_limit:
                stop_reason = "time_limit"
                break
            if node_limit is not None and cut.nodes - carried >= node_limit:
                stop_reason = "node_limit"
                break
            epoch += 1
            spec = EpochSpec(search_id=search_id, epoch=epoch, peers=[ADDRESS], policy=policy,
                             incumbent=cut.incumbent(problem), epoch_seconds=every,
                             time_left=None if time_limit is None else time_limit - spent,
                             node_limit=None if node_limit is None
                             else node_limit - (cut.nodes - carried),
                             t_offset=elapsed0 + spent, peer_timeout=PEER_TIMEOUT,
                             threads=threads)
            search = WorkerSearch(worker, spec, 0, cut.rows(codec), problem)
            worker.search = search
            out = _run_epoch(search, bar, cut.nodes, t0)
            if out.failure is not None:
                raise SearchFailed(f"an in-process epoch failed: {out.failure}")
            st = out.stats
            if st.rows_released != st.rows_acquired + out.rows_left_shared:
                raise SearchFailed("row conservation violated in an epoch (a protocol bug)")
            new = cut.advance(problem, {"": out.rows}, [out.counters])
            new.offer(out.best_value, out.best_buffer, out.history)
            new.elapsed = elapsed0 + time.perf_counter() - t_search
            cut = new
            for f in ("chunks", "releases", "rows_released", "acquires", "rows_acquired"):
                setattr(stats, f, getattr(stats, f) + getattr(st, f))
            left_shared += out.rows_left_shared
            stats.busy_seconds += st.busy_seconds
            stats.idle_seconds += st.idle_seconds
            reason = (out.coordinator or {}).get("stop_reason") or out.stop_reason
            if reason == "exhausted" and cut.n_rows():
                raise SearchFailed(f"termination declared with {cut.n_rows()} rows left")
            if reason in ("found", "time_limit", "node_limit", "interrupted"):
                stop_reason = reason
            elif writer is not None and cut.n_rows():
                writer.write(cut)
    except KeyboardInterrupt:       # between epochs: the last cut is the state
        stop_reason = "interrupted"
    finally:
        bar.close()
        worker.close()
    search_seconds = time.perf_counter() - t_search
    cut.elapsed = elapsed0 + search_seconds
    if writer is not None:
        writer.write(cut, status=stop_reason or "complete")
    stats.nodes = cut.nodes - carried
    stats.rows_left = cut.n_rows()
    rows = cut.rows(codec)
    rb = remaining_bound(problem, rows) if stop_reason in INTERRUPT_REASONS else None
    result = build_result(problem, backend=f"sequential[{threads} threads]",
                          counters=[cut.counters], best_value=cut.best_value,
                          best_buffer=cut.best_buffer, history=cut.history,
                          stop_reason=stop_reason or "complete", remaining_bound=rb,
                          workers=[stats], wall_seconds=time.perf_counter() - t0,
                          search_seconds=search_seconds, policy=policy.as_dict(),
                          info={"threads": threads, "rows_left_shared": left_shared,
                                **({"carried_nodes": carried} if carried else {})})
    result.epochs, result.recoveries, result.nodes_redone = cut.epochs, cut.recoveries, cut.nodes_redone
    if writer is not None:
        writer.describe(result)
    return result


def _run_epoch(search, bar, base: int, t0: float):
    """Run one epoch in a thread; the main thread forwards Ctrl-C as a stop and keeps the
    live line.  Every wait is bounded: the epoch ends by its own clock."""
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
    try:
        while not search.finished.wait(POLL):
            if interrupts.requested():
                search.handle_stop("interrupted")
            bar.update(base + search.nodes,
                       incumbent=search.best_value)
            if time.monotonic() - started > limit:
                search.handle_stop("stalled")
                if not search.finished.wait(search.spec.peer_timeout):
                    raise SearchFailed("an in-process epoch did not end")
    except KeyboardInterrupt:
        search.handle_stop("interrupted")
        search.finished.wait(search.spec.peer_timeout + 10)
    t.join(search.spec.peer_timeout)
    if "error" in box:
        raise SearchFailed(f"an in-process epoch failed: {box['error']!r}") from box["error"]
    if "out" not in box:
        raise SearchFailed("an in-process epoch did not end")
    if box["out"].stop_reason == "stalled":
        raise SearchFailed("an in-process epoch ran far past its end and was stopped")
    return box["out"]
