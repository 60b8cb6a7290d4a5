"""Watching one epoch of the Dask backend: its shares sent, its tasks submitted, their
outcomes fetched, lost and leaving workers noticed, the epoch wound down on an abort or
a Ctrl-C.  The verdict (commit or roll back) is the epoch loop's
(:mod:`stealsearch.engine.core.loop`); this class only reports what came back and why an
epoch cannot be committed.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import time

from distributed import wait as distributed_wait

from ...core import stop_request
from ...core.epochs import EpochOutcome, EpochSpec
from ...core.errors import SearchFailed
from . import timeouts
from .calls import ask_all, call_soon, live_workers, recoverable, stop_epoch, sync_call
from .task import run_epoch
from .wire import ShareTicket

#: past the search's time limit, a worker of the epoch that answered no ping sent in the
#: last this many ping intervals is stalled: the limit is the user's, a stall must not
#: stretch it by a peer timeout (the healthy workers end their epochs at the limit by
#: their own clocks and keep answering meanwhile)
LIMIT_STALL_PINGS = 3


class EpochWatch:
    """Watching one epoch's tasks.

    The epoch's shares go to their workers by direct comm calls (``stealsearch_share``,
    run on the client's event loop, each with its own timeout), at the same time as the
    tasks are submitted; a task's arguments are the spec and a :class:`ShareTicket` (a
    few numbers), so nothing row-sized passes through the scheduler.  A send that fails
    or is refused aborts the epoch (the cut is dealt again).  The stall clock starts
    once every share has arrived (a large share on a slow link is not a stall).

    A finished task's outcome is fetched in the background (a concurrent future on the
    client's loop, bounded by a timeout); the watch loop meanwhile keeps looking for
    lost workers, so a worker that dies after its task finished costs one poll, not
    the fetch's timeout."""

    def __init__(self, client, spec: EpochSpec, shares, codec, progress_cb, poll_cb=None):
        self.client, self.spec, self.peers = client, spec, spec.peers
        key = f"stealsearch-{spec.search_id}-{spec.epoch}"
        self.sends: dict[int, concurrent.futures.Future] = {}
        self.share_bytes = 0          # this epoch's rows as sent, all workers
        self.share_max = 0            # the largest one share
        tickets = []
        for r, addr in enumerate(self.peers):
            payload = codec.encode(shares[r])
            nbytes = len(payload) if isinstance(payload, (bytes, bytearray)) \
                else memoryview(payload).nbytes
            timeout = timeouts.CALL_TIMEOUT + nbytes / timeouts.LOAD_RATE
            self.share_bytes += nbytes
            self.share_max = max(self.share_max, nbytes)
            self.sends[r] = asyncio.run_coroutine_threadsafe(
                self._send(addr, payload, len(shares[r]), timeout), client.loop.asyncio_loop)
            # the task waits at most as long as the send may take, plus a peer timeout
            tickets.append(ShareTicket(n_rows=len(shares[r]), nbytes=nbytes,
                                       wait=timeout + timeouts.PEER_TIMEOUT + spec.load_wait))
            del payload           # the send holds it until it is on the wire
        self.futures = [client.submit(run_epoch, spec, tickets[r], key=f"{key}-{r}",
                                      workers=[addr], allow_other_workers=False, pure=False)
                        for r, addr in enumerate(self.peers)]
        self.fetches: dict[int, concurrent.futures.Future] = {}
        self.outcomes: dict[int, EpochOutcome] = {}
        self.progress_cb = progress_cb
        #: called every poll (the first epoch: watching its loads); a reason to abort,
        #: or None; it clears itself once the loads are done
        self.poll_cb = poll_cb
        #: the stall clock; None while the first epoch's loads run or shares travel
        #: (each bounded by its own timeout)
        self.t_start = None
        #: workers that lacked the problem (the driver loads them again)
        self.problem_missing: list[str] = []
        #: ranks whose worker left gracefully -> when that was seen (their outcome comes
        #: as a hand-over from a peer)
        self.retiring: dict[int, float] = {}
        self._graceful: dict[str, bool] = {}
        self._cut_sent = False
        #: the watchdog (:meth:`_watchdog`): per rank, its ping in flight (and when it
        #: was sent), and when the last ping it answered was sent; it watches from now
        self._pings: dict[int, concurrent.futures.Future] = {}
        self._ping_sent: dict[int, float] = {}
        self._answered: dict[int, float] = {}
        self._watch_from = time.monotonic()
        #: ranks the watchdog declared stalled: nothing waits on them again
        self.stalled: list[int] = []
        #: rank 0's progress snapshot in flight (asked in the background: a stalled
        #: rank 0 must not make every poll wait for it)
        self._snapshot: concurrent.futures.Future | None = None
        #: the search's time limit (monotonic; None: none): the workers' own clocks start
        #: later (as their shares arrive), so they end their epochs a little after it
        self.limit_at = None if spec.time_left is None else self._watch_from + spec.time_left

    async def _send(self, addr: str, payload, n_rows: int, timeout: float):
        from distributed.protocol import to_serialize

        return await asyncio.wait_for(self.client.rpc(addr).stealsearch_share(
            search_id=self.spec.search_id, epoch=self.spec.epoch,
            payload=to_serialize(payload), n_rows=n_rows, keep=timeouts.SHARE_KEEP), timeout)

    async def _ping(self, addr: str):
        return await asyncio.wait_for(self.client.rpc(addr).stealsearch_ping(
            search_id=self.spec.search_id, epoch=self.spec.epoch), timeouts.PEER_TIMEOUT)

    def past_limit(self) -> bool:
        """Has the search's time limit passed in this epoch?"""
        return self.limit_at is not None and time.monotonic() >= self.limit_at

    def _watchdog(self) -> str | None:
        """A reason to abort if a worker of the epoch stopped answering: SIGSTOPped,
        swapped out, its event loop blocked.  Every worker still in the epoch is pinged
        about every ``PING_EVERY`` s (its event loop answers while its kernel searches:
        the kernels release the GIL, and while it loads the problem: a load runs in a
        thread of its own); one that answered no ping sent in the last ``PEER_TIMEOUT``
        s is declared stalled, so the epoch rolls back then, not at its end plus the
        stall clock (a paused worker that wakes up before its epoch's end would
        otherwise hold the whole search for as long as it slept), nor at the end of a
        load's or a share's own timeout (a worker stalled while the first epoch loads
        held it for a minute).  Past the time limit the bound is
        ``LIMIT_STALL_PINGS`` pings: a stall counts against the limit.

        The declaration is the one wait a stall costs: the ranks declared are kept in
        ``stalled``, and no later call of this search waits on them (the wind-down's
        stop, the driver's choice of the next epoch's workers, the teardown send to
        them in the background).  Not waiting loses nothing: their epoch is rolled
        back whatever they would answer (the cut dealt from is the client's), and
        :meth:`wind_down` reports them missing, so the driver deals them nothing until
        they answer a ping again."""
        now = time.monotonic()
        patience = timeouts.PEER_TIMEOUT
        if self.past_limit():
            patience = min(patience, LIMIT_STALL_PINGS * timeouts.PING_EVERY)
        for r, addr in enumerate(self.peers):
            if r in self.outcomes or r in self.retiring or self.futures[r].done() \
                    or r in self.stalled:
                continue        # (a task that ended is not stalled: its fetch has a timeout)
            f = self._pings.get(r)
            if f is not None and f.done():
                del self._pings[r]
                try:
                    f.result()              # any reply ("ok", or "gone": its task ended)
                    self._answered[r] = self._ping_sent[r]
                except BaseException:       # timed out, or the worker went (seen apart)
                    pass
            last = self._answered.setdefault(r, self._watch_from)
            if now - last > patience:
                self.stalled.append(r)
            elif r not in self._pings and now - self._ping_sent.get(r, 0.0) >= timeouts.PING_EVERY:
                self._ping_sent[r] = now
                self._pings[r] = asyncio.run_coroutine_threadsafe(
                    self._ping(addr), self.client.loop.asyncio_loop)
        if self.stalled:
            return (f"worker(s) {', '.join(self.peers[r] for r in self.stalled)} stalled "
                    f"(no answer for {patience:g} s"
                    + (", past the time limit)" if self.past_limit() else ")"))
        return None

    def _check_sends(self) -> str | None:
        """A reason to abort if a share did not arrive; starts the stall clock once every
        share has (and the first epoch's loads are in)."""
        for r, f in self.sends.items():
            if not f.done() or r in self.outcomes:
                continue
            try:
                reply = f.result()
            except BaseException as exc:     # lost, stalled, no plugin yet
                return f"sending the rows to {self.peers[r]} failed ({exc.__class__.__name__})"
            if not (isinstance(reply, dict) and reply.get("status") == "ok"):
                return f"{self.peers[r]} refused the rows of epoch {self.spec.epoch} ({reply!r})"
        if self.t_start is None and self.poll_cb is None and all(f.done() for f in self.sends.values()):
            self.t_start = time.monotonic()
        return None

    def _accept(self, r: int, out: EpochOutcome) -> str | None:
        """Keep an outcome; a reason to abort, or None."""
        self.outcomes[r] = out
        if out.problem_missing:
            self.problem_missing.append(self.peers[r])
            return out.failure
        if out.failure and not (out.failed_peers and
                                all(self._left_gracefully(p) for p in out.failed_peers)):
            return out.failure
        return None

    def _fetch(self, r: int) -> concurrent.futures.Future:
        timeout = timeouts.CALL_TIMEOUT + 2 * self.share_bytes / timeouts.LOAD_RATE
        f = self.futures[r]

        async def get():
            # direct: from the worker to this client (through the scheduler it was 5-10x
            # slower for factorize K9 2's ~82 MB outcomes: benchmarks/results/setup.md)
            return (await asyncio.wait_for(
                self.client.gather([f], asynchronous=True, direct=True), timeout))[0]

        return asyncio.run_coroutine_threadsafe(get(), self.client.loop.asyncio_loop)

    def _collect(self) -> str | None:
        """Gather finished tasks (their outcomes are fetched in the background); a
        reason to abort, or None."""
        for r, f in enumerate(self.futures):
            if r in self.outcomes or r in self.retiring or not f.done():
                continue
            if f.status == "error":
                exc = f.exception(timeout=timeouts.CALL_TIMEOUT)
                if not recoverable(exc):
                    raise SearchFailed(f"a search task failed on {self.peers[r]}: {exc!r}") from exc
                return f"task on {self.peers[r]} lost ({exc.__class__.__name__})"
            if f.status != "finished":
                return f"task on {self.peers[r]} {f.status}"
            if r not in self.fetches:
                self.fetches[r] = self._fetch(r)
            if not self.fetches[r].done():
                continue
            try:
                out = self.fetches[r].result()
            except BaseException as exc:      # its worker died before we fetched the result
                return f"result of {self.peers[r]} lost ({exc.__class__.__name__})"
            why = self._accept(r, out)
            if why:
                return why
        return None

    def _fetching(self) -> list:
        return [f for r, f in self.fetches.items() if r not in self.outcomes and not f.done()]

    def _left_gracefully(self, addr: str) -> bool:
        """Did ``addr`` leave the cluster by closing (retire, scale down, SIGTERM), not by
        dying?  Asked of the scheduler's event log: an expected removal, or the worker's
        own "closing-worker" event.  A worker still present has not left."""
        if addr in self._graceful:
            return self._graceful[addr]
        if addr in live_workers(self.client):
            return False
        try:
            events = sync_call(self.client, lambda: self.client.scheduler.events(topic=addr),
                           timeouts.CALL_TIMEOUT)
        except Exception:
            events = ()
        graceful = any(isinstance(msg, dict) and (
            msg.get("action") == "closing-worker" or
            (msg.get("action") == "remove-worker" and msg.get("expected")))
            for _, msg in events or ())
        self._graceful[addr] = graceful
        if graceful and addr in self.peers:
            r = self.peers.index(addr)
            if r not in self.outcomes:
                self.retiring.setdefault(r, time.monotonic())
        return graceful

    def _fetch_handovers(self, alive: set) -> str | None:
        """The outcomes of the ranks that left gracefully, from the peers they handed
        them to; once all are in, the other workers end the epoch as a cut."""
        wanted = [r for r in self.retiring if r not in self.outcomes]
        if wanted:
            holders = [a for a in self.peers if a in alive]
            heard = []         # what the holders said last, for the message if it is late
            for addr, reply in ask_all(self.client, holders, "handovers", 2.0,
                                        search_id=self.spec.search_id,
                                        epoch=self.spec.epoch).items():
                if not isinstance(reply, dict):
                    heard.append(f"{addr}: {reply.__class__.__name__}")
                    continue
                heard.append(f"{addr}: ranks {sorted(reply.get('outcomes') or {})}")
                for r, out in (reply.get("outcomes") or {}).items():
                    if r in wanted and r not in self.outcomes:
                        why = self._accept(r, out)
                        if why:
                            return why
            wanted = [r for r in wanted if r not in self.outcomes]
            late = [self.peers[r] for r in wanted
                    if time.monotonic() - self.retiring[r] > timeouts.RETIRE_GRACE]
            if late:
                return (f"worker(s) {', '.join(late)} left without handing their rows over "
                        f"(holders: {'; '.join(heard) or 'none'})")
        if not wanted and not self._cut_sent:
            self._cut_sent = True
            running = [a for r, a in enumerate(self.peers) if r not in self.outcomes]
            stop_epoch(self.client, running, self.spec.search_id, self.spec.epoch, "cut")
        return None

    def watch(self, stall_after: float) -> tuple[str, str | None]:
        """Wait for the epoch: ("done", None) or ("abort", why)."""
        while True:
            if self.poll_cb is not None:
                why = self.poll_cb(self)
                if why:
                    return "abort", why
            why = self._check_sends() or self._collect()
            if why:
                return "abort", why
            if len(self.outcomes) == len(self.futures):
                return "done", None
            if stop_request.requested():
                raise KeyboardInterrupt
            pending = [f for r, f in enumerate(self.futures)
                       if r not in self.outcomes and r not in self.retiring and not f.done()]
            fetching = self._fetching()
            try:   # returns as soon as a task or a fetch is done, at the latest after timeouts.CLIENT_POLL
                if fetching:
                    concurrent.futures.wait(fetching, timeout=timeouts.CLIENT_POLL,
                                            return_when=concurrent.futures.FIRST_COMPLETED)
                elif pending:
                    distributed_wait(pending, timeout=timeouts.CLIENT_POLL, return_when="FIRST_COMPLETED")
                else:
                    time.sleep(timeouts.CLIENT_POLL / 2)
            except (TimeoutError, asyncio.TimeoutError):
                pass
            except Exception as exc:   # tasks cancelled: the scheduler went, or forgot them
                live_workers(self.client)          # raises SearchFailed if it is gone
                return "abort", f"tasks cancelled ({exc.__class__.__name__})"
            alive = set(live_workers(self.client))
            lost = [a for r, a in enumerate(self.peers)
                    if a not in alive and r not in self.outcomes and r not in self.retiring]
            lost = [a for a in lost if not self._left_gracefully(a)]
            if lost:
                return "abort", f"worker(s) {', '.join(lost)} left"
            if self.retiring:
                why = self._fetch_handovers(alive)
                if why:
                    return "abort", why
            why = self._watchdog()
            if why:
                return "abort", why
            if self.t_start is not None and time.monotonic() - self.t_start > stall_after:
                stalled = [a for r, a in enumerate(self.peers) if r not in self.outcomes]
                return "abort", f"worker(s) {', '.join(stalled)} stalled"
            if self.progress_cb is not None:
                self._progress()

    def _progress(self) -> None:
        """The live line from rank 0's last snapshot; the next one is asked for in the
        background (one in flight at a time, each bounded), so the poll goes on at its
        pace while rank 0 is slow or stalled."""
        f = self._snapshot
        if f is not None:
            if not f.done():
                return
            self._snapshot = None
            try:
                snap = f.result()
            except BaseException:           # timed out or gone: the watchdog judges it
                snap = None
            if isinstance(snap, dict):
                self.progress_cb(snap)
        if 0 not in self.outcomes and 0 not in self.retiring:
            self._snapshot = call_soon(self.client, self.peers[0], "progress", 1.0,
                                       search_id=self.spec.search_id, epoch=self.spec.epoch)

    def release(self) -> None:
        """Cancel the tasks that did not return (a retired worker's, pinned to an
        address that no longer exists), and sends and fetches still under way."""
        for f in list(self.sends.values()) + list(self.fetches.values()) \
                + list(self._pings.values()) + [self._snapshot]:
            if f is not None:
                f.cancel()
        left = [f for r, f in enumerate(self.futures) if not f.done()]
        if left:
            try:
                self.client.cancel(left)
            except Exception:   # the scheduler may be gone; nothing else holds them
                pass

    def wind_down(self, reason: str, grace: float) -> list[str]:
        """Stop every task of the epoch and wait up to ``grace`` s for those whose worker
        is still there; returns the workers that did not return (excluded until they
        answer a ping again).

        The stops go out at once, in the background, and a worker is waited for only
        while its stop has not failed and the watchdog (:meth:`_watchdog`, still
        pinging) has not declared it stalled: a worker stalled past the patience costs
        the wind-down nothing, also when a peer's failed call to it ended the epoch a
        moment before the watchdog would have."""
        try:
            alive = set(live_workers(self.client))
        except SearchFailed:
            alive = set()
        pending = [r for r, a in enumerate(self.peers) if r not in self.outcomes and a in alive]
        stops = {r: call_soon(self.client, self.peers[r], "stop", timeouts.STOP_TIMEOUT,
                              search_id=self.spec.search_id, epoch=self.spec.epoch,
                              reason=reason)
                 for r in pending}

        def unanswered(r):
            f = stops[r]
            return f.done() and (f.cancelled() or f.exception() is not None)

        end = time.monotonic() + grace
        while True:
            try:
                self._collect()
            except SearchFailed:
                break
            self._watchdog()
            waiting = [r for r in pending if r not in self.outcomes and r not in self.stalled
                       and not self.futures[r].done() and not unanswered(r)]
            if (not waiting and not self._fetching()) or time.monotonic() >= end:
                break
            time.sleep(0.02)
        try:
            self._collect()
        except SearchFailed:
            pass
        missing = [a for r, a in enumerate(self.peers) if r not in self.outcomes]
        self.release()
        return missing
