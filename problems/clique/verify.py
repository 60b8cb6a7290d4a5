"""An independent checker of clique answers (shares no code with the kernels).

It reads the neighbourhoods of the answer's vertices as Python sets and checks, with
plain set operations: the vertices are distinct vertices of the graph, pairwise
adjacent (a clique, seed 003 §1.1), maximal ("no vertex adjacent to every vertex of
the clique that is not already in it", §1.1) when asked, and of the claimed size.

>>> from stealsearch.problems.clique.model import Graph
>>> g = Graph.from_edges(3, [(0, 1), (1, 2)])
>>> check_clique(g, [0, 1], size=2, maximal=True)
True
>>> check_clique(g, [0, 2])
Traceback (most recent call last):
...
stealsearch.engine.core.problem.SolutionError: vertices 0 and 2 are not adjacent
"""
from __future__ import annotations

from typing import Hashable, Sequence

from stealsearch.engine.core.problem import SolutionError


def neighbour_set(graph, v: int) -> set[int]:
    """Neighbours of vertex ``v`` as a Python set, read from the graph's adjacency row."""
    return set(graph.neighbours(int(v)).tolist())


def check_clique(graph, labels: Sequence[Hashable], size: int | None = None,
                 maximal: bool = False) -> bool:
    """True if ``labels`` (the graph's own vertex labels) form a clique of G; raise
    :class:`SolutionError` saying what is wrong otherwise.

    Only the rows of the answer's vertices are read (plain Python sets), so checking a
    clique of a 30,000-vertex graph costs milliseconds.
    """
    index = {graph.label(v): v for v in range(graph.n)}
    vs = []
    for lab in labels:
        if lab not in index:
            raise SolutionError(f"{lab!r} is not a vertex of the graph")
        vs.append(index[lab])
    if len(set(vs)) != len(vs):
        raise SolutionError(f"the clique repeats a vertex: {list(labels)!r}")
    if size is not None and len(vs) != size:
        raise SolutionError(f"the clique has {len(vs)} vertices, the objective says {size}")
    nbrs = {u: neighbour_set(graph, u) for u in vs}
    for i, u in enumerate(vs):
        for v in vs[i + 1:]:
            if v not in nbrs[u] or u not in nbrs[v]:
                raise SolutionError(f"vertices {graph.label(u)!r} and {graph.label(v)!r} "
                                    "are not adjacent")
    if maximal:
        common = set(range(graph.n)) if not vs else set.intersection(*nbrs.values())
        common -= set(vs)
        if common:
            w = min(common)
            raise SolutionError(f"the clique is not maximal: vertex {graph.label(w)!r} "
                                "extends it")
    return True
