"""Independent verifier for seed 002's clustering and quality functions.

Nothing here imports :mod:`~stealsearch.problems.commclust.algorithms` or :mod:`~stealsearch.problems.commclust.quality`:
the paper's procedure and equations are written out literally, with exact rational
arithmetic (:class:`fractions.Fraction`) so that "equal f" means equal.

* :func:`greedy_reference` -- section 3 step by step: all pairs of clusters, eq. 1 for each,
  the best value, the tie rule ("the pair that contains the first node of the random order"),
  O(N^4).  For small tables (N <= ~40).
* :func:`quality_reference` -- eqs. 2-6 and ``G_c`` as double sums over processes.
* :func:`check_dendrogram` -- checks a dendrogram object against the table: every step joins
  two clusters of the previous partition, the recorded ``f`` is eq. 1 for them, no other pair
  has a larger ``f``, and among equal ones the tie rule picked it.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np


def _exact(table) -> list[list[Fraction]]:
    return [[Fraction(float(v)) for v in row] for row in np.asarray(table, dtype=np.float64)]


def _f(t, a_members, b_members) -> Fraction:
    s = Fraction(0)
    for a in a_members:
        for b in b_members:
            s += t[a][b] + t[b][a]
    return s / (len(a_members) * len(b_members))


def _tie_choice(candidates, order):
    """Among candidate pairs (tuples of two member lists) pick the one the paper's rule picks:
    walk the random order; the first node that belongs to a candidate pair decides; if that
    node's cluster is in several candidate pairs, keep walking to find the partner."""
    for pos, node in enumerate(order):
        with_node = [p for p in candidates if node in p[0] or node in p[1]]
        if not with_node:
            continue
        if len(with_node) == 1:
            return with_node[0]
        for other in order[pos + 1:]:
            hit = [p for p in with_node
                   if (other in p[0] or other in p[1]) and not (node in p[0] and other in p[0])
                   and not (node in p[1] and other in p[1])]
            if hit:
                return hit[0]
    raise AssertionError("no candidate pair")


def greedy_reference(table, order) -> list[tuple[frozenset, frozenset, Fraction]]:
    """The paper's greedy clustering; returns the merges as (cluster, cluster, exact f).

    >>> t = [[0, 5, 1], [5, 0, 1], [1, 1, 0]]
    >>> [(sorted(a), sorted(b), f) for a, b, f in greedy_reference(t, [2, 0, 1])]
    [([0], [1], Fraction(10, 1)), ([2], [0, 1], Fraction(2, 1))]
    """
    t = _exact(table)
    order = [int(x) for x in order]
    clusters: list[list[int]] = [[i] for i in range(len(t))]
    merges = []
    while len(clusters) > 1:
        best = None
        cands = []
        for i in range(len(clusters)):
            for j in range(i + 1, len(clusters)):
                f = _f(t, clusters[i], clusters[j])
                if best is None or f > best:
                    best, cands = f, [(clusters[i], clusters[j])]
                elif f == best:
                    cands.append((clusters[i], clusters[j]))
        a, b = _tie_choice(cands, order)
        merges.append((frozenset(a), frozenset(b), best))
        clusters = [c for c in clusters if c is not a and c is not b] + [a + b]
    return merges


def quality_reference(table, clusters) -> dict:
    """Eqs. 2-6 by literal double sums (floats).

    >>> q = quality_reference([[0, 1], [1, 0]], [[0], [1]])
    >>> q["F_G"], q["D_G"], q["G_c"]
    (0.0, 1.0, 0.0)
    """
    t = np.asarray(table, dtype=np.float64).tolist()
    n = len(t)
    in_cluster = {}
    for ci, c in enumerate(clusters):
        for p in c:
            in_cluster[p] = ci
    total = sum(sum(row) for row in t)
    off = total - sum(t[i][i] for i in range(n))
    sum_fa = sum_da = 0.0
    sum_sq = sum_cross = 0
    for c in clusters:
        x = len(c)
        fa = sum(t[k][j] for k in c for j in c)                                  # eq. 2
        da = sum(t[k][j] for k in c for j in range(n) if in_cluster[j] != in_cluster[k])  # eq. 5
        sum_fa += fa
        sum_da += da
        sum_sq += x * x                                                          # eq. 4
        sum_cross += x * (n - x)
    fg = (sum_fa / sum_sq) / (total / n ** 2)                                    # eq. 3
    dg = (sum_da / sum_cross) / (off / (n * (n - 1))) if sum_cross else float("nan")  # eq. 6
    if sum_cross == 0:
        gc = float("nan")
    elif dg == 0:
        gc = float("inf") if fg > 0 else float("nan")
    else:
        gc = fg / dg
    return {"F_G": fg, "D_G": dg, "G_c": gc}


def check_dendrogram(table, dendrogram) -> list[str]:
    """Problems found in ``dendrogram`` (empty list = valid greedy dendrogram with the paper's
    tie rule for ``dendrogram.order``).  Exact arithmetic; O(N^4) -- for small N."""
    t = _exact(table)
    n = len(t)
    problems: list[str] = []
    order = [int(x) for x in dendrogram.order]
    rank = {node: pos for pos, node in enumerate(order)}
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    alive = set(range(n))
    for step, (a, b) in enumerate(np.asarray(dendrogram.merges).tolist()):
        if a not in alive or b not in alive or a == b:
            problems.append(f"step {step}: clusters {a}, {b} are not two clusters of partition {step}")
            return problems
        f_ab = _f(t, members[a], members[b])
        if abs(float(f_ab) - float(dendrogram.f[step])) > 1e-9 * max(1.0, abs(float(f_ab))):
            problems.append(f"step {step}: recorded f {dendrogram.f[step]} != eq. 1 value {float(f_ab)}")
        ids = sorted(alive)
        best_pairs = []
        best = None
        for i, ci in enumerate(ids):
            for cj in ids[i + 1:]:
                f = _f(t, members[ci], members[cj])
                if best is None or f > best:
                    best, best_pairs = f, [(ci, cj)]
                elif f == best:
                    best_pairs.append((ci, cj))
        if f_ab != best:
            problems.append(f"step {step}: merged f = {float(f_ab)} but the best pair has {float(best)}")
        else:
            def first_nodes(pair):
                ka = min(rank[m] for m in members[pair[0]])
                kb = min(rank[m] for m in members[pair[1]])
                return (min(ka, kb), max(ka, kb))
            chosen = min(best_pairs, key=first_nodes)
            if set(chosen) != {a, b}:
                problems.append(f"step {step}: tie rule picks clusters {chosen}, dendrogram merged {(a, b)}")
        new = n + step
        members[new] = members[a] + members[b]
        alive -= {a, b}
        alive.add(new)
    if len(alive) != 1:
        problems.append(f"dendrogram ends with {len(alive)} clusters")
    return problems
