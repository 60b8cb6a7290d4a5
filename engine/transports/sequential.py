"""The sequential backend: the same kernel and stack in one process.

It is the reference every other backend is tested against and the 1-worker
baseline of every speed-up figure.  It runs the one epoch loop
(:mod:`stealsearch.engine.core.loop`) on :class:`OneStack`, a transport whose single stack
stays where it is from epoch to epoch: between two chunks the stack *is* a consistent
cut (one worker, nothing in flight), so an epoch ends at any chunk boundary: every
``checkpoint_every`` seconds (written to disk with ``checkpoint=DIR``), at a limit, on
Ctrl-C (with the result so far), or when the ramp-up hands the rows to a cluster
(:mod:`stealsearch.engine.transports.rampup`; at a node count, the stack holds between
two chunks until then).  It resumes from any cut (also one written by the
Dask backend).

With ``estimate`` (by default when the live line is shown) the live line carries the
fraction done and an ETA from :class:`stealsearch.engine.core.estimate.ProgressEstimator`: a copy of the
stack is a cut, probed between chunks within a few % of the time; a new copy is taken
once the last has been probed through and a second has passed
(:meth:`ProgressEstimator.wants_cut`).  The probes run on a stack of their own: the
search's counts are the same with or without.

``threads`` > 1 (``--sequential --threads-per-worker T``) runs the same loop on
:class:`stealsearch.engine.transports.lanes.Lanes`: T search threads on one shared portion in this
process, the Dask worker's lanes without Dask.
"""
from __future__ import annotations

import time

from ..core import stop_request
from ..core.epochs import Cut, EpochOutcome, EpochSpec
from ..core.finished import arm
from ..core.loop import EpochRun, Transport, run_epochs
from ..core.outcome import improve
from ..core.policy import StealPolicy
from ..core.problem import IMPROVED, Mode, Problem
from ..core.proof import ProofParts, attach_scaffold, close_part, open_part
from ..core.result import SearchResult, WorkerStats
from ..core.stack import BudgetTuner, make_stack

#: the worker's name in the result
NAME = "sequential"


class OneStack(Transport):
    """One stack in this thread, kept from epoch to epoch (see the module docstring).

    ``between_chunks``: a callable asked before every chunk (with the chunks run so
    far); True ends the epoch with stop reason ``"handover"`` (the ramp-up's
    :class:`~stealsearch.engine.transports.rampup._HandOver`).  If it has a
    ``hold_nodes`` that is not None, the chunks are capped so that this run expands
    no more nodes than that; there its ``hold(chunks, deadline)`` is called between
    two chunks and its answer is the epoch's stop reason (``"released"``: none, the
    search goes on)."""

    label = NAME
    idle_worker = NAME

    def __init__(self, problem: Problem, *, stack=None, desc: str | None = None,
                 between_chunks=None):
        self.stack = stack if stack is not None else make_stack(problem)
        self.tuner = None
        self.between_chunks = between_chunks
        self._desc = desc
        self.chunks = 0            # over all epochs
        self._dealt = False

    def desc(self, problem: Problem) -> str:
        return self._desc or problem.name

    def prepare(self, loop) -> None:
        # load the kernel (numba's cache: up to ~1 s cold) before the search clock starts
        # (an empty budget expands nothing); a proof's search runs the proof kernel, its
        # records drained into each epoch's part (run_epoch)
        if loop.proof is not None and self.stack.scaffold is None:
            attach_scaffold(self.stack)
        self.stack.run(0, loop.cut.incumbent(loop.problem))

    def peers(self, loop) -> list[str]:
        return [NAME]

    def run_epoch(self, loop, spec: EpochSpec, cut: Cut) -> EpochRun:
        problem, stack = loop.problem, self.stack
        if self.tuner is None:
            self.tuner = BudgetTuner(spec.policy)
        dealt = 0
        if not self._dealt:                # the rows stay on this stack from now on
            stack.push(cut.rows(stack.codec))
            dealt, self._dealt = len(stack), True
            if spec.proof is None:         # every row of the search is on this stack
                arm(problem, [stack], stack.live(), int(spec.incumbent), spec.search_id)
        stack.counters[:] = 0              # this epoch's nodes (the cut holds the rest)
        part = None
        if spec.proof is not None:         # this epoch's records: a part of its own
            part = stack.scaffold.part = open_part(spec.proof, 0, 0, problem.proof_record_width)
        base, incumbent = cut.nodes, spec.incumbent
        best_value = best_buffer = None
        history: list = []
        stats = WorkerStats(worker=NAME, rows_dealt=dealt)
        start = time.perf_counter()
        cut_at = start + spec.epoch_seconds
        deadline = None if spec.time_left is None else start + spec.time_left
        live, decide = loop.live, problem.mode is Mode.DECIDE
        reason = None
        try:
            while True:
                if not len(stack):
                    reason = "exhausted"
                    break
                if stop_request.requested():
                    reason = "interrupted"
                    break
                cap = None if spec.node_limit is None else spec.node_limit - stack.nodes
                if cap is not None and cap <= 0:
                    reason = "node_limit"
                    break
                now = time.perf_counter()
                if deadline is not None and now >= deadline:
                    reason = "time_limit"
                    break
                if now >= cut_at:
                    reason = "cut"
                    break
                if self.between_chunks is not None and self.between_chunks(self.chunks):
                    reason = "handover"
                    break
                held = self._before_hold(loop, cut)
                if held is not None:
                    if held <= 0:       # between two chunks: the stack is a cut
                        verdict = self.between_chunks.hold(self.chunks, deadline)
                        if verdict == "released":
                            continue
                        reason = verdict
                        break
                    cap = held if cap is None else min(cap, held)
                status, value = self.tuner.run(stack, incumbent, cap=cap)
                stats.chunks += 1
                self.chunks += 1
                if status == IMPROVED:
                    incumbent = value
                    best_value, best_buffer, history = improve(
                        best_value, best_buffer, history, value, stack.solution,
                        spec.t_offset + time.perf_counter() - start)
                    if decide:
                        reason = "found"
                        break
                live.offer(stack.live, base + stack.nodes, incumbent)
                live.update(base + stack.nodes,
                            cut.best_value if best_value is None else best_value)
        except KeyboardInterrupt:   # a chunk is atomic: the stack is a consistent cut here
            reason = "interrupted"
        stats.nodes = stack.nodes
        stats.busy_seconds = time.perf_counter() - start
        stats.rows_left = len(stack)
        # a hand-over takes the rows off this stack (it never runs again); else they stay
        rows = stack.take_all() if reason == "handover" else stack.live().copy()
        if part is not None:    # the part records this epoch's nodes (a no-op drain but
            stack.scaffold.drain()      # after a Ctrl-C between a chunk and its drain)
            stack.scaffold.part = None
        return EpochRun([EpochOutcome(
            rank=0, address=NAME, rows=rows, counters=stack.counters.copy(),
            best_value=best_value, best_buffer=best_buffer, history=history, stats=stats,
            rows_left_shared=0, stop_reason=reason, failure=None,
            proof_parts=close_part(part))])

    def _before_hold(self, loop, cut: Cut) -> int | None:
        """Nodes this run may still expand before the ramp-up's hold (None: no hold)."""
        hold = getattr(self.between_chunks, "hold_nodes", None)
        if hold is None:
            return None
        return hold - (cut.nodes - loop.carried + self.stack.nodes)

    def info(self, loop) -> dict:
        return {"carried_nodes": loop.carried} if loop.carried else {}


def run_sequential(problem: Problem, *, policy: StealPolicy | None = None,
                   time_limit: float | None = None, node_limit: int | None = None,
                   progress: bool = False, checkpoint: str | None = None,
                   checkpoint_every: float | None = None, checkpoint_info: dict | None = None,
                   checkpoint_required: bool = False, cut: Cut | None = None, estimate=None,
                   threads: int = 1, proof=None) -> SearchResult:
    """Run ``problem`` in this process.  ``estimate``: show the fraction done and an ETA
    (default: when ``progress``); a :class:`ProgressEstimator` given here is used (and can
    be read afterwards).  ``threads`` > 1: that many search threads (lanes) on one
    shared portion (:mod:`stealsearch.engine.transports.lanes`).  ``proof``: a file
    name prefix; the problem (its proof form, :func:`stealsearch.engine.core.proof.proof_problem`)
    logs its scaffold, a part per stack and epoch, and after the search writes
    ``PREFIX.opb`` and ``PREFIX.pbp`` from the committed parts (a resumed ``cut``'s
    included: :mod:`stealsearch.engine.core.loop`)."""
    t0 = time.perf_counter()
    parts = None
    if proof is not None:
        parts = ProofParts(proof, problem.proof_record_width)
    if threads > 1:
        from .lanes import Lanes
        transport = Lanes(threads)
    else:
        transport = OneStack(problem)
    try:
        return run_epochs(problem, transport, policy=policy, time_limit=time_limit,
                          node_limit=node_limit, progress=progress, checkpoint=checkpoint,
                          checkpoint_every=checkpoint_every, checkpoint_info=checkpoint_info,
                          checkpoint_required=checkpoint_required, cut=cut, estimate=estimate,
                          t0=t0, proof=parts)
    finally:
        if parts is not None:
            parts.cleanup()
