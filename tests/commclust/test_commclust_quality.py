"""F_A, F_G, D_A, D_G, G_c (seed 002, section 3.1): reconstruction properties and cross-checks."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stealsearch.problems.commclust import (cg_like, cluster_table, ep_like, is_like, paper_table1,
                                partition_quality, quality_curve, random_table)
from stealsearch.problems.commclust.quality import cluster_dissimilarity, cluster_similarity
from stealsearch.problems.commclust.verify import quality_reference


def _curve(t, seed=0):
    d = cluster_table(t, seed=seed)
    return d, quality_curve(t, d)


@pytest.mark.parametrize("make", [lambda: paper_table1(), lambda: random_table(20, seed=3),
                                  lambda: ep_like(16, seed=1), lambda: cg_like(16),
                                  lambda: is_like(12, seed=2, self_ratio=1.7)])
def test_commclust_curve_matches_direct_and_literal_formulas(make):
    t = make()
    d, c = _curve(t, seed=5)
    for k in range(t.shape[0]):
        clusters = d.partition(k)
        direct = partition_quality(t, clusters)
        literal = quality_reference(t, clusters)
        for name in ("F_G", "D_G", "G_c"):
            a, b, r = c.__dict__[name][k], direct[name], literal[name]
            if math.isnan(r):
                assert math.isnan(a) and math.isnan(b)
            else:
                assert a == pytest.approx(r, rel=1e-9) and b == pytest.approx(r, rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 12), seed=st.integers(0, 10**6))
def test_commclust_stated_properties(n, seed):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 50, size=(n, n)).astype(float)
    t[0, n - 1] += 1
    d, c = _curve(t, seed=seed)
    total, trace = t.sum(), np.trace(t)
    # one cluster: F_G = 1, G_c undefined (D_G is 0/0) and never the best
    assert c.F_G[n - 1] == pytest.approx(1.0) and math.isnan(c.G_c[n - 1])
    assert c.n_clusters[c.best_index()] >= 2 or n == 1
    # singletons: D_G = 1 exactly (the reconstruction's normaliser), F_G = N trace / total
    assert c.D_G[0] == pytest.approx(1.0)
    assert c.F_G[0] == pytest.approx(n * trace / total)
    # scaling the table does not change anything
    _, c2 = _curve(7.5 * t, seed=seed)
    assert np.allclose(c.G_c[:-1], c2.G_c[:-1], rtol=1e-9, equal_nan=True)


def test_commclust_constant_table_scores_one_everywhere():
    t = np.full((9, 9), 4.0)
    d, c = _curve(t, seed=2)
    assert np.allclose(c.F_G, 1.0) and np.allclose(c.D_G[:-1], 1.0) and np.allclose(c.G_c[:-1], 1.0)
    # any partition at all, not only the dendrogram's
    q = partition_quality(t, [[0, 3, 5], [1], [2, 4, 6, 7, 8]])
    assert q["F_G"] == pytest.approx(1.0) and q["D_G"] == pytest.approx(1.0)


def test_commclust_random_grouping_expectation_at_most_one():
    """F_G > 1 means more intra-cluster traffic than grouping processes randomly: the mean
    F_G over *all* relabellings of a partition is <= 1 when the diagonal mean is not above
    the off-diagonal mean (and = 1 for the expected table)."""
    rng = np.random.default_rng(11)
    n = 6
    t = rng.integers(0, 100, size=(n, n)).astype(float)
    np.fill_diagonal(t, rng.integers(0, 20, size=n))
    assert np.trace(t) / n <= (t.sum() - np.trace(t)) / (n * (n - 1))
    sizes = [3, 2, 1]
    values = []
    for perm in itertools.permutations(range(n)):
        groups, pos = [], 0
        for s in sizes:
            groups.append(list(perm[pos:pos + s]))
            pos += s
        values.append(partition_quality(t, groups)["F_G"])
    mean = float(np.mean(values))
    off = (t.sum() - np.trace(t)) / (n * (n - 1))
    s2 = sum(x * x for x in sizes)
    expected = (np.trace(t) + off * (s2 - n)) / s2 / (t.sum() / n ** 2)
    assert mean == pytest.approx(expected) and mean <= 1.0
    # the CG blocks are far above random grouping
    assert partition_quality(paper_table1(), [[0, 1, 2, 3], [4, 5, 6, 7]])["F_G"] > 1.5


def test_commclust_eq2_eq5_per_cluster():
    t = paper_table1()
    assert cluster_similarity(t, [0, 2]) == 416 + 0 + 1266 + 1267   # T00, T22, T02, T20
    assert cluster_similarity(t, [0, 1]) == 416 + 1266 + 1267 + 416
    assert cluster_dissimilarity(t, [4, 5, 6, 7]) == 3 + 416 + 2 + 416 + 2 + 2
    q = partition_quality(t, [[0, 1, 2, 3], [4, 5, 6, 7]])
    assert q["F_A"].sum() + q["D_A"].sum() == t.sum()


def test_commclust_zero_diagonal_gives_zero_at_n_clusters():
    """EP/LU/MG in the paper: zero diagonal -> G_c = 0 for N clusters of one process."""
    for seed in range(3):
        t = ep_like(16, seed=seed)
        _, c = _curve(t, seed=seed)
        assert c.G_c[0] == 0.0 and c.n_clusters[c.best_index()] not in (1, 16)


def test_commclust_is_like_is_flat():
    """IS (uniform traffic, the all-to-all includes the self-bucket): G_c flat at ~1 for
    every partition with >= 2 clusters, N clusters included."""
    for n in (16, 32):
        t = is_like(n, seed=n, noise=0.02)
        _, c = _curve(t, seed=1)
        g = c.G_c[:-1]
        assert np.all(np.abs(g - 1.0) < 0.03), g


@pytest.mark.parametrize("ratio", [1.0, 1.5, 3.0])
def test_commclust_is_like_exact_formula_and_rise_at_n(ratio):
    """Exactly uniform off-diagonal c and diagonal r*c: D_G = 1 and
    G_c = (S + N (r - 1)) / S * N / (r + N - 1) with S = sum x_i^2; so G_c rises only as
    partitions approach N singletons and is largest at N when r > 1 (the paper's IS plots:
    "the best characterization is not to group any process")."""
    n = 16
    t = is_like(n, seed=0, noise=0.0, self_ratio=ratio, integer=False)
    d, c = _curve(t, seed=3)
    for k in range(n - 1):
        s = sum(len(x) ** 2 for x in d.partition(k))
        assert c.D_G[k] == pytest.approx(1.0)
        assert c.G_c[k] == pytest.approx((s + n * (ratio - 1)) / s * n / (ratio + n - 1))
    if ratio > 1:
        assert c.best_index() == 0 and c.n_clusters[0] == n
    else:
        assert np.allclose(c.G_c[:-1], 1.0)


def test_commclust_separable_table_has_infinite_gc():
    t = np.zeros((6, 6))
    t[:3, :3] = 5
    t[3:, 3:] = 7
    d, c = _curve(t, seed=0)
    best = c.best_index()
    assert math.isinf(c.G_c[best]) and c.n_clusters[best] == 2
    assert sorted(map(sorted, d.partition(best))) == [[0, 1, 2], [3, 4, 5]]
    assert math.isinf(quality_reference(t, d.partition(best))["G_c"])


def test_commclust_relabelling_invariance():
    t = random_table(25, seed=4)
    d, c = _curve(t, seed=8)
    perm = np.random.default_rng(1).permutation(25)      # new label of old process i: perm[i]
    t2 = np.empty_like(t)
    t2[np.ix_(perm, perm)] = t
    d2 = cluster_table(t2, order=perm[d.order])
    c2 = quality_curve(t2, d2)
    assert np.allclose(c.G_c, c2.G_c, equal_nan=True)
    assert [sorted(perm[x].tolist()) for x in d.partition(10)] == [sorted(x) for x in d2.partition(10)]


def test_commclust_ranking_orders_by_gc():
    t = cg_like(16)
    _, c = _curve(t, seed=0)
    r = c.ranking()
    g = np.where(np.isnan(c.G_c), -np.inf, c.G_c)[r]
    assert np.all(np.diff(g) <= 0) and math.isnan(c.G_c[r[-1]]) and sorted(r) == list(range(16))
