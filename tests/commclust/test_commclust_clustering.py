"""Clustering with f (eq. 1) and the paper's tie rule: Table 2, scipy cross-check, verifier."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import squareform

from stealsearch.problems.commclust import (CommTableError, canonical_partition, cg_like, cluster_table,
                                paper_table1, quality_curve, random_table, tie_order)
from stealsearch.problems.commclust.render import dendrogram_text
from stealsearch.problems.commclust.verify import check_dendrogram, greedy_reference

PAPER_TABLE_2 = """\
Partition 0: (0) (2) (4) (6) (1) (5) (3) (7)
Partition 1: (0,2) (4) (6) (1) (5) (3) (7)
Partition 2: (0,2) (4,6) (1) (5) (3) (7)
Partition 3: (0,2) (4,6) (1,3) (5) (7)
Partition 4: (0,2) (4,6) (1,3) (5,7)
Partition 5: (0,2,1,3) (4,6) (5,7)
Partition 6: (0,2,1,3) (4,6,5,7)"""


def test_commclust_reproduces_table2_with_its_order():
    d = cluster_table(paper_table1(), order=[0, 2, 4, 6, 1, 5, 3, 7])
    assert dendrogram_text(d, partitions=range(7)) == PAPER_TABLE_2
    assert sorted(d.partition(7)[0]) == list(range(8))
    assert d.f.tolist()[:4] == [2533, 2533, 2532, 2532]


BLOCK_PAIRS = {frozenset({0, 1}), frozenset({2, 3}), frozenset({0, 2}), frozenset({1, 3}),
               frozenset({4, 5}), frozenset({6, 7}), frozenset({4, 6}), frozenset({5, 7})}


@pytest.mark.parametrize("seed", range(40))
def test_commclust_table1_every_seed(seed):
    t = paper_table1()
    d = cluster_table(t, seed=seed)
    # the greedy procedure with the paper's tie rule, checked independently
    assert check_dendrogram(t, d) == []
    # equivalent to Table 2 up to tie-breaking: 4 pairs inside the blocks, then the blocks
    pairs = {frozenset(c) for c in d.partition(4)}
    assert len(pairs) == 4 and pairs <= BLOCK_PAIRS
    assert canonical_partition(d.partition(6)) == ((0, 1, 2, 3), (4, 5, 6, 7))
    curve = quality_curve(t, d)
    best = curve.best_index()
    assert curve.n_clusters[best] == 2                       # Figure 1's peak
    assert canonical_partition(d.partition(best)) == ((0, 1, 2, 3), (4, 5, 6, 7))
    finite = curve.G_c[: t.shape[0] - 1]
    assert np.all(curve.G_c[best] > finite[np.arange(finite.size) != best])


def _scipy_clusters(z, n):
    members = [frozenset([i]) for i in range(n)]
    out = []
    for a, b, h, _ in z:
        c = members[int(a)] | members[int(b)]
        members.append(c)
        out.append((c, h))
    return out


@pytest.mark.parametrize("n, seed", [(2, 0), (3, 1), (10, 2), (37, 3), (120, 4), (300, 5)])
def test_commclust_equals_scipy_average_linkage(n, seed):
    t = random_table(n, seed=seed)
    e = t + t.T
    np.fill_diagonal(e, 0.0)
    big = e.max() + 1.0
    dist = big - e
    np.fill_diagonal(dist, 0.0)
    z = linkage(squareform(dist, checks=False), method="average")
    d = cluster_table(t, seed=seed)
    mem = d.members()
    ours = [(frozenset(mem[n + k]), big - d.f[k]) for k in range(n - 1)]
    theirs = _scipy_clusters(z, n)
    assert {c for c, _ in ours} == {c for c, _ in theirs}
    h_ours = dict(ours)
    for c, h in theirs:
        assert h_ours[c] == pytest.approx(h, rel=1e-9, abs=1e-7)
    # merge sequence: f never increases (greedy order)
    assert np.all(np.diff(d.f) <= 1e-9 * big)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 9), values=st.integers(0, 3), seed=st.integers(0, 10**6),
       zero_frac=st.floats(0.0, 0.8))
def test_commclust_matches_literal_greedy_on_tie_heavy_tables(n, values, seed, zero_frac):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, values + 1, size=(n, n))
    t[rng.random((n, n)) < zero_frac] = 0
    t[0, n - 1] += 1
    d = cluster_table(t, seed=seed)
    ref = greedy_reference(t, d.order)
    mem = d.members()
    for k, (a, b, f) in enumerate(ref):
        x, y = (frozenset(mem[int(i)]) for i in d.merges[k])
        assert {x, y} == {a, b}, f"step {k}"
        assert float(f) == d.f[k]


def test_commclust_verifier_catches_a_wrong_dendrogram():
    t = paper_table1()
    runs = [cluster_table(t, seed=s) for s in range(10)]
    d1 = next(d for d in runs if set(d.merges[0]) != set(runs[0].merges[0]))
    d1.order = runs[0].order                 # merges no longer follow this tie order
    assert any("tie rule" in p for p in check_dendrogram(t, d1))
    bad = cluster_table(t, seed=1)
    bad.f = bad.f.copy()
    bad.f[0] += 1
    assert any("recorded f" in p for p in check_dendrogram(t, bad))
    worse = cluster_table(t, seed=1)
    worse.merges = worse.merges.copy()
    worse.merges[0] = (0, 4)                 # a pair far from the best f
    assert any("best pair" in p for p in check_dendrogram(t, worse))


@pytest.mark.parametrize("n, block", [(16, 4), (32, 8), (64, 8)])
def test_commclust_cg_like_best_partition_is_the_grid_rows(n, block):
    t = cg_like(n)
    for seed in (0, 1, 2):
        d = cluster_table(t, seed=seed)
        if n <= 16:
            assert check_dendrogram(t, d) == []
        c = quality_curve(t, d)
        best = d.partition(c.best_index())
        assert canonical_partition(best) == tuple(tuple(range(s, s + block))
                                                  for s in range(0, n, block))


def test_commclust_tie_order_and_errors():
    orders = {tuple(tie_order(5, seed=s).tolist()) for s in range(20)}
    assert all(sorted(o) == [0, 1, 2, 3, 4] for o in orders) and len(orders) > 10
    assert tie_order(4).tolist() == [0, 1, 2, 3]
    with pytest.raises(CommTableError, match="permutation"):
        tie_order(3, order=[0, 0, 1])
    with pytest.raises(CommTableError, match="seed"):
        tie_order(3, seed=-1)
    d = cluster_table(paper_table1(), seed=2)
    with pytest.raises(CommTableError, match="out of range"):
        d.partition(8)


def test_commclust_large_table_is_a_valid_average_linkage_tree():
    t = random_table(600, seed=9, density=0.3)
    d = cluster_table(t, seed=0)
    assert sorted(d.members()[-1]) == list(range(600))
    assert d.sizes[-1] == 600
    assert np.all(d.merges[:, 0] < 600 + np.arange(599)) and np.all(d.merges[:, 1] < 600 + np.arange(599))
    # spot-check eq. 1 for some merges against the definition
    mem = d.members()
    e = t + t.T
    for k in (0, 100, 598):
        a, b = (mem[int(i)] for i in d.merges[k])
        assert d.f[k] == pytest.approx(e[np.ix_(a, b)].sum() / (len(a) * len(b)), rel=1e-12)
