"""Clique search on the sequential backend against networkx (seed 003 §1.1, §2.1)."""
from pathlib import Path

import functools
import itertools

import networkx as nx
import numpy as np
import pytest

from stealsearch.engine.core.policy import StealPolicy
from stealsearch.engine.core.problem import SolutionError
from stealsearch.engine.solve import solve
from stealsearch.problems.clique import BOUNDS, CliqueProblem, Graph, check_clique, gnp, read_dimacs, seed_figure_1_1

DATA = Path(__file__).parent / "data"


def random_cases(count=100):
    """Seeded G(n, p), n <= 60, densities .1-.9 (so ω ranges from 2 to ~20)."""
    rng = np.random.default_rng(2026)
    cases = []
    for s in range(count):
        n = int(rng.integers(1, 61))
        p = float(rng.choice([0.1, 0.25, 0.5, 0.7, 0.85]))
        cases.append((n, p, s))
    return cases


CASES = random_cases()


def nx_omega(G):
    return max((len(c) for c in nx.find_cliques(G)), default=0)


@functools.lru_cache(maxsize=None)
def case(n, p, s):
    """The graph, its networkx twin and networkx's ω, computed once per module."""
    g = gnp(n, p, seed=s)
    G = g.to_networkx()
    return g, G, nx_omega(G)


@pytest.mark.parametrize("bound", BOUNDS)
def test_omega_equals_networkx_on_100_random_graphs(bound):
    for n, p, s in CASES:
        g, G, omega = case(n, p, s)
        r = solve(CliqueProblem(g, bound=bound), backend="sequential")
        assert r.status == "optimal"
        assert r.objective == omega, (n, p, s, bound)
        assert r.verified and len(r.solution) == r.objective
        # the answer is a clique of G, checked by networkx itself
        sub = G.subgraph(r.solution)
        assert sub.number_of_edges() == len(r.solution) * (len(r.solution) - 1) // 2


@pytest.mark.parametrize("bound", BOUNDS)
def test_graphs_wider_than_one_word(bound):
    # n > 64: bitsets of 2-3 words
    for n, p, s in [(65, 0.5, 1), (130, 0.3, 2), (100, 0.45, 3), (190, 0.15, 4)]:
        g, G, omega = case(n, p, s)
        r = solve(CliqueProblem(g, bound=bound), backend="sequential")
        assert r.objective == omega


def test_count_all_cliques_equals_networkx():
    for n, p, s in CASES[:60]:
        if p > 0.5:
            continue
        g, G, _ = case(n, p, s)
        r = solve(CliqueProblem(g, mode="count"), backend="sequential")
        assert r.status == "exhausted"
        assert r.count == 1 + sum(1 for _ in nx.enumerate_all_cliques(G))
    g = gnp(100, 0.15, seed=21)   # two words
    r = solve(CliqueProblem(g, mode="count"), backend="sequential")
    assert r.count == 1 + sum(1 for _ in nx.enumerate_all_cliques(g.to_networkx()))


def test_count_maximal_cliques_equals_networkx():
    for n, p, s in CASES:
        g, G, _ = case(n, p, s)
        r = solve(CliqueProblem(g, mode="count-maximal"), backend="sequential")
        assert r.count == sum(1 for _ in nx.find_cliques(G))
    g = gnp(140, 0.3, seed=9)   # three words
    r = solve(CliqueProblem(g, mode="count-maximal"), backend="sequential")
    assert r.count == sum(1 for _ in nx.find_cliques(g.to_networkx()))


@pytest.mark.parametrize("bound", ["colour", "greedy"])
def test_decide_finds_k_iff_omega_at_least_k(bound):
    for n, p, s in CASES[:40]:
        g, G, w = case(n, p, s)
        for k in {1, max(1, w), w + 1}:
            r = solve(CliqueProblem(g, mode="decide", k=k, bound=bound), backend="sequential")
            if k <= w:
                assert r.status == "found" and len(r.solution) >= k and r.verified
            else:
                assert r.status == "none" and r.solution is None


def test_seed_figure_1_1():
    g = seed_figure_1_1()
    for bound in BOUNDS:
        r = solve(CliqueProblem(g, bound=bound), backend="sequential")
        assert (r.objective, r.solution) == (4, [1, 2, 4, 5])
    assert solve(CliqueProblem(g, mode="count"), backend="sequential").count == 22
    # maximal cliques: {0,1}, {1,2,3}, {1,2,4,5}
    assert solve(CliqueProblem(g, mode="count-maximal"), backend="sequential").count == 3


def _maxclique2_calls(G: nx.Graph) -> tuple[int, int]:
    """Seed 003's Algorithm 2.1.1, MAXCLIQUE2(l) with the size bound, as written there
    (recursion, natural vertex order, C_l = A_x & B_x & C_{l-1}); returns (OptSize,
    number of calls), the calls being the nodes of its state space tree."""
    n = G.number_of_nodes()
    adj = [set(G[v]) for v in range(n)]
    opt, calls = 0, 0

    def maxclique2(level, candidates):
        nonlocal opt, calls
        calls += 1
        if level > opt:
            opt = level
        bound = level + len(candidates)          # the size bound B(X)
        for x in sorted(candidates):
            if bound <= opt:
                return
            maxclique2(level + 1, {y for y in candidates if y > x and y in adj[x]})

    maxclique2(0, set(range(n)))
    return opt, calls


@pytest.mark.parametrize("seed", range(8))
def test_size_bound_node_counts_equal_the_seed_algorithm(seed):
    # the kernel's node count with the size bound is exactly the number of calls of the
    # paper's recursive MAXCLIQUE2 (an oracle that shares no code with the kernel)
    G = nx.gnp_random_graph(14 + 3 * seed, 0.3 + 0.05 * (seed % 4), seed=seed)
    opt, calls = _maxclique2_calls(G)
    r = solve(CliqueProblem(Graph.from_networkx(G), bound="size"), backend="sequential")
    assert (r.objective, r.nodes) == (opt, calls)


def test_seed_node_counts_follow_the_bounds():
    # Fig. 1.1: the unbounded state space tree (Fig. 2.4) has one node per clique, the
    # empty one included; the size bound prunes it; greedy and sampling prune more
    g = seed_figure_1_1()
    G = g.to_networkx()
    tree = 1 + sum(1 for _ in nx.enumerate_all_cliques(G))
    assert solve(CliqueProblem(g, mode="count"), backend="sequential").nodes == tree
    nodes = {b: solve(CliqueProblem(g, bound=b), backend="sequential").nodes for b in BOUNDS}
    assert nodes["size"] == _maxclique2_calls(nx.convert_node_labels_to_integers(G))[1] < tree
    assert nodes["size"] >= nodes["greedy"] and nodes["size"] >= nodes["sampling"]


def test_networkx_labels_are_mapped_back():
    G = nx.Graph()
    G.add_edges_from([("a", "b"), ("b", "c"), ("a", "c"), ("c", ("t", 1)), (("t", 1), "b")])
    G.add_node(frozenset({9}))
    g = Graph.from_networkx(G)
    r = solve(CliqueProblem(g), backend="sequential")
    assert r.objective == 3 and set(r.solution) in ({"a", "b", "c"}, {"b", "c", ("t", 1)})
    assert solve(CliqueProblem(G), backend="sequential").solution == r.solution
    back = g.to_networkx()
    assert nx.utils.graphs_equal(back, G) or set(back.edges()) == set(G.edges())


@pytest.mark.parametrize("line", [l for l in (DATA / "omega.tsv").read_text().splitlines()[1:]])
def test_dimacs_instances(line):
    name, n, m, omega = line.split("\t")
    g = read_dimacs(DATA / f"{name}.clq")
    assert (g.n, g.m) == (int(n), int(m))
    r = solve(CliqueProblem(g), backend="sequential")
    assert r.objective == int(omega) and r.verified
    assert all(1 <= v <= g.n for v in r.solution)     # DIMACS 1-based labels


def test_edge_cases():
    empty = Graph.from_edges(0, [])
    r = solve(CliqueProblem(empty), backend="sequential")
    assert r.objective == 0 and r.solution == []
    assert solve(CliqueProblem(empty, mode="count"), backend="sequential").count == 1
    assert solve(CliqueProblem(empty, mode="count-maximal"), backend="sequential").count == 1
    iso = Graph.from_edges(5, [])
    assert solve(CliqueProblem(iso, bound="size"), backend="sequential").objective == 1
    assert solve(CliqueProblem(iso, mode="count"), backend="sequential").count == 6
    k = Graph.from_edges(70, np.stack(np.triu_indices(70, 1), 1))
    for bound in BOUNDS:
        assert solve(CliqueProblem(k, bound=bound), backend="sequential").objective == 70


def test_interrupted_search_keeps_a_verified_clique_and_a_proven_bound():
    g = gnp(200, 0.6, seed=5)
    full = solve(CliqueProblem(g), backend="sequential")
    r = solve(CliqueProblem(g), backend="sequential", node_limit=500,
              policy=StealPolicy(budget=100))
    assert r.status == "interrupted"
    assert r.objective <= full.objective <= r.bound
    assert r.verified


def test_small_budgets_give_identical_results():
    # chunk boundaries (BUDGET returns, IMPROVED returns, GROW) do not change the search
    g = gnp(120, 0.5, seed=11)
    for bound in BOUNDS:
        a = solve(CliqueProblem(g, bound=bound), backend="sequential")
        b = solve(CliqueProblem(g, bound=bound), backend="sequential", policy=StealPolicy(budget=7))
        assert (a.objective, a.nodes) == (b.objective, b.nodes)
    a = solve(CliqueProblem(g, mode="count-maximal"), backend="sequential")
    b = solve(CliqueProblem(g, mode="count-maximal"), backend="sequential", policy=StealPolicy(budget=3))
    assert a.count == b.count


def test_verifier_is_independent_and_rejects_bad_answers():
    g = seed_figure_1_1()
    assert check_clique(g, [1, 2, 4, 5], size=4, maximal=True)
    with pytest.raises(SolutionError, match="not adjacent"):
        check_clique(g, [0, 2])
    with pytest.raises(SolutionError, match="not maximal"):
        check_clique(g, [1, 2], maximal=True)
    with pytest.raises(SolutionError, match="objective says"):
        check_clique(g, [1, 2], size=3)
    with pytest.raises(SolutionError, match="not a vertex"):
        check_clique(g, [7])
    with pytest.raises(SolutionError, match="repeats"):
        check_clique(g, [1, 1])
    p = CliqueProblem(g)
    with pytest.raises(SolutionError):
        p.verify([0, 1, 2], 3)


def test_problem_rejects_bad_parameters():
    from stealsearch.problems.clique import CliqueInputError
    g = seed_figure_1_1()
    with pytest.raises(CliqueInputError, match="decide needs"):
        CliqueProblem(g, mode="decide")
    with pytest.raises(CliqueInputError, match="unknown bound"):
        CliqueProblem(g, bound="magic")
    with pytest.raises(CliqueInputError, match="unknown mode"):
        CliqueProblem(g, mode="all")


def test_problem_pickles():
    # a problem that went through pickle (as it does to every Dask worker) still finds
    # the clique number networkx finds, and a clique of the original graph
    import pickle
    g = gnp(40, 0.5, seed=1)
    q = pickle.loads(pickle.dumps(CliqueProblem(g, bound="sampling")))
    r = solve(q, backend="sequential")
    G = g.to_networkx()
    assert r.objective == max(len(c) for c in nx.find_cliques(G))
    assert all(G.has_edge(a, b) for a, b in itertools.combinations(r.solution, 2))
