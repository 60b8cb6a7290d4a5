"""The problem contract: the generated fast-tier driver (exact counts, GROW, limits,
decide stops, optimise equal to the reference tier), its on-disk cache across
processes, and one clear error for what is not a problem."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from stealsearch.engine import (ContractError, InputError, Problem, PythonProblem, RowLayout, StealPolicy,
                    FastProblem, solve)
from stealsearch.engine.core.problem import BUDGET, EMPTY, GROW, IMPROVED, OPTIMISE, ENUMERATE
from examples import knapsack, subset_sum

ROOT = Path(__file__).resolve().parents[2]


def _instance(n, seed):
    rng = np.random.default_rng(seed)
    weights = rng.integers(1, 60, n).tolist()
    return weights, int(sum(weights) * rng.uniform(0.2, 0.6))


# -- the generated driver, called directly ---------------------------------------------
def _driver_args(problem, capacity):
    stack = np.zeros((capacity, problem.row_width), dtype=np.int64)
    root = problem.root_frontier()
    stack[:len(root)] = root
    counters = np.zeros(problem.n_counters(), dtype=np.int64)
    solution = np.zeros(problem.solution_size, dtype=np.int64)
    return stack, len(root), counters, solution


def test_driver_counts_budget_grow_and_empty_exactly():
    weights, capacity = _instance(10, 0)
    p = subset_sum.FastSubsetSum(weights, capacity)
    nodes, leaves, _ = subset_sum.dp_oracle(weights, capacity)
    stack, top, counters, solution = _driver_args(p, 2)         # no room for 2 children
    top, status, _ = p.kernel(stack, top, 10, ENUMERATE, 0, counters, solution, *p.kernel_data())
    assert (status, top, counters[0]) == (GROW, 1, 0)            # returned before popping
    stack, top, counters, solution = _driver_args(p, 64)
    calls = 0
    while top:
        top, status, _ = p.kernel(stack, top, 7, ENUMERATE, 0, counters, solution, *p.kernel_data())
        calls += 1
        assert status == (BUDGET if top else EMPTY)
    assert (counters[0], counters[1]) == (nodes, leaves)         # every node counted once
    assert calls == -(-nodes // 7)                                # and at most 7 per call


def test_driver_improved_leaves_the_stack_resumable():
    weights, capacity = _instance(12, 1)
    p = subset_sum.FastSubsetSum(weights, capacity, mode="optimise")
    stack, top, counters, solution = _driver_args(p, 64)
    incumbent, improvements = -1, 0
    while top:
        top, status, value = p.kernel(stack, top, 10**6, OPTIMISE, incumbent, counters, solution,
                                      *p.kernel_data())
        if status == IMPROVED:
            assert value > incumbent and solution[1] == value    # the row is the solution
            incumbent, improvements = value, improvements + 1
    assert incumbent == subset_sum.dp_oracle(weights, capacity)[2] and improvements >= 2


@pytest.mark.parametrize("seed", range(6))
def test_fast_tier_equals_reference_tier_on_random_instances(seed):
    weights, capacity = _instance(13, seed)
    nodes, leaves, best = subset_sum.dp_oracle(weights, capacity)
    for mode, target in (("optimise", None), ("decide", best), ("decide", best + 1)):
        r = solve(subset_sum.PySubsetSum(weights, capacity, mode, target), backend="sequential")
        f = solve(subset_sum.FastSubsetSum(weights, capacity, mode, target), backend="sequential")
        assert (f.status, f.objective, f.nodes) == (r.status, r.objective, r.nodes)
    assert f.status == "none" and r.objective is None


def test_decide_stops_at_the_first_solution():
    weights, capacity = _instance(16, 3)
    nodes, _, best = subset_sum.dp_oracle(weights, capacity)
    for tier in (subset_sum.PySubsetSum, subset_sum.FastSubsetSum):
        r = solve(tier(weights, capacity, "decide", 1), backend="sequential")
        assert r.status == "found" and r.nodes < nodes and sum(weights[i] for i in r.solution) >= 1


@pytest.mark.parametrize("tier", [subset_sum.PySubsetSum, subset_sum.FastSubsetSum])
def test_node_limit_interrupts_with_a_proven_bound(tier):
    weights, capacity = _instance(16, 4)
    _, _, best = subset_sum.dp_oracle(weights, capacity)
    r = solve(tier(weights, capacity, "optimise"), backend="sequential", node_limit=5,
              policy=StealPolicy(budget=2, chunk_seconds=None))
    assert r.status == "interrupted" and r.nodes == 5
    assert r.objective <= best <= r.bound
    e = solve(tier(weights, capacity), backend="sequential", node_limit=40)
    assert e.status == "interrupted" and e.nodes == 40


# -- the driver's cache holds across processes ----------------------------------------
_PROBE = """
import numpy as np
from examples.queens import FastQueens
p = FastQueens(6)
k = p.kernel
k(np.zeros((64, 4), dtype=np.int64), 0, 0, 2, 0, np.zeros(2, dtype=np.int64),
  np.zeros(4, dtype=np.int64), *p.kernel_data())
print(sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()))
"""


def _probe(dask_worker=None):
    import numpy as np
    from examples.queens import FastQueens
    p = FastQueens(6)
    k = p.kernel
    k(np.zeros((64, 4), dtype=np.int64), 0, 0, 2, 0, np.zeros(2, dtype=np.int64),
      np.zeros(4, dtype=np.int64), *p.kernel_data())
    return sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values())


def test_generated_driver_loads_from_the_disk_cache(cluster4):
    solve(queens_problem(), backend="sequential")              # compiled (or loaded) here
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "0"]                     # a fresh process: a hit, no compile
    for hits, misses in cluster4.run(_probe).values():         # every Dask worker too
        assert (misses, hits) == (0, 1)                         # loaded from disk, not compiled


def queens_problem():
    from examples.queens import FastQueens
    return FastQueens(6)


# -- what is not a problem: one clear error --------------------------------------------
@njit(cache=True)
def _five_args(stack, top, budget, mode, incumbent):
    return top, 1, 0


class _WrongKernel(Problem):
    kernel = staticmethod(_five_args)

    def root_frontier(self):
        return np.zeros((1, 1), dtype=np.int64)


class _NoChildren(PythonProblem):
    def root(self):
        return 0


@pytest.mark.parametrize("make, words", [
    (lambda: solve("hello"), "needs an engine.Problem"),
    (lambda: solve(knapsack.Knapsack([1], [1], 1), policy="fast"), "policy must be an engine.StealPolicy"),
    (lambda: solve(_WrongKernel(), backend="sequential"), "kernel takes 5 arguments"),
    (lambda: solve(_NoChildren(), backend="sequential"), "must define children()"),
    (lambda: solve(subset_sum.FastSubsetSum([1], 1, "decide"), backend="sequential"), "needs a target"),
    (lambda: RowLayout("a", b=Bits_n(), c=1), "must be the last field"),
])
def test_not_a_problem_is_one_clear_error(make, words):
    with pytest.raises(ContractError) as info:
        make()
    assert words in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, InputError)                  # the CLI: one line, exit 2


def Bits_n():
    from stealsearch.engine import Bits
    return Bits("n")


def test_fast_tier_functions_must_be_module_level():
    class Local(FastProblem):
        layout = RowLayout("x")

        def expand(row, out, data):                             # a method: not importable
            return 0

        def root(self):
            return np.zeros(1, dtype=np.int64)

    with pytest.raises(ContractError, match="module level"):
        solve(Local(), backend="sequential")


# -- a per-node function that allocates still runs, with a warning -----------------------
ALLOC_ROW = RowLayout("depth")


def alloc_expand(row, out, data):
    if row[ALLOC_ROW.depth] == 3:
        return 0
    out[0, :] = row                      # a slice assignment: numba needs its allocator
    out[0, ALLOC_ROW.depth] += 1
    out[1, :] = out[0, :]
    return 2


def alloc_is_leaf(row, data):
    return row[ALLOC_ROW.depth] == 3


class AllocatingChain(FastProblem):
    layout, expand, is_solution = ALLOC_ROW, alloc_expand, alloc_is_leaf
    max_children = 2

    def root(self):
        return ALLOC_ROW.encode()


def test_allocating_expand_warns_and_stays_exact():
    with pytest.warns(RuntimeWarning, match="allocates"):
        r = solve(AllocatingChain(), backend="sequential")
    assert r.nodes == 1 + 2 + 4 + 8 and r.count == 8


def test_pickle_codec_round_trips_batches(tmp_path):
    from stealsearch.engine.core.reference import PickleCodec, object_batch
    codec = PickleCodec()
    batch = codec.concat([object_batch([(0, 1), "x"]), object_batch([frozenset({2})])])
    assert list(codec.decode(codec.encode(batch))) == [(0, 1), "x", frozenset({2})]
    codec.write(tmp_path / "b.pickle", batch[1:])
    assert list(codec.read(tmp_path / "b.pickle")) == ["x", frozenset({2})]
    assert len(codec.concat([])) == 0 and len(codec.empty()) == 0
