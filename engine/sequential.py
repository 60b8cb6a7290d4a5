"""The sequential backend: the same kernel and stack in one process.

It is the reference every other backend is tested against and the 1-worker
baseline of every speed-up figure.  It takes part in checkpoints like the Dask
backend: every ``checkpoint_every`` seconds its stack *is* a consistent cut (one
worker, nothing in flight), written to disk with ``checkpoint=DIR``; it resumes from
any cut (also one written by the Dask backend), and Ctrl-C stops it with the result
so far.

With ``estimate`` (by default when the live line is shown) the live line carries the
fraction done and an ETA from :class:`stealsearch.engine.estimate.ProgressEstimator`: a copy of the
stack is a cut, probed between chunks within a few % of the time; a new copy is taken
once the last has been probed through and a second has passed
(:meth:`ProgressEstimator.wants_cut`).  The
probes run on a stack of their own: the search's counts are the same with or without.

``threads`` > 1 (``--sequential --threads-per-worker T``) hands the search to
:mod:`stealsearch.engine.lanes`: T search threads on one shared portion in this process, the Dask
worker's lanes without Dask.  One thread (the default) is this module's loop.
"""
from __future__ import annotations

import time


from . import interrupts
from .checkpoint import CheckpointWriter
from .epochs import DEFAULT_CHECKPOINT_EVERY, Cut
from .estimate import ProgressEstimator
from .outcome import INTERRUPT_REASONS, build_result, improve, remaining_bound
from .policy import StealPolicy
from .problem import IMPROVED, Mode, Problem
from .progress import Progress
from .result import SearchResult, WorkerStats
from .stack import BudgetTuner, make_stack


def run_sequential(problem: Problem, *, policy: StealPolicy | None = None,
                   time_limit: float | None = None, node_limit: int | None = None,
                   progress: bool = False, checkpoint: str | None = None,
                   checkpoint_every: float | None = None, checkpoint_info: dict | None = None,
                   cut: Cut | None = None,
                   estimate: "bool | ProgressEstimator | None" = None,
                   threads: int = 1) -> SearchResult:
    """Run ``problem`` in this process.  ``estimate``: show the fraction done and an ETA
    (default: when ``progress``); a :class:`ProgressEstimator` given here is used (and can
    be read afterwards).  ``threads`` > 1: that many search threads (lanes) on one
    shared portion, :mod:`stealsearch.engine.lanes` (no estimate there)."""
    if threads > 1:
        from .lanes import run_lanes
        return run_lanes(problem, threads, policy=policy, time_limit=time_limit,
                         node_limit=node_limit, progress=progress, checkpoint=checkpoint,
                         checkpoint_every=checkpoint_every, checkpoint_info=checkpoint_info,
                         cut=cut)
    t0 = time.perf_counter()
    search = InProcessSearch(problem, cut, policy, t0=t0, time_limit=time_limit,
                             node_limit=node_limit, checkpoint=checkpoint,
                             checkpoint_every=checkpoint_every, checkpoint_info=checkpoint_info)
    stack = search.stack
    stop_reason = None
    bar = Progress(progress, desc=problem.name)
    if estimate is None:
        estimate = progress
    est = estimate if isinstance(estimate, ProgressEstimator) else \
        ProgressEstimator(problem) if estimate else None
    search.start_clock()
    try:
        while True:
            stop_reason = search.stop_reason()
            if stop_reason is not None or not len(stack):
                break
            search.step()
            fraction = None
            if est is not None:
                if est.wants_cut(stack.nodes):
                    est.observe(stack.live(), stack.nodes, search.incumbent)
                est.work()
                fraction = est.fraction(stack.nodes)
            bar.update(stack.nodes, incumbent=search.best_value, fraction_done=fraction)
        if est is not None and stop_reason is None:
            est.finish()
            bar.update(stack.nodes, fraction_done=1.0)
    except KeyboardInterrupt:   # a chunk is atomic: the stack is a consistent cut here
        stop_reason = "interrupted"
    finally:
        bar.close()
    result = search.finish(stop_reason, time.perf_counter() - search.t_search)
    if est is not None:
        result.info["estimate_probes"] = est.probes()
        result.info["estimate_seconds"] = est.spent
    return result


class InProcessSearch:
    """A search on one stack in this process, from a cut: the state and the steps that
    the sequential loop above and the ramp-up's first phase (:mod:`stealsearch.engine.rampup`)
    share; each loop only adds what is its own (the estimate; the hand-over).

    Between two :meth:`step` calls the stack *is* a consistent cut (one worker, nothing
    in flight): :meth:`snapshot` and the checkpoint writes rely on it.  The node limit
    and the time limit count from this run (``carried``: the nodes of the cut resumed
    from, not counted against the limit)."""

    def __init__(self, problem: Problem, cut: Cut | None, policy: StealPolicy | None, *,
                 t0: float, time_limit: float | None, node_limit: int | None,
                 checkpoint: str | None, checkpoint_every: float | None,
                 checkpoint_info: dict | None, stack=None):
        self.problem = problem
        self.policy = policy = policy or StealPolicy()
        self.t0 = t0
        self.stack = stack = stack if stack is not None else make_stack(problem)
        self.cut = cut = cut or Cut.root(problem)
        self.carried = cut.nodes
        stack.push(cut.rows(stack.codec))
        stack.counters[:] = cut.counters
        self.incumbent = cut.incumbent(problem)
        self.best_value, self.best_buffer = cut.best_value, cut.best_buffer
        self.history = list(cut.history)
        self.epochs = cut.epochs
        self.stats = WorkerStats(worker="sequential", rows_dealt=len(stack))
        self.writer = CheckpointWriter.open(checkpoint, problem, stack.codec, policy,
                                            checkpoint_info)
        self.every = DEFAULT_CHECKPOINT_EVERY if checkpoint_every is None \
            else float(checkpoint_every)
        self.node_limit = node_limit
        self.deadline = None if time_limit is None else t0 + time_limit   # limits count from t0
        self.next_cut = t0 + self.every
        self.tuner = BudgetTuner(policy)
        self.t_search = time.perf_counter()

    def start_clock(self) -> None:
        """The search proper starts now (after any warm-up): its seconds count from here."""
        self.t_search = time.perf_counter()

    def seconds(self) -> float:
        """Search seconds across resumes (the cut's, then this run's)."""
        return self.cut.elapsed + time.perf_counter() - self.t_search

    def stop_reason(self) -> str | None:
        """Why the search must stop before the next chunk, or None (an empty stack is
        the loop's own test: a DECIDE instance found in the cut stops even then)."""
        if self.problem.mode is Mode.DECIDE and self.best_value is not None:
            return "found"
        if not len(self.stack):
            return None
        if interrupts.requested():
            return "interrupted"
        if self.node_limit is not None and self.nodes_left() <= 0:
            return "node_limit"
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            return "time_limit"
        return None

    def nodes_left(self) -> int | None:
        if self.node_limit is None:
            return None
        return self.node_limit - (self.stack.nodes - self.carried)

    def step(self) -> None:
        """One kernel chunk (capped by the node limit), its new best, and a checkpoint
        when one is due."""
        stack = self.stack
        status, value = self.tuner.run(stack, self.incumbent, cap=self.nodes_left())
        self.stats.chunks += 1
        if status == IMPROVED:
            self.incumbent = value
            self.best_value, self.best_buffer, self.history = improve(
                self.best_value, self.best_buffer, self.history, value, stack.solution,
                self.seconds())
        if self.writer is not None and len(stack) and time.perf_counter() >= self.next_cut:
            self.epochs += 1
            self.writer.write(self.snapshot(stack.live().copy()))
            self.next_cut = time.perf_counter() + self.every

    def snapshot(self, rows) -> Cut:
        """The cut made of ``rows`` (the stack's open rows) and what is committed above."""
        cut = self.cut
        return Cut(batches={"": rows}, counters=self.stack.counters.copy(),
                   best_value=self.best_value, best_buffer=self.best_buffer,
                   history=list(self.history), elapsed=self.seconds(), epochs=self.epochs,
                   recoveries=cut.recoveries, nodes_redone=cut.nodes_redone)

    def finish(self, stop_reason: str | None, seconds: float) -> SearchResult:
        """The last cut written (with checkpoints) and the result of the search here."""
        if self.writer is not None:
            self.writer.write(self.snapshot(self.stack.live().copy()),
                              status=stop_reason or "complete")
        return in_process_result(
            self.problem, self.stack, self.stats, carried=self.carried, seconds=seconds,
            t0=self.t0, policy=self.policy, best_value=self.best_value,
            best_buffer=self.best_buffer, history=self.history, stop_reason=stop_reason,
            epochs=self.epochs, cut=self.cut, writer=self.writer)


def in_process_result(problem: Problem, stack, stats: WorkerStats, *, carried: int,
                      seconds: float, t0: float, policy: StealPolicy, best_value, best_buffer,
                      history, stop_reason, epochs: int, cut: Cut, writer) -> SearchResult:
    """The result of a search that ran (or ended) on ``stack`` in this process: the
    sequential backend, and a ramp-up that never handed over (stealsearch.engine.rampup)."""
    stats.nodes = stack.nodes - carried
    stats.busy_seconds = seconds
    stats.rows_left = len(stack)
    rb = remaining_bound(problem, stack.live()) if stop_reason in INTERRUPT_REASONS else None
    result = build_result(problem, backend="sequential", counters=[stack.counters],
                          best_value=best_value, best_buffer=best_buffer, history=history,
                          stop_reason=stop_reason or "complete", remaining_bound=rb,
                          workers=[stats], wall_seconds=time.perf_counter() - t0,
                          search_seconds=seconds, policy=policy.as_dict(),
                          info={"carried_nodes": carried} if carried else None)
    result.epochs, result.recoveries, result.nodes_redone = epochs, cut.recoveries, cut.nodes_redone
    if writer is not None:
        writer.describe(result)
    return result
