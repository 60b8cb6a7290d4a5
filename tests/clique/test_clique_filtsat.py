"""The ``filtsat`` bound's SAT filtering against brute force, and the ``branched`` counter."""
import itertools
from pathlib import Path

import numpy as np
import pytest

from stealsearch.engine.solve import solve
from stealsearch.problems.clique import CliqueProblem, gnp, read_dimacs
from stealsearch.problems.clique.kernels.partite import _filter_partite
from stealsearch.problems.clique.problem import FAST_BOUNDS

DATA = Path(__file__).parent / "data"


def partite_case(rng):
    """K independent sets at random positions of 0..127 (two words), edges between sets
    with a random density: (adj, classes as vertex lists, W)."""
    K = int(rng.integers(1, 8))
    sizes = rng.integers(1, 6, size=K)
    vertices = rng.permutation(128)[:int(sizes.sum())]
    classes = np.split(vertices, np.cumsum(sizes)[:-1])
    p = float(rng.choice([0.5, 0.7, 0.85]))
    W = 2
    adj = np.zeros((128, W), np.uint64)
    for a, b in itertools.combinations(range(K), 2):
        for u in classes[a]:
            for v in classes[b]:
                if rng.random() < p:
                    adj[u, v >> 6] |= np.uint64(1) << np.uint64(v & 63)
                    adj[v, u >> 6] |= np.uint64(1) << np.uint64(u & 63)
    return adj, [list(map(int, c)) for c in classes], W


def bits(vertices, W):
    out = np.zeros(W, np.uint64)
    for v in vertices:
        out[v >> 6] |= np.uint64(1) << np.uint64(v & 63)
    return out.view(np.int64)


def members(words):
    return {w * 64 + b for w, x in enumerate(np.asarray(words).view(np.uint64))
            for b in range(64) if (int(x) >> b) & 1}


def test_filter_removes_only_vertices_of_no_clique_meeting_every_set():
    rng = np.random.default_rng(7)
    removed_total = 0
    refuted = 0
    for _ in range(300):
        adj, classes, W = partite_case(rng)
        K = len(classes)
        a = adj.view(np.int64)
        # brute force: the vertices of some clique with one vertex of each set
        used = set()
        for pick in itertools.product(*classes):
            if all((int(adj[u, v >> 6]) >> (v & 63)) & 1
                   for u, v in itertools.combinations(pick, 2)):
                used.update(pick)
        cls = np.zeros((K, W), np.int64)
        for k, c in enumerate(classes):
            cls[k] = bits(c, W)
        P = bits([v for c in classes for v in c], W)
        n = 128
        ok = _filter_partite(cls, K, P, a, np.zeros(n, np.int64), np.zeros(n, np.int64),
                             np.zeros(W, np.int64), np.zeros(n, np.int64),
                             np.zeros(n, np.bool_), np.zeros(n + 1, np.int64), W)
        if not ok:
            assert not used, (classes, used)
            refuted += 1
            continue
        kept = members(P)
        assert used <= kept
        assert kept == set().union(*(members(cls[k]) for k in range(K)))
        removed_total += sum(len(c) for c in classes) - len(kept)
    # the filter does something on these cases (a no-op would pass the checks above)
    assert removed_total > 0 and refuted > 0


def test_filtsat_finds_the_omega_of_the_dimacs_samples_with_fewer_branching_nodes():
    for name, omega in (("keller4", 11), ("brock200_2", 12), ("san200_0.9_1", 70)):
        g = read_dimacs(DATA / f"{name}.clq")
        res = {b: solve(CliqueProblem(g, bound=b), backend="sequential")
               for b in ("incmaxsat", "filtsat")}
        for b, r in res.items():
            assert r.status == "optimal" and r.objective == omega and r.verified, (name, b)
        # keller4 (measured): the filter removes children incmaxsat has to expand
        if name == "keller4":
            assert res["filtsat"].counters["branched"] < res["incmaxsat"].counters["branched"]


def test_branched_counts_the_nodes_that_pushed_a_child():
    g = gnp(90, 0.6, seed=5)
    for bound in FAST_BOUNDS:
        r = solve(CliqueProblem(g, bound=bound, heuristic="none"), backend="sequential")
        b = r.counters["branched"]
        # the root pushed children (no first clique), and a node whose children all
        # reach the incumbent's size (leaves) pushes none
        assert 1 <= b < r.nodes, (bound, b, r.nodes)
    # the seed's bounds and the counting modes do not count it
    assert solve(CliqueProblem(g, bound="greedy"), backend="sequential").counters["branched"] == 0
    assert solve(CliqueProblem(g, mode="count"), backend="sequential").counters["branched"] == 0


def test_a_proof_falls_back_to_the_colour_bound_only_for_autos_choice():
    from stealsearch.engine.core.proof import ProofUnavailable

    g = gnp(40, 0.9, seed=3)
    with pytest.raises(ProofUnavailable, match="filtsat bound logs no proof steps"):
        CliqueProblem(g, bound="filtsat").proof_problem()
    chosen = CliqueProblem(g)                     # auto: as if it had picked filtsat
    chosen.bound = "filtsat"
    logged = chosen.proof_problem()
    assert logged.bound == "colour" and logged.proof_kernel is not None
    assert "auto picked filtsat" in logged.proof_note and chosen.bound == "filtsat"
    assert logged.start_clique is chosen.start_clique and logged.order is chosen.order
