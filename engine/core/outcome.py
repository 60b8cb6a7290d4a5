"""Turning what the workers did into a :class:`SearchResult` (shared by every backend).

The status rules, the decoding and the independent verification of the solution,
and the proven bound of an interrupted optimisation live here once.
"""
from __future__ import annotations

import numpy as np

from .problem import NODES, SOLUTIONS, N_ENGINE_COUNTERS, Mode, Problem, SolutionError, reduce_counters
from .result import EXHAUSTED, FOUND, INTERRUPTED, NONE, OPTIMAL, SearchResult, WorkerStats


#: stop reasons that leave open rows: the result is "interrupted" with a proven bound
INTERRUPT_REASONS = ("time_limit", "node_limit", "interrupted", "checkpoint_failed")


def remaining_bound(problem: Problem, rows: np.ndarray) -> int | None:
    """Largest objective any of ``rows`` could still reach (None if no rows): with the
    incumbent, the proven bound of an interrupted optimisation."""
    if len(rows) == 0:
        return None
    return int(np.max(problem.row_bounds(rows)))


def improve(best_value, best_buffer, history, value, solution, t):
    """The one "new best solution" rule of every backend: keep ``value`` (and a copy of
    the kernel's ``solution`` buffer) if it beats ``best_value``; returns the new
    (best_value, best_buffer, history)."""
    if best_value is None or value > best_value:
        return int(value), np.array(solution, copy=True), list(history) + [(t, int(value))]
    return best_value, best_buffer, history


def merge_history(histories) -> list[tuple[float, int]]:
    """Merge per-worker incumbent histories into one strictly improving sequence."""
    events = sorted((t, v) for h in histories for t, v in h)
    out, best = [], None
    for t, v in events:
        if best is None or v > best:
            out.append((round(t, 6), int(v)))
            best = v
    return out


def build_result(problem: Problem, *, backend: str, counters: list[np.ndarray],
                 best_value: int | None, best_buffer: np.ndarray | None,
                 history: list[tuple[float, int]], stop_reason: str | None,
                 remaining_bound: int | None, workers: list[WorkerStats],
                 wall_seconds: float, search_seconds: float, policy: dict | None,
                 info: dict | None = None, epochs: int = 0, recoveries: int = 0,
                 nodes_redone: int = 0, checkpoint: str | None = None,
                 phases: list[dict] | None = None) -> SearchResult:
    mode = problem.mode
    total = reduce_counters(problem, counters)
    interrupted = stop_reason in INTERRUPT_REASONS
    sense = problem.objective_sense
    result = SearchResult(problem=problem.name, mode=mode.name.lower(), status="",
                          backend=backend, nodes=int(total[NODES]),
                          wall_seconds=wall_seconds, search_seconds=search_seconds,
                          workers=workers, policy=policy, stop_reason=stop_reason,
                          info=dict(problem.describe(), **(info or {})), epochs=epochs,
                          recoveries=recoveries, nodes_redone=nodes_redone,
                          checkpoint=checkpoint, phases=list(phases or []))
    result.counters = {name: int(total[N_ENGINE_COUNTERS + i])
                       for i, (name, _) in enumerate(problem.extra_counters)}
    result.incumbent_history = [(t, sense * v) for t, v in history]

    if mode is Mode.ENUMERATE:
        result.count = int(total[SOLUTIONS])
        result.status = INTERRUPTED if interrupted else EXHAUSTED
        return result

    if best_value is not None:
        solution = problem.decode(best_buffer, best_value)
        result.objective = sense * int(best_value)
    else:
        init = problem.initial_solution()
        solution = init
        if init is not None:
            result.objective = sense * int(problem.initial_incumbent())
    result.solution = solution
    if solution is not None:
        # An independent checker; a rejection is a bug in a kernel and must not pass
        # silently as an answer.
        ok = problem.verify(solution, sense * result.objective)
        if not ok:
            raise SolutionError(f"{problem.name}: verifier rejected the solution {solution!r}")
        result.verified = True

    if mode is Mode.DECIDE:
        if best_value is not None:
            result.status = FOUND
        else:
            result.status = INTERRUPTED if interrupted else NONE
        return result

    # optimise
    if interrupted:
        result.status = INTERRUPTED
        candidates = [b for b in (remaining_bound,) if b is not None]
        if best_value is not None:
            candidates.append(int(best_value))
        if candidates:
            result.bound = sense * max(candidates)
    else:
        result.status = OPTIMAL if solution is not None else NONE
        if solution is not None:
            result.bound = result.objective
    return result
