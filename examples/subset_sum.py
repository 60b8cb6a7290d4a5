"""Subset sum in all three tiers: the largest subset sum <= C (optimise), a subset with
sum >= target (decide), the subsets with sum <= C (enumerate: the leaves).

    python examples/subset_sum.py           # 20 random weights, every tier, every mode

The raw tier (``subset_sum_kernel``) is the engine's own chunk-driver signature, written
by hand (counters, GROW, budget, IMPROVED); the fast tier is the same search as three
per-node functions, and the engine generates the driver; the reference tier is the
same search in Python.  Row: ``[i, sum, mask]`` - items < i are decided, ``mask`` says
which are taken.  ``dp_oracle`` counts the same tree by dynamic programming.
"""
import sys

import numpy as np
from numba import njit

from stealsearch import FastProblem, InvalidProblem, PythonProblem, RowLayout, solve
from stealsearch.engine.core.problem import (BUDGET, EMPTY, ENUMERATE, GROW, IMPROVED, NODES, SOLUTIONS,
                            Mode, Problem, SolutionError)


class _SubsetSum:                                  # instance data and checks, every tier
    name = "subset-sum"

    def __init__(self, weights, capacity, mode="enumerate", target=None):
        self.weights = np.asarray(weights, dtype=np.int64)
        if len(self.weights) > 62 or (self.weights < 0).any():
            raise InvalidProblem("subset sum here takes at most 62 weights, all >= 0")
        self.capacity = int(capacity)
        self.mode = Mode.parse(mode)
        self.target = target
        self.suffix = np.concatenate([np.cumsum(self.weights[::-1])[::-1], [0]]).astype(np.int64)

    def initial_incumbent(self):
        if self.mode is Mode.DECIDE:
            return self.target - 1
        return -1                          # the empty subset (sum 0) is an improvement

    def items(self, mask):
        return [i for i in range(len(self.weights)) if (int(mask) >> i) & 1]

    def verify(self, items, value):        # from the weights only
        total = sum(int(self.weights[i]) for i in items)
        if len(set(items)) != len(items) or total > self.capacity or total != value:
            raise SolutionError(f"subset {items} has sum {total}, claimed {value}")
        return True

# -- the raw tier: a hand-written chunk driver ------------------------------------
@njit(nogil=True, cache=True)
def subset_sum_kernel(stack, top, budget, mode, incumbent, counters, solution, weights,
                      suffix, capacity):
    n = weights.shape[0]
    cap = capacity[0]
    done = 0
    leaves = 0
    while done < budget:
        if top == 0:
            counters[NODES] += done
            counters[SOLUTIONS] += leaves
            return top, EMPTY, 0
        if top + 2 > stack.shape[0]:
            counters[NODES] += done
            counters[SOLUTIONS] += leaves
            return top, GROW, 0
        top -= 1
        i = stack[top, 0]
        s = stack[top, 1]
        mask = stack[top, 2]
        done += 1
        if mode != ENUMERATE and min(cap, s + suffix[i]) <= incumbent:
            continue                      # bound: even taking everything left is no better
        if i == n:
            leaves += 1
        else:
            stack[top, 0] = i + 1          # exclude item i
            stack[top, 1] = s
            stack[top, 2] = mask
            top += 1
            if s + weights[i] <= cap:      # include item i (explored first)
                stack[top, 0] = i + 1
                stack[top, 1] = s + weights[i]
                stack[top, 2] = mask | (1 << i)
                top += 1
        if mode != ENUMERATE and s > incumbent:
            solution[0] = mask
            counters[NODES] += done
            counters[SOLUTIONS] += leaves
            return top, IMPROVED, s
    counters[NODES] += done
    counters[SOLUTIONS] += leaves
    return top, (BUDGET if top > 0 else EMPTY), 0


class SubsetSum(_SubsetSum, Problem):
    kernel = staticmethod(subset_sum_kernel)
    row_width = 3
    max_children = 2
    solution_size = 1

    def root_frontier(self):
        return np.zeros((1, 3), dtype=np.int64)

    def kernel_data(self):
        return (self.weights, self.suffix, np.array([self.capacity], dtype=np.int64))

    def row_bounds(self, rows):
        return np.minimum(self.capacity, rows[:, 1] + self.suffix[rows[:, 0]])

    def decode(self, buf, value):
        return self.items(buf[0])


# -- the fast tier: per-node functions, the engine generates the driver --------------
ROW = RowLayout("i", "sum", "mask")


def expand(row, out, data):
    weights, capacity = data[0], data[2][0]
    i, s = row[ROW.i], row[ROW.sum]
    if i == len(weights):
        return 0
    out[0, ROW.i], out[0, ROW.sum], out[0, ROW.mask] = i + 1, s, row[ROW.mask]
    if s + weights[i] > capacity:
        return 1
    out[1, ROW.i], out[1, ROW.sum] = i + 1, s + weights[i]
    out[1, ROW.mask] = row[ROW.mask] | (np.int64(1) << i)      # taking item i: explored first
    return 2


def bound(row, data):
    return min(data[2][0], row[ROW.sum] + data[1][row[ROW.i]])


def objective(row, data):
    return row[ROW.sum]


def is_solution(row, data):
    return row[ROW.i] == len(data[0])


class FastSubsetSum(_SubsetSum, FastProblem):
    layout, expand, bound, objective, is_solution = ROW, expand, bound, objective, is_solution
    max_children = 2

    def root(self):
        return ROW.encode()

    def data(self):
        return (self.weights, self.suffix, np.array([self.capacity], dtype=np.int64))

    def decode_row(self, row):
        return self.items(row[ROW.mask])


# -- the reference tier: plain Python ------------------------------------------------
class PySubsetSum(_SubsetSum, PythonProblem):
    def root(self):
        return (0, 0, 0)                            # i, sum, mask

    def children(self, node):
        i, s, mask = node
        if i == len(self.weights):
            return []
        w = int(self.weights[i])
        return [(i + 1, s, mask)] + ([(i + 1, s + w, mask | 1 << i)] if s + w <= self.capacity else [])

    def bound(self, node):
        return min(self.capacity, node[1] + int(self.suffix[node[0]]))

    def objective(self, node):
        return node[1]

    def is_solution(self, node):
        return node[0] == len(self.weights)

    def decode_node(self, node):
        return self.items(node[2])

def dp_oracle(weights, capacity):
    """(tree nodes, subsets with sum <= C, best sum) by dynamic programming."""
    ways = np.zeros(capacity + 1, dtype=object)
    ways[0] = 1
    nodes = 1                               # the root: empty prefix
    for w in weights:
        new = ways.copy()
        if w <= capacity:
            new[w:] = new[w:] + ways[:capacity + 1 - w]
        ways = new
        nodes += int(sum(ways))
    best = max(s for s in range(capacity + 1) if ways[s])
    return nodes, int(sum(ways)), best


TIERS = (PySubsetSum, FastSubsetSum, SubsetSum)

if __name__ == "__main__":                          # LocalCluster spawns: keep this guard
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    backend = sys.argv[2] if len(sys.argv) > 2 else "sequential"
    rng = np.random.default_rng(1)
    weights = rng.integers(1, 1000, n).tolist()
    capacity = sum(weights) // 3
    nodes, leaves, best = dp_oracle(weights, capacity)
    print(f"{n} weights, C = {capacity}: dynamic programming says {nodes:,} nodes, "
          f"{leaves:,} subsets, best sum {best}")
    for tier in TIERS:
        e = solve(tier(weights, capacity), backend=backend)
        o = solve(tier(weights, capacity, mode="optimise"), backend=backend)
        d = solve(tier(weights, capacity, mode="decide", target=best), backend=backend)
        print(f"{tier.__name__:>14}: {e.count:,} subsets in {e.nodes:,} nodes; best {o.objective}"
              f" {o.solution} ({o.status}); decide {best}: {d.status}")
