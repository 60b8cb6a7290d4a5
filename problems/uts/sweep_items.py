"""The ``uts`` item of parameter sweeps (:mod:`stealsearch.engine.app.sweep`): count one UTS tree.

A published tree (``tree``) is checked against its published size, depth and leaves;
a mismatch raises, so the sweep records the item as failed.

>>> r = uts(tree="default")
>>> r["count"], r["matches_published"]
(1732, True)
"""
from __future__ import annotations

from stealsearch.engine.core.problem import SolutionError

from .problem import PRESETS, UTSParameterError, UTSParams, UTSProblem


def uts(*, tree: str | None = None, options: str | None = None,
        solve_kwargs: dict | None = None) -> dict:
    """Count the tree named ``tree`` (a preset) or given by UTS ``options``."""
    from stealsearch.engine.solve import solve

    if (tree is None) == (options is None):
        raise UTSParameterError("a uts item needs 'tree' (a published tree) or 'options', "
                                "not both")
    if tree is not None:
        problem = UTSProblem.preset(tree)
        expected = PRESETS[problem.label][1]
    else:
        problem = UTSProblem(UTSParams.parse(options), label="custom")
        expected = None
    r = solve(problem, **(solve_kwargs or {"backend": "sequential"}))
    depth, leaves = r.counters.get("depth"), r.counters.get("leaves")
    out = {"search_status": r.status, "count": r.count, "nodes": r.nodes, "depth": depth,
           "leaves": leaves, "search_seconds": r.search_seconds, "backend": r.backend,
           "published": None if expected is None else expected[0], "matches_published": None}
    if expected is not None and r.status == "exhausted":
        got = (r.count, depth, leaves)
        matches = all(e is None or e == g for e, g in zip(expected, got))
        if not matches:
            raise SolutionError(f"UTS {problem.label}: counted {got}, published {expected}")
        out["matches_published"] = True
    return out


def _warmup() -> None:
    """Load the kernel (numba's on-disk cache) in this process: the smallest tree."""
    from stealsearch.engine.solve import solve

    solve(UTSProblem.preset("default"), backend="sequential")


uts.warmup = _warmup
