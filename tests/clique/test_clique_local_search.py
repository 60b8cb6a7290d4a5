"""The initial clique (AMTS), the root bound and ``auto`` on structured graphs (issue 23)."""
from pathlib import Path

import numpy as np
import pytest

from stealsearch.engine import solve
from stealsearch.problems.clique import CliqueProblem, gnp, read_dimacs
from stealsearch.problems.clique.local_search import amts, amts_iterations
from stealsearch.problems.clique.model import Graph
from stealsearch.problems.clique.problem import FAST_BOUNDS
from stealsearch.problems.clique.verify import check_clique

DATA = Path(__file__).parent / "data"


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
                              4000, g.n, 1)
    vs = sorted(int(v) for v in clique)
    assert check_clique(g, g.labelled(vs), size=len(vs), maximal=True)
    assert len(vs) == omega >= k
    assert 0 < iterations <= amts_iterations(n, g.density())


def test_amts_stops_at_the_upper_bound_and_never_loses_its_start():
    g, members = planted(120, 0.5, 20, 5)
    adj = g.rows.view(np.int64)
    start = np.array(members[:5], np.int64)
    clique, iterations = amts(adj, g.n, start, 10 ** 6, 4000, 20, 7)
    assert len(clique) == 20 and set(members[:5]) <= set(int(v) for v in clique)
    # already at the bound: no iteration, the start extended to a maximal clique
    clique, iterations = amts(adj, g.n, np.array(members, np.int64), 10 ** 6, 4000, 20, 7)
    assert iterations == 0 and sorted(int(v) for v in clique) == members
    # no budget: the start, extended
    clique, iterations = amts(adj, g.n, start, 0, 4000, g.n, 7)
    assert iterations == 0 and check_clique(g, g.labelled(sorted(int(v) for v in clique)),
                                            size=len(clique), maximal=True)


def test_amts_on_tiny_graphs():
    for n in (0, 1, 2):
        g = Graph.from_edges(n, [(0, 1)] if n == 2 else [])
        clique, _ = amts(g.rows.view(np.int64), n, np.zeros(0, np.int64), 100, 10, n, 1)
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
