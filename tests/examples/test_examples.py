"""Every example runs (as a script, as the user would) and gives its known answers in
every tier it has, sequentially and on 2 Dask workers (pybnb's test_examples pattern).

Known answers come from outside the searches: N-queens counts (OEIS A000170), dynamic
programming for knapsack and subset sum, the chromatic numbers of the Mycielski graphs.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stealsearch.engine import solve
from examples import colouring, knapsack, queens, subset_sum

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "examples" / "data"


def knapsack_dp(weights, values, capacity):
    best = [0] * (capacity + 1)
    for w, v in zip(weights, values):
        for c in range(capacity, w - 1, -1):
            best[c] = max(best[c], best[c - w] + v)
    return best[capacity]


@pytest.mark.parametrize("args, expect", [
    (["queens.py", "8"], ["Queens(8) on sequential: 92 solutions", "FastQueens(8) on sequential: 92 solutions"]),
    (["knapsack.py", "20"], ["verified: True"]),
    (["colouring.py", str(DATA / "myciel3.col"), "3"], ["Colouring", ": none,"]),
    (["subset_sum.py", "12"], ["PySubsetSum", "FastSubsetSum", "SubsetSum"]),
])
def test_example_runs_as_a_script(args, expect):
    # the repository root importable, as in this process: numba's cache entry of a raw
    # kernel names the module that wrote it (examples.subset_sum when a test imported it
    # first), and a script loading that entry imports the module by that name
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    out = subprocess.run([sys.executable, str(ROOT / "examples" / args[0])] + args[1:],
                         capture_output=True, text=True, timeout=240, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    for text in expect:
        assert text in out.stdout
    if args[0] == "subset_sum.py":           # every tier repeats what the DP says
        lines = out.stdout.splitlines()
        nodes, leaves, best = subset_sum.dp_oracle(*_subset_instance(int(args[1])))
        assert f"{nodes:,} nodes" in lines[0]
        for line in lines[1:]:
            assert f"{leaves:,} subsets in {nodes:,} nodes; best {best}" in line and "found" in line


def _subset_instance(n):
    import numpy as np
    weights = np.random.default_rng(1).integers(1, 1000, n).tolist()
    return weights, sum(weights) // 3


@pytest.mark.parametrize("n", [8, 10])
@pytest.mark.parametrize("tier", [queens.Queens, queens.FastQueens])
def test_queens_counts(tier, n):
    r = solve(tier(n), backend="sequential")
    assert r.count == queens.KNOWN[n]


def test_queens_12_fast_tier():
    assert solve(queens.FastQueens(12), backend="sequential").count == 14_200


@pytest.mark.parametrize("seed", range(3))
def test_knapsack_tiers_agree_with_dp(seed):
    inst = knapsack.random_instance(18, seed)
    ref = solve(knapsack.Knapsack(*inst), backend="sequential")
    fast = solve(knapsack.FastKnapsack(*inst), backend="sequential")
    assert ref.objective == fast.objective == knapsack_dp(*inst)
    assert ref.nodes == fast.nodes and ref.verified and fast.verified


@pytest.mark.parametrize("name, k, status", [("myciel3", 3, "none"), ("myciel3", 4, "found"),
                                             ("myciel4", 4, "none"), ("myciel4", 5, "found")])
def test_colouring_chromatic_numbers(name, k, status):
    graph = colouring.read_dimacs(DATA / f"{name}.col")
    results = [solve(tier(*graph, k), backend="sequential")
               for tier in (colouring.Colouring, colouring.FastColouring)]
    assert [r.status for r in results] == [status, status]
    assert results[0].nodes == results[1].nodes
    if status == "found":
        assert all(r.verified for r in results)


@pytest.mark.parametrize("tier", subset_sum.TIERS)
def test_subset_sum_every_mode(tier):
    weights, capacity = _subset_instance(14)
    nodes, leaves, best = subset_sum.dp_oracle(weights, capacity)
    e = solve(tier(weights, capacity), backend="sequential")
    assert (e.count, e.nodes) == (leaves, nodes)
    assert solve(tier(weights, capacity, mode="optimise"), backend="sequential").objective == best
    assert solve(tier(weights, capacity, mode="decide", target=best), backend="sequential").status == "found"
    assert solve(tier(weights, capacity, mode="decide", target=best + 1), backend="sequential").status == "none"


# -- on 2 Dask workers (the reference tier's nodes travel as pickles) ----------------------
def test_examples_on_two_dask_workers(cluster4):
    on2 = dict(backend="dask", client=cluster4, workers=2)
    for tier in (queens.Queens, queens.FastQueens):
        assert solve(tier(10), **on2).count == 724
    # a limit stops the Python tier's workers too (the coordinator checks every 0.1 s)
    cut = solve(queens.Queens(12), node_limit=20_000, **on2)
    assert cut.status == "interrupted" and 20_000 <= cut.nodes < 856_189 and cut.count < 14_200
    inst = knapsack.random_instance(22, 5)
    best = knapsack_dp(*inst)
    for tier in (knapsack.Knapsack, knapsack.FastKnapsack):
        r = solve(tier(*inst), **on2)
        assert r.objective == best and r.verified
    graph = colouring.read_dimacs(DATA / "myciel4.col")
    for tier in (colouring.Colouring, colouring.FastColouring):
        assert solve(tier(*graph, 4), **on2).status == "none"
        assert solve(tier(*graph, 5), **on2).verified
    weights, capacity = _subset_instance(14)
    nodes, leaves, best = subset_sum.dp_oracle(weights, capacity)
    for tier in subset_sum.TIERS:
        r = solve(tier(weights, capacity), **on2)
        assert (r.count, r.nodes) == (leaves, nodes)
        assert solve(tier(weights, capacity, mode="optimise"), **on2).objective == best
