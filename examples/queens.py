"""N-queens: count the placements of n non-attacking queens on an n x n board (enumerate).

    python examples/queens.py 10            # 724, in both tiers
    python examples/queens.py 12 dask       # on a LocalCluster of 2 workers

A node is a partial placement, one queen per row so far: the columns and the two
diagonal directions it attacks, as bit masks.  Known counts (OEIS A000170):
8 -> 92, 10 -> 724, 12 -> 14,200, 14 -> 365,596.
"""
import sys

import numpy as np

from stealsearch import FastProblem, PythonProblem, RowLayout, solve

KNOWN = {4: 2, 5: 10, 6: 4, 7: 40, 8: 92, 9: 352, 10: 724, 11: 2680, 12: 14200, 14: 365596}


class Queens(PythonProblem):                       # the reference tier: plain Python
    name = "queens"
    mode = "enumerate"

    def __init__(self, n):
        self.n = n

    def root(self):
        return (0, 0, 0, 0)                        # rows placed, columns, diagonals / and \

    def children(self, node):
        depth, cols, d1, d2 = node
        full = (1 << self.n) - 1
        free = ~(cols | d1 | d2) & full
        out = []
        while free:
            bit = free & -free
            free ^= bit
            out.append((depth + 1, cols | bit, ((d1 | bit) << 1) & full, (d2 | bit) >> 1))
        return out

    def is_solution(self, node):
        return node[0] == self.n


ROW = RowLayout("depth", "cols", "d1", "d2")        # the fast tier: numba, per node


def expand(row, out, data):
    n = data[0][0]
    full = (1 << n) - 1
    free = ~(row[ROW.cols] | row[ROW.d1] | row[ROW.d2]) & full
    k = 0
    while free:
        bit = free & -free
        free ^= bit
        out[k, ROW.depth] = row[ROW.depth] + 1
        out[k, ROW.cols] = row[ROW.cols] | bit
        out[k, ROW.d1] = ((row[ROW.d1] | bit) << 1) & full
        out[k, ROW.d2] = (row[ROW.d2] | bit) >> 1
        k += 1
    return k


def is_solution(row, data):
    return row[ROW.depth] == data[0][0]


class FastQueens(FastProblem):
    name = "queens"
    mode = "enumerate"
    layout, expand, is_solution = ROW, expand, is_solution

    def __init__(self, n):
        self.n = self.max_children = n

    def root(self):
        return ROW.encode()

    def data(self):
        return (np.array([self.n], dtype=np.int64),)


if __name__ == "__main__":                          # LocalCluster spawns: keep this guard
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    backend = sys.argv[2] if len(sys.argv) > 2 else "sequential"
    for tier in (Queens, FastQueens):
        r = solve(tier(n), backend=backend)
        print(f"{tier.__name__}({n}) on {r.backend}: {r.count:,} solutions, {r.nodes:,} nodes"
              f" (known: {KNOWN.get(n, '?'):,})")
