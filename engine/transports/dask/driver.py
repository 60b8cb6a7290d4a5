"""The client side: the Dask transport of the epoch loop (:mod:`stealsearch.engine.core.loop`
runs the epochs, commits or rolls them back; this module says how one epoch runs on a
cluster).  :mod:`.epoch_watch` watches one epoch, :mod:`.shipper` loads the problem on the
workers, :mod:`.calls` holds every call to the scheduler and the workers,
:mod:`.timeouts` every wait.

Set-up (before the clock): the problem is pickled once and loaded on each worker of
the first epoch by one comm call per worker (:mod:`.tables`: unpickled and its kernel
warmed before the reply).  The first epoch's tasks are submitted at the same time (one
round trip less per search); each waits on its worker until its load is done, and
starts its own epoch clock only then.  ``search_seconds`` starts when every load of
the first epoch has replied, so it never includes kernel-cache loading;
``result.info`` reports ``setup_seconds`` and the bytes shipped.  Why a comm call and
not a future: a future tied to a dying worker (``client.scatter(broadcast=True)``, or
a warm-up task) was seen cancelled epoch after epoch after a SIGKILL; a comm call
either answers or fails within its timeout.  A worker that dies while loading is a
lost worker of the first epoch (:mod:`stealsearch.engine.core.epochs`: the epoch rolls back); a load
that fails on a live worker aborts the first epoch the same way.  From the second
epoch on, only loaded workers are dealt to: workers that join later (or were
restarted) are loaded in the background (on the client's event loop) and dealt to at
the first epoch after they are warm.

Each epoch (:mod:`stealsearch.engine.core.epochs`): deal the last cut over the loaded workers present
now, send each worker its share by one comm call (``stealsearch_share``, with a
timeout, for the same reason as the load: no future tied to a worker), submit one
long-running task per worker (pinned to it; its arguments are the spec, which names
the search, and a ticket of a few numbers: no rows in the scheduler's graph), watch
them (lost workers, failed sends, failed peer calls, stalled workers, Ctrl-C), fetch
each outcome directly from its worker as its task ends, and either commit the
outcomes as the next cut or discard the epoch and deal the last cut again.  A share
is taken once by its epoch's task, or dropped on its worker with a discarded epoch
(:mod:`.tables` has the argument); the client holds the cut until the commit, so a
share that dies with its worker is dealt again.

A worker that leaves gracefully (``retire_workers``, ``cluster.scale`` down, SIGTERM)
hands its epoch's outcome to its peers as it closes (:mod:`.tables`); the client,
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
import contextlib
import dataclasses
import logging
import os
import time

import numpy as np

from ...core.epochs import Cut, EpochSpec, conserves, deal, reclaim_lost_gifts
from ...core.errors import InputError, SearchFailed
from ...core.loop import EpochRun, Transport, run_epochs
from ...core.outcome import INTERRUPT_REASONS, improve
from ...core.policy import StealPolicy
from ...core.problem import IMPROVED, Mode, Problem
from ...core.proof import attach_scaffold, close_part, open_part
from ...core.result import SearchResult
from ...core.stack import make_stack
from . import timeouts
from .calls import call_soon, end_search, live_workers, register_plugin, running_workers
from .epoch_watch import EpochWatch
from . import proof_parts
from .proof_parts import PULL_CHUNK, discard_epoch, forget_parts, pull_parts
from .shipper import ProblemShipper

logger = logging.getLogger("stealsearch")

#: seconds a new ping to a suspect is waited for before an epoch is dealt without it
SUSPECT_ANSWER = 0.2


def first_cut(problem: Problem, n: int, proof: tuple | None = None) -> Cut:
    """Expand the root frontier in the client until ``n`` workers (or lanes) can each
    get a row.  ``proof``: a proof's search; the nodes expanded here are recorded in a
    part of the client's parts folder (``EpochSpec.proof``'s form), named by the cut."""
    t0 = time.time()
    stack = make_stack(problem)
    part = None
    if proof is not None:
        part = open_part(proof, 0, 0, problem.proof_record_width)
        attach_scaffold(stack, part)
    stack.push(np.ascontiguousarray(problem.root_frontier(), dtype=np.int64))
    incumbent = int(problem.initial_incumbent())
    bv, bb, bh = None, None, []
    while 0 < len(stack) < n and stack.nodes < timeouts.SETUP_NODE_CAP:
        status, value = stack.run(1, incumbent)
        if status == IMPROVED:
            incumbent = value
            bv, bb, bh = improve(bv, bb, bh, value, stack.solution, time.time() - t0)
            if problem.mode is Mode.DECIDE:
                break
    return Cut(batches={"": stack.take_all()}, counters=stack.counters.copy(),
               best_value=bv, best_buffer=bb, history=bh, elapsed=time.time() - t0,
               proof_parts=None if proof is None else close_part(part))


class DaskTransport(Transport):
    """The epochs of a search on ``client``'s cluster, on at most ``workers`` of its
    workers (all by default), ``threads_per_worker`` lanes each (see the module doc)."""

    starts_clock = True
    idle_worker = "client (setup)"
    where = "cluster"

    def __init__(self, client, *, workers: int | None = None, threads_per_worker: int = 1,
                 checkpoint: str | None = None):
        self.client = client
        self.threads = threads_per_worker
        self.checkpoint = checkpoint
        peers = live_workers(client)
        if not peers:
            raise SearchFailed("the cluster has no workers")
        if workers is not None and not 1 <= workers <= len(peers):
            raise InputError(f"asked for {workers} workers, the cluster has {len(peers)}")
        self.cap = workers or None
        self.first_peers = peers[:self.cap] if self.cap else list(peers)
        #: workers that did not answer the last abort (left out until they answer a ping)
        self.suspects: set[str] = set()
        #: the ping in flight to each suspect (answered: it is back)
        self._suspect_pings: dict = {}
        #: the suspects the last epoch's watchdog declared stalled (no answer for a peer
        #: timeout): their next ping is not waited for
        self._silent: set[str] = set()
        #: (epoch, worker) of every worker declared stalled (``info["stalls"]``)
        self.stalls: list[tuple[int, str]] = []
        self.shipper: ProblemShipper | None = None
        self.watch = None
        #: the first epoch's workers, loaded as it starts
        self.loading: list[str] = []
        self.handovers: list[tuple[int, list[str]]] = []
        self.shares = {"share_bytes": 0, "share_bytes_max": 0, "share_sends": 0,
                       "gift_rows_reclaimed": 0}
        self.last_peers: list[str] = []
        self.n_used = 0
        #: a proof's parts on the client (parts and bytes): pulled, or found in the
        #: client's folder (in_place); the seconds of both before the commits, epochs
        #: rolled back for a missing part
        self.proof_pull = {"pulled": 0, "pulled_bytes": 0, "in_place": 0, "in_place_bytes": 0,
                           "seconds": 0.0, "failed": 0}
        #: a proof: the token of the client's parts folder offered to the workers (None:
        #: every part is pulled)
        self.proof_token: str | None = None

    @property
    def peer_timeout(self) -> float:
        return timeouts.PEER_TIMEOUT

    @property
    def label(self) -> str:
        return f"dask[{max(self.n_used, 1)}]"

    def desc(self, problem: Problem) -> str:
        return f"{problem.name} on {len(self.first_peers)} workers"

    def first_cut(self, problem: Problem, proof: tuple | None = None) -> Cut:
        # a row per lane, not per worker: a machine of T lanes dealt one row splits it a
        # row a chunk before its lanes all work (the deal gives each worker its rows
        # round-robin, and the worker spreads them over its lanes)
        return first_cut(problem, len(self.first_peers) * max(1, int(self.threads)), proof)

    @contextlib.contextmanager
    def _connection(self):
        """A lost connection to the cluster is one SearchFailed line."""
        try:
            yield
        except (OSError, asyncio.CancelledError) as exc:
            # (where to resume from, if anywhere, the epoch loop adds)
            raise SearchFailed(f"lost the connection to the cluster "
                               f"({exc.__class__.__name__})") from None

    def prepare(self, loop) -> None:
        """The problem to the first epoch's workers; its tasks go out at once and wait
        there for it; the clock starts when every load has replied."""
        from ...deploy.monitor import SearchWatch

        self.shipper = ProblemShipper(
            self.client, loop.problem, loop.search_id,
            keep_idle=timeouts.PROBLEM_KEEP_IDLE + 2 * loop.every + timeouts.WAIT_FOR_WORKERS)
        # the /stealsearch page of the dashboard (stealsearch.engine.deploy.monitor)
        self.watch = SearchWatch(self.client, loop.search_id, label=self.desc(loop.problem))
        if loop.stop_reason is not None or not loop.cut.n_rows():
            return
        if loop.proof is not None and proof_parts.OFFER_FOLDER:
            try:
                self.proof_token = proof_parts.offer_folder(loop.proof.dir, loop.search_id)
            except OSError as exc:          # then every part is pulled
                logger.info("the proof folder is not offered to the workers: %r", exc)
        with self._connection():
            register_plugin(self.client)
            self.loading = list(self.first_peers)
            self.shipper.start(self.loading)

    def peers(self, loop) -> list[str]:
        with self._connection():
            register_plugin(self.client)
            if loop.epoch == 0 and self.loading:
                peers = self.loading
            else:
                peers = self._choose_workers()
                loop.clock.start()      # (ended before every load was in: all of it was set-up)
        self.n_used = max(self.n_used, len(peers))
        self.last_peers = peers
        return peers

    def _choose_workers(self) -> list[str]:
        """The workers of the next epoch: live ones that hold the problem (others are
        loaded in the background and join once warm), less those that did not answer
        the last abort (unless they answer a ping now)."""
        client, shipper, cap = self.client, self.shipper, self.cap
        deadline = time.monotonic() + timeouts.WAIT_FOR_WORKERS
        while True:
            live = running_workers(client)
            self._ping_suspects(live)
            candidates = [a for a in live if a not in self.suspects]
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
                raise SearchFailed(f"no responsive worker left after "
                                   f"{timeouts.WAIT_FOR_WORKERS:.0f} s"
                                   + (f" (loading the problem failed: {why})" if why else ""))
            shipper.wait(0.25)

    def _ping_suspects(self, live: list[str]) -> None:
        """A suspect that answered its ping is back; one that did not is asked again.
        Each ping runs in the background for up to a peer timeout, and only a new one is
        waited for, briefly (a worker that merely returned late answers at once), unless
        its worker was just declared stalled (it answered nothing for a peer timeout): a
        suspect still stalled costs the epochs after it nothing (a ping waited for here
        cost every epoch a second)."""
        for addr, ping in list(self._suspect_pings.items()):
            if addr not in self.suspects or addr not in live:
                ping.cancel()
                del self._suspect_pings[addr]
        new = []
        for addr in self.suspects:
            if addr in live and addr not in self._suspect_pings:
                self._suspect_pings[addr] = call_soon(self.client, addr, "ping",
                                                      timeouts.PEER_TIMEOUT, search_id="",
                                                      epoch=-1)
                if addr not in self._silent:
                    new.append(self._suspect_pings[addr])
        self._silent.clear()
        if new:
            concurrent.futures.wait(new, timeout=SUSPECT_ANSWER)
        for addr, ping in list(self._suspect_pings.items()):
            if ping.done():
                del self._suspect_pings[addr]
                try:
                    ping.result()
                    self.suspects.discard(addr)
                except BaseException:       # timed out, or gone: asked again next time
                    pass

    def _first_loads(self, loop):
        """The first epoch's poll: its loads.  All in: the clock starts (the tasks
        started theirs as their own load ended: the first to reply starts it).  One
        failed: abort the epoch."""
        shipper, loading = self.shipper, self.loading

        def poll(run: EpochWatch) -> str | None:
            shipper.harvest()
            failed = [a for a in loading if a not in shipper.ready and a not in shipper.pending]
            if failed:
                return f"loading the problem on {', '.join(failed)} failed"
            if all(a in shipper.ready for a in loading):
                loop.clock.start(at=min(shipper.done_at[a] for a in loading))
                run.poll_cb = None       # the stall clock starts once the shares are in too
            return None
        return poll

    def _show(self, loop, base: int, peers: list[str]):
        """The live line and the dashboard from rank 0's progress snapshot."""
        def _done(loop, a):         # its nodes in the committed epochs
            st = loop.stats.get(a)
            return 0 if st is None else st.nodes

        def show(snap):
            local = snap.get("local") or [None] * len(peers)
            idle = snap.get("idle") or [None] * len(peers)
            n_idle = sum(1 for i in idle if i)
            frac = loop.live.update(base + snap["nodes"], snap["best"], steals=snap["steals"],
                                    workers=len(peers), idle_workers=n_idle)
            self.watch.update({"time": time.time(), "nodes": base + snap["nodes"],
                               "steals": snap["steals"],
                               "incumbent": loop.live.incumbent, "bound": loop.live.bound,
                               "fraction_done": frac, "idle_workers": n_idle,
                               # per worker: its nodes over the whole search
                               "workers": {a: {"nodes": n + _done(loop, a), "shared": sh,
                                               "local": lo, "idle": i}
                                           for a, n, sh, lo, i in
                                           zip(peers, snap["per_worker"], snap["shared"],
                                               local, idle)}})
        return show

    def run_epoch(self, loop, spec: EpochSpec, cut: Cut) -> EpochRun:
        if spec.proof is not None:
            # the client's folder by its absolute path, and its token: a worker that
            # reads the token there writes its parts there (proof_parts.py)
            spec = dataclasses.replace(spec, proof=(os.path.abspath(spec.proof[0]),
                                                    spec.proof[1]),
                                       proof_token=self.proof_token)
        first = spec.epoch == 1 and bool(self.loading)
        if first:
            spec.load_wait = self.shipper.timeout()
        peers = spec.peers
        with self._connection():
            run = EpochWatch(self.client, spec, deal(cut, peers, loop.codec), loop.codec,
                             self._show(loop, cut.nodes, peers),
                             poll_cb=self._first_loads(loop) if first else None)
            self.shares["share_bytes"] += run.share_bytes
            self.shares["share_bytes_max"] = max(self.shares["share_bytes_max"], run.share_max)
            self.shares["share_sends"] += len(peers)
            limit = spec.time_left if spec.time_left is not None else loop.every
            stall_after = min(loop.every, limit) + timeouts.PEER_TIMEOUT + timeouts.ABORT_GRACE
            try:
                verdict, why = run.watch(stall_after)
            except KeyboardInterrupt:
                # first Ctrl-C / SIGTERM: stop every worker, keep what they return
                run.wind_down("interrupted", timeouts.INTERRUPT_GRACE)
                outs = [run.outcomes[r] for r in sorted(run.outcomes)]
                whole = len(outs) == len(peers) and not any(o.failure for o in outs)
                why = self._proof(loop, spec, outs, whole)
                return EpochRun(outs, abort=None if whole and why is None else "interrupted",
                                interrupted=True)
            for addr in run.problem_missing:
                self.shipper.forget(addr)
            if verdict == "done" and run.retiring:
                # a reply lost while its giver left: its rows go back to the giver's cut
                outs = [run.outcomes[r] for r in range(len(peers))]
                self.shares["gift_rows_reclaimed"] += reclaim_lost_gifts(outs, loop.codec)
                if not conserves(outs):
                    verdict, why = "abort", "rows not conserved across a hand-over"
            if verdict == "abort":
                # past the time limit the search ends now: what the others would return
                # is discarded with the epoch, so only the stop is sent
                grace = timeouts.STOP_TIMEOUT if run.past_limit() else timeouts.ABORT_GRACE
                self.suspects.update(run.wind_down("abort", grace))
                self._silent = {peers[r] for r in run.stalled}
                self.stalls += [(spec.epoch, peers[r]) for r in run.stalled]
                outs = [run.outcomes[r] for r in sorted(run.outcomes)]
                self._proof(loop, spec, outs, False)
                return EpochRun(outs, abort=why)
            run.release()
            outs = [run.outcomes[r] for r in range(len(peers))]
            why = self._proof(loop, spec, outs, True)
            if why is not None:
                return EpochRun(outs, abort=why)
        if run.retiring:
            self.handovers.append((spec.epoch, sorted(peers[r] for r in run.retiring)))
            logger.info("epoch %d: %s left gracefully; their rows were handed over",
                        spec.epoch, ", ".join(peers[r] for r in run.retiring))
        return EpochRun(outs)

    def _proof(self, loop, spec: EpochSpec, outs, whole: bool) -> str | None:
        """A proof's parts of the epoch's outcomes: pulled to the client when the epoch
        may be committed (``whole``), else left to their workers
        (:mod:`.proof_parts`); why the pull failed (the epoch is then aborted), or None."""
        if spec.proof is None:
            return None
        if not whole:
            forget_parts(self.client, outs, spec.search_id)
            discard_epoch(loop.proof.dir, spec.proof[1])
            return None
        t0 = time.perf_counter()
        why = pull_parts(self.client, outs, loop.proof.dir, loop.proof.width, spec.search_id,
                         timeouts.CALL_TIMEOUT + PULL_CHUNK / timeouts.LOAD_RATE,
                         self.proof_pull)
        self.proof_pull["seconds"] += time.perf_counter() - t0
        if why is not None:
            self.proof_pull["failed"] += 1
            discard_epoch(loop.proof.dir, spec.proof[1])
            if self.proof_token is not None:
                # a folder that once missed a part is not offered again: the epochs
                # after this one pull every part
                logger.info("the proof folder is offered to the workers no more (%s)", why)
                self.proof_token = None
        return why

    def finish(self, loop) -> None:
        reason = loop.stop_reason
        if self.watch is not None:
            self.watch.close("interrupted" if reason in INTERRUPT_REASONS
                             else "done" if reason is not None else "failed",
                             self.watch.last(nodes=loop.cut.nodes, incumbent=loop.live.incumbent,
                                             bound=loop.live.bound,
                                             **({"fraction_done": 1.0}
                                                if reason == "complete" else {})))
        if not loop.clock.started and self.loading:
            try:    # a short first epoch can end before its loads' replies were read
                self.shipper.harvest()
            except SearchFailed:
                pass
            if all(a in self.shipper.ready for a in self.loading):
                loop.clock.start(at=min(self.shipper.done_at[a] for a in self.loading))

    def close(self, loop) -> None:
        for ping in self._suspect_pings.values():
            ping.cancel()
        if self.shipper is not None:
            self.shipper.close()
        end_search(self.client, loop.search_id, unanswered=self.suspects)

    def info(self, loop) -> dict:
        shipped = self.shipper.figures() if self.shipper is not None else {}
        return {"rows_left_shared": loop.rows_left_shared, "setup_nodes": loop.setup_nodes,
                "carried_nodes": loop.carried, "rows_left": loop.cut.n_rows(),
                "setup_seconds": loop.clock.setup_seconds, **shipped, **self.shares,
                "handovers": self.handovers, "last_epoch_workers": list(self.last_peers),
                "stalls": [list(s) for s in self.stalls],
                **({"proof_pull": dict(self.proof_pull, seconds=round(
                    self.proof_pull["seconds"], 6))} if loop.proof is not None else {})}


def run_dask(problem: Problem, client, *, workers: int | None = None,
             policy: StealPolicy | None = None, time_limit: float | None = None,
             node_limit: int | None = None, progress: bool = False,
             checkpoint: str | None = None, checkpoint_every: float | None = None,
             checkpoint_info: dict | None = None, checkpoint_required: bool = False,
             cut: Cut | None = None, threads_per_worker: int = 1, proof=None,
             proof_parts=None) -> SearchResult:
    """Run the stealstack search on ``client``'s cluster, on at most ``workers`` of its
    workers (all by default), epoch by epoch; ``cut`` resumes from a checkpoint (the
    limits then count from the resume: this run's seconds and nodes).
    ``threads_per_worker``: search threads (lanes) in each worker
    (:mod:`stealsearch.engine.core.worker`).  ``proof``: a file name prefix (the
    problem in its proof form): each worker's lanes log their parts, pulled into the
    client's parts folder before each commit (:mod:`.proof_parts`), and the proof of
    the committed parts is written when the search ends; ``proof_parts``: the parts
    folder to use instead (a ramp-up's, whose cut names parts in it already)."""
    from ...core.proof import ProofParts

    t0 = time.perf_counter()
    transport = DaskTransport(client, workers=workers, threads_per_worker=threads_per_worker,
                              checkpoint=checkpoint)
    parts = proof_parts
    if parts is None and proof is not None:
        parts = ProofParts(proof, problem.proof_record_width)
    try:
        return run_epochs(problem, transport, policy=policy, time_limit=time_limit,
                          node_limit=node_limit, progress=progress, checkpoint=checkpoint,
                          checkpoint_every=checkpoint_every, checkpoint_info=checkpoint_info,
                          checkpoint_required=checkpoint_required, cut=cut, t0=t0,
                          proof=parts)
    finally:
        if parts is not None and proof_parts is None:
            parts.cleanup()
