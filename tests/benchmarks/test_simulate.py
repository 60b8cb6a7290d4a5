"""Invariants of the scaling model (benchmarks/simulate.py) and of its recorded profiles.

Not timing: the simulated clock is checked against its own inputs (zero latency, one
worker: exactly the sequential kernel time) and work against the real trees' counts.
"""
import numpy as np
import pytest

from stealsearch.benchmarks.simulate import Machine, Profile, SimPolicy, Tree, simulate
from stealsearch.problems.uts import PRESETS

T1 = "benchmarks/profiles/T1.npz"


@pytest.fixture(scope="module")
def t1():
    return Profile.load(T1)


def test_profile_counts_are_the_real_trees():
    # the recorded sizes add up to the published UTS counts (an independent figure)
    for case in ("T1", "T3", "T1L"):
        p = Profile.load(f"benchmarks/profiles/{case}.npz")
        assert p.total == PRESETS[case][1][0]
        # every recorded parent is 1 + the sum of its recorded children
        for i, kids in enumerate(p.children):
            if kids:
                assert p.size[i] == 1 + p.size[kids].sum()


def test_one_worker_zero_latency_is_the_sequential_time(t1):
    mc = Machine(rate=4.0e6, latency=0.0, handler_seconds=0.0, chunk_overhead=0.0)
    r = simulate(t1, 1, SimPolicy(), mc, seed=1)
    assert r["nodes"] == 4_130_071
    assert r["search_seconds"] == pytest.approx(4_130_071 / 4.0e6, rel=1e-9)
    assert r["steals"] == 0 and r["efficiency"] == pytest.approx(1.0)


@pytest.mark.parametrize("n,policy", [
    (2, SimPolicy()),
    (5, SimPolicy(victims="random", steal_half=False)),
    (8, SimPolicy(victims="richest", k=3, release_threshold=4, acquire=2)),
    (8, SimPolicy(victims="permutation", polling=2)),
    (3, SimPolicy(stealing=False)),
])
def test_work_is_conserved(t1, n, policy):
    r = simulate(t1, n, policy, Machine(), seed=n)
    assert r["nodes"] == t1.total == 4_130_071
    assert sum(r["per_worker_nodes"]) + r["setup_nodes"] == r["nodes"]
    # no worker can finish before its share of the work is done
    assert r["search_seconds"] >= max(r["per_worker_nodes"]) / Machine().rate
    if not policy.stealing:
        assert r["steals"] == 0


def test_split_templates_conserve_a_row(t1):
    tree = Tree(t1, cutoff=64, rng=np.random.default_rng(0))
    for size in (65, 1_000, 12_345, 10**6):
        kids = tree.expand(size)
        assert sum(kids) == size - 1 and all(k > 0 for k in kids)


def test_hidden_rows_change_releases_not_work(t1):
    plain = simulate(t1, 2, SimPolicy(), Machine(), seed=3)
    hidden = simulate(t1, 2, SimPolicy(), Machine(), seed=3, hidden_per_level=3.0)
    assert plain["nodes"] == hidden["nodes"] == 4_130_071
    assert hidden["releases"] > plain["releases"]
