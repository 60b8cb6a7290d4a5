"""The sequential backend: the same kernel and stack in one process.

It is the reference every other backend is tested against and the 1-worker
baseline of every speed-up figure.
"""
from __future__ import annotations

import time

import numpy as np

from .outcome import build_result, remaining_bound
from .policy import StealPolicy
from .problem import IMPROVED, Mode, Problem
from .progress import Progress
from .result import SearchResult, WorkerStats
from .stack import BudgetTuner, make_stack


def run_sequential(problem: Problem, *, policy: StealPolicy | None = None,
                   time_limit: float | None = None, node_limit: int | None = None,
                   progress: bool = False) -> SearchResult:
    policy = policy or StealPolicy()
    t0 = time.perf_counter()
    stack = make_stack(problem)
    frontier = np.ascontiguousarray(problem.root_frontier(), dtype=np.int64)
    stack.push(frontier)
    incumbent = int(problem.initial_incumbent())
    best_value, best_buffer, history = None, None, []
    stats = WorkerStats(worker="sequential", rows_dealt=len(frontier))
    deadline = None if time_limit is None else t0 + time_limit
    stop_reason = None
    bar = Progress(progress, desc=problem.name)
    t_search = time.perf_counter()
    tuner = BudgetTuner(policy)
    try:
        while len(stack):
            left = None
            if node_limit is not None:
                left = node_limit - stack.nodes
                if left <= 0:
                    stop_reason = "node_limit"
                    break
            status, value = tuner.run(stack, incumbent, cap=left)
            stats.chunks += 1
            if status == IMPROVED:
                incumbent = value
                best_value, best_buffer = value, stack.solution.copy()
                history.append((time.perf_counter() - t0, value))
                if problem.mode is Mode.DECIDE:
                    stop_reason = "found"
                    break
            if deadline is not None and time.perf_counter() >= deadline and len(stack):
                stop_reason = "time_limit"
                break
            bar.update(stack.nodes, incumbent=None if best_value is None else best_value)
    finally:
        bar.close()
    search_seconds = time.perf_counter() - t_search
    stats.nodes = stack.nodes
    stats.busy_seconds = search_seconds
    stats.rows_left = len(stack)
    rb = remaining_bound(problem, stack.live()) if stop_reason in ("time_limit", "node_limit") else None
    return build_result(problem, backend="sequential", counters=[stack.counters],
                        best_value=best_value, best_buffer=best_buffer, history=history,
                        stop_reason=stop_reason or "complete", remaining_bound=rb,
                        workers=[stats], wall_seconds=time.perf_counter() - t0,
                        search_seconds=search_seconds, policy=policy.as_dict())
