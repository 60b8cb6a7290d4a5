"""Exact termination detection and global stop decisions (lives on worker rank 0):
the rules (:class:`Coordinator`) and the handlers that serve them to the epoch's workers
(:class:`CoordinatorEndpoint`, which also broadcasts a stop to every peer).

Credit recovery (see :mod:`stealsearch.engine.core.stealstack`): every worker starts with credit 1;
credit splits into powers of two as rows are stolen and flows back here when a
worker runs dry.  The sum is kept as an exact rational, so the search is declared
exhausted exactly when all ``n`` units are back: every worker is empty and no steal
reply is in flight.  No snapshot of "idle flags" is involved, so the classic race
(a worker reported idle, then stole, then its victim reported idle) cannot fool it.

The coordinator also sums the progress reports (nodes per worker) to answer the
client's progress polls, gossips shared portion sizes for the ``richest`` victim
order, and enforces a global node limit by *grants*: a worker may expand nodes only
up to the total the coordinator granted it (its chunk budget is capped by what is
left of its grant).  Grants never sum past the limit, so the node count never
exceeds it; a worker that runs dry gives its unused grant back, and a worker that
asks is granted a share (1/n) of what is free.  Reports carry a sequence number per
worker, so a late reply can never hand a worker a grant it already gave back.  A grant
is per worker: its search threads (lanes) reserve from it under a lock
(:mod:`stealsearch.engine.core.worker`), so the threads never change the sum.  A worker
whose grant is used up asks with at most one report in flight and keeps its epoch's
clock meanwhile: an epoch ends at its cut even if no grant comes.

Every coordinator serves one epoch (:mod:`stealsearch.engine.core.epochs`): credit is fresh per epoch.
"""
from __future__ import annotations

import asyncio
import logging
import threading
from fractions import Fraction

from .epochs import handler_name

logger = logging.getLogger("stealsearch")


class Coordinator:
    def __init__(self, n_workers: int, node_limit: int | None):
        self.n = n_workers
        self.node_limit = node_limit
        # node-limit grants: absolute node totals per worker (None: no limit)
        self.granted = None if node_limit is None else [node_limit // n_workers] * n_workers
        if self.granted is not None:
            self.granted[0] += node_limit - sum(self.granted)
        self.last_seq = [0] * n_workers
        self.lock = threading.Lock()
        self.returned = Fraction(0)
        self.nodes = [0] * n_workers
        self.shared_sizes = [0] * n_workers
        self.steals = [0] * n_workers
        self.best: int | None = None
        self.stop_reason: str | None = None

    def add_credit(self, exponent: int) -> bool:
        """Take back credit 2^-exponent; True when the search just became exhausted."""
        with self.lock:
            self.returned += Fraction(1, 2 ** exponent)
            if self.returned > self.n:
                raise AssertionError(f"credit overflow: {self.returned} > {self.n}")
            if self.returned == self.n and self.stop_reason is None:
                return self._stop("exhausted")
        return False

    def grant(self, rank: int) -> int | None:
        return None if self.granted is None else self.granted[rank]

    def report(self, rank: int, nodes: int, shared: int, steals: int,
               best: int | None, seq: int = 0, idle: bool = False) -> tuple[bool, int | None]:
        """Record a progress report; returns (stop now?, the worker's grant).

        ``idle``: the worker has no rows and gave its unused grant back (it already
        lowered its own grant to ``nodes`` before sending)."""
        with self.lock:
            if seq and seq <= self.last_seq[rank]:      # a stale report: change nothing
                return False, self.grant(rank)
            self.last_seq[rank] = seq
            self.nodes[rank] = nodes
            self.shared_sizes[rank] = shared
            self.steals[rank] = steals
            if best is not None and (self.best is None or best > self.best):
                self.best = best
            if self.granted is not None:
                if idle:
                    self.granted[rank] = nodes
                else:
                    free = self.node_limit - sum(self.granted)
                    if free > 0:
                        self.granted[rank] += min(free, max(1, free // self.n))
                if sum(self.nodes) >= self.node_limit and self.stop_reason is None:
                    return self._stop("node_limit"), self.granted[rank]
            return False, self.grant(rank)

    def request_stop(self, reason: str) -> bool:
        """First stop request wins (found, time_limit, node_limit, failure)."""
        with self.lock:
            if self.stop_reason is None:
                return self._stop(reason)
        return False

    def _stop(self, reason: str) -> bool:
        self.stop_reason = reason
        return True

    def snapshot(self) -> dict:
        with self.lock:
            return {"nodes": sum(self.nodes), "per_worker": list(self.nodes),
                    "shared": list(self.shared_sizes), "steals": sum(self.steals),
                    "best": self.best, "stop_reason": self.stop_reason,
                    "credit_returned": float(self.returned)}


class CoordinatorEndpoint:
    """Rank 0's coordinator handlers: credit, progress reports, stop requests.

    Besides the coordinator's figures, it keeps for the dashboard each worker's local
    stack size and whether it is looking for work (no local and no shared rows), as
    of its last report: the progress snapshot's ``local`` and ``idle`` lists."""

    def __init__(self, search, coordinator: Coordinator):
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
                await asyncio.wait_for(getattr(s.worker.rpc(addr), handler_name("stop"))(
                    search_id=s.spec.search_id, epoch=s.spec.epoch, reason=reason),
                    s.spec.peer_timeout)
            except Exception as exc:   # the peer is gone: the client sees it and rolls back
                logger.info("stop to %s failed: %r", addr, exc)

        s.handle_stop(reason)
        await asyncio.gather(*(one(a) for r, a in enumerate(s.peers) if r != s.rank))
        return "ok"
