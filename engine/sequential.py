"""The sequential backend: the same kernel and stack in one process.

It is the reference every other backend is tested against and the 1-worker
baseline of every speed-up figure.  It takes part in checkpoints like the Dask
backend: every ``checkpoint_every`` seconds its stack *is* a consistent cut (one
worker, nothing in flight), written to disk with ``checkpoint=DIR``; it resumes from
any cut (also one written by the Dask backend), and Ctrl-C stops it with the result
so far.

With ``estimate`` (by default when the live line is shown) the live line carries the
fraction done and an ETA from :class:`engine.estimate.ProgressEstimator`: a copy of the
stack is a cut, probed between chunks within a few % of the time; a new copy is taken
once the last has been probed through and a second has passed
(:meth:`ProgressEstimator.wants_cut`).  The
probes run on a stack of their own: the search's counts are the same with or without.

``threads`` > 1 (``--sequential --threads-per-worker T``) hands the search to
:mod:`engine.lanes`: T search threads on one shared portion in this process, the Dask
worker's lanes without Dask.  One thread (the default) is this module's loop.
"""
from __future__ import annotations

import time


from . import interrupts
from .checkpoint import CheckpointWriter
from .epochs import Cut
from .estimate import ProgressEstimator
from .outcome import INTERRUPT_REASONS, build_result, improve, remaining_bound
from .policy import StealPolicy
from .problem import IMPROVED, Mode, Problem
from .progress import Progress
from .result import SearchResult, WorkerStats
from .stack import BudgetTuner, make_stack

#: seconds between cuts written to disk (with ``checkpoint=DIR``)
DEFAULT_CHECKPOINT_EVERY = 5.0


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
    shared portion, :mod:`engine.lanes` (no estimate there)."""
    if threads > 1:
        from .lanes import run_lanes
        return run_lanes(problem, threads, policy=policy, time_limit=time_limit,
                         node_limit=node_limit, progress=progress, checkpoint=checkpoint,
                         checkpoint_every=checkpoint_every, checkpoint_info=checkpoint_info,
                         cut=cut)
    policy = policy or StealPolicy()
    t0 = time.perf_counter()
    stack = make_stack(problem)
    carried = 0 if cut is None else cut.nodes
    cut = cut or Cut.root(problem)
    stack.push(cut.rows(stack.codec))
    stack.counters[:] = cut.counters
    incumbent = cut.incumbent(problem)
    best_value, best_buffer, history = cut.best_value, cut.best_buffer, list(cut.history)
    stats = WorkerStats(worker="sequential", rows_dealt=len(stack))
    writer = CheckpointWriter.open(checkpoint, problem, stack.codec, policy, checkpoint_info)
    every = DEFAULT_CHECKPOINT_EVERY if checkpoint_every is None else float(checkpoint_every)
    deadline = None if time_limit is None else t0 + time_limit   # limits count from here
    next_cut = t0 + every
    stop_reason = None
    bar = Progress(progress, desc=problem.name)
    t_search = time.perf_counter()
    tuner = BudgetTuner(policy)
    epochs = cut.epochs
    if estimate is None:
        estimate = progress
    est = estimate if isinstance(estimate, ProgressEstimator) else \
        ProgressEstimator(problem) if estimate else None

    def snapshot() -> Cut:
        return Cut(batches={"": stack.live().copy()}, counters=stack.counters.copy(),
                   best_value=best_value, best_buffer=best_buffer, history=list(history),
                   elapsed=cut.elapsed + time.perf_counter() - t_search, epochs=epochs,
                   recoveries=cut.recoveries, nodes_redone=cut.nodes_redone)

    try:
        if problem.mode is Mode.DECIDE and best_value is not None:
            stop_reason = "found"
        while len(stack) and stop_reason is None:
            if interrupts.requested():
                stop_reason = "interrupted"
                break
            left = None
            if node_limit is not None:
                left = node_limit - (stack.nodes - carried)
                if left <= 0:
                    stop_reason = "node_limit"
                    break
            status, value = tuner.run(stack, incumbent, cap=left)
            stats.chunks += 1
            if status == IMPROVED:
                incumbent = value
                best_value, best_buffer, history = improve(
                    best_value, best_buffer, history, value, stack.solution,
                    cut.elapsed + time.perf_counter() - t_search)
                if problem.mode is Mode.DECIDE:
                    stop_reason = "found"
                    break
            now = time.perf_counter()
            if deadline is not None and now >= deadline and len(stack):
                stop_reason = "time_limit"
                break
            if writer is not None and now >= next_cut:
                epochs += 1
                writer.write(snapshot())
                next_cut = time.perf_counter() + every
            fraction = None
            if est is not None:
                if est.wants_cut(stack.nodes):
                    est.observe(stack.live(), stack.nodes, incumbent)
                est.work()
                fraction = est.fraction(stack.nodes)
            bar.update(stack.nodes, incumbent=None if best_value is None else best_value,
                       fraction_done=fraction)
        if est is not None and stop_reason is None:
            est.finish()
            bar.update(stack.nodes, fraction_done=1.0)
    except KeyboardInterrupt:   # a chunk is atomic: the stack is a consistent cut here
        stop_reason = "interrupted"
    finally:
        bar.close()
    search_seconds = time.perf_counter() - t_search
    final = snapshot()
    if writer is not None:
        writer.write(final, status=stop_reason or "complete")
    result = in_process_result(problem, stack, stats, carried=carried, seconds=search_seconds,
                               t0=t0, policy=policy, best_value=best_value,
                               best_buffer=best_buffer, history=history,
                               stop_reason=stop_reason, epochs=epochs, cut=cut, writer=writer)
    if est is not None:
        result.info["estimate_probes"] = est.probes()
        result.info["estimate_seconds"] = est.spent
    return result


def in_process_result(problem: Problem, stack, stats: WorkerStats, *, carried: int,
                      seconds: float, t0: float, policy: StealPolicy, best_value, best_buffer,
                      history, stop_reason, epochs: int, cut: Cut, writer) -> SearchResult:
    """The result of a search that ran (or ended) on ``stack`` in this process: the
    sequential backend, and a ramp-up that never handed over (engine.rampup)."""
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
