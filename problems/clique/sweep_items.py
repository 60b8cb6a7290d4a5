"""The ``clique`` item of parameter sweeps (:mod:`engine.sweep`): one maximum clique.

The instance is a G(n, p) graph (``generator: gnp`` with ``n``, ``p``, ``seed``), a named
graph (``generator: named`` with ``name``) or a file (``file``: DIMACS ``.clq`` or an edge
list).  The clique found is checked by :func:`~problems.clique.verify.check_clique`
(which shares no code with the kernels); a failed check raises.

>>> r = clique(n=60, p=0.5, seed=1)
>>> r["omega"], r["verified"]
(8, True)
"""
from __future__ import annotations

from engine.problem import SolutionError

from .model import CliqueInputError

GENERATORS = ("gnp", "named")


def clique(*, generator: str = "gnp", n: int | None = None, p: float | None = None,
           seed: int = 1, name: str | None = None, file: str | None = None,
           bound: str = "colour", solve_kwargs: dict | None = None) -> dict:
    from engine.solve import solve

    from .generators import gnp, named_graph
    from .io import read_graph
    from .problem import CliqueProblem
    from .verify import check_clique

    if file is not None:
        graph = read_graph(file)
    elif generator == "gnp":
        if n is None or p is None:
            raise CliqueInputError("a gnp clique item needs n and p")
        graph = gnp(n, p, seed=seed)
    elif generator == "named":
        if name is None:
            raise CliqueInputError("a named clique item needs 'name'")
        graph = named_graph(name)
    else:
        raise CliqueInputError(f"unknown generator {generator!r}; expected one of "
                               f"{', '.join(GENERATORS)}, or a file")
    r = solve(CliqueProblem(graph, bound=bound), **(solve_kwargs or {"backend": "sequential"}))
    verified = None
    if r.solution is not None:
        verified = check_clique(graph, r.solution, size=r.objective)
        if not verified:
            raise SolutionError(f"the clique found is not a clique of size {r.objective}")
    return {"search_status": r.status, "vertices": graph.n, "omega": r.objective,
            "bound_proven": r.bound, "nodes": r.nodes, "verified": verified,
            "search_seconds": r.search_seconds, "backend": r.backend}


def _warmup() -> None:
    """Load the kernels of every bound in this process on a 12-vertex graph."""
    from engine.solve import solve

    from .generators import gnp
    from .problem import BOUNDS, CliqueProblem

    for bound in BOUNDS:
        solve(CliqueProblem(gnp(12, 0.5, seed=1), bound=bound), backend="sequential")


clique.warmup = _warmup
