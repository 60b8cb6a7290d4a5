"""The client side: run a search as a sequence of epochs, roll back what fails.

Each epoch (:mod:`engine.epochs`): deal the last cut over the workers present now,
submit one long-running task per worker (pinned to it), watch them (lost workers,
failed peer calls, stalled workers, Ctrl-C), and either commit what they return as
the next cut or discard the epoch and deal the last cut again.  The scheduler is
not on the steal path; every wait here has a timeout.
"""
from __future__ import annotations

import asyncio
import logging
import time
import uuid
import weakref

import numpy as np
from distributed import wait as distributed_wait

from .. import interrupts
from ..checkpoint import CheckpointWriter
from ..epochs import Cut, deal
from ..errors import InputError, SearchFailed
from ..outcome import INTERRUPT_REASONS, build_result, improve, merge_history, remaining_bound
from ..policy import StealPolicy
from ..problem import IMPROVED, Mode, Problem
from ..monitor import SearchWatch
from ..progress import Progress
from ..result import SearchResult, WorkerStats
from ..stack import make_stack
from .plugin import PLUGIN_NAME, StealstackPlugin
from .wire import EpochOutcome, EpochSpec, handler_name
from .worker import run_epoch, stop_searches

logger = logging.getLogger("stealsearch")

#: a peer call (steal, credit, stop) slower than this aborts the epoch; healthy calls
#: take ~1 ms (ARCHITECTURE.md), so this only catches stalled or dead peers
PEER_TIMEOUT = 10.0
#: default seconds between consistent cuts (the epoch length; also the work lost per
#: failure, and how long an orphaned search can outlive its client)
DEFAULT_CHECKPOINT_EVERY = 5.0
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


def _add_stats(total: dict, outs) -> None:
    for o in outs:
        st = total.setdefault(o.address, WorkerStats(worker=o.address))
        for name, value in vars(o.stats).items():
            if name != "worker":
                setattr(st, name, getattr(st, name) + value)


def _recoverable(exc) -> bool:
    """A task error that a lost worker explains (retry), not a bug (fail)."""
    from distributed.scheduler import KilledWorker

    return isinstance(exc, (KilledWorker, OSError, asyncio.CancelledError,
                            asyncio.TimeoutError, TimeoutError))


class _Epoch:
    """Watching one epoch's tasks."""

    def __init__(self, client, spec: EpochSpec, shares, progress_cb):
        self.client, self.spec, self.peers = client, spec, spec.peers
        key = f"stealsearch-{spec.search_id}-{spec.epoch}"
        self.futures = [client.submit(run_epoch, spec, shares[r], key=f"{key}-{r}",
                                      workers=[addr], allow_other_workers=False, pure=False)
                        for r, addr in enumerate(self.peers)]
        self.outcomes: dict[int, EpochOutcome] = {}
        self.progress_cb = progress_cb
        self.t_start = time.monotonic()

    def _collect(self) -> str | None:
        """Gather finished tasks; a reason to abort, or None."""
        for r, f in enumerate(self.futures):
            if r in self.outcomes or not f.done():
                continue
            if f.status == "error":
                exc = f.exception(timeout=CALL_TIMEOUT)
                if not _recoverable(exc):
                    raise SearchFailed(f"a search task failed on {self.peers[r]}: {exc!r}") from exc
                return f"task on {self.peers[r]} lost ({exc.__class__.__name__})"
            if f.status != "finished":
                return f"task on {self.peers[r]} {f.status}"
            try:
                out = f.result(timeout=CALL_TIMEOUT)
            except Exception as exc:      # its worker died before we fetched the result
                return f"result of {self.peers[r]} lost ({exc.__class__.__name__})"
            self.outcomes[r] = out
            if out.failure:
                return out.failure
        return None

    def watch(self, stall_after: float) -> tuple[str, str | None]:
        """Wait for the epoch: ("done", None) or ("abort", why)."""
        while True:
            why = self._collect()
            if why:
                return "abort", why
            if len(self.outcomes) == len(self.futures):
                return "done", None
            if interrupts.requested():
                raise KeyboardInterrupt
            pending = [f for r, f in enumerate(self.futures) if r not in self.outcomes]
            try:   # returns as soon as every task is done, at the latest after CLIENT_POLL
                distributed_wait(pending, timeout=CLIENT_POLL)
            except (TimeoutError, asyncio.TimeoutError):
                pass
            except Exception as exc:   # tasks cancelled: the scheduler went, or forgot them
                live_workers(self.client)          # raises SearchFailed if it is gone
                return "abort", f"tasks cancelled ({exc.__class__.__name__})"
            alive = set(live_workers(self.client))
            lost = [a for r, a in enumerate(self.peers) if a not in alive and r not in self.outcomes]
            if lost:
                return "abort", f"worker(s) {', '.join(lost)} left"
            if time.monotonic() - self.t_start > stall_after:
                stalled = [a for r, a in enumerate(self.peers) if r not in self.outcomes]
                return "abort", f"worker(s) {', '.join(stalled)} stalled"
            if self.progress_cb is not None and 0 not in self.outcomes:
                snap = _ask_all(self.client, [self.peers[0]], "progress", 1.0,
                                search_id=self.spec.search_id, epoch=self.spec.epoch)
                snap = snap.get(self.peers[0])
                if isinstance(snap, dict):
                    self.progress_cb(snap)

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
            if all(self.futures[r].done() for r in waiting):
                break
            time.sleep(0.02)
        try:
            self._collect()
        except SearchFailed:
            pass
        missing = [a for r, a in enumerate(self.peers) if r not in self.outcomes]
        left = [f for r, f in enumerate(self.futures) if r not in self.outcomes]
        if left:
            try:
                self.client.cancel(left)
            except Exception:   # the scheduler may be gone; nothing else holds them
                pass
        return missing


def _epoch_conserves(outs) -> bool:
    released = sum(o.stats.rows_released for o in outs)
    acquired = sum(o.stats.rows_acquired for o in outs)
    stolen = sum(o.stats.rows_stolen for o in outs)
    given = sum(o.stats.rows_given for o in outs)
    left = sum(o.rows_left_shared for o in outs)
    return released == acquired + stolen + left and stolen == given


def run_dask(problem: Problem, client, *, workers: int | None = None,
             policy: StealPolicy | None = None, time_limit: float | None = None,
             node_limit: int | None = None, progress: bool = False,
             checkpoint: str | None = None, checkpoint_every: float | None = None,
             checkpoint_info: dict | None = None, cut: Cut | None = None) -> SearchResult:
    """Run the stealstack search on ``client``'s cluster, on at most ``workers`` of its
    workers (all by default), epoch by epoch; ``cut`` resumes from a checkpoint (the
    limits then count from the resume: this run's seconds and nodes)."""
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
    writer = None
    if checkpoint is not None:
        writer = CheckpointWriter(checkpoint, problem, codec, mode=problem.mode.name.lower(),
                                  policy=policy.as_dict(), info=checkpoint_info)
    stats: dict[str, WorkerStats] = {}
    rows_left_shared = 0
    search_id = uuid.uuid4().hex[:12]
    suspects: set[str] = set()
    joiners = _Joiners(client, problem, peers)
    label = f"{problem.name} on {len(peers[:cap] if cap else peers)} workers"
    bar = Progress(progress, desc=label)
    # the /stealsearch page of the dashboard (engine.monitor): snapshots at most every 0.5 s
    watch = SearchWatch(client, search_id, label=label)
    stop_reason = None
    search_seconds = 0.0
    aborts_in_row = 0
    epoch = 0
    n_used = 0
    t_search = time.perf_counter()

    def elapsed():
        return elapsed0 + time.perf_counter() - t_search

    try:
        try:
            if problem.mode is Mode.DECIDE and cut.best_value is not None:
                stop_reason = "found"
            while stop_reason is None:
                if interrupts.requested():
                    raise KeyboardInterrupt
                if cut.n_rows() == 0:
                    stop_reason = "complete"
                    break
                if time_limit is not None and time.perf_counter() - t_search >= time_limit:
                    stop_reason = "time_limit"
                    break
                if node_limit is not None and cut.nodes - carried >= node_limit:
                    stop_reason = "node_limit"
                    break
                _register_plugin(client)
                peers = _choose_workers(client, suspects, cap, joiners)
                n_used = max(n_used, len(peers))
                epoch += 1
                spec = EpochSpec(
                    search_id=search_id, epoch=epoch, problem=problem, peers=peers, policy=policy,
                    incumbent=cut.incumbent(problem), epoch_seconds=every,
                    time_left=None if time_limit is None else
                    max(0.0, time_limit - (time.perf_counter() - t_search)),
                    node_limit=None if node_limit is None else node_limit - (cut.nodes - carried),
                    t_offset=elapsed(), peer_timeout=PEER_TIMEOUT)
                base = cut.nodes

                def show(snap, base=base, peers=peers):
                    best = None if snap["best"] is None else problem.objective_sense * snap["best"]
                    bar.update(base + snap["nodes"], incumbent=best, steals=snap["steals"],
                               workers=len(peers))
                    watch.update({"time": time.time(), "nodes": base + snap["nodes"],
                                  "steals": snap["steals"], "incumbent": best,
                                  "workers": {a: {"nodes": n, "shared": sh} for a, n, sh in
                                              zip(peers, snap["per_worker"], snap["shared"])}})

                run = _Epoch(client, spec, deal(cut, peers, codec), show)
                stall_after = min(every, spec.time_left if spec.time_left is not None else every) \
                    + PEER_TIMEOUT + ABORT_GRACE
                try:
                    verdict, why = run.watch(stall_after)
                except KeyboardInterrupt:
                    # first Ctrl-C / SIGTERM: stop every worker, keep what they return
                    run.wind_down("interrupted", INTERRUPT_GRACE)
                    outs = [run.outcomes[r] for r in sorted(run.outcomes)]
                    if len(outs) == len(peers) and not any(o.failure for o in outs) \
                            and _epoch_conserves(outs):
                        cut = _commit(problem, cut, outs, codec)
                        _add_stats(stats, outs)
                        rows_left_shared += sum(o.rows_left_shared for o in outs)
                    else:
                        cut = _rolled_back(cut, outs)
                    stop_reason = "interrupted"
                    break
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
                outs = [run.outcomes[r] for r in range(len(peers))]
                if not _epoch_conserves(outs):
                    raise SearchFailed("row conservation violated in an epoch (a protocol bug)")
                cut = _commit(problem, cut, outs, codec)
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
        search_seconds = time.perf_counter() - t_search
        try:   # fire and forget: a stalled worker must not hold us; epochs end by themselves
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
              "carried_nodes": carried, "rows_left": cut.n_rows()})
    result.epochs, result.recoveries, result.nodes_redone = cut.epochs, cut.recoveries, cut.nodes_redone
    if writer is not None:
        result.checkpoint = str(writer.dir)
        result.info["checkpoint_writes"] = writer.writes
        result.info["checkpoint_seconds"] = writer.seconds
        result.info["checkpoint_bytes"] = writer.bytes
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


def _warm(problem):
    """Load the kernel on a worker that joined (numba reads its cache: ~1-2 s), so that
    it does not hold up the epoch it joins."""
    make_stack(problem).run(0, int(problem.initial_incumbent()))
    return True


class _Joiners:
    """Workers that appeared after the search started: warmed up first, then dealt to."""

    def __init__(self, client, problem, initial):
        self.client, self.problem = client, problem
        self.ready = set(initial)
        self.warming: dict = {}

    def filter(self, live: list[str]) -> list[str]:
        for a in live:
            if a not in self.ready and a not in self.warming:
                self.warming[a] = self.client.submit(
                    _warm, self.problem, workers=[a], allow_other_workers=False, pure=False,
                    key=f"stealsearch-warm-{uuid.uuid4().hex[:12]}")
        for a, f in list(self.warming.items()):
            if f.done():
                del self.warming[a]
                if f.status == "finished":
                    self.ready.add(a)
            elif a not in live:
                f.cancel()
                del self.warming[a]
        return [a for a in live if a in self.ready]


def _choose_workers(client, suspects: set, cap: int | None, joiners: _Joiners) -> list[str]:
    """The workers of the next epoch: live ones (joiners once warm), less those that did
    not answer the last abort (unless they answer a ping now)."""
    deadline = time.monotonic() + WAIT_FOR_WORKERS
    while True:
        live = live_workers(client)
        back = [a for a, r in _ask_all(client, [a for a in live if a in suspects], "ping", 1.0,
                                        search_id="", epoch=-1).items()
                if not isinstance(r, Exception)]
        suspects.difference_update(back)
        peers = [a for a in joiners.filter(live) if a not in suspects]
        if peers:
            return peers[:cap] if cap else peers
        if time.monotonic() > deadline:
            raise SearchFailed(f"no responsive worker left after {WAIT_FOR_WORKERS:.0f} s")
        time.sleep(0.25)
