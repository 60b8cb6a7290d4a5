"""The client side: run a search as a sequence of epochs, roll back what fails.

Set-up (before the clock): the problem is pickled once and loaded on each worker of
the first epoch by one comm call per worker (:mod:`.plugin`: unpickled and its kernel
warmed before the reply).  The first epoch's tasks are submitted at the same time (one
round trip less per search); each waits on its worker until its load is done, and
starts its own epoch clock only then.  ``search_seconds`` starts when every load of
the first epoch has replied, so it never includes kernel-cache loading;
``result.info`` reports ``setup_seconds`` and the bytes shipped.  Why a comm call and
not a future: a future tied to a dying worker (``client.scatter(broadcast=True)``, or
a warm-up task) was seen cancelled epoch after epoch after a SIGKILL; a comm call
either answers or fails within its timeout.  A worker that dies while loading is a
lost worker of the first epoch (:mod:`stealsearch.engine.epochs`: the epoch rolls back); a load
that fails on a live worker aborts the first epoch the same way.  From the second
epoch on, only loaded workers are dealt to: workers that join later (or were
restarted) are loaded in the background (on the client's event loop) and dealt to at
the first epoch after they are warm.

Each epoch (:mod:`stealsearch.engine.epochs`): deal the last cut over the loaded workers present
now, send each worker its share by one comm call (``stealsearch_share``, with a
timeout, for the same reason as the load: no future tied to a worker), submit one
long-running task per worker (pinned to it; its arguments are the spec, which names
the search, and a ticket of a few numbers: no rows in the scheduler's graph), watch
them (lost workers, failed sends, failed peer calls, stalled workers, Ctrl-C), fetch
each outcome directly from its worker as its task ends, and either commit the
outcomes as the next cut or discard the epoch and deal the last cut again.  A share
is taken once by its epoch's task, or dropped on its worker with a discarded epoch
(:mod:`.plugin` has the argument); the client holds the cut until the commit, so a
share that dies with its worker is dealt again.

A worker that leaves gracefully (``retire_workers``, ``cluster.scale`` down, SIGTERM)
hands its epoch's outcome to its peers as it closes (:mod:`.plugin`); the client,
seeing the scheduler report an expected removal (or the worker's own ``closing-worker``
event), fetches it, ends the epoch on the others as a cut, and commits it: no
rollback.  The commit is exact for the same reason as any other: every worker ended
its epoch with ``SharedPortion.close``, and the conservation check (released =
acquired + stolen + left, stolen = given) must hold, else the epoch is rolled back
(a steal reply lost in the closing connection would show there).  Peer calls to the
leaving worker that failed only cost messages that do not carry rows: incumbents
(pruning only), credits (termination detection, fresh per epoch), progress reports.

The scheduler is not on the steal path; every wait here has a timeout.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
import uuid
import weakref

import numpy as np
from distributed import wait as distributed_wait

from .. import interrupts
from ..checkpoint import CheckpointWriter
from ..epochs import DEFAULT_CHECKPOINT_EVERY, Cut, EpochOutcome, EpochSpec, conserves, deal, handler_name
from ..errors import InputError, SearchFailed
from ..outcome import INTERRUPT_REASONS, build_result, improve, merge_history, remaining_bound
from ..policy import StealPolicy
from ..problem import IMPROVED, Mode, Problem
from ..monitor import SearchWatch
from ..progress import Progress
from ..result import SearchResult, WorkerStats
from ..stack import make_stack
from .plugin import PLUGIN_NAME, StealstackPlugin
from .wire import ShareTicket
from .task import run_epoch, stop_searches

logger = logging.getLogger("stealsearch")

#: a peer call (steal, credit, stop) slower than this aborts the epoch; healthy calls
#: take ~1 ms (ARCHITECTURE.md), so this only catches stalled or dead peers
PEER_TIMEOUT = 10.0
#: rows the client expands at most before the first deal
SETUP_NODE_CAP = 10_000
#: how often the client polls for progress and for lost workers
CLIENT_POLL = 0.1
#: seconds the survivors of an aborted epoch get to return
ABORT_GRACE = 5.0
#: seconds the workers get to return after Ctrl-C / SIGTERM
INTERRUPT_GRACE = 2.0
#: consecutive aborted epochs after which the search gives up (exit 1 on the CLI)
MAX_CONSECUTIVE_ABORTS = 12
#: seconds to wait for a worker when none is left
WAIT_FOR_WORKERS = 60.0
#: timeout of one call from the client to the scheduler or a worker
CALL_TIMEOUT = 10.0
#: timeout of the plugin's registration (a broadcast that waits for every worker)
REGISTER_TIMEOUT = 3.0
#: a load (send, unpickle, kernel warm-up) slower than this, plus the bytes' time at
#: LOAD_RATE, is given up: the worker is left out and tried again later
LOAD_TIMEOUT = 60.0
LOAD_RATE = 20e6
#: seconds a worker keeps a share that no task took (a task cancelled before it ran);
#: far longer than a task takes to start, and a task that misses it fails its epoch
SHARE_KEEP = 120.0
#: a failed load is retried after this long, doubling up to LOAD_RETRY_MAX
LOAD_RETRY = 0.25
LOAD_RETRY_MAX = 8.0
#: seconds a worker keeps a search's problem that no epoch used (the client vanished
#: without its teardown); longer than any pause between epochs (WAIT_FOR_WORKERS),
#: and a worker that dropped it early is just loaded again
PROBLEM_KEEP_IDLE = 300.0
#: seconds the client waits for the outcome of a worker that left gracefully (its
#: close ends its epoch and sends the outcome: slow on a loaded machine)
RETIRE_GRACE = 10.0

_registered = weakref.WeakSet()   # clients that have the plugin registered


def _sync(client, coro_fn, timeout):
    async def run():
        return await asyncio.wait_for(coro_fn(), timeout)
    return client.sync(run)


def live_workers(client, timeout: float = CALL_TIMEOUT) -> list[str]:
    """Addresses of the cluster's workers, asked of the scheduler now.

    (``client.scheduler_info()`` returns a cache that a periodic callback refreshes
    with ``n_workers=0``; reading it can race with that.)"""
    try:
        info = _sync(client, lambda: client.scheduler.identity(n_workers=-1), timeout)
    except (OSError, asyncio.TimeoutError, TimeoutError) as exc:
        raise SearchFailed(f"lost the connection to the scheduler ({exc.__class__.__name__})") from None
    return sorted(info["workers"])


def running_workers(client, timeout: float = CALL_TIMEOUT) -> list[str]:
    """The workers that may be dealt to now: present and running (not paused, not
    closing gracefully: a retiring worker would take rows only to hand them back)."""
    try:
        info = _sync(client, lambda: client.scheduler.identity(n_workers=-1), timeout)
    except (OSError, asyncio.TimeoutError, TimeoutError) as exc:
        raise SearchFailed(f"lost the connection to the scheduler ({exc.__class__.__name__})") from None
    return sorted(a for a, w in info["workers"].items()
                  if not isinstance(w, dict) or w.get("status", "running") == "running")


def _ask_all(client, addrs, op, timeout, **kwargs) -> dict:
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


def _register_plugin(client) -> None:
    """Once per client; the scheduler hands it to every worker that joins later.  A
    worker dying during the broadcast makes it raise: then try again next epoch (an
    epoch on a worker without the handlers fails and rolls back)."""
    if client not in _registered:
        from distributed.protocol.pickle import dumps

        try:   # client.register_plugin without a timeout would wait for a stalled worker
            replies = _sync(client, lambda: client.scheduler.register_worker_plugin(
                plugin=dumps(StealstackPlugin()), name=PLUGIN_NAME, idempotent=True),
                REGISTER_TIMEOUT)
            failed = [a for a, r in replies.items() if r.get("status") != "OK"]
            if failed:
                raise OSError(f"not registered on {', '.join(failed)}")
        except (OSError, asyncio.TimeoutError, TimeoutError) as exc:
            logger.info("registering the plugin failed (%r); retrying next epoch", exc)
            return
        _registered.add(client)


def first_cut(problem: Problem, n: int) -> Cut:
    """Expand the root frontier in the client until ``n`` workers can each get a row."""
    t0 = time.time()
    stack = make_stack(problem)
    stack.push(np.ascontiguousarray(problem.root_frontier(), dtype=np.int64))
    incumbent = int(problem.initial_incumbent())
    bv, bb, bh = None, None, []
    while 0 < len(stack) < n and stack.nodes < SETUP_NODE_CAP:
        status, value = stack.run(1, incumbent)
        if status == IMPROVED:
            incumbent = value
            bv, bb, bh = improve(bv, bb, bh, value, stack.solution, time.time() - t0)
            if problem.mode is Mode.DECIDE:
                break
    return Cut(batches={"": stack.take_all()}, counters=stack.counters.copy(),
               best_value=bv, best_buffer=bb, history=bh, elapsed=time.time() - t0)


class _Estimator:
    """stealsearch.engine.estimate.ProgressEstimator for the driver: fed each committed cut (not a
    rolled-back epoch's rows), probing when asked for a fraction (its own CPU budget);
    an estimator error only ends the estimate, never the search."""

    def __init__(self, problem):
        from ..estimate import ProgressEstimator
        try:
            self.est = ProgressEstimator(problem)
        except Exception as exc:     # e.g. a problem whose stack cannot be made here
            logger.info("no progress estimate: %r", exc)
            self.est = None

    def __bool__(self):
        return self.est is not None

    def observe_cut(self, cut) -> None:
        try:
            self.est.observe_cut(cut)
        except Exception as exc:
            logger.info("progress estimate ended: %r", exc)
            self.est = None

    def fraction(self, nodes: int):
        try:
            self.est.work()
            return self.est.fraction(nodes)
        except Exception as exc:
            logger.info("progress estimate ended: %r", exc)
            self.est = None
            return None


def _add_stats(total: dict, outs) -> None:
    """Add a committed epoch's figures to each worker's totals.  ``rows_left`` is a
    state, not a flow ("rows on its stack when the search stopped"): it is the last
    committed epoch's value, and 0 for a worker that epoch did not use."""
    for st in total.values():
        st.rows_left = 0
    for o in outs:
        st = total.setdefault(o.address, WorkerStats(worker=o.address))
        for name, value in vars(o.stats).items():
            if name == "rows_left":
                st.rows_left = value
            elif name != "worker":
                setattr(st, name, getattr(st, name) + value)


def _recoverable(exc) -> bool:
    """A task error that a lost worker explains (retry), not a bug (fail)."""
    from distributed.scheduler import KilledWorker

    return isinstance(exc, (KilledWorker, OSError, asyncio.CancelledError,
                            asyncio.TimeoutError, TimeoutError))


class _Epoch:
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
            timeout = CALL_TIMEOUT + nbytes / LOAD_RATE
            self.share_bytes += nbytes
            self.share_max = max(self.share_max, nbytes)
            self.sends[r] = asyncio.run_coroutine_threadsafe(
                self._send(addr, payload, len(shares[r]), timeout), client.loop.asyncio_loop)
            # the task waits at most as long as the send may take, plus a peer timeout
            tickets.append(ShareTicket(n_rows=len(shares[r]), nbytes=nbytes,
                                       wait=timeout + PEER_TIMEOUT + spec.load_wait))
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

    async def _send(self, addr: str, payload, n_rows: int, timeout: float):
        from distributed.protocol import to_serialize

        return await asyncio.wait_for(self.client.rpc(addr).stealsearch_share(
            search_id=self.spec.search_id, epoch=self.spec.epoch,
            payload=to_serialize(payload), n_rows=n_rows, keep=SHARE_KEEP), timeout)

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
        timeout = CALL_TIMEOUT + 2 * self.share_bytes / LOAD_RATE
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
                exc = f.exception(timeout=CALL_TIMEOUT)
                if not _recoverable(exc):
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
            events = _sync(self.client, lambda: self.client.scheduler.events(topic=addr),
                           CALL_TIMEOUT)
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
            for reply in _ask_all(self.client, holders, "handovers", 2.0,
                                  search_id=self.spec.search_id, epoch=self.spec.epoch).values():
                if not isinstance(reply, dict):
                    continue
                for r, out in (reply.get("outcomes") or {}).items():
                    if r in wanted and r not in self.outcomes:
                        why = self._accept(r, out)
                        if why:
                            return why
            wanted = [r for r in wanted if r not in self.outcomes]
            late = [self.peers[r] for r in wanted
                    if time.monotonic() - self.retiring[r] > RETIRE_GRACE]
            if late:
                return f"worker(s) {', '.join(late)} left without handing their rows over"
        if not wanted and not self._cut_sent:
            self._cut_sent = True
            running = [a for r, a in enumerate(self.peers) if r not in self.outcomes]
            _ask_all(self.client, running, "stop", 1.0, search_id=self.spec.search_id,
                     epoch=self.spec.epoch, reason="cut")
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
            if interrupts.requested():
                raise KeyboardInterrupt
            pending = [f for r, f in enumerate(self.futures)
                       if r not in self.outcomes and r not in self.retiring and not f.done()]
            fetching = self._fetching()
            try:   # returns as soon as a task or a fetch is done, at the latest after CLIENT_POLL
                if fetching:
                    concurrent.futures.wait(fetching, timeout=CLIENT_POLL,
                                            return_when=concurrent.futures.FIRST_COMPLETED)
                elif pending:
                    distributed_wait(pending, timeout=CLIENT_POLL, return_when="FIRST_COMPLETED")
                else:
                    time.sleep(CLIENT_POLL / 2)
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
            if self.t_start is not None and time.monotonic() - self.t_start > stall_after:
                stalled = [a for r, a in enumerate(self.peers) if r not in self.outcomes]
                return "abort", f"worker(s) {', '.join(stalled)} stalled"
            if self.progress_cb is not None and 0 not in self.outcomes and 0 not in self.retiring:
                snap = _ask_all(self.client, [self.peers[0]], "progress", 1.0,
                                search_id=self.spec.search_id, epoch=self.spec.epoch)
                snap = snap.get(self.peers[0])
                if isinstance(snap, dict):
                    self.progress_cb(snap)

    def release(self) -> None:
        """Cancel the tasks that did not return (a retired worker's, pinned to an
        address that no longer exists), and sends and fetches still under way."""
        for f in list(self.sends.values()) + list(self.fetches.values()):
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
        answer a ping again)."""
        try:
            alive = set(live_workers(self.client))
        except SearchFailed:
            alive = set()
        pending = [a for r, a in enumerate(self.peers) if r not in self.outcomes and a in alive]
        replies = _ask_all(self.client, pending, "stop", 1.0,
                           search_id=self.spec.search_id, epoch=self.spec.epoch, reason=reason)
        waiting = [r for r, a in enumerate(self.peers) if r not in self.outcomes
                   and a in alive and not isinstance(replies.get(a), Exception)]
        end = time.monotonic() + grace
        while time.monotonic() < end:
            try:
                self._collect()
            except SearchFailed:
                break
            if all(self.futures[r].done() for r in waiting) and not self._fetching():
                break
            time.sleep(0.02)
        try:
            self._collect()
        except SearchFailed:
            pass
        missing = [a for r, a in enumerate(self.peers) if r not in self.outcomes]
        self.release()
        return missing


def run_dask(problem: Problem, client, *, workers: int | None = None,
             policy: StealPolicy | None = None, time_limit: float | None = None,
             node_limit: int | None = None, progress: bool = False,
             checkpoint: str | None = None, checkpoint_every: float | None = None,
             checkpoint_info: dict | None = None, cut: Cut | None = None,
             threads_per_worker: int = 1) -> SearchResult:
    """Run the stealstack search on ``client``'s cluster, on at most ``workers`` of its
    workers (all by default), epoch by epoch; ``cut`` resumes from a checkpoint (the
    limits then count from the resume: this run's seconds and nodes).
    ``threads_per_worker``: search threads (lanes) in each worker (see .worker)."""
    policy = policy or StealPolicy()
    t_wall = time.perf_counter()
    every = DEFAULT_CHECKPOINT_EVERY if checkpoint_every is None else float(checkpoint_every)
    peers = live_workers(client)
    if not peers:
        raise SearchFailed("the cluster has no workers")
    if workers is not None and not 1 <= workers <= len(peers):
        raise InputError(f"asked for {workers} workers, the cluster has {len(peers)}")
    cap = workers or None
    codec = make_stack(problem).codec
    carried = 0
    if cut is None:
        cut = first_cut(problem, len(peers[:cap]) if cap else len(peers))
        setup_nodes = cut.nodes
    else:
        setup_nodes, carried = 0, cut.nodes
    elapsed0 = cut.elapsed
    writer = CheckpointWriter.open(checkpoint, problem, codec, policy, checkpoint_info)
    stats: dict[str, WorkerStats] = {}
    rows_left_shared = 0
    search_id = uuid.uuid4().hex[:12]
    suspects: set[str] = set()
    shipper = _Shipper(client, problem, search_id,
                       keep_idle=PROBLEM_KEEP_IDLE + 2 * every + WAIT_FOR_WORKERS)
    handovers: list[tuple[int, list[str]]] = []
    shares = {"share_bytes": 0, "share_bytes_max": 0, "share_sends": 0}
    last_peers: list[str] = []
    setup_seconds = 0.0
    label = f"{problem.name} on {len(peers[:cap] if cap else peers)} workers"
    bar = Progress(progress, desc=label)
    # fraction done / ETA on the live line and the page (stealsearch.engine.estimate): Knuth probes
    # below the open rows of each committed cut, in this client, within a few % of a core
    estimator = _Estimator(problem) if progress else None
    # the /stealsearch page of the dashboard (stealsearch.engine.monitor): snapshots at most every 0.5 s
    watch = SearchWatch(client, search_id, label=label)
    stop_reason = None
    search_seconds = 0.0
    aborts_in_row = 0
    epoch = 0
    n_used = 0
    t_search = time.perf_counter()
    clock_started = False
    loading: list[str] = []       # the first epoch's workers, loaded as it starts

    def elapsed():
        return elapsed0 + time.perf_counter() - t_search

    def start_clock(at: float | None = None):
        nonlocal t_search, setup_seconds, clock_started
        if not clock_started:
            clock_started = True
            t_search = time.perf_counter() if at is None else at
            setup_seconds = t_search - t_wall

    def first_loads(run: _Epoch) -> str | None:
        """The first epoch's poll: its loads.  All in: the clock starts (the tasks
        started theirs as their own load ended).  One failed: abort the epoch."""
        shipper.harvest()
        failed = [a for a in loading if a not in shipper.ready and a not in shipper.pending]
        if failed:
            return f"loading the problem on {', '.join(failed)} failed"
        if all(a in shipper.ready for a in loading):
            start_clock(at=max(shipper.done_at[a] for a in loading))
            run.poll_cb = None       # the stall clock starts once the shares are in too
        return None

    try:
        try:
            if estimator:
                estimator.observe_cut(cut)
            if problem.mode is Mode.DECIDE and cut.best_value is not None:
                stop_reason = "found"
            elif cut.n_rows():
                # the problem to the first epoch's workers; its tasks go out at once and
                # wait there for it; the clock starts when every load has replied
                _register_plugin(client)
                loading = peers[:cap] if cap else list(peers)
                shipper.start(loading)
            while stop_reason is None:
                if interrupts.requested():
                    raise KeyboardInterrupt
                if cut.n_rows() == 0:
                    stop_reason = "complete"
                    bar.update(cut.nodes, fraction_done=1.0)
                    break
                if time_limit is not None and time.perf_counter() - t_search >= time_limit:
                    stop_reason = "time_limit"
                    break
                if node_limit is not None and cut.nodes - carried >= node_limit:
                    stop_reason = "node_limit"
                    break
                _register_plugin(client)
                if epoch == 0 and loading:
                    peers = loading
                else:
                    peers = _choose_workers(client, suspects, cap, shipper)
                    start_clock()
                n_used = max(n_used, len(peers))
                last_peers = peers
                epoch += 1
                spec = EpochSpec(
                    search_id=search_id, epoch=epoch, peers=peers, policy=policy,
                    incumbent=cut.incumbent(problem), epoch_seconds=every,
                    time_left=None if time_limit is None else
                    max(0.0, time_limit - (time.perf_counter() - t_search)),
                    node_limit=None if node_limit is None else node_limit - (cut.nodes - carried),
                    t_offset=elapsed(), peer_timeout=PEER_TIMEOUT,
                    load_wait=shipper.timeout() if epoch == 1 and loading else 0.0,
                    threads=threads_per_worker)
                base = cut.nodes

                def show(snap, base=base, peers=peers):
                    best = None if snap["best"] is None else problem.objective_sense * snap["best"]
                    local = snap.get("local") or [None] * len(peers)
                    idle = snap.get("idle") or [None] * len(peers)
                    n_idle = sum(1 for i in idle if i)
                    frac = estimator.fraction(base + snap["nodes"]) if estimator else None
                    bar.update(base + snap["nodes"], incumbent=best, steals=snap["steals"],
                               workers=len(peers), idle_workers=n_idle, fraction_done=frac)
                    watch.update({"time": time.time(), "nodes": base + snap["nodes"],
                                  "steals": snap["steals"], "incumbent": best,
                                  "fraction_done": frac, "idle_workers": n_idle,
                                  "workers": {a: {"nodes": n, "shared": sh, "stack": lo, "idle": i}
                                              for a, n, sh, lo, i in
                                              zip(peers, snap["per_worker"], snap["shared"],
                                                  local, idle)}})

                run = _Epoch(client, spec, deal(cut, peers, codec), codec, show,
                             poll_cb=first_loads if epoch == 1 and loading else None)
                shares["share_bytes"] += run.share_bytes
                shares["share_bytes_max"] = max(shares["share_bytes_max"], run.share_max)
                shares["share_sends"] += len(peers)
                stall_after = min(every, spec.time_left if spec.time_left is not None else every) \
                    + PEER_TIMEOUT + ABORT_GRACE
                try:
                    verdict, why = run.watch(stall_after)
                except KeyboardInterrupt:
                    # first Ctrl-C / SIGTERM: stop every worker, keep what they return
                    run.wind_down("interrupted", INTERRUPT_GRACE)
                    outs = [run.outcomes[r] for r in sorted(run.outcomes)]
                    if len(outs) == len(peers) and not any(o.failure for o in outs) \
                            and conserves(outs):
                        cut = _commit(problem, cut, outs, codec)
                        _add_stats(stats, outs)
                        rows_left_shared += sum(o.rows_left_shared for o in outs)
                    else:
                        cut = _rolled_back(cut, outs)
                    stop_reason = "interrupted"
                    break
                for addr in run.problem_missing:
                    shipper.forget(addr)
                if verdict == "done" and run.retiring and not conserves(
                        [run.outcomes[r] for r in range(len(peers))]):
                    verdict, why = "abort", "rows not conserved across a hand-over"
                if verdict == "abort":
                    missing = run.wind_down("abort", ABORT_GRACE)
                    suspects.update(missing)
                    outs = [run.outcomes[r] for r in sorted(run.outcomes)]
                    cut = _rolled_back(cut, outs)
                    aborts_in_row += 1
                    logger.info("epoch %d aborted (%s); rolled back to the last cut", epoch, why)
                    if aborts_in_row >= MAX_CONSECUTIVE_ABORTS:
                        raise SearchFailed(f"{aborts_in_row} epochs in a row failed; last: {why}")
                    if problem.mode is Mode.DECIDE and cut.best_value is not None:
                        stop_reason = "found"
                    continue
                aborts_in_row = 0
                run.release()
                if run.retiring:
                    handovers.append((epoch, sorted(peers[r] for r in run.retiring)))
                    logger.info("epoch %d: %s left gracefully; their rows were handed over",
                                epoch, ", ".join(peers[r] for r in run.retiring))
                outs = [run.outcomes[r] for r in range(len(peers))]
                if not conserves(outs):
                    raise SearchFailed("row conservation violated in an epoch (a protocol bug)")
                cut = _commit(problem, cut, outs, codec)
                if estimator:
                    estimator.observe_cut(cut)
                _add_stats(stats, outs)
                rows_left_shared += sum(o.rows_left_shared for o in outs)
                cut.elapsed = elapsed()
                reasons = [o.coordinator.get("stop_reason") for o in outs if o.coordinator] + \
                    [o.stop_reason for o in outs]
                reason = next((r for r in reasons if r not in (None, "cut")), None)
                if reason == "exhausted" and cut.n_rows():
                    raise SearchFailed(f"termination declared with {cut.n_rows()} rows left "
                                       "(a protocol bug)")
                if reason in ("found", "time_limit", "node_limit", "interrupted"):
                    stop_reason = reason
                if writer is not None and stop_reason is None:
                    writer.write(cut)
        except KeyboardInterrupt:     # between epochs: the last cut is the state
            stop_reason = "interrupted"
        except (OSError, asyncio.CancelledError) as exc:
            raise SearchFailed(f"lost the connection to the cluster ({exc.__class__.__name__})"
                               + (f"; resume with the checkpoint in {checkpoint}" if checkpoint else "")
                               ) from None
    finally:
        bar.close()
        watch.close("interrupted" if stop_reason in ("interrupted", "time_limit", "node_limit")
                    else "done" if stop_reason is not None else "failed")
        if not clock_started and loading:
            try:    # a short first epoch can end before its loads' replies were read
                shipper.harvest()
            except SearchFailed:
                pass
            if all(a in shipper.ready for a in loading):
                start_clock(at=max(shipper.done_at[a] for a in loading))
        start_clock()      # (ended before every load was in: all of it was set-up)
        search_seconds = time.perf_counter() - t_search
        shipper.close()
        try:   # fire and forget: a stalled worker must not hold us; epochs end by themselves,
            # and a problem nobody unloaded is dropped by its worker after keep_idle seconds
            client.run(stop_searches, search_id, "teardown", wait=False)
        except Exception:   # the scheduler is gone: every epoch ends by itself anyway
            pass
    cut.elapsed = elapsed()
    if writer is not None:
        writer.write(cut, status=stop_reason)
    rb = remaining_bound(problem, cut.rows(codec)) \
        if stop_reason in INTERRUPT_REASONS and problem.mode is Mode.OPTIMISE else None
    result = build_result(
        problem, backend=f"dask[{max(n_used, 1)}]", counters=[cut.counters],
        best_value=cut.best_value, best_buffer=cut.best_buffer,
        history=merge_history([cut.history]), stop_reason=stop_reason, remaining_bound=rb,
        workers=list(stats.values()) or [WorkerStats(worker="client (setup)")],
        wall_seconds=time.perf_counter() - t_wall, search_seconds=search_seconds,
        policy=policy.as_dict(),
        info={"rows_left_shared": rows_left_shared, "setup_nodes": setup_nodes,
              "carried_nodes": carried, "rows_left": cut.n_rows(),
              "setup_seconds": setup_seconds, **shipper.figures(), **shares,
              "handovers": handovers, "last_epoch_workers": list(last_peers)})
    result.epochs, result.recoveries, result.nodes_redone = cut.epochs, cut.recoveries, cut.nodes_redone
    if writer is not None:
        writer.describe(result)
    if not result.conservation()["holds"]:
        raise SearchFailed(f"row conservation violated: {result.conservation()}")
    return result


def _commit(problem, cut: Cut, outs, codec) -> Cut:
    new = cut.advance(problem, {o.address: o.rows for o in outs}, [o.counters for o in outs])
    for o in outs:
        new.offer(o.best_value, o.best_buffer, o.history)
    return new


def _rolled_back(cut: Cut, outs) -> Cut:
    """The same cut after an aborted epoch: its rows and counters stay, the epoch's
    nodes are counted as re-done; a better (verified) incumbent is kept."""
    for o in outs:
        cut.offer(o.best_value, o.best_buffer, o.history)
    cut.recoveries += 1
    cut.nodes_redone += sum(int(o.counters[0]) for o in outs)
    return cut


class _Shipper:
    """The search's problem, pickled once, loaded once on each worker that is dealt to.

    Loads are comm calls run on the client's event loop (``stealsearch_load``, see
    :mod:`.plugin`), each bounded by a timeout; a worker is ``ready`` once it replied
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
        return LOAD_TIMEOUT + len(self._bytes()) / LOAD_RATE

    def harvest(self) -> None:
        for a, f in list(self.pending.items()):
            if not f.done():
                continue
            del self.pending[a]
            try:
                reply, self.done_at[a] = f.result()
            except BaseException as exc:    # lost, stalled, or no plugin yet: later
                back = min(LOAD_RETRY_MAX, 2 * self.retry.get(a, (0, LOAD_RETRY / 2))[1])
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


def _choose_workers(client, suspects: set, cap: int | None, shipper: _Shipper) -> list[str]:
    """The workers of the next epoch: live ones that hold the problem (others are loaded
    in the background and join once warm), less those that did not answer the last
    abort (unless they answer a ping now)."""
    deadline = time.monotonic() + WAIT_FOR_WORKERS
    while True:
        live = running_workers(client)
        back = [a for a, r in _ask_all(client, [a for a in live if a in suspects], "ping", 1.0,
                                        search_id="", epoch=-1).items()
                if not isinstance(r, Exception)]
        suspects.difference_update(back)
        candidates = [a for a in live if a not in suspects]
        shipper.harvest()
        ready = [a for a in candidates if a in shipper.ready]
        if cap is None:
            shipper.start(candidates)
        else:       # load only as many as the cap can use
            loading = sum(1 for a in candidates if a in shipper.pending)
            more = [a for a in candidates if a not in shipper.ready and a not in shipper.pending]
            shipper.start(more[:max(0, cap - len(ready) - loading)])
        if ready:
            return ready[:cap] if cap else ready
        if time.monotonic() > deadline:
            why = "; ".join(f"{a}: {shipper.last_failure[a]}" for a in candidates
                            if a in shipper.last_failure)
            raise SearchFailed(f"no responsive worker left after {WAIT_FOR_WORKERS:.0f} s"
                               + (f" (loading the problem failed: {why})" if why else ""))
        shipper.wait(0.25)
