"""The engine's own guards through the public API only (``stealsearch.engine.solve``):

* the verify guard: a decode that returns a wrong solution must end in SolutionError on
  every backend, never pass as an answer;
* optimise mode under random StealPolicy settings (incumbent broadcast, steals) against
  a DP oracle (subset sum) and networkx (maximum clique);
* interrupted optimisation on Dask: objective <= true optimum <= proven bound.
"""
import random

import networkx as nx
import pytest

from stealsearch.engine import SolutionError, StealPolicy, solve
from examples.knapsack import FastKnapsack
from examples.subset_sum import SubsetSum, dp_oracle
from mutants import DroppedStepColouring, SplitStepColouring, WrongDecodeSubsetSum
from stealsearch.problems.clique.problem import CliqueProblem
from stealsearch.problems.liquid import fig1_traffic

WEIGHTS = [31, 17, 29, 11, 23, 41, 7, 37, 19, 13, 43, 5, 47, 3, 53, 2]
CAP = 200


# -- 1. the verify guard -----------------------------------------------------------
def _backend(name, cluster4):
    return dict(backend="sequential") if name == "sequential" else dict(
        backend="dask", client=cluster4, workers=2)


@pytest.mark.parametrize("backend", ["sequential", "dask"])
def test_wrong_subset_from_decode_raises_solution_error(backend, cluster4):
    with pytest.raises(SolutionError, match=r"has sum \d+, claimed 200"):
        solve(WrongDecodeSubsetSum(WEIGHTS, CAP, mode="optimise"), **_backend(backend, cluster4))


def test_honest_subset_sum_passes_the_same_guard():
    # the control: the unmutated problem verifies (so the test above fails for the mutation)
    r = solve(SubsetSum(WEIGHTS, CAP, mode="optimise"), backend="sequential")
    assert r.verified and r.objective == dp_oracle(WEIGHTS, CAP)[2] == 200


@pytest.mark.parametrize("backend", ["sequential", "dask"])
def test_liquid_step_count_mismatch_raises(backend, cluster4):
    # fig1: 25 transfers, optimum 6 steps; decode returns a valid 7-step schedule
    with pytest.raises(SolutionError, match=r"^schedule has 7 steps, objective says -6$"):
        solve(SplitStepColouring(fig1_traffic()), **_backend(backend, cluster4))


def test_liquid_dropped_step_raises():
    with pytest.raises(SolutionError, match=r"^transfer \d+ is in no step \(\d+ missing\)$"):
        solve(DroppedStepColouring(fig1_traffic()), backend="sequential")


# -- 2. optimise mode under random policies ----------------------------------------
def _random_policy(seed):
    rng = random.Random(seed)
    return StealPolicy(k=rng.choice([1, 2, 3, 8, 32]),
                       release_threshold=rng.choice([1, 4, 16, 64]),
                       acquire=rng.choice([1, 8, 64]),
                       victims=rng.choice(["ring", "random", "permutation", "richest"]),
                       steal_half=rng.random() < 0.5,
                       polling=rng.choice([0, 1, 2]),
                       budget=rng.choice([7, 50, 500, 2000]),
                       chunk_seconds=rng.choice([None, 0.001, 0.005]),
                       stealing=rng.random() < 0.8,
                       seed=seed)


def _subset_instance(seed):
    rng = random.Random(1000 + seed)
    weights = [2 * rng.randint(50, 500) for _ in range(24)]   # all even
    capacity = sum(weights) // 3 | 1                          # odd: the bound never hits C
    return weights, capacity


def _gnp(seed):
    return nx.gnp_random_graph(100, 0.6, seed=seed)


@pytest.mark.parametrize("seed", range(8))
def test_random_policy_optimise_matches_oracles(seed, cluster4):
    policy = _random_policy(seed)
    workers = 2 + seed % 3
    weights, capacity = _subset_instance(seed)
    best = dp_oracle(weights, capacity)[2]
    r = solve(SubsetSum(weights, capacity, mode="optimise"), backend="dask", client=cluster4,
              workers=workers, policy=policy)
    assert (r.status, r.objective, r.verified) == ("optimal", best, True), policy
    assert sum(weights[i] for i in r.solution) == best
    assert [v for _, v in r.incumbent_history][-1] == best

    g = _gnp(seed)
    omega = max(len(c) for c in nx.find_cliques(g))
    # no initial heuristic: the incumbent grows during the search and is broadcast
    r = solve(CliqueProblem(g, heuristic="none"), backend="dask", client=cluster4, workers=workers,
              policy=policy)
    assert (r.status, r.objective) == ("optimal", omega), policy
    assert len(r.solution) == omega
    sub = g.subgraph(r.solution)
    assert sub.number_of_edges() == omega * (omega - 1) // 2


# -- 3. interrupted optimisation on Dask: objective <= optimum <= proven bound -------
def _knapsack(seed=7, n=50):
    rng = random.Random(seed)
    weights = [rng.randint(100, 999) for _ in range(n)]
    values = [w + 100 for w in weights]        # strongly correlated: ~400k nodes even from the optimum - 1
    return weights, values, sum(weights) // 2


def _knapsack_dp(weights, values, capacity):
    best = [0] * (capacity + 1)
    for w, v in zip(weights, values):
        for c in range(capacity, w - 1, -1):
            best[c] = max(best[c], best[c - w] + v)
    return best[capacity]


@pytest.mark.parametrize("backend,limit", [("sequential", 1000), ("dask", 200), ("dask", 1000)])
def test_interrupted_knapsack_brackets_the_optimum(backend, limit, request):
    """objective <= optimum <= bound, with a limit that stops the search before the
    optimum is found (sequentially it takes ~20k nodes): the objective is checked to be
    suboptimal, so a bound that merely repeats the objective fails here."""
    weights, values, capacity = _knapsack()
    opt = _knapsack_dp(weights, values, capacity)
    where = dict(backend="sequential") if backend == "sequential" else \
        dict(backend="dask", client=request.getfixturevalue("cluster4"), workers=3)
    r = solve(FastKnapsack(weights, values, capacity), node_limit=limit, **where)
    assert r.status == "interrupted" and r.stop_reason == "node_limit"
    assert r.objective is not None and r.bound is not None
    assert r.objective < opt, "the limit must stop the search before the optimum"
    assert opt <= r.bound
    assert r.verified and sum(values[j] for j in r.solution) == r.objective
    assert sum(weights[j] for j in r.solution) <= capacity
    assert r.nodes >= limit


# What this guards: ranks 1-2 use their node-limit grant (500 // 3 = 166 nodes) in
# milliseconds and must wait for more while rank 0 (which alone grants or stops) has not
# answered yet or has already ended its epoch.  The wait keeps the epoch's cut and time
# checks (the supervisor thread of engine/core/worker.py ends the epoch at its cut), and a
# worker has at most one grant request in flight.  See also test_engine_lanes.py.  The
# oracle is nx.max_weight_clique (once per module): listing the maximal cliques of this
# graph would take minutes.
@pytest.fixture(scope="module")
def g300():
    g = nx.gnp_random_graph(300, 0.5, seed=11)      # ~20k nodes sequentially (colour bound)
    return g, nx.max_weight_clique(g, weight=None)[1]


@pytest.mark.parametrize("limit", [dict(node_limit=500), dict(node_limit=5000)])
def test_interrupted_clique_on_dask_brackets_omega(limit, cluster4, g300):
    g, omega = g300
    r = solve(CliqueProblem(g, heuristic="none"), backend="dask", client=cluster4,
              workers=3, **limit)
    assert r.status == "interrupted"
    assert r.objective <= omega <= r.bound
    assert len(r.solution) == r.objective
