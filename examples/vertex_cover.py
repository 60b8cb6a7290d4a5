"""Minimum vertex cover: the fewest vertices touching every edge (optimise), or every cover
the branching reaches within ``k`` vertices (enumerate).

    python examples/vertex_cover.py              # G(40, 0.15), both tiers, optimise
    python examples/vertex_cover.py 50 0.1 28    # G(50, 0.1), at most 28 vertices

The classic bounded search tree (Downey & Fellows; Niedermeier, *Invitation to
Fixed-Parameter Algorithms*, ch. 3): take the vertex ``v`` of highest degree in what is
left of the graph; either ``v`` is in the cover, or it is not and then all of its
neighbours are.  Both children add at least one vertex, and a child above ``k``
vertices is not made, so the tree is at most ``k`` deep and **binary**: its stack never
holds more than ``k + 1`` rows.  With ``k`` <= 31 the stack never passes the default
release threshold of 32, so releases alone would leave a second worker idle; the
engine shares work when an idle peer asks (:mod:`stealsearch.engine.core.worker`), and
``tests/examples/test_vertex_cover.py`` checks that every worker stays busy on it.

Optimise mode maximises ``-size`` (``objective_sense = -1``: results show the size);
the bound is the size plus a greedy maximal matching of what is left (each matched
edge needs its own cover vertex).  Enumerate mode counts the leaves: the covers of at
most ``k`` vertices that the branching reaches.  Row: ``[cover, decided, size]``,
``cover`` and ``decided`` bitsets over at most 62 vertices (``decided``: in the cover,
or left out with every neighbour in it).
"""
import sys

import numpy as np

from stealsearch import FastProblem, InvalidProblem, PythonProblem, RowLayout, SolutionError, solve
from stealsearch.engine.core.bitset import ctz, popcount
from stealsearch.engine.core.fast import NOT_A_SOLUTION


class _VertexCover:                                 # instance data and checks, both tiers
    name = "vertex-cover"
    objective_sense = -1                            # the kernel maximises -size

    def __init__(self, n, edges, k=None, mode="optimise"):
        super().__init__(mode=mode)
        if not 1 <= n <= 62:
            raise InvalidProblem(f"vertex cover here takes 1 to 62 vertices, got {n}")
        self.n, self.edges = int(n), [(int(u), int(v)) for u, v in edges]
        for u, v in self.edges:
            if not (0 <= u < n and 0 <= v < n) or u == v:
                raise InvalidProblem(f"edge ({u}, {v}) is not an edge of {n} vertices")
        self.k = self.n if k is None else int(k)
        adj = np.zeros(self.n, dtype=np.int64)
        for u, v in self.edges:
            adj[u] |= np.int64(1) << v
            adj[v] |= np.int64(1) << u
        self.adj = adj
        self.all = np.array([(1 << self.n) - 1, self.k], dtype=np.int64)   # vertex mask, k

    def vertices(self, cover):
        return [v for v in range(self.n) if (int(cover) >> v) & 1]

    def verify(self, cover, value):                  # from the edge list only
        size = -value                                # the kernel's value is -size
        chosen = set(cover)
        if len(chosen) != len(cover) or len(cover) != size or len(cover) > self.k:
            raise SolutionError(f"{cover} is not a set of {size} <= {self.k} vertices")
        for u, v in self.edges:
            if u not in chosen and v not in chosen:
                raise SolutionError(f"edge ({u}, {v}) is not covered by {cover}")
        return True


# -- per-node helpers, plain Python in numba's subset: both tiers call them --------------
def branch_vertex(decided, adj, everything):
    """The undecided vertex of highest degree among the undecided, and that degree."""
    left = everything & ~decided
    best, best_degree = -1, 0
    rest = left
    while rest:
        v = ctz(rest)
        rest &= rest - 1
        d = popcount(adj[v] & left)
        if d > best_degree:
            best, best_degree = v, d
    return best, best_degree


def matching_bound(decided, adj, everything):
    """A greedy maximal matching of the undecided part: a lower bound on its cover."""
    free = everything & ~decided
    matched = 0
    rest = free
    while rest:
        v = ctz(rest)
        rest &= rest - 1
        if not (free >> v) & 1:
            continue
        others = adj[v] & free
        if others:
            w = ctz(others)
            free &= ~((np.int64(1) << v) | (np.int64(1) << w))
            rest &= ~(np.int64(1) << w)
            matched += 1
    return matched


ROW = RowLayout("cover", "decided", "size")          # the fast tier


def expand(row, out, data):
    adj, everything, k = data[0], data[1][0], data[1][1]
    decided, size = row[ROW.decided], row[ROW.size]
    v, degree = branch_vertex(decided, adj, everything)
    if v < 0:
        return 0                                     # every edge is covered: a leaf
    bit = np.int64(1) << v
    nbrs = adj[v] & everything & ~decided
    m = 0
    if size + degree <= k:                           # v left out: all its neighbours in
        out[m, ROW.cover] = row[ROW.cover] | nbrs
        out[m, ROW.decided] = decided | bit | nbrs
        out[m, ROW.size] = size + degree
        m += 1
    if size + 1 <= k:                                # v in the cover (explored first)
        out[m, ROW.cover] = row[ROW.cover] | bit
        out[m, ROW.decided] = decided | bit
        out[m, ROW.size] = size + 1
        m += 1
    return m


def is_solution(row, data):
    return branch_vertex(row[ROW.decided], data[0], data[1][0])[0] < 0


def objective(row, data):
    if branch_vertex(row[ROW.decided], data[0], data[1][0])[0] >= 0:
        return NOT_A_SOLUTION
    return -row[ROW.size]


def bound(row, data):
    return -(row[ROW.size] + matching_bound(row[ROW.decided], data[0], data[1][0]))


class FastVertexCover(_VertexCover, FastProblem):
    layout, expand, is_solution, objective, bound = ROW, expand, is_solution, objective, bound
    max_children = 2

    def root(self):
        return ROW.encode()

    def data(self):
        return (self.adj, self.all)

    def decode_row(self, row):
        return self.vertices(row[ROW.cover])


class VertexCover(_VertexCover, PythonProblem):      # the reference tier
    def root(self):
        return (0, 0, 0)                             # cover, decided, size

    def children(self, node):
        cover, decided, size = node
        v, degree = branch_vertex(np.int64(decided), self.adj, self.all[0])
        if v < 0:
            return []
        nbrs = int(self.adj[v] & self.all[0] & ~np.int64(decided))
        kids = []
        if size + degree <= self.k:
            kids.append((cover | nbrs, decided | (1 << int(v)) | nbrs, size + int(degree)))
        if size + 1 <= self.k:
            kids.append((cover | (1 << int(v)), decided | (1 << int(v)), size + 1))
        return kids

    def is_solution(self, node):
        return branch_vertex(np.int64(node[1]), self.adj, self.all[0])[0] < 0

    def objective(self, node):
        return -node[2] if self.is_solution(node) else None

    def bound(self, node):
        return -(node[2] + int(matching_bound(np.int64(node[1]), self.adj, self.all[0])))

    def decode_node(self, node):
        return self.vertices(node[0])


def random_graph(n, p, seed=0):
    """G(n, p): ``(n, edges)``."""
    rng = np.random.default_rng(seed)
    return n, [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < p]


def matched_graph(n, p, matched, seed=0):
    """G(n, p) plus a matching of ``matched`` edges (0-1, 2-3, ...): ``(n, edges)``.  Each
    matched edge that stays apart from the rest doubles the branching's tree (either end
    is in the cover), so ``matched`` sets the size of a narrow tree where G(n, p) on 62
    vertices alone stays below ~5 M nodes (benchmarks/bench_narrow.py: G(62, 0.01) with 29
    matched edges, k = 31: the issue's seconds-long search, its stack never past 32 rows)."""
    if not 0 <= 2 * matched <= n:
        raise InvalidProblem(f"{matched} matched edges need {2 * matched} of the {n} vertices")
    n, edges = random_graph(n, p, seed)
    return n, sorted(set(edges) | {(2 * i, 2 * i + 1) for i in range(matched)})


TIERS = (VertexCover, FastVertexCover)

if __name__ == "__main__":                          # LocalCluster spawns: keep this guard
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    p = float(sys.argv[2]) if len(sys.argv) > 2 else 0.15
    k = int(sys.argv[3]) if len(sys.argv) > 3 else None
    for tier in TIERS:
        r = solve(tier(*random_graph(n, p), k=k), backend="sequential")
        print(f"{tier.__name__}(G({n}, {p})) on {r.backend}: {r.status}, cover of "
              f"{r.objective} (verified: {r.verified}) {r.solution}, {r.nodes:,} nodes")
