"""Maximum clique as a plug-in problem of the engine (seed 003, chapters 2-4).

:class:`CliqueProblem` packs a :class:`~problems.clique.model.Graph`, a mode and a
bound into what the engine needs: the root row (the empty clique with C_0 = V), the
kernel, the decode (bitset -> the graph's labels) and an independent verifier.

Modes (``mode=``):

``"max"``            maximum clique (engine OPTIMISE); the empty clique of size 0 is
                     the initial incumbent (the seed's ``OptSize <- 0``).
``"decide"``         a clique of size >= ``k`` (engine DECIDE; how seed §1.2 finds
                     designs and factorizations: k = number of blocks).
``"count"``          count all cliques, the empty one included (seed §1.1.1 lists 22
                     for Fig. 1.1) (engine ENUMERATE).
``"count-maximal"``  count maximal cliques (Bron-Kerbosch with pivot; engine
                     ENUMERATE).  In a graph with no vertex the empty clique is the
                     one maximal clique.

Bounds (``bound=``, max/decide): ``"colour"`` (default; MCS/BBMC style on a
degeneracy order), or the seed's ``"greedy"``, ``"sampling"``, ``"size"`` in the
natural order 0 < 1 < ... < n-1 (seed §2.1).

>>> from engine.solve import solve
>>> from problems.clique.generators import seed_figure_1_1
>>> r = solve(CliqueProblem(seed_figure_1_1()), backend="sequential")
>>> r.objective, sorted(r.solution)
(4, [1, 2, 4, 5])
>>> solve(CliqueProblem(seed_figure_1_1(), mode="count"), backend="sequential").count
22
"""
from __future__ import annotations

import numpy as np

from engine.problem import Mode, Problem

from . import kernels
from .model import CliqueInputError, Graph, bitset_to_indices, words_for
from .verify import check_clique

MODES = ("max", "decide", "count", "count-maximal")
BOUNDS = ("colour", "greedy", "sampling", "size")


class CliqueProblem(Problem):
    """A clique search on ``graph``; see the module docstring for modes and bounds."""

    name = "clique"
    extra_counters = (("max_depth", "max"),)

    def __init__(self, graph: Graph, mode: str = "max", k: int | None = None,
                 bound: str = "colour"):
        if not isinstance(graph, Graph):
            if hasattr(graph, "nodes") and hasattr(graph, "edges"):
                graph = Graph.from_networkx(graph)      # networkx in, labels out
            else:
                raise CliqueInputError(f"expected a clique.Graph or a networkx graph, "
                                       f"got {type(graph).__name__}")
        mode = {"optimise": "max", "maximum": "max", "enumerate": "count"}.get(mode, mode)
        if mode not in MODES:
            raise CliqueInputError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
        bound = {"color": "colour"}.get(bound, bound)
        if bound not in BOUNDS:
            raise CliqueInputError(f"unknown bound {bound!r}; expected one of {', '.join(BOUNDS)}")
        if mode == "decide":
            if k is None:
                raise CliqueInputError("mode decide needs --k K, the clique size to find")
            if int(k) < 1:
                raise CliqueInputError(f"k must be >= 1, got {k}")
        self.graph = graph
        self.clique_mode = mode
        self.bound = bound
        self.k = None if k is None else int(k)
        self.mode = {"max": Mode.OPTIMISE, "decide": Mode.DECIDE}.get(mode, Mode.ENUMERATE)
        self.target = self.k if mode == "decide" else None
        n = graph.n
        W = words_for(n)
        self.words = W
        self.row_width = 2 + (3 if mode == "count-maximal" else 2) * W
        self.max_children = max(n, 1)
        self.solution_size = 1 + W
        if mode in ("max", "decide") and bound == "colour":
            self.order = kernels.degeneracy_order(graph.rows.view(np.int64), n) if n else \
                np.zeros(0, np.int64)
            self.adj = graph.permuted(self.order).view(np.int64)
        else:
            self.order = np.arange(n, dtype=np.int64)
            self.adj = graph.rows.view(np.int64)
        if mode in ("max", "decide") and bound == "sampling":
            self.classes = kernels.greedy_colour_classes(self.adj, n)
        else:
            self.classes = np.zeros((1, W), np.int64)

    # -- engine contract --------------------------------------------------------------
    @property
    def kernel(self):
        if self.clique_mode == "count":
            return kernels.count_all_kernel
        if self.clique_mode == "count-maximal":
            return kernels.count_maximal_kernel
        if self.bound == "colour":
            return kernels.colour_kernel
        return kernels.seed_kernel

    def kernel_data(self) -> tuple:
        if self.kernel is kernels.seed_kernel:
            return (self.adj, np.int64(kernels.SEED_BOUNDS[self.bound]), self.classes)
        return (self.adj,)

    def root_frontier(self) -> np.ndarray:
        """One row: the empty clique, C_0 = V (seed Algorithm 2.1.1, ℓ = 0)."""
        n, W = self.graph.n, self.words
        row = np.zeros((1, self.row_width), dtype=np.int64)
        row[0, kernels.LEVEL] = 0
        row[0, kernels.BOUND] = n + 1
        full = np.zeros(W, dtype=np.uint64)
        if n:
            idx = np.arange(n)
            np.bitwise_or.at(full, idx // 64, np.left_shift(np.uint64(1), (idx % 64).astype(np.uint64)))
        row[0, kernels.X0 + W:kernels.X0 + 2 * W] = full.view(np.int64)
        return row

    def initial_incumbent(self) -> int:
        if self.mode is Mode.DECIDE:
            return self.k - 1
        return 0

    def initial_solution(self):
        return [] if self.mode is Mode.OPTIMISE else None

    def row_bounds(self, rows: np.ndarray) -> np.ndarray:
        """The bound each row carries (ℓ + colours, or the parent's M)."""
        return np.minimum(rows[:, kernels.BOUND], self.graph.n).astype(np.int64)

    def decode(self, solution: np.ndarray, value: int) -> list:
        """The clique as the graph's labels, in increasing vertex order."""
        vs = bitset_to_indices(np.asarray(solution[1:1 + self.words], dtype=np.int64), self.graph.n)
        return self.graph.labelled(sorted(int(v) for v in self.order[vs]))

    def verify(self, solution, value) -> bool:
        # What a result claims: a clique of the reported size.  Not maximality: an
        # interrupted search reports the incumbent, recorded the moment it beat the
        # previous one (before the kernel extends it), so it need not be maximal.  A
        # finished 'optimal' result is maximal; the clique command checks that too.
        check_clique(self.graph, solution, size=int(value))
        if self.mode is Mode.DECIDE and len(solution) < self.k:
            return False
        return True

    def describe(self) -> dict:
        g = self.graph
        return {"problem": "clique", "graph": g.name, "n": g.n, "m": g.m,
                "density": round(g.density(), 6), "clique_mode": self.clique_mode,
                "bound": self.bound if self.mode is not Mode.ENUMERATE else None, "k": self.k}
