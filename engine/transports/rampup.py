"""Ramp-up: start the search in this process at once, move it to the cluster if it lasts.

The ``auto`` default of :func:`stealsearch.engine.solve` and of the CLI (backend ``rampup``).  UG's
ramp-up is the model: its LoadCoordinator solves alone until it has enough open nodes,
then hands them out.  Here:

* **Phase 1 (this process).**  For a problem whose node code does not hold the GIL
  (:func:`stealsearch.engine.core.problem.holds_gil` false: every numba kernel compiled
  ``nogil``), *lanes* (:class:`stealsearch.engine.transports.lanes.Lanes`, the worker core of a Dask
  worker without Dask) search on min(usable cores, search threads asked of the cluster)
  threads from the first moment (:func:`first_phase_threads`), so the cores the cluster
  will use are not idle while it starts; a problem that holds the GIL (the Python
  reference tier) runs the problem's one stack (:class:`~stealsearch.engine.transports.sequential.OneStack`)
  in budget chunks (:class:`~stealsearch.engine.core.stack.BudgetTuner`), as the sequential backend
  does.  Searches that end within ``grace`` seconds never start a
  cluster at all (no process is spawned, nothing is imported from distributed).  After
  ``grace`` seconds, the cluster starts (or is connected to) in the background, through
  :class:`stealsearch.engine.deploy.interrupts.ShieldedStart` (its worker processes never see Ctrl-C); the
  search keeps going meanwhile and asks whether the cluster is ready (started,
  connected, its workers' kernels loaded): one stack between two chunks, lanes every
  :data:`~stealsearch.engine.transports.lanes.HANDOVER_POLL` seconds from the main thread.  A cluster
  given as ``client`` is ready at once: the hand-over comes after ``grace`` seconds, and
  after at least one chunk (with ``grace=0`` and one stack of a fixed budget: at a node
  count, not at a moment).
* **A hand-over at a node count** (``handover_nodes=N``).  Phase 1 expands at most N
  nodes of this run: there it *holds* (expands nothing more), the cluster's start begins
  at once if the grace has not passed, and the rows wait for it to be ready.  So a search
  of more than N nodes is handed over whatever the speed of the machine (with a given
  ``client``, and a grace longer than phase 1 lasts, at exactly N nodes).  If the
  cluster fails to start (``fall_back``), or is not ready within :data:`HOLD_TIMEOUT`,
  the hold ends and phase 1 goes on as without it.
* **Hand-over.**  Once it is, every open row of phase 1 is taken (``take_all``) into a
  :class:`~stealsearch.engine.core.epochs.Cut` with the counters, the incumbent (value, solution buffer,
  history) and the elapsed time, and :func:`stealsearch.engine.transports.dask.run_dask` resumes from
  that cut, exactly as ``resume()`` resumes from a checkpoint.  Limits count across both
  phases: the Dask phase gets what is left of ``time_limit`` and ``node_limit``.
* **Phase 1 ends the search** when the stack empties, a limit or a Ctrl-C stops it, or
  (decide mode) a solution is found.  A cluster still starting is then aborted
  (:meth:`~stealsearch.engine.deploy.interrupts.ShieldedStart.abort`: the processes it spawned are ended by
  PID, which makes a LocalCluster's start fail within ~0.1 s, where finishing and
  closing it would take seconds), and an error of its start no longer matters.  (The
  abort ends the children of this process that appeared since the start began: a
  program that starts other clusters in other threads at the same moment should not
  ramp up.)

Why the result is exact (every node counted in exactly one phase, rows handed over once)
-----------------------------------------------------------------------------------------
*One stack.*  Phase 1 is one stack in one thread: each chunk expands nodes and adds them
to the stack's counters, and a chunk is atomic (the kernel returns between nodes, never
inside one).  The hand-over happens between chunks, so at that instant every node of the
tree is in exactly one of three sets: expanded (counted in ``stack.counters``), open (a
row of the stack), or below an open row.  The hand-over ends phase 1's last epoch
(:class:`~stealsearch.engine.transports.sequential.OneStack`, stop reason ``handover``): ``take_all``
moves the open rows into its outcome, which the epoch loop commits as the cut, and
leaves the stack empty; phase 1 never runs again: no row stays behind, none is copied.

*Lanes.*  The hand-over is a stop of the running lanes epoch, the very stop a Ctrl-C or
an epoch's end makes, whose cut :class:`~stealsearch.engine.core.worker.WorkerSearch` proves
exact: the main thread sets the stop (reason ``handover``), every lane finishes its
atomic chunk and leaves its loop, then the shared portion is closed and every lane's
stack taken; a row is at that moment in exactly one of the portion or one lane's stack
(rows move between them only under the portion's lock), and each lane's counters hold
exactly the nodes it expanded.  The outcome (rows and counters reduced over the lanes)
is committed as the cut by the same conservation check as every epoch; the lanes'
worker is then closed and never runs again.  If the lanes ran dry in the poll that
asked for the hand-over, the cut has no row: the search is complete in phase 1 and
the cluster is abandoned as for any search phase 1 ends.

*At a node count.*  The hold is a node limit of phase 1, enforced by the node limit's
own machinery: one stack caps its chunks at the nodes left before the hold, so it stops
between two chunks with exactly N nodes counted; lanes run an epoch whose node limit is
the nodes left (the coordinator's grant, which the lanes' reservations never pass), and
that epoch ends as a node-limit stop does: a consistent cut, proven above.  While phase
1 holds, no node is expanded, so the cut stays what it is; the hand-over then takes
it as above (one stack: ``take_all``; lanes: the held epoch's outcome, its stop reason
made ``handover``).  A hold that ends without a hand-over leaves the rows where they
are (one stack) or commits the held epoch as an ordinary cut (lanes): the search goes
on from them.

*Proofs.*  Both phases write into one parts folder (:class:`~stealsearch.engine.core.proof.ProofParts`):
phase 1's committed epochs' parts are in the handed cut's ``proof_parts``, exactly the
nodes its counters count, and phase 2's loop continues that list with its own
committed epochs' parts (pulled from the workers before each commit), so the final
cut names one record for every node of both phases, and the proof is made from it
once, by whichever phase ended the search.

``run_dask`` then treats the cut like any committed cut (:mod:`stealsearch.engine.core.epochs`):
its counters start from the cut's and add only nodes expanded below its rows, each
committed once (an aborted epoch is discarded and re-dealt from the same cut).  So the
final counters are phase 1's plus phase 2's, with nothing in common; the result's
``phases`` reports both parts (their nodes add up to ``nodes``), and the Dask phase
still checks row conservation epoch by epoch.  The incumbent travels in the cut and only
prunes, so an optimum stays the optimum; enumerate mode has none, so its counts equal
the sequential ones.
"""
from __future__ import annotations

import logging
import numbers
import threading
import time
from dataclasses import dataclass, replace


from ..core import stop_request
from ..core.epochs import Cut
from ..core.errors import InputError, first_line
from ..core.loop import EpochLoop
from ..core.policy import StealPolicy
from ..core.problem import Problem, holds_gil
from ..core.result import SearchResult
from ..core.stack import make_stack
from ..deploy import interrupts
from .sequential import OneStack

log = logging.getLogger(__name__)

#: Seconds the search runs in this process before a cluster is started at all.  A
#: LocalCluster that is started and then not needed costs its whole start and close
#: (2-5 s on the 2-core reference machine, see benchmarks/results/rampup.md), which a
#: search that ends meanwhile would pay; searches shorter than this pay nothing.
DEFAULT_GRACE = 1.0
#: Seconds a cluster still starting when phase 1 ends may take before its processes are
#: ended by PID.
START_TIMEOUT = 120.0
#: Seconds to load the kernel on the workers before the hand-over.
WARM_TIMEOUT = 60.0
#: Seconds phase 1 holds at ``handover_nodes`` for the cluster to become ready; then it
#: goes on without the hold (the hand-over still comes once the cluster is ready).
HOLD_TIMEOUT = START_TIMEOUT + WARM_TIMEOUT
#: Seconds between two questions to a cluster that phase 1 holds for.
HOLD_POLL = 0.01


@dataclass
class Place:
    """Where phase 2 runs: a given ``client``, a ``scheduler``, a ``cluster_config``, or
    (none of them) a LocalCluster of ``workers`` processes; the rest as
    :func:`stealsearch.engine.deploy.cluster.dask_client`."""

    client: object = None
    workers: int | None = None
    scheduler: str | None = None
    cluster_config: str | None = None
    connect_timeout: float | None = None
    wait_workers: float | None = None
    force: bool = False

    @property
    def local(self) -> bool:
        return self.client is None and self.scheduler is None and self.cluster_config is None

    def cap(self) -> int | None:
        """At most this many workers of the cluster (a LocalCluster of ours: all)."""
        return None if self.local else self.workers


class _Connection:
    """A client made ready in the background: connected, workers' kernels loaded."""

    def __init__(self, context, client):
        self.context, self.client = context, client

    def close(self) -> None:
        if self.context is not None:
            self.context.__exit__(None, None, None)


def _load_kernel(problem) -> bool:
    """On a worker: load the problem's kernel (numba reads its cache, ~1 s per process),
    so that the first epoch after the hand-over searches at once."""
    make_stack(problem).run(0, int(problem.initial_incumbent()))
    return True


class _Cancelled(Exception):
    """Phase 1 ended while the cluster started: stop starting it."""


def _warm(client, problem, cancelled) -> None:
    from distributed import wait

    try:
        info = client.sync(client.scheduler.identity, n_workers=-1, callback_timeout=10)
        futures = [client.submit(_load_kernel, problem, workers=[a], allow_other_workers=False,
                                 pure=False) for a in sorted(info["workers"])]
        deadline = time.monotonic() + WARM_TIMEOUT
        while not cancelled.is_set() and time.monotonic() < deadline:
            try:
                wait(futures, timeout=0.1)
                break
            except TimeoutError:
                pass
        for f in futures:
            f.release()
    except Exception as exc:   # only an optimisation: the first epoch loads it anyway
        log.debug("loading the kernel on the workers failed: %r", exc)


def _connect(place: Place, problem, cancelled) -> _Connection:
    """Runs in the ShieldedStart's thread: start or reach the cluster, warm it up;
    ``cancelled`` (phase 1 ended) stops it between steps."""
    import distributed  # noqa: F401  (~1 s: look at ``cancelled`` after it)

    if cancelled.is_set():
        raise _Cancelled
    from ..deploy.cluster import dask_client

    context = dask_client(workers=place.workers, scheduler=place.scheduler,
                          config=place.cluster_config, connect_timeout=place.connect_timeout,
                          wait_workers=place.wait_workers, force=place.force,
                          cancelled=cancelled)
    connection = _Connection(context, context.__enter__())
    if not cancelled.is_set():
        _warm(connection.client, problem, cancelled)
    return connection


def _close(connection: _Connection) -> None:
    connection.close()


def check_handover_nodes(nodes) -> int | None:
    if nodes is None:
        return None
    if isinstance(nodes, bool) or not isinstance(nodes, numbers.Integral) or nodes < 1:
        raise InputError(f"handover_nodes must be a whole number of nodes >= 1, got {nodes!r}")
    return int(nodes)


def check_grace(grace) -> float:
    if grace is None:
        return DEFAULT_GRACE
    try:
        value = float(grace)
    except (TypeError, ValueError):
        raise InputError(f"ramp-up grace must be a number of seconds >= 0, got {grace!r}") from None
    if not value >= 0 or value == float("inf"):
        raise InputError(f"ramp-up grace must be a finite number of seconds >= 0, got {grace!r}")
    return value


class _HandOver:
    """Phase 1's question between two chunks: hand the rows over now?  It starts the
    cluster in the background after ``grace`` seconds (a given ``client``: nothing to
    start) and says yes once it is ready; a start that fails is reported in one line
    (``fall_back``) or raised.

    ``hold_nodes``: the nodes of this run after which phase 1 holds for the hand-over
    (:meth:`hold`; None: it never holds).  The transports read it before each chunk
    (one stack) or epoch (lanes); it becomes None when the hold ends without a
    hand-over."""

    def __init__(self, place: Place, problem: Problem, grace: float, fall_back: bool,
                 hold_nodes: int | None = None):
        self.place, self.problem, self.grace, self.fall_back = place, problem, grace, fall_back
        self.starter: interrupts.ShieldedStart | None = None
        self.note = "not started"
        self.t_start: float | None = None
        self.hold_nodes = hold_nodes
        #: phase 1 holds: the cluster is wanted now, whatever the grace
        self.due = False

    def __call__(self, chunks: int) -> bool:
        now = time.perf_counter()
        if self.t_start is None:
            self.t_start = now
        waited = self.due or now - self.t_start >= self.grace
        if self.place.client is not None:
            # the caller's cluster: there is nothing to start.  At least one chunk runs
            # here first, so that grace=0 with a fixed budget hands over at a node count,
            # not at a moment (phase 1 holds only after a node: hold_nodes >= 1)
            return (bool(chunks) or self.due) and waited
        if self.starter is None and self.note == "not started" and waited:
            cancelled = threading.Event()
            self.starter = interrupts.ShieldedStart(
                lambda: _connect(self.place, self.problem, cancelled),
                name="stealsearch-rampup-start", cancelled=cancelled)
            self.note = "starting"
        if self.starter is not None and self.starter.done():
            if not self.starter.failed:
                return True
            if not self.fall_back:
                self.starter.result()            # raises the start's error
            try:
                self.starter.result()
            except Exception as exc:
                reason = first_line(exc)
                log.warning("note: the cluster did not start (%s); the search goes "
                            "on in this process", reason)
                self.note = f"failed: {reason}"
            self.starter = None
            self.hold_nodes = None      # nothing to hold for any more
        return False

    def hold(self, chunks: int, deadline: float | None) -> str:
        """Phase 1 has expanded ``hold_nodes`` nodes and expands nothing until this
        returns: ``"handover"`` once the cluster is ready; ``"released"`` once the hold
        ends without it (the start failed under ``fall_back``, or took longer than
        :data:`HOLD_TIMEOUT`): the search goes on here; ``"interrupted"`` on a request to
        stop; ``"time_limit"`` at ``deadline`` (a ``time.perf_counter()`` value).  A start
        that fails without ``fall_back`` raises its error here."""
        self.due = True
        give_up = time.monotonic() + HOLD_TIMEOUT
        try:
            while True:
                if self(chunks):
                    return "handover"
                if self.hold_nodes is None:
                    return "released"
                if stop_request.requested():
                    return "interrupted"
                if deadline is not None and time.perf_counter() >= deadline:
                    return "time_limit"
                if time.monotonic() > give_up:
                    log.warning("note: the cluster was not ready after %.0f s; the search "
                                "goes on in this process meanwhile", HOLD_TIMEOUT)
                    self.hold_nodes = None
                    return "released"
                time.sleep(HOLD_POLL)
        except KeyboardInterrupt:       # no chunk runs here: the rows are a cut
            return "interrupted"

    def abandon(self) -> str:
        """Phase 1 ended the search: a cluster still starting (or started) is ended;
        returns what became of it."""
        if self.starter is not None:
            self.note = "started, not used" if self.starter.done() and not self.starter.failed \
                else "cancelled while starting"
            self.abort()
        return self.note

    def abort(self) -> None:
        if self.starter is not None:
            self.starter.abort(_close, START_TIMEOUT)

    def connection(self) -> "_Connection":
        if self.starter is None:
            return _Connection(None, self.place.client)
        return self.starter.result()

    @property
    def start_seconds(self) -> float:
        return 0.0 if self.starter is None else round(self.starter.seconds, 6)


def first_phase_threads(problem: Problem, place: Place, threads_per_worker: int = 1) -> int:
    """Search threads of phase 1: lanes on min(usable cores, the search threads asked of
    the cluster: ``workers`` x ``threads_per_worker``; no count: the usable cores) for a
    problem whose node code does not hold the GIL; one stack for one that does (its
    threads would search one at a time)."""
    from ..deploy.cores import usable_cores

    if holds_gil(problem):
        return 1
    cores = usable_cores()
    asked = cores if place.workers is None else int(place.workers) * max(1, int(threads_per_worker))
    return max(1, min(cores, asked))


def run_rampup(problem: Problem, *, place: Place | None = None,
               policy: StealPolicy | None = None, time_limit: float | None = None,
               node_limit: int | None = None, progress: bool = False,
               checkpoint: str | None = None, checkpoint_every: float | None = None,
               checkpoint_info: dict | None = None, checkpoint_required: bool = False,
               cut: Cut | None = None, grace: float | None = None, fall_back: bool = False,
               threads_per_worker: int = 1, first_threads: int | None = None,
               handover_nodes: int | None = None, proof=None) -> SearchResult:
    """Search ``problem`` in this process; after ``grace`` seconds start ``place``'s
    cluster in the background and hand the open rows over once it is ready (see the
    module docstring).  ``fall_back``: a cluster that fails to start is reported in one
    line and the search goes on here (for the ``auto`` default, whose user asked for no
    cluster); otherwise its error is raised.  ``cut`` resumes from a checkpoint (the
    limits then count from the resume).  ``first_threads``: phase 1's search threads
    (default :func:`first_phase_threads`; 1: one stack).  ``handover_nodes``: phase 1
    expands at most this many nodes, then holds until the cluster is ready and hands
    the rows over (a hand-over at a node count, not at a moment; see the module
    docstring).  ``proof``: a file name prefix (the problem in its proof form): both
    phases log their parts into one parts folder, and the proof of the whole search is
    written when it ends (see "Proofs" in the module docstring)."""
    from ..core.proof import ProofParts

    parts = None if proof is None else ProofParts(proof, problem.proof_record_width)
    try:
        return _run_rampup(problem, place, policy, time_limit, node_limit, progress,
                           checkpoint, checkpoint_every, checkpoint_info, checkpoint_required,
                           cut, grace, fall_back, threads_per_worker, first_threads,
                           handover_nodes, parts)
    finally:
        if parts is not None:
            parts.cleanup()


def _run_rampup(problem, place, policy, time_limit, node_limit, progress, checkpoint,
                checkpoint_every, checkpoint_info, checkpoint_required, cut, grace, fall_back,
                threads_per_worker, first_threads, handover_nodes, parts) -> SearchResult:
    from ..core.proof import finish_proof

    place = place or Place()
    grace = check_grace(grace)
    handover_nodes = check_handover_nodes(handover_nodes)
    t0 = time.perf_counter()
    threads = first_phase_threads(problem, place, threads_per_worker) \
        if first_threads is None else max(1, int(first_threads))
    stack = make_stack(problem)
    # load the kernel (numba's cache: ~1 s cold) before the grace period's clock starts,
    # as the CLI's --sequential does before its own (an empty stack expands nothing)
    stack.run(0, int(problem.initial_incumbent()))
    # (distributed is imported only once a cluster is started: ~1 s a short search saves)
    hand_over = _HandOver(place, problem, grace, fall_back, hold_nodes=handover_nodes)
    desc = f"{problem.name} (ramp-up)"
    if threads > 1:
        from .lanes import Lanes
        here = Lanes(threads, desc=desc, hand_over=hand_over)
    else:
        here = OneStack(problem, stack=stack, desc=desc, between_chunks=hand_over)
    phase1 = EpochLoop(problem, here, policy=policy, time_limit=time_limit,
                       node_limit=node_limit, progress=progress, checkpoint=checkpoint,
                       checkpoint_every=checkpoint_every, checkpoint_info=checkpoint_info,
                       checkpoint_required=checkpoint_required, cut=cut, t0=t0, proof=parts)
    try:
        reason = phase1.run()
    except BaseException:
        phase1.close()
        hand_over.abort()
        raise
    if reason == "handover" and not phase1.cut.n_rows():
        # the lanes ran dry in the very poll that said "hand over": nothing is left to
        # hand over, the search is complete here
        reason = phase1.stop_reason = "complete"
    carried, handed = phase1.carried, phase1.cut
    first = {"phase": here.label, "where": "this process", "nodes": handed.nodes - carried,
             "seconds": round(phase1.search_seconds, 6), "chunks": here.chunks}
    if reason != "handover":
        first["cluster"] = hand_over.abandon()
        result = phase1.result(phases=[first])
        if parts is not None:
            finish_proof(problem, result, parts, phase1.cut.proof_parts)
        return result

    # -- hand-over: every open row, once, in the cut phase 2 resumes from
    from .dask import run_dask

    phase1.close()              # (the cluster phase takes the checkpoint folder over)
    connection = hand_over.connection()
    first["rows_handed_over"] = handed.n_rows()
    first["cluster"] = "used"
    first["cluster_start_seconds"] = hand_over.start_seconds
    nodes_before = handed.nodes
    try:
        result = run_dask(
            problem, connection.client, workers=place.cap(), policy=phase1.policy,
            time_limit=None if time_limit is None
            else max(1e-6, time_limit - phase1.search_seconds),
            node_limit=None if node_limit is None else node_limit - (nodes_before - carried),
            progress=progress, checkpoint_every=checkpoint_every,
            # a checkpoint that failed in phase 1 is not tried again (it said so once)
            checkpoint=None if phase1.checkpoint_error else checkpoint,
            checkpoint_info=checkpoint_info, checkpoint_required=checkpoint_required,
            cut=handed, threads_per_worker=threads_per_worker, proof_parts=parts)
    finally:
        try:
            connection.close()
        except Exception as exc:   # a failure to close must not hide the result
            log.debug("closing the cluster failed: %r", exc)
    second = {"phase": result.backend, "where": "cluster", "nodes": result.nodes - nodes_before,
              "seconds": round(result.wall_seconds, 6), "rows_received": first["rows_handed_over"],
              "epochs": result.epochs - handed.epochs}
    # the search's result: the cluster's, over both phases
    return replace(
        result, backend=f"{here.label}+{result.backend}", phases=[first, second],
        search_seconds=phase1.search_seconds + result.search_seconds,
        wall_seconds=time.perf_counter() - t0,
        info={**result.info, "carried_nodes": carried,
              **({"checkpoint_error": phase1.checkpoint_error}
                 if phase1.checkpoint_error else {})})
