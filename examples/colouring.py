"""Graph k-colouring: can the vertices get k colours, no edge inside one colour? (decide)

    python examples/colouring.py examples/data/myciel4.col 5     # found
    python examples/colouring.py examples/data/myciel4.col 4     # none (chromatic number 5)

Vertices are coloured in order of decreasing degree; a vertex takes a colour that no
coloured neighbour has, and at most one colour more than those used so far (colours
are interchangeable).  A node with every vertex coloured is a solution (objective 1,
target 1).  Graphs are read from DIMACS files (``p edge n m`` / ``e u v``).
"""
import sys

import numpy as np

from stealsearch import FastProblem, PythonProblem, RowLayout, SolutionError, solve
from stealsearch.engine.core.fast import copy_row


def read_dimacs(path):
    n, edges = 0, []
    with open(path) as f:
        for line in f:
            if line.startswith("p"):
                n = int(line.split()[2])
            elif line.startswith("e"):
                u, v = map(int, line.split()[1:3])
                edges.append((u - 1, v - 1))
    return n, edges


class _Colouring:                                   # instance data and checks, both tiers
    name = "colouring"

    def __init__(self, n, edges, k):
        super().__init__(mode="decide", target=1)
        self.n, self.k, self.edges = n, k, list(edges)
        degree = np.zeros(n, dtype=np.int64)
        for u, v in self.edges:
            degree[u] += 1
            degree[v] += 1
        self.order = np.argsort(-degree, kind="stable")      # position -> vertex
        pos = np.argsort(self.order)
        earlier = [[] for _ in range(n)]            # neighbours coloured before, by position
        for u, v in self.edges:
            a, b = sorted((pos[u], pos[v]))
            earlier[b].append(a)
        self.indptr = np.cumsum([0] + [len(e) for e in earlier]).astype(np.int64)
        self.indices = np.array([a for e in earlier for a in e], dtype=np.int64)

    def verify(self, colours, value):               # from the edge list only
        if len(colours) != self.n or not all(0 <= c < self.k for c in colours):
            raise SolutionError(f"not a colouring of {self.n} vertices with {self.k} colours")
        for u, v in self.edges:
            if colours[u] == colours[v]:
                raise SolutionError(f"edge ({u}, {v}) has both ends coloured {colours[u]}")
        return True


class Colouring(_Colouring, PythonProblem):         # the reference tier
    def root(self):
        return ()                                   # colours of positions 0, 1, ...

    def children(self, colours):
        p = len(colours)
        if p == self.n:
            return []
        taken = {colours[a] for a in self.indices[self.indptr[p]:self.indptr[p + 1]]}
        top = min(self.k, max(colours, default=-1) + 2)
        return [colours + (c,) for c in range(top - 1, -1, -1) if c not in taken]

    def is_solution(self, colours):
        return len(colours) == self.n

    def decode_node(self, colours):
        out = [0] * self.n
        for p, c in enumerate(colours):
            out[int(self.order[p])] = c
        return out


ROW = RowLayout("p", "used", colour="n")            # the fast tier


def expand(row, out, data):
    indptr, indices, k = data[0], data[1], data[2][0]
    p = row[ROW.p]
    if p == len(indptr) - 1:
        return 0
    m = 0
    top = min(k, row[ROW.used] + 1)
    for c in range(top - 1, -1, -1):                # smallest colour last: explored first
        ok = True
        for j in range(indptr[p], indptr[p + 1]):
            if row[ROW.colour + indices[j]] == c:
                ok = False
                break
        if ok:
            copy_row(out[m], row)
            out[m, ROW.p] = p + 1
            out[m, ROW.used] = max(row[ROW.used], c + 1)
            out[m, ROW.colour + p] = c
            m += 1
    return m


def is_solution(row, data):
    return row[ROW.p] == len(data[0]) - 1


class FastColouring(_Colouring, FastProblem):
    layout, expand, is_solution = ROW, expand, is_solution

    def __init__(self, n, edges, k):
        super().__init__(n, edges, k)
        self.row_width, self.max_children = ROW.width(n=n), k

    def root(self):
        return ROW.encode(self.row_width)

    def data(self):
        return (self.indptr, self.indices, np.array([self.k], dtype=np.int64))

    def decode_row(self, row):
        out = [0] * self.n
        for p in range(self.n):
            out[int(self.order[p])] = int(row[ROW.colour + p])
        return out


if __name__ == "__main__":                          # LocalCluster spawns: keep this guard
    path = sys.argv[1] if len(sys.argv) > 1 else "examples/data/myciel4.col"
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    backend = sys.argv[3] if len(sys.argv) > 3 else "sequential"
    for tier in (Colouring, FastColouring):
        r = solve(tier(*read_dimacs(path), k), backend=backend)
        print(f"{tier.__name__}({path}, k={k}) on {r.backend}: {r.status}, {r.nodes:,} nodes"
              + (f", colours {r.solution} (verified: {r.verified})" if r.solution else ""))
