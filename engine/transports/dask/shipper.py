"""The search's problem on the workers: pickled once in the client, loaded once on
each worker that is dealt to (one comm call each, ``stealsearch_load``; the worker
unpickles it and warms its kernel before it replies, :mod:`.tables`)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time

from ...core.errors import SearchFailed
from . import timeouts

logger = logging.getLogger("stealsearch")


class ProblemShipper:
    """The search's problem, pickled once, loaded once on each worker that is dealt to.

    Loads are comm calls run on the client's event loop (``stealsearch_load``, see
    :mod:`.tables`), each bounded by a timeout; a worker is ``ready`` once it replied
    (problem unpickled, kernel warm).  A failed load (the worker died, stalled, or has
    not got the plugin yet) leaves the worker out and is retried after a back-off; a
    load the worker refused (the problem cannot be unpickled or run there) fails the
    search."""

    def __init__(self, client, problem, search_id: str, keep_idle: float):
        self.client, self.problem, self.search_id = client, problem, search_id
        self.keep_idle = float(keep_idle)
        self.blob: bytes | None = None
        self.ready: set[str] = set()
        self.pending: dict[str, concurrent.futures.Future] = {}
        self.retry: dict[str, tuple[float, float]] = {}     # addr -> (not before, back-off)
        self.sent = 0
        self.done_at: dict[str, float] = {}      # addr -> when its load replied (perf_counter)
        self.last_failure: dict[str, str] = {}    # addr -> why its last load failed
        self.pickle_seconds = 0.0
        self.load_seconds: list[float] = []    # per load that unpickled (worker side)

    def _bytes(self) -> bytes:
        if self.blob is None:
            from distributed.protocol.pickle import dumps

            t0 = time.perf_counter()
            self.blob = dumps(self.problem)
            self.pickle_seconds = time.perf_counter() - t0
        return self.blob

    async def _load(self, addr: str, blob: bytes, timeout: float):
        from distributed.protocol import to_serialize

        reply = await asyncio.wait_for(self.client.rpc(addr).stealsearch_load(
            search_id=self.search_id, blob=to_serialize(blob), keep_idle=self.keep_idle),
            timeout)
        return reply, time.perf_counter()

    def start(self, addrs) -> None:
        """Start loading on each of ``addrs`` that is neither loaded nor loading."""
        now = time.monotonic()
        for a in addrs:
            if a in self.ready or a in self.pending or self.retry.get(a, (0, 0))[0] > now:
                continue
            self.pending[a] = asyncio.run_coroutine_threadsafe(
                self._load(a, self._bytes(), self.timeout()), self.client.loop.asyncio_loop)
            self.sent += 1

    def timeout(self) -> float:
        """Seconds a load may take (send, unpickle, warm-up)."""
        return timeouts.LOAD_TIMEOUT + len(self._bytes()) / timeouts.LOAD_RATE

    def harvest(self) -> None:
        for a, f in list(self.pending.items()):
            if not f.done():
                continue
            del self.pending[a]
            try:
                reply, self.done_at[a] = f.result()
            except BaseException as exc:    # lost, stalled, or no plugin yet: later
                back = min(timeouts.LOAD_RETRY_MAX, 2 * self.retry.get(a, (0, timeouts.LOAD_RETRY / 2))[1])
                self.retry[a] = (time.monotonic() + back, back)
                self.last_failure[a] = repr(exc)
                logger.info("loading the problem on %s failed (%r); retrying in %.2f s",
                            a, exc, back)
                continue
            if isinstance(reply, dict) and reply.get("status") == "error":
                raise SearchFailed(f"the problem cannot be loaded on {a}: {reply['message']}")
            self.retry.pop(a, None)
            self.ready.add(a)
            if isinstance(reply, dict) and reply.get("loaded"):
                self.load_seconds.append(float(reply.get("seconds", 0.0)))

    def forget(self, addr: str) -> None:
        """``addr`` lacked the problem at its epoch: load it again before dealing to it."""
        self.ready.discard(addr)

    def wait(self, timeout: float) -> None:
        """Until one pending load ends, at most ``timeout`` s."""
        if self.pending:
            concurrent.futures.wait(list(self.pending.values()), timeout=timeout,
                                    return_when=concurrent.futures.FIRST_COMPLETED)
        else:
            time.sleep(timeout)

    def close(self) -> None:
        for f in self.pending.values():
            f.cancel()
        self.pending.clear()

    def figures(self) -> dict:
        n = len(self.blob) if self.blob is not None else 0
        return {"problem_bytes": n, "problem_loads": self.sent, "bytes_shipped": n * self.sent,
                "pickle_seconds": self.pickle_seconds,
                "load_seconds_max": max(self.load_seconds, default=0.0)}
