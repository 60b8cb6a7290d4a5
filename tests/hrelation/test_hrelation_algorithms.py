"""Algorithms of seed 001 on seeded random instances, the Figure 1 example, the §3.3
lower-bound family and the §5.2 regular schedule."""
import math

import networkx as nx
import numpy as np
import pytest

from stealsearch.problems.hrelation import (ALGORITHMS, all_to_all, direct, figure1_instance, forwarding,
                                load_lower_bound, random_instance, regular, regular_rounds,
                                regular_split, three_cycle_family, three_cycle_lower_bound,
                                upper_bound, verify_schedule, weighted)
from stealsearch.problems.hrelation.colouring import DUMMY, konig_colouring, orient_halves, orient_packets

EPS = 1e-9


def instances(n=300):
    """Seeded: even and odd P, uniform and skewed lengths, some PEs sending nothing."""
    for seed in range(n):
        rng = np.random.default_rng(seed)
        P = int(rng.integers(2, 12))
        if seed % 4 == 0:
            P += P % 2          # even
        elif seed % 4 == 1:
            P += 1 - P % 2      # odd
        h = int(rng.integers(0, 14))
        skew = 0.0 if seed % 2 == 0 else 1.5
        zero = int(rng.integers(0, 3)) if seed % 3 else 0
        yield seed, random_instance(P, h, seed=seed, skew=skew,
                                    density=float(rng.uniform(0.3, 1.0)), zero_rows=zero)


def test_every_algorithm_verified_and_within_its_bound():
    seen = {"even": 0, "odd": 0, "zero_row": 0}
    for seed, m in instances(300):
        P, h = m.shape[0], load_lower_bound(m)
        seen["even" if P % 2 == 0 else "odd"] += 1
        seen["zero_row"] += int((m.sum(axis=1) == 0).any())
        for name, algorithm in ALGORITHMS.items():
            s = algorithm(m)
            v = verify_schedule(s, m)
            assert v.ok, (seed, name, v.errors)
            assert s.length >= h - EPS, (seed, name)
            half = math.ceil(h / 2)
            if name == "direct":
                assert s.length <= 3 * half + EPS, (seed, name, s.length)
            if name == "forwarding":
                if P % 2 == 0:
                    assert s.length <= 12 / 5 * half + EPS, (seed, s.length, h)
                else:
                    assert s.length <= (6 / 5 + 2 / P) * (h + 1) + EPS, (seed, s.length, h)
            ub = upper_bound(name, m)
            if ub is not None:
                assert s.length <= ub + EPS, (seed, name, s.length, ub)
    assert min(seen.values()) >= 50, seen


def test_odd_p_forwarding_on_cycle_plus_matching_instances():
    """Every PE on a long odd cycle plus a matching: 2-relations where §3.2 must remove
    packets into M (Lemma 3.1) — the bound still holds."""
    flushes = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        P = int(rng.choice([9, 15, 33]))
        perm = rng.permutation(P)
        m = np.zeros((P, P), dtype=np.int64)
        for i in range(P):
            m[perm[i], perm[(i + 1) % P]] += int(rng.integers(1, 3))
        q = rng.permutation(P)[:P - 1]
        for a, b in zip(q[0::2], q[1::2]):
            m[a, b] += 1
        s = forwarding(m)
        h = load_lower_bound(m)
        assert verify_schedule(s, m).ok
        assert s.length <= (6 / 5 + 2 / P) * (h + 1) + EPS
        flushes += s.info["flushes"]
        assert all(size >= math.ceil(P / 4) for size in s.info["flushed_sizes"][:-1])
    assert flushes > 0   # the removal path of §3.2 was exercised


def test_figure1_two_three_cycles_in_twelve_fifths():
    m = figure1_instance()
    s = forwarding(m)
    assert verify_schedule(s, m).ok
    assert s.length == pytest.approx(12 / 5)
    assert s.num_rounds == 12 and set(s.lengths.tolist()) == {1}   # 12 rounds of 1/5
    forwarded = s.transfers[(s.transfers[:, 3] != s.transfers[:, 1])]
    assert len(forwarded) == 6                       # 3 pieces of each cycle's closing packet
    assert direct(m).length == 3.0


@pytest.mark.parametrize("k, h", [(1, 4), (2, 4), (2, 10), (3, 6), (4, 8), (5, 6), (7, 4)])
def test_three_cycle_family_never_beats_the_lower_bound(k, h):
    m = three_cycle_family(k, h)
    P = 3 * k
    lb = three_cycle_lower_bound(P, h)
    assert lb >= 6 / 5 * h - EPS
    for name, algorithm in ALGORITHMS.items():
        s = algorithm(m)
        assert verify_schedule(s, m).ok
        assert s.length >= lb - 1e-6, (name, s.length, lb)
    if P % 2 == 0:   # even P: forwarding meets the bound, direct needs 3/2 h
        assert forwarding(m).length == pytest.approx(6 / 5 * h)
        assert direct(m).length == pytest.approx(3 / 2 * h)


@pytest.mark.parametrize("P", [2, 3, 4, 7, 8, 16, 17])
def test_regular_one_factorization_rounds(P):
    part = regular_rounds(P)
    assert part.shape[0] == (P if P % 2 else P - 1)
    for row in part:                                 # a perfect (or near-perfect) matching
        assert all(row[row[j]] == j for j in range(P))
        assert (row == np.arange(P)).sum() == P % 2
    pairs = {tuple(sorted((j, int(p)))) for row in part for j, p in enumerate(row) if p != j}
    assert len(pairs) == P * (P - 1) // 2           # every pair meets exactly once
    m = all_to_all(P, 3)
    s = regular(m)
    assert verify_schedule(s, m).ok
    assert s.num_rounds == (P if P % 2 else P - 1)
    assert s.length == pytest.approx(6 * s.num_rounds)


def test_regular_split_and_rest():
    rng = np.random.default_rng(5)
    m = rng.integers(1, 6, size=(6, 6))
    np.fill_diagonal(m, 0)
    ell, reg, rest = regular_split(m)
    assert ell == int(min(m[i, j] + m[j, i] for i in range(6) for j in range(6) if i != j))
    assert (reg >= 0).all() and (rest >= 0).all() and (reg + rest == m).all()
    assert all(reg[i, j] + reg[j, i] == ell for i in range(6) for j in range(6) if i != j)
    s = regular(m)
    assert verify_schedule(s, m).ok and s.info["ell"] == ell


@pytest.mark.parametrize("orient", [orient_packets, orient_halves])
def test_konig_colouring_is_proper_with_ceil_h_over_2_colours(orient):
    for seed in range(30):
        m = random_instance(int(3 + seed % 8), 9 + seed % 4, seed=seed, skew=1.0 * (seed % 2))
        P, h = m.shape[0], load_lower_bound(m)
        edges = orient(m)
        # the orientation keeps every packet and balances every PE
        real = np.zeros_like(m)
        out_deg = np.zeros(P, dtype=np.int64)
        in_deg = np.zeros(P, dtype=np.int64)
        for u, v, s, d, c in zip(edges.u, edges.v, edges.src, edges.dst, edges.count):
            out_deg[u] += c
            in_deg[v] += c
            if s != DUMMY:
                real[s, d] += c
                assert {u, v} == {s, d}
        assert (real == m).all() and (out_deg == in_deg).all()
        assert out_deg.max(initial=0) <= math.ceil(h / 2)
        padded, colours = konig_colouring(edges, P)
        assert sum(k for _, k in colours) == math.ceil(h / 2) or h == 0
        used = np.zeros(len(padded), dtype=np.int64)
        for ids, k in colours:
            ids = ids.tolist()
            assert sorted(padded.u[e] for e in ids) == list(range(P))   # perfect matching
            assert sorted(padded.v[e] for e in ids) == list(range(P))
            for e in ids:
                used[e] += k
        assert (used == np.array(padded.count)).all()               # every edge coloured once
        # cross-check: networkx agrees that the support has a perfect matching
        g = nx.Graph()
        g.add_nodes_from(range(2 * P))
        g.add_edges_from((u, P + v) for u, v in zip(padded.u, padded.v))
        if h:
            assert len(nx.bipartite.hopcroft_karp_matching(g, top_nodes=range(P))) == 2 * P


def test_weighted_long_messages_cost_messages_not_packets():
    rng = np.random.default_rng(3)
    small = rng.integers(0, 20, size=(8, 8))
    np.fill_diagonal(small, 0)
    big = small * 50_000 + (small > 0)               # up to ~10^6 packets per message
    s_small, s_big = weighted(small), weighted(big)
    for m, s in ((small, s_small), (big, s_big)):
        assert verify_schedule(s, m).ok
        assert s.length <= 12 / 5 * math.ceil(load_lower_bound(m) / 2) + EPS
    nnz = int((big > 0).sum())
    # one 2-relation per peeled matching: at most #typed edges + 2P of them, 12 rounds each
    assert s_big.num_rounds <= 12 * (3 * nnz + 2 * 8) + 1
    assert s_big.info["matchings"] <= 3 * nnz + 2 * 8


def test_weighted_direct_variant():
    m = random_instance(9, 40, seed=2, skew=1.0)
    s = weighted(m, use_forwarding=False)
    assert verify_schedule(s, m).ok
    assert s.length <= 3 * math.ceil(load_lower_bound(m) / 2) + EPS


def test_empty_and_tiny_instances():
    for m in (np.zeros((1, 1), dtype=np.int64), np.zeros((4, 4), dtype=np.int64),
              np.array([[0, 1], [0, 0]])):
        for name, algorithm in ALGORITHMS.items():
            s = algorithm(m)
            assert verify_schedule(s, m).ok, name
            assert s.length >= load_lower_bound(m)


def test_weighted_within_the_forwarding_bounds_on_random_and_family_instances():
    """The compiled §4 variant (fast.py), incl. odd P where copies of a peeled matching drop
    packets into M with weights and M is flushed partially."""
    flushes = 0
    for seed in range(80):
        rng = np.random.default_rng(seed)
        if seed % 4 == 0:
            m = three_cycle_family(int(rng.integers(1, 8)), 2 * int(rng.integers(1, 60)))
        else:
            P = int(rng.integers(2, 16))
            m = random_instance(P, int(rng.integers(1, 40)), seed=seed, skew=1.5 * (seed % 2),
                                zero_rows=int(rng.integers(0, 2)))
        h = load_lower_bound(m)
        for use_forwarding in (True, False):
            s = weighted(m, use_forwarding)
            limit = upper_bound("weighted", m) if use_forwarding else 3 * math.ceil(h / 2)
            assert verify_schedule(s, m).ok, (seed, use_forwarding)
            assert h - EPS <= s.length <= limit + EPS, (seed, use_forwarding, s.length, limit)
            flushes += s.info["flushes"]
    assert flushes > 0
    # the 3-cycle family with odd P: as good as the packet-level forwarding
    for k in (3, 5, 11):
        m = three_cycle_family(k, 100)
        assert weighted(m).length <= forwarding(m).length + EPS
