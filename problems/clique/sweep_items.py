"""The ``clique`` item of parameter sweeps (:mod:`stealsearch.engine.app.sweep`): one maximum clique.

The instance is a G(n, p) graph (``generator: gnp`` with ``n``, ``p``, ``seed``), a named
graph (``generator: named`` with ``name``) or a file (``file``: DIMACS ``.clq`` or an edge
list).  The clique found is checked by :func:`~stealsearch.problems.clique.verify.check_clique`
(which shares no code with the kernels); a failed check raises.

>>> r = clique(n=60, p=0.5, seed=1)
>>> r["omega"], r["verified"]
(8, True)
"""
from __future__ import annotations

from stealsearch.engine.core.problem import SolutionError

from .model import CliqueInputError

GENERATORS = ("gnp", "named")


def _solve_checked(graph, bound: str, solve_kwargs: dict | None):
    """A maximum clique of ``graph``, and whether the independent checker passed it
    (None when the search found no clique); a failed check raises."""
    from stealsearch.engine.solve import solve

    from .problem import CliqueProblem
    from .verify import check_clique

    r = solve(CliqueProblem(graph, bound=bound), **(solve_kwargs or {"backend": "sequential"}))
    verified = None
    if r.solution is not None:
        verified = check_clique(graph, r.solution, size=r.objective)
        if not verified:
            raise SolutionError(f"the clique found is not a clique of size {r.objective}")
    return r, verified


def clique(*, generator: str = "gnp", n: int | None = None, p: float | None = None,
           seed: int = 1, name: str | None = None, file: str | None = None,
           bound: str = "colour", solve_kwargs: dict | None = None) -> dict:
    from .generators import gnp, named_graph
    from .io import read_graph

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
    r, verified = _solve_checked(graph, bound, solve_kwargs)
    return {"search_status": r.status, "vertices": graph.n, "omega": r.objective,
            "bound_proven": r.bound, "nodes": r.nodes, "verified": verified,
            "search_seconds": r.search_seconds, "backend": r.backend}


def _warmup() -> None:
    """Load the kernels of every bound in this process on a 12-vertex graph."""
    from stealsearch.engine.solve import solve

    from .generators import gnp
    from .problem import BOUNDS, CliqueProblem

    for bound in BOUNDS:
        solve(CliqueProblem(gnp(12, 0.5, seed=1), bound=bound), backend="sequential")


clique.warmup = _warmup


def clique_workers(*, n: int, p: float, seed: int = 1, bound: str = "colour",
                   solve_kwargs: dict | None = None) -> dict:
    """One maximum clique of G(n, p) with the per-worker figures of seed 003's Tables
    4.4-4.5: nodes per worker (a list), their population standard deviation, steals."""
    from .generators import gnp

    r, verified = _solve_checked(gnp(n, p, seed=seed), bound, solve_kwargs)
    per_worker = [int(w.nodes) for w in r.workers] or [int(r.nodes)]
    return {"search_status": r.status, "omega": r.objective, "nodes": r.nodes,
            "per_worker_nodes": per_worker, "n_workers": len(per_worker),
            "node_stddev": r.node_balance_stddev,
            "steals": sum(int(w.steals_succeeded) for w in r.workers),
            "verified": verified, "search_seconds": r.search_seconds, "engine_backend": r.backend}


clique_workers.warmup = _warmup

#: the seed's worked examples: name -> what the clique of the derived graph stands for
EXAMPLES = ("fig1_1", "fano", "cube_1factor", "K4_1factor", "K6_1factor", "K5_2factor")


def _all_cliques(graph) -> list[tuple[int, ...]]:
    """Every clique (the empty one included) by brute force over vertex subsets: the
    check of Fig. 1.1, sharing no code with the search.  Small graphs only."""
    import itertools

    edges = {frozenset(map(int, e)) for e in graph.edges().tolist()}
    out = []
    for r in range(graph.n + 1):
        for s in itertools.combinations(range(graph.n), r):
            if all(frozenset((a, b)) in edges for a, b in itertools.combinations(s, 2)):
                out.append(s)
    return out


def clique_example(*, example: str, solve_kwargs: dict | None = None) -> dict:
    """A worked example of seed 003 §1 solved by the maximum-clique search.

    ``fig1_1``: the Fig. 1.1 graph (its maximum clique, and every clique counted by brute
    force); ``fano``: the 2-(7,3,1) design graph (a clique of 7 blocks is the Fano plane);
    ``cube_1factor``, ``K4_1factor``, ``K6_1factor``, ``K5_2factor``: the k-factor graph
    of the graph, whose clique of 2|E|/(nk) factors is a k-factorization.  The design or
    factorization read from the clique is checked by its own decoder; a failed check raises.

    >>> clique_example(example="fano")["found"]
    True
    """
    from stealsearch.engine.solve import solve

    from .generators import (decode_design, decode_factorization, design_blocks_needed,
                             design_graph, factor_graph, factors_needed, named_graph,
                             seed_figure_1_1)
    from .problem import CliqueProblem

    if example not in EXAMPLES:
        raise CliqueInputError(f"unknown example {example!r}; expected one of {', '.join(EXAMPLES)}")
    kwargs = solve_kwargs or {"backend": "sequential"}
    out: dict = {}
    if example == "fig1_1":
        graph = seed_figure_1_1()
        needed = None
    elif example == "fano":
        graph = design_graph(2, 7, 3)
        needed = design_blocks_needed(2, 7, 3)
    else:
        name, k = example.split("_")
        base = named_graph("cube" if name == "cube" else name)
        k = int(k[0])
        graph, _ = factor_graph(base, k)
        needed = factors_needed(base, k)
    r = solve(CliqueProblem(graph), **kwargs)
    # the solution is given as vertex labels (blocks, factors; plain vertices for Fig. 1.1)
    chosen = list(r.solution or [])
    out.update(vertices=graph.n, edges=graph.m, omega=r.objective, needed=needed,
               nodes=r.nodes, search_status=r.status)
    if example == "fig1_1":
        cliques = _all_cliques(graph)
        top = max(len(c) for c in cliques)
        maximum = [list(c) for c in cliques if len(c) == top]
        clique = sorted(int(v) for v in chosen)
        out.update(clique=clique, cliques_brute_force=len(cliques), maximum_cliques=maximum,
                   found=clique in maximum)
    elif example == "fano":
        dec = decode_design(chosen, 2, 7)
        out.update(blocks=dec["blocks"], found=bool(dec["is_design"]) and r.objective == needed)
    else:
        dec = decode_factorization(base, chosen, k)
        out.update(factors=dec["factors"],
                   found=bool(dec["is_factorization"]) and r.objective == needed)
    if needed is not None and r.objective == needed and not out["found"]:
        raise SolutionError(f"{example}: a clique of size {needed} that does not decode")
    return out


clique_example.warmup = _warmup
