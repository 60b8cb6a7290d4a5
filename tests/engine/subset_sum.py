"""A small test-only plug-in: subset sum / 0-1 knapsack without values.

It exercises the three modes of the engine with oracles computed independently
by dynamic programming in the tests:

* enumerate: count the subsets of the items with sum <= C (leaves of the tree);
* optimise:  the largest subset sum <= C;
* decide:    a subset with sum exactly ``target``... expressed as "sum >= target"
             because sums never exceed C and the tests set target <= C.

Row: ``[i, sum, mask]`` - items < i are decided, ``mask`` says which are taken.
"""
import numpy as np
from numba import njit

from engine.problem import (BUDGET, EMPTY, ENUMERATE, GROW, IMPROVED, NODES, SOLUTIONS,
                            Mode, Problem, SolutionError)


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


class SubsetSum(Problem):
    name = "subset-sum"
    kernel = staticmethod(subset_sum_kernel)
    row_width = 3
    max_children = 2
    solution_size = 1

    def __init__(self, weights, capacity, mode="enumerate", target=None):
        self.weights = np.asarray(weights, dtype=np.int64)
        assert len(self.weights) <= 62
        self.capacity = int(capacity)
        self.mode = Mode.parse(mode)
        self.target = target
        self.suffix = np.concatenate([np.cumsum(self.weights[::-1])[::-1], [0]]).astype(np.int64)

    def root_frontier(self):
        return np.zeros((1, 3), dtype=np.int64)

    def kernel_data(self):
        return (self.weights, self.suffix, np.array([self.capacity], dtype=np.int64))

    def initial_incumbent(self):
        if self.mode is Mode.DECIDE:
            return self.target - 1
        return -1                          # the empty subset (sum 0) is an improvement

    def row_bounds(self, rows):
        return np.minimum(self.capacity, rows[:, 1] + self.suffix[rows[:, 0]])

    def decode(self, buf, value):
        return [i for i in range(len(self.weights)) if (int(buf[0]) >> i) & 1]

    def verify(self, items, value):
        total = sum(int(self.weights[i]) for i in items)
        if len(set(items)) != len(items) or total > self.capacity or total != value:
            raise SolutionError(f"subset {items} has sum {total}, claimed {value}")
        return True


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
