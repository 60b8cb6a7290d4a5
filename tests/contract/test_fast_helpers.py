"""Fast-tier helper functions: a plain module-level function that a per-node
function calls needs no decorator (the generated driver compiles it with its caller, at
any depth), and one that numba cannot compile is one ContractError line naming it."""
import numpy as np
import pytest

import stealsearch
from stealsearch.engine import ContractError, FastProblem, PythonProblem, RowLayout, check_problem, solve
from stealsearch.engine.core.fast import copy_row

ROW = RowLayout("i", "weight", "value")


# -- a 0/1 knapsack whose bound is two undecorated helpers deep, both tiers share it ------
def _fill(i, room, value, w, v):              # helper of a helper: plain Python
    while i < len(w) and w[i] <= room:
        room -= w[i]
        value += v[i]
        i += 1
    return i, room, value


def dantzig(i, weight, value, w, v, capacity):
    i, room, value = _fill(i, capacity - weight, value, w, v)
    return value if i == len(w) else value + (v[i] * room) // w[i]


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
    return 2


def bound(row, data):
    return dantzig(row[ROW.i], row[ROW.weight], row[ROW.value], data[0], data[1], data[2][0])


def objective(row, data):
    return row[ROW.value]


class _Knap:
    name = "knapsack-helpers"
    mode = "optimise"

    def __init__(self, weights, values, capacity):
        order = sorted(range(len(weights)), key=lambda j: -values[j] / weights[j])
        self.w = np.array([weights[j] for j in order], dtype=np.int64)
        self.v = np.array([values[j] for j in order], dtype=np.int64)
        self.capacity = np.array([capacity], dtype=np.int64)

    def verify(self, solution, value):
        return True


class FastKnap(_Knap, FastProblem):
    layout, expand, bound, objective = ROW, expand, bound, objective
    max_children = 2

    def root(self):
        return ROW.encode()

    def data(self):
        return (self.w, self.v, self.capacity)


class RefKnap(_Knap, PythonProblem):
    def root(self):
        return (0, 0, 0)

    def children(self, node):
        i, weight, value = node
        if i == len(self.w):
            return []
        kids = [(i + 1, weight, value)]
        if weight + self.w[i] <= self.capacity[0]:
            kids.append((i + 1, weight + int(self.w[i]), value + int(self.v[i])))
        return kids

    def objective(self, node):
        return node[2]

    def bound(self, node):
        return dantzig(node[0], node[1], node[2], self.w, self.v, int(self.capacity[0]))


def _instance(n, seed):
    rng = np.random.default_rng(seed)
    weights = rng.integers(10, 100, n).tolist()
    values = [w + int(x) for w, x in zip(weights, rng.integers(0, 20, n))]
    return weights, values, sum(weights) // 2


@pytest.mark.parametrize("seed", range(4))
def test_undecorated_helpers_compile_into_the_driver(seed):
    inst = _instance(16, seed)
    fast, ref = solve(FastKnap(*inst), backend="sequential"), solve(RefKnap(*inst), backend="sequential")
    assert fast.status == ref.status == "optimal"
    # the same bound in both tiers: the same tree, node for node
    assert (fast.objective, fast.nodes) == (ref.objective, ref.nodes)


# -- a helper numba cannot compile: one line that names it --------------------------------
def opaque(i):
    return len(str(object())) + i            # a Python object: not numba's subset


def bad_bound(row, data):
    return opaque(row[ROW.i]) + row[ROW.value]


class BadHelper(FastKnap):
    expand, bound = expand, bad_bound


def test_a_helper_numba_cannot_compile_is_one_contract_error_naming_it():
    with pytest.raises(ContractError) as info:
        check_problem(BadHelper(*_instance(6, 0)))
    text = str(info.value)
    assert "\n" not in text
    assert "opaque" in text and "test_fast_helpers.py" in text and "numba's subset" in text


# -- the raw tier's constants are public names ---------------------------------------------
@pytest.mark.parametrize("name", ["BUDGET", "EMPTY", "GROW", "IMPROVED", "NODES", "SOLUTIONS",
                                  "N_ENGINE_COUNTERS", "OPTIMISE", "DECIDE", "ENUMERATE"])
def test_raw_tier_constants_are_exported(name):
    from stealsearch.engine.core import problem

    assert getattr(stealsearch, name) == getattr(stealsearch.engine, name) == getattr(problem, name)
    assert name in stealsearch.__all__ and name in dir(stealsearch)
