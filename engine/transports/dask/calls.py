"""The client's calls to the scheduler and the workers, each bounded by a timeout.

Every wait of the client on the cluster goes through here: the scheduler's view of the
workers, one handler called on many workers at once, the plugin's registration, the stop
of an epoch's workers and the teardown of a search on every worker.  A call that does
not answer in time is a failure the caller handles, never a hang (a stalled or dead
worker answers nothing; ``distributed``'s own connect timeout is 30 s).
"""
from __future__ import annotations

import asyncio
import logging
import weakref

from ...core.epochs import handler_name
from ...core.errors import SearchFailed
from . import timeouts
from .plugin import PLUGIN_NAME, StealstackPlugin

logger = logging.getLogger("stealsearch")

_registered = weakref.WeakSet()   # clients that have the plugin registered


def sync_call(client, coro_fn, timeout: float):
    """Run ``coro_fn()`` on the client's event loop and wait at most ``timeout`` s."""
    async def run():
        return await asyncio.wait_for(coro_fn(), timeout)
    return client.sync(run)


def _workers(client, timeout: float | None) -> dict:
    if client.scheduler is None:    # the client closed itself when the scheduler went away
        raise SearchFailed("lost the connection to the scheduler (the client is closed)")
    try:
        info = sync_call(client, lambda: client.scheduler.identity(n_workers=-1),
                         timeouts.CALL_TIMEOUT if timeout is None else timeout)
    except (OSError, asyncio.TimeoutError, TimeoutError) as exc:
        raise SearchFailed(f"lost the connection to the scheduler ({exc.__class__.__name__})") from None
    except AttributeError:
        if client.scheduler is None:        # closed while the call was on its way
            raise SearchFailed("lost the connection to the scheduler (the client is closed)") from None
        raise
    return info["workers"]


def live_workers(client, timeout: float | None = None) -> list[str]:
    """Addresses of the cluster's workers, asked of the scheduler now.

    (``client.scheduler_info()`` returns a cache that a periodic callback refreshes
    with ``n_workers=0``; reading it can race with that.)"""
    return sorted(_workers(client, timeout))


def running_workers(client, timeout: float | None = None) -> list[str]:
    """The workers that may be dealt to now: present and running (not paused, not
    closing gracefully: a retiring worker would take rows only to hand them back)."""
    return sorted(a for a, w in _workers(client, timeout).items()
                  if not isinstance(w, dict) or w.get("status", "running") == "running")


def ask_all(client, addrs, op, timeout, **kwargs) -> dict:
    """Call ``op`` on every address at once; {addr: reply or the exception}."""
    async def one(addr):
        try:
            return await asyncio.wait_for(getattr(client.rpc(addr), handler_name(op))(**kwargs),
                                          timeout)
        except Exception as exc:
            return exc

    async def all_():
        return await asyncio.gather(*(one(a) for a in addrs))

    if not addrs:
        return {}
    try:
        return dict(zip(addrs, client.sync(all_)))
    except Exception as exc:
        return {a: exc for a in addrs}


def call_soon(client, addr: str, op: str, timeout: float, **kwargs):
    """Call ``op`` on ``addr`` in the background (on the client's event loop), bounded by
    ``timeout``; a ``concurrent.futures.Future`` of its reply (or its exception)."""
    async def one():
        return await asyncio.wait_for(getattr(client.rpc(addr), handler_name(op))(**kwargs),
                                      timeout)

    return asyncio.run_coroutine_threadsafe(one(), client.loop.asyncio_loop)


def stop_epoch(client, addrs, search_id: str, epoch: int, reason: str) -> dict:
    """Stop the epoch ``(search_id, epoch)`` on each of ``addrs`` (all at once, each call
    bounded by ``STOP_TIMEOUT``); {addr: reply or the exception}.  A worker whose epoch
    has not started yet records the stop and returns at once when it does."""
    return ask_all(client, addrs, "stop", timeouts.STOP_TIMEOUT, search_id=search_id,
                   epoch=epoch, reason=reason)


def end_search(client, search_id: str, unanswered=()) -> None:
    """The search's teardown on every worker: stop its epochs, forget its problem and
    shares.  One comm call per worker, all at once, each bounded by ``STOP_TIMEOUT``: a
    stalled (SIGSTOPped) worker must not hold the end of the run (``client.run`` waits
    for every worker's reply, without a timeout).  Those in ``unanswered`` (the workers
    the search gave up on: declared stalled, or silent at an abort) get theirs in the
    background, not waited for.  A worker that misses it loses nothing: its epochs end
    by themselves, and a problem nobody unloaded is dropped by its worker after its keep
    time."""
    try:
        workers = live_workers(client)
    except SearchFailed:        # the scheduler is gone: every epoch ends by itself anyway
        return
    for addr in workers:
        if addr in unanswered:
            call_soon(client, addr, "unload", timeouts.STOP_TIMEOUT, search_id=search_id,
                      reason="teardown")
    ask_all(client, [a for a in workers if a not in unanswered], "unload",
            timeouts.STOP_TIMEOUT, search_id=search_id, reason="teardown")


def register_plugin(client) -> None:
    """Once per client; the scheduler hands it to every worker that joins later.  A
    worker dying during the broadcast makes it raise: then try again next epoch (an
    epoch on a worker without the handlers fails and rolls back)."""
    if client not in _registered:
        from distributed.protocol.pickle import dumps

        try:   # client.register_plugin without a timeout would wait for a stalled worker
            replies = sync_call(client, lambda: client.scheduler.register_worker_plugin(
                plugin=dumps(StealstackPlugin()), name=PLUGIN_NAME, idempotent=True),
                timeouts.REGISTER_TIMEOUT)
            failed = [a for a, r in replies.items() if r.get("status") != "OK"]
            if failed:
                raise OSError(f"not registered on {', '.join(failed)}")
        except (OSError, asyncio.TimeoutError, TimeoutError) as exc:
            logger.info("registering the plugin failed (%r); retrying next epoch", exc)
            return
        _registered.add(client)


def recoverable(exc) -> bool:
    """A task error that a lost worker explains (retry), not a bug (fail)."""
    from distributed.scheduler import KilledWorker

    return isinstance(exc, (KilledWorker, OSError, asyncio.CancelledError,
                            asyncio.TimeoutError, TimeoutError))
