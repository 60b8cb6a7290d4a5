"""Honest timings: warm the kernels before a clock starts, and never print an impossible
speed-up as a result.

A numba kernel's first call in a process loads it from the cache (or compiles it): tens
of milliseconds to seconds that belong to no search.  Every timing the demo, the CLI and
the benchmarks print is taken after :func:`warm_up` ran the same kernel on the same
problem in the same processes.  And a speed-up above the number of workers (superlinear)
is almost always a measurement artefact (a cold kernel, a loaded machine), so
:func:`speedup_text` flags it instead of presenting it as a result.

>>> speedup_text(2.0, 1.2, 2)
'1.67x'
>>> speedup_text(4.27, 1.0, 2)
'4.27x (above the 2 workers: not a result; timings not comparable, e.g. a loaded machine)'
"""
from __future__ import annotations

#: Nodes a warm-up search expands: one kernel call loads the kernel; one node costs nothing.
WARM_NODES = 1


def warm_up(problem, client=None, workers: int | None = None) -> None:
    """Run ``problem``'s kernel briefly in this process (and, with ``client``, on the
    workers that will search), so a following timed search measures the search only."""
    from ..solve import solve

    solve(problem, backend="sequential", node_limit=WARM_NODES)
    if client is not None:
        solve(problem, client=client, workers=workers, node_limit=WARM_NODES)


def speedup_text(sequential_seconds: float, parallel_seconds: float, workers: int) -> str:
    """``sequential / parallel`` as ``'1.73x'``; above ``workers`` it is flagged, not a result."""
    if parallel_seconds <= 0 or sequential_seconds <= 0:
        return "n/a (a run took no measurable time)"
    ratio = sequential_seconds / parallel_seconds
    text = f"{ratio:.2f}x"
    if ratio > workers:
        text += (f" (above the {workers} workers: not a result; timings not comparable, "
                 "e.g. a loaded machine)")
    return text
