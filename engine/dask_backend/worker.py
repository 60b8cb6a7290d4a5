"""One epoch of the stealstack on one worker: the search object and its handlers.

The search loop (seed 003, ch. 3): kernel chunks on the local portion, RELEASE of k
bottom rows when the local portion exceeds the threshold, ACQUIRE from the own shared
portion when empty, FINDWORK/STEAL from peers when both are empty.  The loop ends by
itself when the epoch's time is up (a cut), at a limit, or on a stop message, and
returns an :class:`EpochOutcome`; the search object is then dropped from the
worker's table, so nothing outlives the epoch (a search whose client went away stops
within one epoch on every worker).  The problem is not in the epoch's spec: the
worker finds it in its problem table (:mod:`.plugin`), loaded once per search.
The Dask task that runs an epoch, and the teardown call, are in :mod:`.task`.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time

from ..outcome import improve
from ..problem import IMPROVED, Mode
from ..result import WorkerStats
from ..stack import BudgetTuner, make_stack
from ..stealstack import SharedPortion
from ..termination import Coordinator
from ..victims import VictimOrder
from .wire import GONE, EpochOutcome, EpochSpec, handler_name

logger = logging.getLogger("stealsearch")

#: seconds between a worker's progress reports to the coordinator
REPORT_INTERVAL = 0.1
#: a worker waiting for a node-limit grant asks again this often
GRANT_POLL = 0.005
#: reply of the coordinator's handlers while rank 0 has not started the epoch yet
NOT_READY = "not-ready"


class WorkerSearch:
    """One epoch of one search on one worker."""

    def __init__(self, worker, spec: EpochSpec, rank: int, rows, problem):
        self.worker = worker
        self.spec = spec
        self.problem = problem
        self.rank = rank
        self.peers = spec.peers
        self.policy = spec.policy
        self.stack = make_stack(self.problem)
        self.stack.push(rows)
        self.shared = SharedPortion(self.stack.codec)
        self.victims = VictimOrder(self.policy, rank, len(self.peers))
        self.incumbent = int(spec.incumbent)
        self.stop_event = threading.Event()
        self.stop_reason: str | None = None
        self.best_value = None
        self.best_buffer = None
        self.history: list[tuple[float, int]] = []
        self.stats = WorkerStats(worker=worker.address, rows_dealt=len(rows))
        self.failure: str | None = None
        # the peers whose calls failed; a failure of anything else is not explained by
        # a peer that left gracefully (the driver's hand-over path)
        self.failed_peers: set[str] = set()
        self.failed_otherwise = False
        # set once run() has built its outcome (a closing worker hands it over)
        self.finished = threading.Event()
        self.outcome: EpochOutcome | None = None
        self.endpoint = None
        if rank == 0:
            self.endpoint = CoordinatorEndpoint(self, Coordinator(len(self.peers), spec.node_limit))
        # node-limit grant (None: unlimited) and the sequence of our reports
        self.grant = None if spec.node_limit is None else self._first_grant()
        self.seq = 0
        self.applied_seq = 0
        # load the kernel now (numba reads its on-disk cache), before the clock starts
        self.stack.run(0, self.incumbent)

    def _first_grant(self) -> int:
        n, limit = len(self.peers), self.spec.node_limit
        return limit // n + (limit - n * (limit // n) if self.rank == 0 else 0)

    # -- handlers (run on the worker's event loop) -------------------------------------
    def handle_steal(self, k, half):
        rows, credit = self.shared.steal(int(k), bool(half))
        if rows is None:
            return {"n": 0, "shared": len(self.shared)}
        return {"rows": self.stack.codec.encode(rows), "n": len(rows), "credit": credit,
                "shared": len(self.shared)}

    def handle_incumbent(self, value):
        if value > self.incumbent:
            self.incumbent = int(value)
        return "ok"

    def handle_stop(self, reason):
        if self.stop_reason is None:
            self.stop_reason = reason
        self.stop_event.set()
        return "ok"

    def handle_ping(self):
        return "ok"

    # -- messaging from the search thread -----------------------------------------------
    def _fail(self, what: str, peer: int | None = None) -> None:
        if self.failure is None:
            self.failure = what
        if peer is None or peer == self.rank:
            self.failed_otherwise = True
        else:
            self.failed_peers.add(self.peers[peer])
        self.stop_event.set()

    def _call(self, to: int, op: str, **kwargs):
        """Synchronous request/reply to a peer's handler, run on the worker's loop."""
        from distributed.utils import sync

        async def call():
            rpc = self.worker.rpc(self.peers[to])
            return await asyncio.wait_for(
                getattr(rpc, handler_name(op))(search_id=self.spec.search_id,
                                               epoch=self.spec.epoch, **kwargs),
                self.spec.peer_timeout)

        return sync(self.worker.loop, call)

    def _post(self, to: int, op: str, on_reply=None, retry_not_ready=False, **kwargs) -> None:
        """Fire-and-forget message to a peer (or to this worker's own handler).  A
        failure aborts the epoch: a lost message must not pass unnoticed."""
        sid, ep = self.spec.search_id, self.spec.epoch

        async def send():
            deadline = time.monotonic() + self.spec.peer_timeout
            try:
                while True:
                    if to == self.rank:
                        reply = self.worker.handlers[handler_name(op)](
                            search_id=sid, epoch=ep, **kwargs)
                        if asyncio.iscoroutine(reply):
                            reply = await reply
                    else:
                        rpc = self.worker.rpc(self.peers[to])
                        reply = await asyncio.wait_for(
                            getattr(rpc, handler_name(op))(search_id=sid, epoch=ep, **kwargs),
                            max(0.01, deadline - time.monotonic()))
                    if reply in (NOT_READY, GONE) and retry_not_ready:
                        # rank 0 has not started the epoch yet (or has ended it)
                        if self.stop_event.is_set() or time.monotonic() > deadline:
                            return
                        await asyncio.sleep(0.005)
                        continue
                    if on_reply is not None and reply not in (NOT_READY, GONE):
                        on_reply(reply)
                    return
            except Exception as exc:
                self._fail(f"{op} to {self.peers[to]} failed: {exc!r}", to)

        self.worker.loop.add_callback(send)

    def request_stop(self, reason: str) -> None:
        self._post(0, "request_stop", retry_not_ready=True, reason=reason)

    # -- the search loop -----------------------------------------------------------------
    def run(self) -> EpochOutcome:
        pol, stack, shared, stats = self.policy, self.stack, self.shared, self.stats
        start = time.time()
        cut_at = start + self.spec.epoch_seconds
        deadline = None if self.spec.time_left is None else start + self.spec.time_left
        next_report = start
        backoff = pol.idle_backoff
        idle_since = None
        tuner = BudgetTuner(pol)
        while not self.stop_event.is_set():
            if len(stack):
                cap = None
                if self.grant is not None:
                    cap = self.grant - stack.nodes
                    if cap <= 0:            # wait for a node-limit grant
                        self._report(force=True)
                        self.stop_event.wait(GRANT_POLL)
                        continue
                if idle_since is not None:
                    stats.idle_seconds += time.time() - idle_since
                    idle_since = None
                status, value = tuner.run(stack, self.incumbent, cap=cap)
                stats.chunks += 1
                if status == IMPROVED:
                    self._improved(value, start)
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
                    if self.grant is not None and self.grant > stack.nodes:
                        self.grant = stack.nodes          # give the unused grant back
                        self._report(force=True, idle=True)
                e = shared.return_credit_if_empty()
                if e is not None:
                    self._post(0, "credit", retry_not_ready=True, exponent=e)
                if pol.stealing and self._findwork():
                    backoff = pol.idle_backoff
                    continue
                self.stop_event.wait(backoff)
                backoff = min(backoff * 2, pol.idle_backoff_max)
            now = time.time()
            if now >= next_report:
                self._report()
                next_report = now + REPORT_INTERVAL
            if deadline is not None and now >= deadline:
                self.stop_reason = self.stop_reason or "time_limit"
                self.request_stop("time_limit")
                break
            if now >= cut_at:
                self.stop_reason = self.stop_reason or "cut"
                break
        end = time.time()
        if idle_since is not None:
            stats.idle_seconds += end - idle_since
        stats.busy_seconds = end - start - stats.idle_seconds
        return self._final()

    def _findwork(self) -> bool:
        """Poll victims in policy order; STEAL from the first with shared rows."""
        st = self.stats
        for victim in self.victims.round():
            if self.stop_event.is_set():
                return False
            st.steals_tried += 1
            try:
                reply = self._call(victim, "steal", k=self.policy.k, half=self.policy.steal_half)
            except Exception as exc:
                self._fail(f"steal from {self.peers[victim]} failed: {exc!r}", victim)
                return False
            if not isinstance(reply, dict):   # the peer has not started this epoch, or ended it
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

    def _improved(self, value: int, start: float) -> None:
        self.incumbent = max(self.incumbent, value)
        self.best_value, self.best_buffer, self.history = improve(
            self.best_value, self.best_buffer, self.history, value, self.stack.solution,
            self.spec.t_offset + time.time() - start)
        if self.problem.mode is Mode.DECIDE:
            self.stop_reason = "found"
            self.stop_event.set()
            self.request_stop("found")
            return
        for r in range(len(self.peers)):
            if r != self.rank:
                self._post(r, "incumbent", value=int(value))

    def _report(self, force: bool = False, idle: bool = False) -> None:
        self.seq += 1
        seq = self.seq
        if idle:
            self.applied_seq = seq

        def on_reply(reply):
            if not isinstance(reply, dict):
                return
            self.victims.known_sizes = list(reply["shared"])
            if reply.get("grant") is not None and seq > self.applied_seq:
                self.applied_seq = seq
                self.grant = int(reply["grant"])

        local, shared = len(self.stack), len(self.shared)
        self._post(0, "report", on_reply=on_reply, retry_not_ready=force, rank=self.rank,
                   nodes=self.stack.nodes, shared=shared,
                   steals=self.stats.steals_succeeded, best=self.best_value, seq=seq, idle=idle,
                   local=local, looking=local == 0 and shared == 0)

    def _final(self) -> EpochOutcome:
        st, sh = self.stats, self.shared
        left_shared = sh.close()        # from now on thieves get nothing: a consistent cut
        st.nodes = self.stack.nodes
        st.releases, st.rows_released = sh.releases, sh.rows_released
        st.acquires, st.rows_acquired = sh.acquires, sh.rows_acquired
        st.rows_given = sh.rows_given
        codec = self.stack.codec
        left = codec.concat([p for p in (left_shared, self.stack.take_all()) if len(p)])
        st.rows_left = len(left)
        return EpochOutcome(
            rank=self.rank, address=self.worker.address, rows=left,
            counters=self.stack.counters.copy(), best_value=self.best_value,
            best_buffer=self.best_buffer, history=self.history, stats=st,
            rows_left_shared=len(left_shared), stop_reason=self.stop_reason,
            failure=self.failure,
            coordinator=None if self.endpoint is None else self.endpoint.coordinator.snapshot(),
            failed_peers=() if self.failed_otherwise else tuple(sorted(self.failed_peers)))


class CoordinatorEndpoint:
    """Rank 0's coordinator handlers: credit, progress reports, stop requests.

    Besides the coordinator's figures, it keeps for the dashboard each worker's local
    stack size and whether it is looking for work (no local and no shared rows), as
    of its last report: the progress snapshot's ``local`` and ``idle`` lists."""

    def __init__(self, search: WorkerSearch, coordinator: Coordinator):
        self.search = search
        self.coordinator = coordinator
        n = coordinator.n
        self.local = [0] * n
        self.idle = [False] * n
        self.shown_seq = [0] * n

    def handle_credit(self, exponent):
        if self.coordinator.add_credit(int(exponent)):
            return self._broadcast_stop("exhausted")
        return "ok"

    def handle_request_stop(self, reason):
        if self.coordinator.request_stop(reason):
            return self._broadcast_stop(reason)
        return "ok"

    def handle_report(self, rank, nodes, shared, steals, best, seq=0, idle=False,
                      local=0, looking=False):
        c = self.coordinator
        rank, seq = int(rank), int(seq)
        stop, grant = c.report(rank, int(nodes), int(shared), int(steals), best, seq, bool(idle))
        if not seq or seq > self.shown_seq[rank]:     # a late report must not win
            self.shown_seq[rank] = seq
            self.local[rank], self.idle[rank] = int(local), bool(looking)
        reply = {"shared": list(c.shared_sizes), "stop": c.stop_reason, "grant": grant}
        if stop:
            return self._then(self._broadcast_stop(c.stop_reason), reply)
        return reply

    def handle_progress(self):
        snap = self.coordinator.snapshot()
        snap["local"], snap["idle"] = list(self.local), list(self.idle)
        return snap

    async def _then(self, coro, value):
        await coro
        return value

    async def _broadcast_stop(self, reason: str):
        s = self.search

        async def one(addr):
            try:
                await asyncio.wait_for(s.worker.rpc(addr).stealsearch_stop(
                    search_id=s.spec.search_id, epoch=s.spec.epoch, reason=reason),
                    s.spec.peer_timeout)
            except Exception as exc:   # the peer is gone: the client sees it and rolls back
                logger.info("stop to %s failed: %r", addr, exc)

        s.handle_stop(reason)
        await asyncio.gather(*(one(a) for r, a in enumerate(s.peers) if r != s.rank))
        return "ok"
