"""0/1 knapsack: the most valuable set of items within a weight capacity (optimise).

    python examples/knapsack.py             # a random instance of 30 items, both tiers

Items are taken in order of value per weight; a node has decided items < i.  The bound
is Dantzig's: the value so far plus the greedy fractional filling of what is left (an
upper bound on every completion).  Every node is a feasible packing.
"""
import sys

import numpy as np

from stealsearch import Bits, FastProblem, PythonProblem, RowLayout, SolutionError, solve
from stealsearch.engine.core.fast import copy_row, set_bit


class _Knapsack:                                   # instance data and checks, both tiers
    name = "knapsack"
    mode = "optimise"

    def __init__(self, weights, values, capacity):
        order = sorted(range(len(weights)), key=lambda j: -values[j] / weights[j])
        self.order = np.array(order, dtype=np.int64)
        self.w = np.array([weights[j] for j in order], dtype=np.int64)
        self.v = np.array([values[j] for j in order], dtype=np.int64)
        self.capacity = np.array([capacity], dtype=np.int64)
        self.items = (list(weights), list(values), int(capacity))

    def verify(self, chosen, value):                # from the original item lists only
        weights, values, capacity = self.items
        if len(set(chosen)) != len(chosen) or sum(weights[j] for j in chosen) > capacity \
                or sum(values[j] for j in chosen) != value:
            raise SolutionError(f"items {chosen} do not make a packing of value {value}")
        return True


def fractional_bound(i, weight, value, w, v, capacity):
    """Dantzig's bound; plain Python, used by both tiers (the fast tier's driver compiles it)."""
    room = capacity - weight
    while i < len(w) and w[i] <= room:
        room -= w[i]
        value += v[i]
        i += 1
    return value if i == len(w) else value + (v[i] * room) // w[i]


class Knapsack(_Knapsack, PythonProblem):           # the reference tier
    def root(self):
        return (0, 0, 0, ())                        # next item, weight, value, items taken

    def children(self, node):
        i, weight, value, taken = node
        if i == len(self.w):
            return []
        kids = [(i + 1, weight, value, taken)]      # leave item i ...
        if weight + self.w[i] <= self.capacity[0]:  # ... or take it (explored first)
            kids.append((i + 1, weight + self.w[i], value + self.v[i], taken + (i,)))
        return kids

    def objective(self, node):
        return node[2]

    def bound(self, node):
        return fractional_bound(node[0], node[1], node[2], self.w, self.v, self.capacity[0])

    def decode_node(self, node):
        return sorted(int(self.order[i]) for i in node[3])


ROW = RowLayout("i", "weight", "value", taken=Bits("n"))   # the fast tier


def expand(row, out, data):
    w, v, capacity = data[0], data[1], data[2][0]
    i = row[ROW.i]
    if i == len(w):
        return 0
    copy_row(out[0], row)
    out[0, ROW.i] = i + 1
    if row[ROW.weight] + w[i] > capacity:
        return 1
    copy_row(out[1], out[0])
    out[1, ROW.weight] += w[i]
    out[1, ROW.value] += v[i]
    set_bit(out[1], ROW.taken, i)
    return 2


def objective(row, data):
    return row[ROW.value]


def bound(row, data):                               # the same bound as the reference tier's:
    return fractional_bound(row[ROW.i], row[ROW.weight], row[ROW.value],   # a plain helper,
                            data[0], data[1], data[2][0])        # compiled into the driver


class FastKnapsack(_Knapsack, FastProblem):
    layout, expand, objective, bound = ROW, expand, objective, bound
    max_children = 2

    def __init__(self, weights, values, capacity):
        super().__init__(weights, values, capacity)
        self.row_width = ROW.width(n=len(weights))

    def root(self):
        return ROW.encode(self.row_width)

    def data(self):
        return (self.w, self.v, self.capacity)

    def decode_row(self, row):
        return sorted(int(self.order[i]) for i in ROW.decode(row)["taken"])


def random_instance(n, seed=0):
    rng = np.random.default_rng(seed)
    weights = rng.integers(10, 100, n).tolist()
    values = [w + int(x) for w, x in zip(weights, rng.integers(0, 20, n))]  # correlated: hard
    return weights, values, sum(weights) // 2


if __name__ == "__main__":                          # LocalCluster spawns: keep this guard
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    backend = sys.argv[2] if len(sys.argv) > 2 else "sequential"
    for tier in (Knapsack, FastKnapsack):
        r = solve(tier(*random_instance(n)), backend=backend)
        print(f"{tier.__name__}({n} items) on {r.backend}: value {r.objective} "
              f"(verified: {r.verified}), items {r.solution}, {r.nodes:,} nodes")
