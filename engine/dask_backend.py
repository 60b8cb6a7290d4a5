"""The Dask backend: the stealstack protocol over the workers of a distributed cluster.

Shape of a run (seed 003, ch. 3 and §4.1-4.2):

1. The client expands the root frontier until every worker can get a row, and deals
   the rows round-robin (§4.1: "children of the root dealt modulus the number of
   threads").
2. ``client.run`` sets up one :class:`WorkerSearch` per worker (its share, its
   shared portion, its credit; rank 0 also hosts the :class:`Coordinator`) and
   warms the kernel (numba loads it from its on-disk cache).
3. One long-running task per worker (pinned to it) ``secede``\\ s and runs the
   search loop: kernel chunks on the local portion, RELEASE of k bottom rows when the
   local portion exceeds the threshold, ACQUIRE from the own shared portion when
   empty, FINDWORK/STEAL from peers when both are empty.
4. Steals, incumbent updates, credit returns, progress reports and stop messages go
   worker to worker through comm handlers registered by :class:`StealstackPlugin`
   (``worker.rpc(addr).stealsearch_steal(...)``).  The scheduler is not on the steal
   path: it only starts the tasks and returns their results.  Measured choice (see
   ARCHITECTURE.md): handlers answer in ~1 ms, actors in 1.5-3.4 ms and die with their
   worker; Pub/Sub no longer exists.
5. Termination is exact (credit recovery, :mod:`engine.termination`); each worker
   returns its counters, best solution and statistics, and the client merges them.

Tunables live in :class:`engine.policy.StealPolicy`; the module constants below are
the protocol's timing knobs.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid

import numpy as np

from .errors import InputError, SearchFailed
from .outcome import build_result, merge_history, remaining_bound
from .policy import StealPolicy
from .problem import IMPROVED, Mode, Problem
from .progress import Progress
from .result import SearchResult, WorkerStats
from .stack import BudgetTuner, make_stack
from .stealstack import SharedPortion
from .termination import Coordinator
from .victims import VictimOrder

logger = logging.getLogger("stealsearch")

#: seconds between a worker's progress reports to the coordinator (node limit,
#: live progress, shared-size gossip for the "richest" order).
REPORT_INTERVAL = 0.1
#: a peer that does not answer a steal in this many seconds is taken for dead.  The
#: rows of a steal whose reply is lost cannot be recovered exactly, so the search
#: fails rather than return a wrong count.
PEER_TIMEOUT = 30.0
#: rows the client expands at most before dealing (it stops once every worker can
#: get a row).
SETUP_NODE_CAP = 10_000
#: how often the client polls for progress and for dead workers.
CLIENT_POLL = 0.25

PLUGIN_NAME = "stealsearch-stealstack"

# (worker address, search id) -> WorkerSearch; module-global so re-registering the
# plugin never drops a running search.
_SEARCHES: dict[tuple[str, str], "WorkerSearch"] = {}


def _lookup(worker, search_id):
    return _SEARCHES.get((worker.address, search_id))


class WorkerSearch:
    """One search's state on one worker."""

    def __init__(self, worker, search_id, problem: Problem, rank, peers, rows,
                 policy: StealPolicy, deadline, node_limit, t0, incumbent):
        self.worker = worker
        self.search_id = search_id
        self.problem = problem
        self.rank = rank
        self.peers = peers
        self.policy = policy
        self.deadline = deadline
        self.t0 = t0
        self.stack = make_stack(problem)
        self.stack.push(rows)
        self.shared = SharedPortion(self.stack.codec)
        self.victims = VictimOrder(policy, rank, len(peers))
        self.coordinator = Coordinator(len(peers), node_limit) if rank == 0 else None
        self.incumbent = int(incumbent)
        self.stop_event = threading.Event()
        self.stop_reason: str | None = None
        self.best_value = None
        self.best_buffer = None
        self.history: list[tuple[float, int]] = []
        self.stats = WorkerStats(worker=worker.address, rows_dealt=len(rows))
        self.failure: str | None = None
        # Load the kernel now (numba reads its on-disk cache), before the clock starts.
        self.stack.run(0, self.incumbent)

    # -- messaging from the search thread ---------------------------------------------
    def _call(self, to: int, op: str, timeout: float = PEER_TIMEOUT, **kwargs):
        """Synchronous request/reply to a peer's handler, run on the worker's loop."""
        from distributed.utils import sync

        async def call():
            rpc = self.worker.rpc(self.peers[to])
            return await asyncio.wait_for(getattr(rpc, op)(search_id=self.search_id, **kwargs),
                                          timeout)

        return sync(self.worker.loop, call)

    def _post(self, to: int, op: str, on_reply=None, **kwargs) -> None:
        """Fire-and-forget message to a peer (or to this worker's own handler)."""
        if to == self.rank:
            reply = HANDLERS[op](self.worker, search_id=self.search_id, **kwargs)
            if asyncio.iscoroutine(reply):
                self.worker.loop.add_callback(self._finish_local, reply, on_reply)
            elif on_reply is not None:
                on_reply(reply)
            return

        async def send():
            try:
                rpc = self.worker.rpc(self.peers[to])
                reply = await asyncio.wait_for(
                    getattr(rpc, op)(search_id=self.search_id, **kwargs), PEER_TIMEOUT)
                if on_reply is not None:
                    on_reply(reply)
            except Exception as exc:  # a lost message must not pass unnoticed
                self.failure = f"{op} to {self.peers[to]} failed: {exc!r}"
                self.stop_event.set()

        self.worker.loop.add_callback(send)

    async def _finish_local(self, coro, on_reply):
        reply = await coro
        if on_reply is not None:
            on_reply(reply)

    def request_stop(self, reason: str) -> None:
        self._post(0, "stealsearch_request_stop", reason=reason)

    # -- the search loop -----------------------------------------------------------------
    def run(self) -> dict:
        pol, stack, shared = self.policy, self.stack, self.shared
        start = time.time()
        next_report = start
        backoff = pol.idle_backoff
        idle_since = None
        stats = self.stats
        tuner = BudgetTuner(pol)
        while not self.stop_event.is_set():
            if len(stack):
                if idle_since is not None:
                    stats.idle_seconds += time.time() - idle_since
                    idle_since = None
                status, value = tuner.run(stack, self.incumbent)
                stats.chunks += 1
                if status == IMPROVED:
                    self._improved(value)
                    if self.stop_event.is_set():
                        break
                # RELEASE: the oldest rows beyond the threshold, k at a time
                while len(stack) > pol.release_threshold:
                    shared.release(stack.take_bottom(pol.k))
            else:
                rows = shared.acquire(pol.acquire)        # ACQUIRE
                if rows is not None:
                    stack.push(rows)
                    continue
                if idle_since is None:
                    idle_since = time.time()
                e = shared.return_credit_if_empty()
                if e is not None:
                    self._post(0, "stealsearch_credit", exponent=e)
                if pol.stealing and self._findwork():
                    backoff = pol.idle_backoff
                    continue
                self.stop_event.wait(backoff)
                backoff = min(backoff * 2, pol.idle_backoff_max)
            now = time.time()
            if now >= next_report:
                self._report()
                next_report = now + REPORT_INTERVAL
            if self.deadline is not None and now >= self.deadline:
                self.stop_reason = self.stop_reason or "time_limit"
                self.request_stop("time_limit")
                break
        end = time.time()
        if idle_since is not None:
            stats.idle_seconds += end - idle_since
        stats.busy_seconds = end - start - stats.idle_seconds
        return self._final(start, end)

    def _findwork(self) -> bool:
        """Poll victims in policy order; STEAL from the first with shared rows."""
        st = self.stats
        for victim in self.victims.round():
            if self.stop_event.is_set():
                return False
            st.steals_tried += 1
            try:
                reply = self._call(victim, "stealsearch_steal", k=self.policy.k,
                                   half=self.policy.steal_half)
            except Exception as exc:
                self.failure = f"steal from {self.peers[victim]} failed: {exc!r}"
                self.stop_event.set()
                return False
            if reply is None:       # peer has not set the search up yet, or tore it down
                continue
            self.victims.known_sizes[victim] = reply.get("shared", 0)
            if reply.get("n"):
                rows = self.stack.codec.decode(reply["rows"])
                self.shared.receive_credit(reply["credit"])
                self.stack.push(rows)
                st.steals_succeeded += 1
                st.rows_stolen += len(rows)
                return True
        return False

    def _improved(self, value: int) -> None:
        if value > self.incumbent:
            self.incumbent = value
        self.best_value = value
        self.best_buffer = self.stack.solution.copy()
        self.history.append((time.time() - self.t0, value))
        if self.problem.mode is Mode.DECIDE:
            self.stop_reason = "found"
            self.stop_event.set()
            self.request_stop("found")
            return
        for r in range(len(self.peers)):
            if r != self.rank:
                self._post(r, "stealsearch_incumbent", value=int(value))

    def _report(self) -> None:
        def on_reply(reply):
            if reply:
                self.victims.known_sizes = list(reply["shared"])

        self._post(0, "stealsearch_report", on_reply=on_reply, rank=self.rank,
                   nodes=self.stack.nodes, shared=len(self.shared),
                   steals=self.stats.steals_succeeded, best=self.best_value)

    def _final(self, start: float, end: float) -> dict:
        st = self.stats
        sh = self.shared
        st.nodes = self.stack.nodes
        st.releases, st.rows_released = sh.releases, sh.rows_released
        st.acquires, st.rows_acquired = sh.acquires, sh.rows_acquired
        st.rows_given = sh.rows_given
        left_shared = sh.drain()
        left = np.concatenate([self.stack.live(), left_shared]) if len(left_shared) else self.stack.live()
        st.rows_left = len(left)
        bound = remaining_bound(self.problem, left) if self.problem.mode is Mode.OPTIMISE else None
        out = {"stats": st, "counters": self.stack.counters.copy(), "best_value": self.best_value,
               "best_buffer": self.best_buffer, "history": self.history,
               "rows_left_shared": len(left_shared), "remaining_bound": bound,
               "start": start, "end": end, "stop_reason": self.stop_reason,
               "failure": self.failure}
        if self.coordinator is not None:
            out["coordinator"] = self.coordinator.snapshot()
        return out


# -- handlers (run on the worker's event loop) ---------------------------------------------
def _handle_steal(worker, search_id, k, half):
    st = _lookup(worker, search_id)
    if st is None:
        return None
    rows, credit = st.shared.steal(int(k), bool(half))
    if rows is None:
        return {"n": 0, "shared": len(st.shared)}
    return {"rows": st.stack.codec.encode(rows), "n": len(rows), "credit": credit,
            "shared": len(st.shared)}


def _handle_incumbent(worker, search_id, value):
    st = _lookup(worker, search_id)
    if st is not None and value > st.incumbent:
        st.incumbent = int(value)
    return "ok"


def _handle_stop(worker, search_id, reason):
    st = _lookup(worker, search_id)
    if st is not None:
        if st.stop_reason is None:
            st.stop_reason = reason
        st.stop_event.set()
    return "ok"


async def _broadcast_stop(worker, st: WorkerSearch, reason: str):
    async def one(addr):
        try:
            await asyncio.wait_for(worker.rpc(addr).stealsearch_stop(
                search_id=st.search_id, reason=reason), PEER_TIMEOUT)
        except Exception as exc:  # the peer is gone; the client notices and fails
            logger.warning("stop to %s failed: %r", addr, exc)

    _handle_stop(worker, st.search_id, reason)
    await asyncio.gather(*(one(a) for r, a in enumerate(st.peers) if r != st.rank))


def _handle_credit(worker, search_id, exponent):
    st = _lookup(worker, search_id)
    if st is None or st.coordinator is None:
        return "ignored"
    if st.coordinator.add_credit(int(exponent)):
        return _broadcast_stop(worker, st, "exhausted")
    return "ok"


def _handle_request_stop(worker, search_id, reason):
    st = _lookup(worker, search_id)
    if st is None or st.coordinator is None:
        return "ignored"
    if st.coordinator.request_stop(reason):
        return _broadcast_stop(worker, st, reason)
    return "ok"


def _handle_report(worker, search_id, rank, nodes, shared, steals, best):
    st = _lookup(worker, search_id)
    if st is None or st.coordinator is None:
        return None
    c = st.coordinator
    if c.report(int(rank), int(nodes), int(shared), int(steals), best):
        return _report_then_stop(worker, st, c)
    return {"shared": list(c.shared_sizes), "stop": c.stop_reason}


async def _report_then_stop(worker, st, c):
    await _broadcast_stop(worker, st, c.stop_reason)
    return {"shared": list(c.shared_sizes), "stop": c.stop_reason}


HANDLERS = {
    "stealsearch_steal": _handle_steal,
    "stealsearch_incumbent": _handle_incumbent,
    "stealsearch_stop": _handle_stop,
    "stealsearch_credit": _handle_credit,
    "stealsearch_request_stop": _handle_request_stop,
    "stealsearch_report": _handle_report,
}


def _bind(worker, fn):
    def handler(**msg):
        return fn(worker, **msg)
    handler.__name__ = fn.__name__
    return handler


try:
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # pragma: no cover - distributed is a hard dependency
    WorkerPlugin = object


class StealstackPlugin(WorkerPlugin):
    """Registers the stealstack's comm handlers on every worker (idempotent)."""

    name = PLUGIN_NAME

    def setup(self, worker):
        for op, fn in HANDLERS.items():
            worker.handlers[op] = _bind(worker, fn)

    def teardown(self, worker):
        for op in HANDLERS:
            worker.handlers.pop(op, None)


# -- functions shipped to workers --------------------------------------------------------------
def _setup_on_worker(search_id, problem, peers, shares, policy, deadline, node_limit, t0,
                     incumbent, dask_worker=None):
    worker = dask_worker
    rank = peers.index(worker.address)
    _SEARCHES[(worker.address, search_id)] = WorkerSearch(
        worker, search_id, problem, rank, peers, shares[rank], policy, deadline, node_limit,
        t0, incumbent)
    return rank


def _search_loop(search_id):
    from distributed import get_worker, secede

    worker = get_worker()
    st = _lookup(worker, search_id)
    if st is None:
        raise SearchFailed(f"search {search_id} was not set up on {worker.address}")
    secede()   # a long-running task must not hold the worker's only thread slot
    return st.run()


def _teardown_on_worker(search_id, dask_worker=None):
    _SEARCHES.pop((dask_worker.address, search_id), None)


def _stop_on_worker(search_id, reason, dask_worker=None):
    _handle_stop(dask_worker, search_id, reason)


def _progress_on_worker(search_id, dask_worker=None):
    st = _lookup(dask_worker, search_id)
    return None if st is None or st.coordinator is None else st.coordinator.snapshot()


# -- the client side ----------------------------------------------------------------------------
def live_workers(client) -> list[str]:
    """Addresses of the cluster's workers, asked of the scheduler now.

    (``client.scheduler_info()`` returns a cache that a periodic callback refreshes
    with ``n_workers=0``, i.e. with no workers; reading it can race with that.)"""
    info = client.sync(client.scheduler.identity, n_workers=-1)
    return sorted(info["workers"])


def _deal(problem: Problem, n: int):
    """Expand the root frontier in the client until ``n`` workers can each get a row.

    Returns (rows per worker, setup counters, best (value, buffer, history), incumbent)."""
    t0 = time.time()
    stack = make_stack(problem)
    stack.push(np.ascontiguousarray(problem.root_frontier(), dtype=np.int64))
    incumbent = int(problem.initial_incumbent())
    best = (None, None, [])
    while 0 < len(stack) < n and stack.nodes < SETUP_NODE_CAP:
        status, value = stack.run(1, incumbent)
        if status == IMPROVED:
            incumbent = value
            best = (value, stack.solution.copy(), best[2] + [(time.time() - t0, value)])
            if problem.mode is Mode.DECIDE:
                break
    rows = stack.take_all()
    # seed §4.1: deal round-robin (row i to worker i mod n)
    return [rows[i::n] for i in range(n)], stack.counters.copy(), best, incumbent


def run_dask(problem: Problem, client, *, workers: int | None = None,
             policy: StealPolicy | None = None, time_limit: float | None = None,
             node_limit: int | None = None, progress: bool = False) -> SearchResult:
    """Run the stealstack search on ``client``'s cluster (on its first ``workers``
    workers, by address order, if given; on all of them otherwise)."""
    policy = policy or StealPolicy()
    t_wall = time.perf_counter()
    t0 = time.time()
    peers = live_workers(client)
    if not peers:
        raise SearchFailed("the cluster has no workers")
    if workers is not None:
        if not 1 <= workers <= len(peers):
            raise InputError(f"asked for {workers} workers, the cluster has {len(peers)}")
        peers = peers[:workers]
    n = len(peers)
    shares, setup_counters, (bv, bb, bh), incumbent = _deal(problem, n)
    setup_stats = WorkerStats(worker="client (setup)", nodes=int(setup_counters[0]))
    decided = problem.mode is Mode.DECIDE and bv is not None
    if decided or sum(len(s) for s in shares) == 0:
        return build_result(problem, backend=f"dask[{n}]", counters=[setup_counters],
                            best_value=bv, best_buffer=bb, history=bh,
                            stop_reason="found" if decided else "complete",
                            remaining_bound=None, workers=[setup_stats],
                            wall_seconds=time.perf_counter() - t_wall, search_seconds=0.0,
                            policy=policy.as_dict(), info={"rows_left_shared": 0})

    search_id = uuid.uuid4().hex[:12]
    client.register_plugin(StealstackPlugin(), name=PLUGIN_NAME)
    deadline = None if time_limit is None else t0 + time_limit
    # node_limit counts the setup nodes too
    limit = None if node_limit is None else max(1, node_limit - int(setup_counters[0]))
    try:
        client.run(_setup_on_worker, search_id, problem, peers, shares, policy, deadline,
                   limit, t0, incumbent, workers=peers)
    except OSError as exc:
        client.run(_teardown_on_worker, search_id, workers=peers, on_error="ignore")
        raise SearchFailed(f"could not set the search up on every worker: {exc}") from None
    futures = [client.submit(_search_loop, search_id, key=f"stealsearch-{search_id}-{r}",
                             workers=[addr], allow_other_workers=False, pure=False)
               for r, addr in enumerate(peers)]
    bar = Progress(progress, desc=f"{problem.name} on {n} workers")
    try:
        while True:
            if all(f.done() for f in futures) or any(f.status == "error" for f in futures):
                break
            time.sleep(CLIENT_POLL)
            alive = set(live_workers(client))
            lost = [a for a in peers if a not in alive]
            if lost:
                peers = [a for a in peers if a in alive]
                client.run(_stop_on_worker, search_id, "failure", workers=peers,
                           on_error="ignore")
                raise SearchFailed(f"worker(s) {', '.join(lost)} left the cluster during the search")
            if progress:
                snap = client.run(_progress_on_worker, search_id, workers=[peers[0]]).get(peers[0])
                if snap:
                    bar.update(snap["nodes"], best=snap["best"], steals=snap["steals"])
        errors = [f for f in futures if f.status == "error"]
        if errors:
            client.run(_stop_on_worker, search_id, "failure", workers=peers, on_error="ignore")
            exc = errors[0].exception()
            raise SearchFailed(f"a search loop failed: {exc!r}") from exc
        outs = client.gather(futures)
    finally:
        bar.close()
        # a dead worker has nothing to tear down; survivors drop the search's state
        client.run(_teardown_on_worker, search_id, workers=peers, on_error="ignore")
    failures = [o["failure"] for o in outs if o["failure"]]
    if failures:
        raise SearchFailed(failures[0])

    coordinator = outs[0]["coordinator"]
    stop_reason = coordinator["stop_reason"] or outs[0]["stop_reason"]
    # the best solution over the setup phase and every worker
    candidates = [(bv, bb)] + [(o["best_value"], o["best_buffer"]) for o in outs]
    candidates = [c for c in candidates if c[0] is not None]
    best_value, best_buffer = max(candidates, key=lambda c: c[0]) if candidates else (None, None)
    history = merge_history([bh] + [o["history"] for o in outs])
    bounds = [o["remaining_bound"] for o in outs if o["remaining_bound"] is not None]
    rows_left = sum(o["stats"].rows_left for o in outs)
    if stop_reason == "exhausted" and rows_left:
        raise SearchFailed(f"termination declared with {rows_left} rows left (a protocol bug)")
    search_seconds = max(o["end"] for o in outs) - min(o["start"] for o in outs)
    workers = [o["stats"] for o in outs]
    result = build_result(
        problem, backend=f"dask[{n}]", counters=[setup_counters] + [o["counters"] for o in outs],
        best_value=best_value, best_buffer=best_buffer, history=history,
        stop_reason="complete" if stop_reason == "exhausted" else stop_reason,
        remaining_bound=max(bounds) if bounds else None, workers=workers,
        wall_seconds=time.perf_counter() - t_wall, search_seconds=search_seconds,
        policy=policy.as_dict(),
        info={"rows_left_shared": sum(o["rows_left_shared"] for o in outs),
              "setup_nodes": setup_stats.nodes, "rows_dealt": [len(x) for x in shares]})
    if not result.conservation()["holds"]:
        raise SearchFailed(f"row conservation violated: {result.conservation()}")
    return result
