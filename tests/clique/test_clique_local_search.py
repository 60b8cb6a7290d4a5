"""The initial clique (AMTS), the root bound and ``auto`` on structured graphs."""
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from stealsearch.engine import solve
from stealsearch.problems.clique import CliqueProblem, gnp, read_dimacs
from stealsearch.problems.clique.local_search import amts, amts_iterations
from stealsearch.problems.clique.model import Graph
from stealsearch.problems.clique.problem import FAST_BOUNDS
from stealsearch.problems.clique.verify import check_clique

DATA = Path(__file__).parent / "data"


def no_classes(n: int) -> tuple[np.ndarray, int]:
    """A class per vertex: the paper's AMTS, with no colour-class constraint."""
    return np.arange(n, dtype=np.int64), n


def planted(n: int, p: float, k: int, seed: int) -> tuple[Graph, list[int]]:
    """G(n, p) with a clique on k random vertices added."""
    g = gnp(n, p, seed=seed)
    rng = np.random.default_rng(seed)
    members = sorted(rng.choice(n, size=k, replace=False).tolist())
    edges = [tuple(e) for e in g.edges().tolist()]
    edges += [(u, v) for i, u in enumerate(members) for v in members[i + 1:]]
    return Graph.from_edges(n, edges, name=f"planted-{n}-{p}-{k}-{seed}"), members


@pytest.mark.parametrize("n,p,k,seed", [(200, 0.5, 25, 1), (300, 0.7, 40, 2), (150, 0.85, 45, 3),
                                        (400, 0.3, 18, 4)])
def test_amts_finds_the_planted_clique(n, p, k, seed):
    # the planted clique is far above G(n, p)'s own (about 2 log n / log(1/p)); a vertex
    # adjacent to all of it may still extend it, so omega (the exact search's) is k or k + 1
    g, members = planted(n, p, k, seed)
    omega = solve(CliqueProblem(g, bound="maxsat", heuristic="none"), backend="sequential").objective
    adj = g.rows.view(np.int64)
    clique, iterations = amts(adj, g.n, np.zeros(0, np.int64), amts_iterations(n, g.density()),
                              4000, g.n, 1, *no_classes(g.n))
    vs = sorted(int(v) for v in clique)
    assert check_clique(g, g.labelled(vs), size=len(vs), maximal=True)
    assert len(vs) == omega >= k
    assert 0 < iterations <= amts_iterations(n, g.density())


def test_amts_stops_at_the_upper_bound_and_never_loses_its_start():
    g, members = planted(120, 0.5, 20, 5)
    adj = g.rows.view(np.int64)
    start = np.array(members[:5], np.int64)
    clique, iterations = amts(adj, g.n, start, 10 ** 6, 4000, 20, 7, *no_classes(g.n))
    assert len(clique) == 20 and set(members[:5]) <= set(int(v) for v in clique)
    # already at the bound: no iteration, the start extended to a maximal clique
    clique, iterations = amts(adj, g.n, np.array(members, np.int64), 10 ** 6, 4000, 20, 7,
                              *no_classes(g.n))
    assert iterations == 0 and sorted(int(v) for v in clique) == members
    # no budget: the start, extended
    clique, iterations = amts(adj, g.n, start, 0, 4000, g.n, 7, *no_classes(g.n))
    assert iterations == 0 and check_clique(g, g.labelled(sorted(int(v) for v in clique)),
                                            size=len(clique), maximal=True)


def test_amts_on_tiny_graphs():
    for n in (0, 1, 2):
        g = Graph.from_edges(n, [(0, 1)] if n == 2 else [])
        clique, _ = amts(g.rows.view(np.int64), n, np.zeros(0, np.int64), 100, 10, n, 1,
                         *no_classes(n))
        assert len(clique) == n
    assert amts_iterations(1, 0.0) == 0


def test_the_problem_uses_amts_reports_it_and_is_reproducible():
    g, members = planted(300, 0.8, 45, 6)
    a = CliqueProblem(g)
    b = CliqueProblem(g)
    assert a.heuristic == "amts" and a.initial_incumbent() == 45
    assert a.initial_solution() == b.initial_solution()          # a fixed seed
    r = solve(a, backend="sequential")
    assert r.status == "optimal" and r.objective == 45 and r.verified
    for key in ("initial_clique", "initial_seconds", "amts_iterations", "root_bound"):
        assert key in r.info
    assert r.info["initial_clique"] == 45 and r.info["initial_heuristic"] == "amts"
    greedy = CliqueProblem(g, heuristic="greedy")
    assert greedy.amts_iterations == 0 and len(greedy.start_clique) <= 45


@pytest.mark.parametrize("line", (DATA / "sample_omega.tsv").read_text().splitlines()[1:])
def test_auto_is_exact_on_dimacs_and_bhoslib_samples(line):
    name, omega, _source = line.split("\t")
    g = read_dimacs(DATA / f"{name}.clq.gz")
    problem = CliqueProblem(g)
    r = solve(problem, backend="sequential")
    assert r.status == "optimal" and r.objective == int(omega) and r.verified
    assert check_clique(g, r.solution, size=int(omega), maximal=True)
    assert len(problem.start_clique) <= int(omega) <= problem.root_bound


def test_root_bound_ends_the_search_before_a_node():
    # frb30-15-1: 30 groups of 15 mutually non-adjacent vertices; the independent-set
    # partition finds the 30 groups, AMTS a 30-clique: CliSAT's "0 steps"
    g = read_dimacs(DATA / "frb30-15-1.clq.gz")
    problem = CliqueProblem(g)
    assert problem.root_bound == 30
    r = solve(problem, backend="sequential")
    assert (r.status, r.objective, r.nodes) == ("optimal", 30, 0) and r.verified
    # decide mode: no 31-clique, proven by the root bound alone
    r = solve(CliqueProblem(g, mode="decide", k=31), backend="sequential")
    assert r.status == "none" and r.nodes == 0


@pytest.mark.parametrize("bound", FAST_BOUNDS)
def test_root_bound_is_a_bound_on_random_graphs(bound):
    for n, p, s in [(40, 0.5, 1), (70, 0.8, 2), (90, 0.3, 3), (64, 0.95, 4), (65, 0.6, 5)]:
        g = gnp(n, p, seed=s)
        problem = CliqueProblem(g, bound=bound, order="iset")
        r = solve(problem, backend="sequential")
        assert r.status == "optimal" and r.objective <= problem.root_bound
        assert r.objective == solve(CliqueProblem(g, bound="size"), backend="sequential").objective


def test_interrupted_bound_is_capped_by_the_root_bound():
    g = read_dimacs(DATA / "brock200_4.clq.gz")
    problem = CliqueProblem(g, bound="colour", heuristic="none")
    r = solve(problem, backend="sequential", node_limit=200)
    assert r.status == "interrupted" and r.bound <= problem.root_bound


def _is_independent(g: Graph, members: list[int]) -> bool:
    """No edge inside ``members``, read from the edge list (not the kernels' bitsets)."""
    inside = set(members)
    return not any(u in inside and v in inside for u, v in g.edges())


def _maxiset(rows, n):
    from stealsearch.problems.clique.kernels.orders import maxiset_partition
    return maxiset_partition(rows, n, 50_000)


def _iset(rows, n):
    from stealsearch.problems.clique.kernels.orders import iset_partition
    return iset_partition(rows, n)


@pytest.mark.parametrize("partition", [_iset, _maxiset])
@pytest.mark.parametrize("n, p, seed", [(1, 0.5, 1), (2, 1.0, 1), (70, 0.3, 2), (90, 0.7, 3),
                                        (100, 0.85, 4), (130, 0.5, 5)])
def test_iset_partition_is_a_partition_into_independent_sets(partition, n, p, seed):
    g = gnp(n, p, seed=seed)
    order, k, cls = partition(g.rows.view(np.int64), n)
    assert sorted(order.tolist()) == list(range(n))              # every vertex, once
    assert cls.min() == 0 and cls.max() == k - 1                 # k classes, none empty
    assert all(cls[order[i]] <= cls[order[i + 1]] for i in range(n - 1))  # class by class
    for c in range(k):
        assert _is_independent(g, [v for v in range(n) if cls[v] == c])
    omega = solve(CliqueProblem(g, heuristic="none"), backend="sequential").objective
    assert omega <= k


@pytest.mark.parametrize("n, p, seed", [(30, 0.5, 1), (45, 0.7, 2), (60, 0.6, 3), (60, 0.85, 4),
                                        (50, 0.3, 5)])
def test_maxiset_partition_largest_class_is_a_maximum_independent_set(n, p, seed):
    # the first set is a maximum independent set when the search ends within its
    # budget (here it does); emptying small classes never shrinks a class it fills
    g = gnp(n, p, seed=seed)
    order, k, cls = _maxiset(g.rows.view(np.int64), n)
    alpha = max(len(c) for c in nx.find_cliques(nx.complement(g.to_networkx())))
    assert np.bincount(cls).max() == alpha
    assert list(np.bincount(cls)) == sorted(np.bincount(cls), reverse=True)  # largest first


def test_amts_keeps_one_vertex_per_class_and_reaches_omega_on_a_planted_partition():
    # k groups of s mutually non-adjacent vertices, an edge between groups with
    # probability p, a clique planted through one vertex of every group (BHOSLIB's shape)
    k, s, p = 12, 6, 0.6
    rng = np.random.default_rng(3)
    group = np.repeat(np.arange(k), s)
    n = k * s
    planted = [int(g * s + rng.integers(s)) for g in range(k)]
    edges = [(u, v) for u in range(n) for v in range(u + 1, n)
             if group[u] != group[v] and (rng.random() < p or (u in planted and v in planted))]
    g = Graph.from_edges(n, edges)
    adj = g.rows.view(np.int64)
    clique, _ = amts(adj, n, np.zeros(0, np.int64), 20000, 4000, k, 5, group.astype(np.int64), k)
    vs = sorted(int(v) for v in clique)
    assert len(vs) == k and len({int(group[v]) for v in vs}) == k
    assert check_clique(g, g.labelled(vs), size=k, maximal=True)
    # the problem's own classes are independent sets, and its first incumbent reaches k
    problem = CliqueProblem(g)
    labels = problem.order
    for c in range(int(problem.colour_classes.max()) + 1):
        members = [int(labels[i]) for i in np.flatnonzero(problem.colour_classes == c)]
        assert _is_independent(g, members)
    assert problem.root_bound >= k == problem.initial_incumbent()
