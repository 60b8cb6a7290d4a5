"""Exact termination detection and global stop decisions (lives on worker rank 0).

Credit recovery (see :mod:`engine.stealstack`): every worker starts with credit 1;
credit splits into powers of two as rows are stolen and flows back here when a
worker runs dry.  The sum is kept as an exact rational, so the search is declared
exhausted exactly when all ``n`` units are back: every worker is empty and no steal
reply is in flight.  No snapshot of "idle flags" is involved, so the classic race
(a worker reported idle, then stole, then its victim reported idle) cannot fool it.

The coordinator also sums the progress reports (nodes per worker) to enforce a
global node limit and to answer the client's progress polls, and gossips shared
portion sizes for the ``richest`` victim order.
"""
from __future__ import annotations

import threading
import time
from fractions import Fraction


class Coordinator:
    def __init__(self, n_workers: int, node_limit: int | None):
        self.n = n_workers
        self.node_limit = node_limit
        self.lock = threading.Lock()
        self.returned = Fraction(0)
        self.credit_messages = 0
        self.nodes = [0] * n_workers
        self.shared_sizes = [0] * n_workers
        self.steals = [0] * n_workers
        self.best: int | None = None
        self.stop_reason: str | None = None
        self.stopped_at: float | None = None

    def add_credit(self, exponent: int) -> bool:
        """Take back credit 2^-exponent; True when the search just became exhausted."""
        with self.lock:
            self.returned += Fraction(1, 2 ** exponent)
            self.credit_messages += 1
            if self.returned > self.n:
                raise AssertionError(f"credit overflow: {self.returned} > {self.n}")
            if self.returned == self.n and self.stop_reason is None:
                return self._stop("exhausted")
        return False

    def report(self, rank: int, nodes: int, shared: int, steals: int,
               best: int | None) -> bool:
        """Record a progress report; True if it pushed the total over the node limit."""
        with self.lock:
            self.nodes[rank] = nodes
            self.shared_sizes[rank] = shared
            self.steals[rank] = steals
            if best is not None and (self.best is None or best > self.best):
                self.best = best
            if (self.node_limit is not None and sum(self.nodes) >= self.node_limit
                    and self.stop_reason is None):
                return self._stop("node_limit")
        return False

    def request_stop(self, reason: str) -> bool:
        """First stop request wins (found, time_limit, node_limit, failure)."""
        with self.lock:
            if self.stop_reason is None:
                return self._stop(reason)
        return False

    def _stop(self, reason: str) -> bool:
        self.stop_reason = reason
        self.stopped_at = time.time()
        return True

    def snapshot(self) -> dict:
        with self.lock:
            return {"nodes": sum(self.nodes), "per_worker": list(self.nodes),
                    "shared": list(self.shared_sizes), "steals": sum(self.steals),
                    "best": self.best, "stop_reason": self.stop_reason,
                    "credit_returned": float(self.returned)}
