"""Clique on a small graph in plain Python: the engine's reference tier, no compiled kernel.

A graph of a few dozen vertices is solved in milliseconds by plain Python over Python
integers as bitsets, while loading (or, on a first run, compiling) the numba kernels of
:class:`~stealsearch.problems.clique.problem.CliqueProblem` costs about a second (or
tens of seconds).  :func:`small_enough` says which instances take this tier;
:class:`SmallCliqueProblem` is the same search question as a
:class:`~stealsearch.engine.core.reference.PythonProblem`:

``"max"`` / ``"decide"``  branch and bound with the greedy colouring bound (MCS): the
                          candidates coloured greedily in vertex order, branching on
                          them in reverse colour order, each child's bound its clique
                          size plus the colour of the vertex it adds;
``"count"``               every clique once (the empty one included): a child adds a
                          candidate and keeps only the later candidates adjacent to it;
``"count-maximal"``       Bron-Kerbosch with Tomita's pivot: a node (R, P, X) counts
                          when P and X are both empty.

Every clique reported is checked by :func:`.verify.check_clique`, which reads only the
graph, exactly as for the compiled tier.

>>> from stealsearch.engine.solve import solve
>>> from stealsearch.problems.clique.generators import seed_figure_1_1
>>> r = solve(SmallCliqueProblem(seed_figure_1_1()), backend="sequential")
>>> r.objective, sorted(r.solution)
(4, [1, 2, 4, 5])
>>> solve(SmallCliqueProblem(seed_figure_1_1(), mode="count"), backend="sequential").count
22
"""
from __future__ import annotations

from stealsearch.engine.core.problem import Mode
from stealsearch.engine.core.reference import PythonProblem

from .model import CliqueInputError, Graph
from .problem import MAX_K
from .verify import check_clique

#: The most vertices a max / decide search takes in plain Python: the colouring bound
#: keeps its tree to thousands of nodes at any density there, tens of thousands per second.
SMALL_MAX_VERTICES = 40
#: The most vertices of a count of all cliques in plain Python: at most 2^n cliques.
SMALL_COUNT_VERTICES = 16
#: The most vertices of a count of maximal cliques: at most 3^(n/3) (Moon and Moser).
SMALL_MAXIMAL_VERTICES = 24

_LIMITS = {"max": SMALL_MAX_VERTICES, "decide": SMALL_MAX_VERTICES,
           "count": SMALL_COUNT_VERTICES, "count-maximal": SMALL_MAXIMAL_VERTICES}


def small_enough(n: int, mode: str) -> bool:
    """Whether a graph of ``n`` vertices in ``mode`` is solved in plain Python
    (:class:`SmallCliqueProblem`) rather than by the compiled kernels."""
    return n <= _LIMITS.get(mode, -1)


def _bits(x: int):
    """The vertices of the bitset ``x``, in increasing order."""
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


class SmallCliqueProblem(PythonProblem):
    """A clique search on a small ``graph`` in plain Python (see the module docstring).

    Parameters
    ----------
    graph : Graph
    mode : str
        ``"max"``, ``"decide"`` (with ``k``), ``"count"`` or ``"count-maximal"``.
    k : int, optional
        The clique size to find (``"decide"``).
    """

    name = "clique"

    def __init__(self, graph: Graph, mode: str = "max", k: int | None = None):
        if mode not in _LIMITS:
            raise CliqueInputError(f"unknown mode {mode!r}; expected one of {', '.join(_LIMITS)}")
        if mode == "decide":
            if k is None:
                raise CliqueInputError("mode decide needs --k K, the clique size to find")
            if not 1 <= int(k) <= MAX_K:
                raise CliqueInputError(f"k must be in 1..{MAX_K} (2^62), got {k}")
        super().__init__(mode={"max": Mode.OPTIMISE, "decide": Mode.DECIDE}.get(mode, Mode.ENUMERATE),
                         target=k if mode == "decide" else None)
        self.graph = graph
        self.clique_mode = mode
        self.k = None if k is None else int(k)
        # neighbourhoods as Python integers: vertex v is bit v
        self.adj = [int.from_bytes(b"".join(int(w).to_bytes(8, "little") for w in row), "little")
                    for row in graph.rows]
        self.all_vertices = (1 << graph.n) - 1

    # -- the search ------------------------------------------------------------------
    def root(self):
        if self.clique_mode == "count-maximal":
            return (0, self.all_vertices, 0)            # R, P, X
        if self.clique_mode == "count":
            return (0, self.all_vertices)               # clique, later candidates
        return (0, self.all_vertices, 0, self.graph.n)  # clique, candidates, size, bound

    def children(self, node):
        mode = self.clique_mode
        if mode == "count-maximal":
            return self._bron_kerbosch_children(node)
        if mode == "count":
            clique, cand = node
            adj = self.adj
            # each clique once: a child adds v and keeps the candidates after v
            return [(clique | (1 << v), cand & adj[v] & ~((2 << v) - 1)) for v in _bits(cand)]
        return self._colour_children(node)

    def _colour_children(self, node):
        clique, cand, size, _ = node
        adj = self.adj
        order, colours = [], []
        uncoloured, colour = cand, 0
        while uncoloured:                   # greedy colour classes, in vertex order
            colour += 1
            free = uncoloured
            while free:
                v = (free & -free).bit_length() - 1
                uncoloured &= ~(1 << v)
                free &= ~(1 << v) & ~adj[v]
                order.append(v)
                colours.append(colour)
        kids, before = [], 0
        for v, c in zip(order, colours):
            # the last child (highest colour) is explored first; a child keeps the
            # candidates coloured before v, and no clique among them exceeds c - 1
            kids.append((clique | (1 << v), before & adj[v], size + 1, size + c))
            before |= 1 << v
        return kids

    def _bron_kerbosch_children(self, node):
        r, p, x = node
        if not p:
            return []
        adj = self.adj
        pivot = max(_bits(p | x), key=lambda u: (p & adj[u]).bit_count())
        kids = []
        for v in _bits(p & ~adj[pivot]):
            kids.append((r | (1 << v), p & adj[v], x & adj[v]))
            p &= ~(1 << v)
            x |= 1 << v
        return kids

    def objective(self, node):
        return node[2] if self.mode is not Mode.ENUMERATE else None

    def bound(self, node) -> int:
        return node[3]

    def is_solution(self, node) -> bool:
        if self.clique_mode == "count-maximal":
            return not node[1] and not node[2]
        return True

    # -- the answer ------------------------------------------------------------------
    def decode_node(self, node):
        return self.graph.labelled(list(_bits(node[0])))

    def verify(self, solution, value) -> bool:
        check_clique(self.graph, solution, size=int(value))
        return not (self.mode is Mode.DECIDE and len(solution) < self.k)

    def describe(self) -> dict:
        g = self.graph
        return {"problem": "clique", "graph": g.name, "n": g.n, "m": g.m,
                "density": round(g.density(), 6), "clique_mode": self.clique_mode,
                "bound": "colour" if self.mode is not Mode.ENUMERATE else None, "k": self.k,
                "tier": "python"}


__all__ = ["SMALL_COUNT_VERTICES", "SMALL_MAXIMAL_VERTICES", "SMALL_MAX_VERTICES",
           "SmallCliqueProblem", "small_enough"]
