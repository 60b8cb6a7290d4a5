"""UTS as the engine's exact oracle: published sizes and an independent reference walker."""
import numpy as np
import pytest

from stealsearch.engine import solve
from stealsearch.problems.uts import PRESETS, UTSParams, UTSProblem
from stealsearch.problems.uts.reference import walk


def test_default_tree_matches_published_size():
    r = solve(UTSProblem.preset("default"), backend="sequential")
    assert (r.count, r.counters["depth"], r.counters["leaves"]) == (1732, 6, 1050)
    assert r.status == "exhausted" and r.nodes == r.count


@pytest.mark.parametrize("name", ["T1", "T2", "T3", "T4", "T5"])
def test_published_four_million_node_trees(name):
    r = solve(UTSProblem.preset(name), backend="sequential")
    assert (r.count, r.counters["depth"], r.counters["leaves"]) == PRESETS[name][1]


def random_small_params(seed):
    """Seeded small trees of every type and shape (each well under 10^5 nodes)."""
    rng = np.random.default_rng(seed)
    kind = seed % 4
    r = int(rng.integers(0, 10_000))
    if kind == 0:
        return UTSParams(tree_type=0, b0=float(rng.integers(20, 200)), q=0.2, m=4, root_seed=r)
    if kind == 1:
        return UTSParams(tree_type=1, shape=int(rng.integers(0, 4)), gen_mx=int(rng.integers(3, 7)),
                         b0=float(rng.uniform(2.0, 4.0)), root_seed=r)
    if kind == 2:
        return UTSParams(tree_type=2, shape=0, gen_mx=6, b0=3.0, q=0.2, m=4, root_seed=r)
    return UTSParams(tree_type=3, gen_mx=int(rng.integers(2, 6)), b0=float(rng.integers(2, 6)),
                     root_seed=r)


@pytest.mark.parametrize("seed", range(12))
def test_kernel_agrees_with_hashlib_reference(seed):
    params = random_small_params(seed)
    expected = walk(params, max_nodes=300_000)
    r = solve(UTSProblem(params), backend="sequential")
    assert (r.count, r.counters["depth"], r.counters["leaves"]) == expected


def test_budget_one_node_per_chunk_changes_nothing():
    from stealsearch.engine import StealPolicy
    r = solve(UTSProblem.preset("default"), backend="sequential", policy=StealPolicy(budget=1, chunk_seconds=None))
    assert r.count == 1732 and r.workers[0].chunks == 1732


@pytest.mark.parametrize("bad", ["-t 9", "-d 0", "-b -1", "-q 1.5", "-t 0 -q 0.5 -m 4",
                                 "-x 3", "-t", "-b four"])
def test_bad_parameters_raise_specific_error(bad):
    from stealsearch.problems.uts import UTSParameterError
    with pytest.raises(UTSParameterError):
        UTSParams.parse(bad)
