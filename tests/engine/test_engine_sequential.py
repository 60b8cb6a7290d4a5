"""The sequential backend in all three modes, limits and the result object."""
import json

import numpy as np
import pytest

from stealsearch.engine import InputError, StealPolicy, solve
from stealsearch.problems.uts import UTSParams, UTSProblem
from forced import ENDLESS
from examples.subset_sum import SubsetSum, dp_oracle


def instance(seed, n=18):
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 60, size=n)
    return w, int(w.sum() * rng.uniform(0.2, 0.6))


@pytest.mark.parametrize("seed", range(6))
def test_three_modes_against_dynamic_programming(seed):
    w, cap = instance(seed)
    nodes, count, best = dp_oracle(w, cap)
    r = solve(SubsetSum(w, cap), backend="sequential")
    assert (r.nodes, r.count, r.status) == (nodes, count, "exhausted")
    r = solve(SubsetSum(w, cap, "optimise"), backend="sequential")
    assert (r.objective, r.status, r.verified) == (best, "optimal", True)
    assert r.incumbent_history[-1][1] == best
    r = solve(SubsetSum(w, cap, "decide", target=best), backend="sequential")
    assert r.status == "found" and r.objective >= best
    r = solve(SubsetSum(w, cap, "decide", target=best + 1), backend="sequential")
    assert r.status == "none" and r.objective is None


def test_node_limit_is_exact_on_sequential_and_figures_consistent():
    r = solve(UTSProblem.preset("T3"), backend="sequential", node_limit=123_457)
    assert r.status == "interrupted" and r.stop_reason == "node_limit"
    assert r.nodes == r.count == 123_457
    assert r.workers[0].rows_left > 0


def _open_rows_after(params, n):
    """Rows left on a depth-first stack after expanding ``n`` nodes of a UTS tree, by
    hashlib (independent of the numba kernel; same order: the last child on top)."""
    import hashlib
    import struct

    from stealsearch.problems.uts.reference import _num_children

    stack = [(0, hashlib.sha1(bytes(16) + struct.pack(">I", params.root_seed)).digest())]
    for _ in range(n):
        height, state = stack.pop()
        for i in range(_num_children(params, height, state)):
            stack.append((height + 1, hashlib.sha1(state + struct.pack(">I", i)).digest()))
    return len(stack)


@pytest.mark.parametrize("limit", [1, 700, 1731])
def test_node_limit_leaves_exactly_the_open_rows_of_the_walk(limit):
    p = UTSProblem.preset("default")
    r = solve(p, backend="sequential", node_limit=limit)
    assert r.stop_reason == "node_limit" and r.nodes == limit
    assert r.workers[0].rows_left == _open_rows_after(p.params, limit)


def test_time_limit_interrupts():
    # a tree no machine finishes within the limit (tests/engine/forced.py)
    r = solve(UTSProblem(UTSParams.parse(ENDLESS)), backend="sequential", time_limit=0.3,
              policy=StealPolicy(budget=5000))
    assert r.status == "interrupted" and r.stop_reason == "time_limit"
    assert r.count == r.nodes > 0


def test_interrupted_optimisation_keeps_incumbent_and_proves_a_bound():
    w, cap = instance(3, n=30)
    w, cap = 2 * w, (2 * cap) | 1                 # unreachable capacity: no early exit
    _, _, best = dp_oracle(w, cap)
    r = solve(SubsetSum(w, cap, "optimise"), backend="sequential", node_limit=40,
              policy=StealPolicy(budget=7))
    assert r.status == "interrupted"
    assert r.objective is not None and r.objective <= best <= r.bound


def test_result_prints_and_serialises():
    r = solve(UTSProblem.preset("default"), backend="sequential")
    text = str(r)
    assert "1,732" in text and "exhausted" in text
    d = json.loads(r.to_json())
    assert d["count"] == 1732 and d["conservation"]["holds"]
    assert d["workers"][0]["nodes"] == 1732


def test_bad_solve_arguments():
    p = UTSProblem.preset("default")
    with pytest.raises(InputError):
        solve(p, backend="mpi")
    with pytest.raises(InputError):
        solve(p, backend="sequential", time_limit=-1)
    with pytest.raises(ValueError):
        StealPolicy(k=0)
    with pytest.raises(ValueError):
        StealPolicy(victims="nearest")
