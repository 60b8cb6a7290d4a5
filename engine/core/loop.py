"""The one epoch loop of every backend, and the one place a search's result is built.

A search is a sequence of epochs (:mod:`stealsearch.engine.core.epochs` says why the end of
each is a consistent cut, and why a committed or discarded epoch loses and repeats no
node).  :class:`EpochLoop` is that sequence, written once: the limits between epochs,
each epoch's :class:`~stealsearch.engine.core.epochs.EpochSpec`, commit or roll back, the
conservation check, the stop reasons the workers report, the checkpoint of each
committed cut, the search clock, the live line and its fraction-done estimate, the
per-worker figures, and the :class:`~stealsearch.engine.core.result.SearchResult`.

What differs between backends is only *where* an epoch runs: its **transport**, a
:class:`Transport` subclass.

* :class:`stealsearch.engine.transports.sequential.OneStack`: one stack in this thread (the
  sequential backend; between two chunks its stack *is* a cut, so an epoch ends at
  any chunk boundary: a checkpoint, a limit, Ctrl-C, the ramp-up's hand-over);
* :class:`stealsearch.engine.transports.lanes.Lanes`: T search threads on one shared portion in
  this process (the worker core of :mod:`stealsearch.engine.core.worker`, without Dask);
* :class:`stealsearch.engine.transports.dask.driver.DaskTransport`: one worker core per
  Dask worker, one long-running task each per epoch, rows dealt by comm calls; the only
  transport whose epochs can fail (a lost, stalled or leaving worker) and roll back.

A transport answers: which workers the next epoch has (:meth:`Transport.peers`; it may
wait for some), and what one epoch returned (:meth:`Transport.run_epoch` ->
:class:`EpochRun`: the outcomes, and why the epoch cannot be committed, if it cannot).
Everything else is here.  :func:`run_epochs` is the loop and its result in one call;
the ramp-up (:mod:`stealsearch.engine.transports.rampup`) runs two loops over one cut instead.

The search clock (:class:`SearchClock`) is the one place where ``search_seconds``
starts: before the first epoch for a transport in this process, when the first of the
first epoch's workers is loaded (and so starts searching) for Dask (the transport starts
it, at that worker's load reply).
"""
from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass

import numpy as np

from . import stop_request
from .checkpoint import CheckpointWriter, instance_hash, read_manifest
from .epochs import DEFAULT_CHECKPOINT_EVERY, PEER_TIMEOUT, Cut, EpochSpec, conserves
from .errors import InputError, SearchFailed, first_line
from .outcome import INTERRUPT_REASONS, build_result, merge_history, remaining_bound
from .policy import StealPolicy
from .problem import Mode, Problem
from .progress import Progress
from .proof import ProofUnavailable, discard_parts, finish_proof
from .result import SearchResult, WorkerStats
from .stack import make_stack

logger = logging.getLogger("stealsearch")

#: consecutive aborted epochs after which the search gives up (exit 1 on the CLI)
MAX_CONSECUTIVE_ABORTS = 12
#: the stop reasons a worker reports that end the search (any other: the epoch was a cut)
STOPS = ("found", "time_limit", "node_limit", "interrupted", "handover")
#: the epochs of a run before its first committed cut last this part of the interval
#: between cuts: until then a failure (a lost or stalled worker) or a time limit loses
#: every node the run has searched, and the work of an epoch is only kept at its end
FIRST_CUT_FRACTION = 0.2


@dataclass
class EpochRun:
    """What a transport reports of one epoch: the outcomes that came back (all of them,
    in rank order, unless ``abort``), and ``abort``: why it cannot be committed (the loop
    then rolls back to the cut it started from).  ``interrupted``: a Ctrl-C / SIGTERM
    ended it; the loop commits it if it can and stops."""

    outcomes: list
    abort: str | None = None
    interrupted: bool = False


class Transport:
    """Where the epochs of a search run (see the module docstring).  The defaults fit a
    transport in this process."""

    #: the result's ``backend``
    label = "?"
    #: search threads per worker (``EpochSpec.threads``)
    threads = 1
    #: a peer call slower than this aborts the epoch (``EpochSpec.peer_timeout``)
    peer_timeout = PEER_TIMEOUT
    #: the worker named in the result when no epoch ran (a decision found in the cut)
    idle_worker = "this process"
    #: where its one phase ran, for the result's ``phases``
    where = "this process"
    #: True: the transport starts the search clock itself (:class:`SearchClock`)
    starts_clock = False

    def desc(self, problem: Problem) -> str:
        """The live line's label."""
        return problem.name

    def first_cut(self, problem: Problem, proof: tuple | None = None) -> Cut:
        """The cut a fresh search starts from.  ``proof``: a proof's search, the
        ``EpochSpec.proof`` of the part that records whatever nodes the transport expands
        to make the cut (their records then in ``Cut.proof_parts``); the root cut
        expands none."""
        return Cut.root(problem)

    def prepare(self, loop: "EpochLoop") -> None:
        """Before the first epoch (``loop.stop_reason`` is set already if the cut it
        starts from is a decision found: then no epoch will run)."""

    def peers(self, loop: "EpochLoop") -> list[str]:
        """The workers of the next epoch (their addresses, rank order)."""
        raise NotImplementedError

    def run_epoch(self, loop: "EpochLoop", spec: EpochSpec, cut: Cut) -> EpochRun:
        """Deal ``cut`` over ``spec.peers``, run the epoch, report what came back."""
        raise NotImplementedError

    def finish(self, loop: "EpochLoop") -> None:
        """The search is over (for any reason): last looks, before its seconds are read."""

    def close(self, loop: "EpochLoop") -> None:
        """Release what the search holds (after its seconds were read)."""

    def info(self, loop: "EpochLoop") -> dict:
        """The transport's own figures for ``result.info``."""
        return {}


class SearchClock:
    """When this run's search proper started, and the seconds of the cut it resumed.

    ``t_wall``: the run's start (set-up included).  ``t_search``: the search's start,
    provisionally ``t_wall`` until :meth:`start` (the first call wins), so a time limit
    checked before counts from the run's start."""

    def __init__(self, t_wall: float | None = None):
        self.t_wall = time.perf_counter() if t_wall is None else t_wall
        self.t_search = self.t_wall
        self.started = False
        self.elapsed0 = 0.0          # search seconds of the cut this run started from

    def start(self, at: float | None = None) -> None:
        """The search proper starts now (or at ``at``, a ``perf_counter`` value)."""
        if not self.started:
            self.started = True
            self.t_search = time.perf_counter() if at is None else at

    def here(self) -> float:
        """Seconds this run has searched."""
        return time.perf_counter() - self.t_search

    def elapsed(self) -> float:
        """Search seconds across resumes (the cut's, then this run's)."""
        return self.elapsed0 + self.here()

    @property
    def setup_seconds(self) -> float:
        return self.t_search - self.t_wall


class LiveLine:
    """The live line on stderr (:class:`~stealsearch.engine.core.progress.Progress`) and the
    fraction-done estimate behind it (:class:`~stealsearch.engine.core.estimate.ProgressEstimator`,
    when ``estimate``: by default when the line is shown; a ProgressEstimator given is
    used as it is).  An estimator error only ends the estimate, never the search."""

    #: seconds between two bounds computed from a transport's open rows (``offer``)
    BOUND_EVERY = 1.0
    #: a committed cut of more rows than this keeps the last bound (its rows' bounds
    #: would be computed between two epochs, while the workers wait)
    MAX_BOUND_ROWS = 100_000

    def __init__(self, problem: Problem, progress: bool, desc: str, estimate=None,
                 codec=None, nodes: int = 0, elapsed: float = 0.0):
        self.sense = problem.objective_sense
        self.problem, self.codec = problem, codec
        # the incumbent (best so far) and the proven bound, in the engine's sense (max):
        # states, kept here for every backend (a transport passes what it has, or None)
        self.optimise = problem.mode is Mode.OPTIMISE
        self.best = None
        if problem.initial_solution() is not None:
            self.best = int(problem.initial_incumbent())
        self.bound_value = None
        self._bound_at = float("-inf")
        # a hand-over's or a resumed cut's line goes on from its count and its time
        self.bar = Progress(progress, desc=desc, nodes=nodes, elapsed=elapsed)
        self.est = None
        if estimate is None:
            estimate = progress
        if estimate is not False and estimate is not None:
            from .estimate import ProgressEstimator

            if isinstance(estimate, ProgressEstimator):
                self.est = estimate
            elif estimate:
                try:
                    self.est = ProgressEstimator(problem)
                except Exception as exc:   # e.g. a problem whose stack cannot be made here
                    logger.info("no progress estimate: %r", exc)

    def _safely(self, fn, *args):
        if self.est is None:
            return None
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - an estimate must never stop a search
            logger.info("progress estimate ended: %r", exc)
            self.est = None
            return None

    def offer(self, rows, nodes: int, incumbent: int, *, bound: bool = True) -> None:
        """A cut the estimator may take now (``rows``: a callable giving the open rows,
        called only if it does): a transport that can take one at will, between chunks.
        The proven bound is taken from the same rows at most every ``BOUND_EVERY``
        seconds (``bound=True``)."""
        if self.est is not None and self._safely(self.est.wants_cut, nodes):
            self._safely(self.est.observe, rows(), nodes, incumbent)
        if bound and self.optimise and time.monotonic() - self._bound_at >= self.BOUND_EVERY:
            self.take_bound(rows())

    def take_bound(self, rows) -> None:
        """The proven bound of a cut whose open rows are ``rows``: the largest objective
        any of them could reach, or the incumbent if larger (the interrupted result's
        rule, :func:`stealsearch.engine.core.outcome.remaining_bound`)."""
        self._bound_at = time.monotonic()
        try:
            rb = remaining_bound(self.problem, rows)
        except Exception as exc:  # noqa: BLE001 - a bound shown must never stop a search
            logger.info("no bound on the live line: %r", exc)
            self.optimise = False
            return
        if rb is not None and rb >= np.iinfo(np.int64).max:      # "no bound known"
            rb = None
        self.bound_value = max((v for v in (rb, self.best) if v is not None), default=None) \
            if rb is not None or not len(rows) else None

    def observe_cut(self, problem: Problem, cut: Cut, *, final: bool = False) -> None:
        """A committed cut (the estimator takes it if it wants one now; its best value
        and its bound become the line's)."""
        self._better(cut.best_value)
        self.offer(lambda: cut.rows(self.est.stack.codec), cut.nodes, cut.incumbent(problem),
                   bound=False)
        if self.optimise and self.codec is not None and (final or
                                                         cut.n_rows() <= self.MAX_BOUND_ROWS):
            self.take_bound(cut.rows(self.codec))
        # (a larger cut keeps the last bound: still proven, every open row lies below a
        # row of the cut it was taken from; the epoch's workers wait while this runs)

    def _better(self, best) -> None:
        if best is not None and (self.best is None or best > self.best):
            self.best = int(best)

    @property
    def incumbent(self):
        """The best value found so far, in the problem's own sense (None: none yet)."""
        return None if self.best is None else self.sense * self.best

    @property
    def bound(self):
        """The last proven bound, in the problem's own sense (None: none known)."""
        if not self.optimise or self.bound_value is None:
            return None
        return self.sense * max(self.bound_value, self.best if self.best is not None
                                else self.bound_value)

    def update(self, nodes: int, best: int | None = None, **fields) -> float | None:
        """Redraw with ``nodes`` done and the best value found (the engine's sense);
        returns the fraction done shown (None: no estimate now)."""
        fraction = None
        if self.est is not None:
            self._safely(self.est.work)
            fraction = self._safely(self.est.fraction, nodes)
        self._better(best)
        self._draw(nodes, fraction_done=fraction, **fields)
        return fraction

    def complete(self, nodes: int) -> None:
        """The whole tree is searched: 100%, and the bound is the incumbent."""
        if self.est is not None:
            self._safely(self.est.finish)
        if self.optimise and self.best is not None:
            self.bound_value = self.best
        self._draw(nodes, fraction_done=1.0)

    def _draw(self, nodes: int, **fields) -> None:
        """A stderr that cannot be written any more (a closed terminal: EIO after its
        SIGHUP) ends the line, never the search: the result and the final checkpoint
        still come."""
        if self.bar is None:
            return
        try:
            self.bar.update(nodes, incumbent=self.incumbent, bound=self.bound, **fields)
        except (OSError, ValueError) as exc:       # (ValueError: a closed stream)
            logger.info("the live line ended: %r", exc)
            self.close()

    def close(self, keep: bool = True) -> None:
        """End the live line: kept on the screen, or cleared (``keep=False``) for the
        line of the search it was handed over to, which goes on from its count and time."""
        if self.bar is None:
            return
        try:
            self.bar.close(keep=keep)
        except (OSError, ValueError) as exc:
            logger.info("the live line ended: %r", exc)
        self.bar = None

    def figures(self) -> dict:
        if self.est is None:
            return {}
        return {"estimate_probes": self.est.probes(), "estimate_seconds": self.est.spent}


class EpochLoop:
    """One search as a sequence of epochs on ``transport``, from ``cut`` (a resumed
    checkpoint or a hand-over; by default the transport's first cut).  Limits count
    from this run: its search seconds and the nodes above the cut it started from."""

    def __init__(self, problem: Problem, transport: Transport, *,
                 policy: StealPolicy | None = None, time_limit: float | None = None,
                 node_limit: int | None = None, progress: bool = False,
                 checkpoint: str | None = None, checkpoint_every: float | None = None,
                 checkpoint_info: dict | None = None, checkpoint_required: bool = False,
                 cut: Cut | None = None, estimate=None, t0: float | None = None,
                 proof=None):
        self.problem, self.transport = problem, transport
        self.policy = policy or StealPolicy()
        #: worker processes of the last epoch (what the policy's open fields follow)
        self.peer_count = 1
        self.time_limit, self.node_limit = time_limit, node_limit
        self.every = DEFAULT_CHECKPOINT_EVERY if checkpoint_every is None \
            else float(checkpoint_every)
        self.checkpoint = checkpoint
        self.checkpoint_required = bool(checkpoint_required)
        #: why the checkpoint could not be written (None: it could, or none was asked for)
        self.checkpoint_error: str | None = None
        self.clock = SearchClock(t0)
        self.codec = make_stack(problem).codec
        self.carried = 0 if cut is None else cut.nodes
        self.search_id = uuid.uuid4().hex[:12]
        # (epoch 0 is the set-up's: a transport that expands nodes to make the first cut
        # records them in a part of that name)
        self.cut = cut if cut is not None else transport.first_cut(
            problem, **({} if proof is None else {"proof": proof.epoch_name(self.search_id, 0)}))
        #: nodes the transport expanded to make the first cut (not carried: this run's)
        self.setup_nodes = 0 if cut is not None else self.cut.nodes
        self.clock.elapsed0 = self.cut.elapsed
        #: a search that logs a proof: its :class:`~stealsearch.engine.core.proof.ProofParts`;
        #: each epoch's parts join ``cut.proof_parts`` when it is committed
        self.proof = proof
        if proof is None:
            # a run that logs no proof ends the cut's: its nodes will have no records
            self.cut.proof_parts = None
        elif self.cut.proof_parts is None:
            if self.cut.nodes:
                raise ProofUnavailable("this cut was made by a search that logged no proof: "
                                       "the nodes above it have no proof steps")
            self.cut.proof_parts = ()
        self.stop_reason: str | None = None
        self.writer = None
        try:
            self.writer = CheckpointWriter.open(checkpoint, problem, self.codec, self.policy,
                                                checkpoint_info)
        except OSError as exc:
            self._checkpoint_failed(exc)
        self.live = LiveLine(problem, progress, transport.desc(problem), estimate,
                             codec=self.codec, nodes=self.carried, elapsed=self.cut.elapsed)
        self.epoch = 0
        #: cuts this run committed (the first comes sooner: FIRST_CUT_FRACTION)
        self.commits = 0
        #: per worker address, its figures summed over the committed epochs
        self.stats: dict[str, WorkerStats] = {}
        #: rows the shared portions held at each committed cut (the conservation identity)
        self.rows_left_shared = 0
        self.search_seconds = 0.0
        self._aborts_in_row = 0

    # -- the checkpoint ---------------------------------------------------------------------
    def _write(self, cut: Cut, status: str = "running") -> None:
        """Write ``cut``; a write that fails is :meth:`_checkpoint_failed`'s."""
        if self.writer is None or self.checkpoint_error is not None:
            return
        try:
            self.writer.write(cut, status=status)
        except OSError as exc:
            self._checkpoint_failed(exc)

    def _checkpoint_failed(self, exc: OSError) -> None:
        """A checkpoint that cannot be written (a full disk, a quota, an I/O error) is
        written no more, and said once: the search goes on without checkpoints, or, when
        they are required, stops here as ``checkpoint_failed`` (status interrupted, with
        its result).  The folder keeps the last cut that was written (checkpoint.py)."""
        why = exc.strerror or first_line(exc)
        self.checkpoint_error = f"checkpoint {self.checkpoint}: cannot write it ({why})"
        self.close()
        if self.checkpoint_required:
            logger.warning("error: %s; the search stops, as checkpoints are required",
                           self.checkpoint_error)
            self.stop_reason = self.stop_reason or "checkpoint_failed"
        else:
            logger.warning("warning: %s; the search goes on without checkpoints",
                           self.checkpoint_error)

    def _resume_note(self) -> str | None:
        """Where this search can be resumed from after a failure: the checkpoint folder,
        if it holds a cut of this search with rows left (None otherwise)."""
        if self.checkpoint is None:
            return None
        try:
            m = read_manifest(self.checkpoint)
            if m.get("instance_hash") != instance_hash(self.problem) or not m.get("rows"):
                return None
        except (InputError, OSError):
            return None
        return (f"the checkpoint in {self.checkpoint} holds its last cut "
                f"({m.get('nodes', 0):,} nodes): resume it from there "
                f"(stealsearch resume {self.checkpoint})")

    def close(self) -> None:
        """The search's checkpoint folder goes back (idempotent)."""
        if self.writer is not None:
            self.writer.close()

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> str:
        """Run epochs until the search stops; returns why ("complete", "found", a limit,
        "interrupted", "handover").  ``self.cut`` is then the last committed cut."""
        problem, transport = self.problem, self.transport
        try:
            try:
                if problem.mode is Mode.DECIDE and self.cut.best_value is not None:
                    self.stop_reason = "found"
                transport.prepare(self)
                self.live.observe_cut(problem, self.cut)
                if not transport.starts_clock:
                    self.clock.start()
                while self.stop_reason is None:
                    self.stop_reason = self._limit()
                    if self.stop_reason is None:
                        self._epoch()
            except KeyboardInterrupt:      # between epochs: the last cut is the state
                self.stop_reason = "interrupted"
            except SearchFailed as exc:    # (a lost scheduler): say where to resume from
                note = self._resume_note()
                if note is None:
                    raise
                failed = SearchFailed(f"{exc}; {note}")
                failed.reason, failed.resume_note = str(exc), note
                raise failed from exc
        finally:
            self._last_look()
            self.live.close(keep=self.stop_reason != "handover")
            try:
                transport.finish(self)
                self.clock.start()         # (never started: all of it was set-up)
                self.search_seconds = self.clock.here()
            finally:
                transport.close(self)
        return self.stop_reason

    def _last_look(self) -> None:
        """The line's (and the page's) last figures: the last committed cut's nodes, best
        value and bound (an interrupted epoch's cut is committed without a look)."""
        try:
            if self.cut.n_rows():
                self.live.observe_cut(self.problem, self.cut, final=True)
                self.live.update(self.cut.nodes)
            else:
                self.live.complete(self.cut.nodes)
        except Exception as exc:  # noqa: BLE001 - the last look must never hide the result
            logger.info("the live line's last figures: %r", exc)

    def _limit(self) -> str | None:
        """Why the search stops before another epoch, or None."""
        if stop_request.requested():
            raise KeyboardInterrupt
        cut = self.cut
        if cut.n_rows() == 0:
            self.live.complete(cut.nodes)
            return "complete"
        if self.time_limit is not None and self.clock.here() >= self.time_limit:
            return "time_limit"
        if self.node_limit is not None and cut.nodes - self.carried >= self.node_limit:
            return "node_limit"
        return None

    def _epoch(self) -> None:
        problem, cut = self.problem, self.cut
        peers = self.transport.peers(self)
        self.peer_count = len(peers)
        self.epoch += 1
        spec = EpochSpec(
            search_id=self.search_id, epoch=self.epoch, peers=peers, policy=self.policy,
            incumbent=cut.incumbent(problem),
            epoch_seconds=self.every if self.commits else self.every * FIRST_CUT_FRACTION,
            time_left=None if self.time_limit is None
            else max(0.0, self.time_limit - self.clock.here()),
            node_limit=None if self.node_limit is None
            else self.node_limit - (cut.nodes - self.carried),
            t_offset=self.clock.elapsed(), peer_timeout=self.transport.peer_timeout,
            threads=self.transport.threads,
            proof=None if self.proof is None else self.proof.epoch_name(self.search_id,
                                                                        self.epoch))
        run = self.transport.run_epoch(self, spec, cut)
        if run.interrupted:
            # first Ctrl-C / SIGTERM: keep what the workers returned if it is a cut
            if run.abort is None and conserves(run.outcomes):
                self._commit(run.outcomes)
            else:
                discard_parts(cut.roll_back(run.outcomes))
            self.stop_reason = "interrupted"
            return
        if run.abort is not None:
            discard_parts(cut.roll_back(run.outcomes))
            self._aborts_in_row += 1
            logger.info("epoch %d aborted (%s); rolled back to the last cut", self.epoch, run.abort)
            if self._aborts_in_row >= MAX_CONSECUTIVE_ABORTS:
                raise SearchFailed(f"{self._aborts_in_row} epochs in a row failed; "
                                   f"last: {run.abort}")
            if problem.mode is Mode.DECIDE and cut.best_value is not None:
                self.stop_reason = "found"
            return
        self._aborts_in_row = 0
        outs = run.outcomes
        if not conserves(outs):
            raise SearchFailed("row conservation violated in an epoch (a protocol bug)")
        self._commit(outs)
        cut = self.cut
        self.live.observe_cut(problem, cut)
        cut.elapsed = self.clock.elapsed()
        reasons = [o.coordinator.get("stop_reason") for o in outs if o.coordinator] + \
            [o.stop_reason for o in outs]
        reason = next((r for r in reasons if r not in (None, "cut")), None)
        if reason == "exhausted" and cut.n_rows():
            raise SearchFailed(f"termination declared with {cut.n_rows()} rows left "
                               "(a protocol bug)")
        if reason in STOPS:
            self.stop_reason = reason
        elif cut.n_rows():
            self._write(cut)

    def _commit(self, outs) -> None:
        """The epoch's outcomes become the next cut; their figures are added to each
        worker's.  ``rows_left`` is a state, not a flow ("rows on its stack when the
        search stopped"): the last committed epoch's value, 0 for a worker it did not use."""
        self.cut = self.cut.commit(self.problem, outs)
        self.commits += 1
        for st in self.stats.values():
            st.rows_left = 0
        for o in outs:
            st = self.stats.setdefault(o.address, WorkerStats(worker=o.address))
            for name, value in vars(o.stats).items():
                if name == "rows_left":
                    st.rows_left = value
                elif name != "worker":
                    setattr(st, name, getattr(st, name) + value)
        self.rows_left_shared += sum(o.rows_left_shared for o in outs)

    # -- the result ---------------------------------------------------------------------------
    def result(self, phases: list[dict] | None = None) -> SearchResult:
        """The result of the search :meth:`run` ran (and the last checkpoint written).
        ``phases``: what ran where (default: this loop's transport, one phase)."""
        problem, cut = self.problem, self.cut
        reason = self.stop_reason or "complete"
        cut.elapsed = self.clock.elapsed0 + self.search_seconds
        checkpoint = None if self.writer is None else str(self.writer.dir)
        self._write(cut, status=reason)
        self.close()
        rb = remaining_bound(problem, cut.rows(self.codec)) \
            if reason in INTERRUPT_REASONS and problem.mode is Mode.OPTIMISE else None
        if phases is None:
            phases = [{"phase": self.transport.label, "where": self.transport.where,
                       "nodes": cut.nodes - self.carried,
                       "seconds": round(self.search_seconds, 6)}]
        info = {**self.transport.info(self), **self.live.figures()}
        if self.writer is not None:
            info.update(self.writer.figures())
        if self.checkpoint_error is not None:
            info["checkpoint_error"] = self.checkpoint_error
        result = build_result(
            problem, backend=self.transport.label, counters=[cut.counters],
            best_value=cut.best_value, best_buffer=cut.best_buffer,
            history=merge_history([cut.history]), stop_reason=reason, remaining_bound=rb,
            workers=list(self.stats.values()) or [WorkerStats(worker=self.transport.idle_worker)],
            wall_seconds=time.perf_counter() - self.clock.t_wall,
            search_seconds=self.search_seconds, info=info,
            # the policy the workers ran: fields left to the run resolved for the last
            # epoch's worker count, as every worker resolves them (WorkerSearch)
            policy=self.policy.for_workers(self.peer_count).as_dict(),
            epochs=cut.epochs, recoveries=cut.recoveries, nodes_redone=cut.nodes_redone,
            checkpoint=checkpoint, phases=phases)
        if not result.conservation()["holds"]:
            raise SearchFailed(f"row conservation violated: {result.conservation()}")
        return result


def run_epochs(problem: Problem, transport: Transport, **kwargs) -> SearchResult:
    """Search ``problem`` epoch by epoch on ``transport`` and return the result
    (keywords: :class:`EpochLoop`'s)."""
    loop = EpochLoop(problem, transport, **kwargs)
    try:
        loop.run()
        result = loop.result()
        if loop.proof is not None:      # the records of exactly the committed history
            finish_proof(problem, result, loop.proof, loop.cut.proof_parts)
        return result
    finally:
        loop.close()
