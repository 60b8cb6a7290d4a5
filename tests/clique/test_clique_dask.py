"""Clique search on the Dask backend (one LocalCluster of 2 workers for the module):
the same answers as networkx and as the sequential backend, for every bound and mode."""
import networkx as nx
import pytest

from stealsearch.engine.deploy.cluster import dask_client
from stealsearch.engine.core.policy import StealPolicy
from stealsearch.engine.solve import solve
from stealsearch.problems.clique import BOUNDS, CliqueProblem, design_graph, gnp

# a subset of the sequential test's graphs (the whole set runs there)
CASES = [(60, 0.5, 1), (45, 0.85, 2), (100, 0.5, 8), (33, 0.7, 4), (58, 0.6, 5), (1, 0.5, 7),
         (60, 0.25, 3), (12, 0.5, 6)]


@pytest.fixture(scope="module")
def client():
    with dask_client(workers=2) as c:
        yield c


def omega(g):
    return max((len(c) for c in nx.find_cliques(g.to_networkx())), default=0)


@pytest.mark.parametrize("bound", BOUNDS)
def test_dask_omega_equals_networkx(client, bound):
    # small steal batches so rows really move between the two workers
    policy = StealPolicy(budget=50, k=2, release_threshold=4)
    for n, p, s in (CASES[:6] if bound == "colour" else CASES[:2]):
        g = gnp(n, p, seed=s)
        r = solve(CliqueProblem(g, bound=bound), backend="dask", client=client, policy=policy)
        assert r.status == "optimal" and r.verified
        assert r.objective == omega(g), (n, p, s, bound)


def test_dask_counts_equal_sequential_and_networkx(client):
    policy = StealPolicy(budget=64, k=2, release_threshold=4)
    for n, p, s in CASES[:2]:
        g = gnp(n, p if p <= 0.5 else 0.4, seed=s)
        G = g.to_networkx()
        r = solve(CliqueProblem(g, mode="count"), backend="dask", client=client, policy=policy)
        assert r.count == 1 + sum(1 for _ in nx.enumerate_all_cliques(G))
        r = solve(CliqueProblem(g, mode="count-maximal"), backend="dask", client=client, policy=policy)
        assert r.count == sum(1 for _ in nx.find_cliques(G))


def test_dask_decide_design(client):
    # seed §1.2.1: the 2-(7,3,1) design (Fano plane) is a clique of size 7
    g = design_graph(2, 7, 3)
    r = solve(CliqueProblem(g, mode="decide", k=7), backend="dask", client=client)
    assert r.status == "found" and len(r.solution) == 7
    r = solve(CliqueProblem(g, mode="decide", k=8), backend="dask", client=client)
    assert r.status == "none"


def test_dask_matches_sequential_on_a_larger_graph(client):
    g = gnp(200, 0.5, seed=1)
    seq = solve(CliqueProblem(g), backend="sequential")
    par = solve(CliqueProblem(g), backend="dask", client=client, policy=StealPolicy(budget=500))
    assert par.objective == seq.objective == 11
    assert len(par.workers) >= 2
