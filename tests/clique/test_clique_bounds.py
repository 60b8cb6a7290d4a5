"""The MCS-family bounds (colour, recolour, infra, maxsat), the vertex orders and the
initial clique heuristic: every combination against networkx and the DIMACS files."""
import functools
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from stealsearch.engine.solve import solve
from stealsearch.problems.clique import CliqueProblem, check_clique, gnp, read_dimacs
from stealsearch.problems.clique.kernels.greedy import greedy_clique
from stealsearch.problems.clique.kernels.orders import colour_sort_order, degeneracy_order, degree_order
from stealsearch.problems.clique.problem import FAST_BOUNDS, HEURISTICS, ORDERS

DATA = Path(__file__).parent / "data"


@functools.lru_cache(maxsize=None)
def case(n, p, s):
    g = gnp(n, p, seed=s)
    G = g.to_networkx()
    return g, G, max((len(c) for c in nx.find_cliques(G)), default=0)


def cases(count, seed):
    rng = np.random.default_rng(seed)
    out = []
    for s in range(count):
        p = float(rng.choice([0.1, 0.3, 0.5, 0.7, 0.85, 0.95]))
        # dense graphs stay small: networkx enumerates every maximal clique
        n = int(rng.integers(1, 110 if p < 0.6 else 48))
        out.append((n, p, 1000 + s))
    return out


@pytest.mark.parametrize("bound", FAST_BOUNDS)
def test_every_order_and_heuristic_finds_networkx_omega(bound):
    for n, p, s in cases(70, 14):
        g, G, omega = case(n, p, s)
        for order in ORDERS:
            for heuristic in HEURISTICS:
                r = solve(CliqueProblem(g, bound=bound, order=order, heuristic=heuristic),
                          backend="sequential")
                assert r.status == "optimal" and r.objective == omega, (n, p, s, order, heuristic)
                assert r.verified and len(r.solution) == omega
                sub = G.subgraph(r.solution)
                assert sub.number_of_edges() == omega * (omega - 1) // 2


def test_bounds_agree_on_wider_graphs_and_reasoning_prunes():
    # 2-5 words per bitset; the reasoning bounds never expand more nodes than the plain
    # colour bound on these graphs (measured, not a theorem: the incumbent can come later)
    for n, p, s in [(150, 0.6, 1), (200, 0.5, 2), (260, 0.4, 3), (120, 0.8, 4)]:
        g = gnp(n, p, seed=s)
        res = {b: solve(CliqueProblem(g, bound=b, heuristic="none"), backend="sequential")
               for b in FAST_BOUNDS}
        assert len({r.objective for r in res.values()}) == 1, {b: r.objective for b, r in res.items()}
        assert res["maxsat"].nodes <= res["colour"].nodes
        assert res["recolour"].nodes <= res["colour"].nodes


@pytest.mark.parametrize("line", (DATA / "omega.tsv").read_text().splitlines()[1:])
def test_dimacs_files_every_bound(line):
    name, n, m, omega = line.split("\t")
    g = read_dimacs(DATA / f"{name}.clq")
    nodes = {}
    for bound in FAST_BOUNDS:
        problem = CliqueProblem(g, bound=bound)
        r = solve(problem, backend="sequential")
        assert r.objective == int(omega) and r.verified, (name, bound)
        # no node at all only where the first incumbent meets the root bound
        assert r.nodes >= 1 or problem.root_bound == len(problem.start_clique) == int(omega)
        nodes[bound] = r.nodes


def test_incmaxsat_on_dense_graphs_agrees_with_networkx_and_prunes_more():
    # density .8-.95: where the virtual literals, Re-NUMBER and the lookahead act
    rng = np.random.default_rng(41)
    for s in range(30):
        p = float(rng.choice([0.8, 0.85, 0.9, 0.95]))
        n = int(rng.integers(20, 50 if p < 0.9 else 40))     # networkx enumerates them all
        g, G, omega = case(n, p, 2000 + s)
        for h in HEURISTICS:
            r = solve(CliqueProblem(g, bound="incmaxsat", heuristic=h), backend="sequential")
            assert r.status == "optimal" and r.objective == omega and r.verified, (n, p, s, h)
            assert check_clique(g, r.solution, size=omega, maximal=True)
    # fewer nodes than the frozen-class reasoning on wider dense graphs (measured, not a
    # theorem: 3 words per bitset, classes of one to four vertices)
    for n, p, s in [(150, 0.85, 5), (130, 0.9, 6), (130, 0.8, 7)]:
        g = gnp(n, p, seed=s)
        res = {b: solve(CliqueProblem(g, bound=b, heuristic="none"), backend="sequential")
               for b in ("colour", "maxsat", "incmaxsat")}
        assert len({r.objective for r in res.values()}) == 1, {b: r.objective for b, r in res.items()}
        assert res["incmaxsat"].nodes < res["maxsat"].nodes < res["colour"].nodes, (
            n, p, {b: r.nodes for b, r in res.items()})


def test_auto_picks_maxsat_only_on_dense_graphs_with_a_large_clique():
    from stealsearch.problems.clique.model import Graph
    # complete 8-partite graph, parts of 15: density .88 but ω = 8 -> colour
    parts = 8
    edges = [(u, v) for u in range(120) for v in range(u + 1, 120) if u % parts != v % parts]
    multi = Graph.from_edges(120, edges)
    assert multi.density() > 0.85
    assert CliqueProblem(multi).bound == "colour"
    r = solve(CliqueProblem(multi), backend="sequential")
    assert r.objective == parts and r.verified
    assert CliqueProblem(gnp(90, 0.8, seed=3)).bound == "maxsat"
    assert CliqueProblem(gnp(90, 0.5, seed=3)).bound == "colour"
    assert CliqueProblem(gnp(90, 0.8, seed=3), heuristic="none").bound == "maxsat"
    assert CliqueProblem(gnp(90, 0.8, seed=3), mode="decide", k=5).bound == "maxsat"


def test_auto_picks_maxsat_at_any_density_where_the_clique_is_large():
    import itertools

    from stealsearch.problems.clique.model import Graph
    from stealsearch.problems.clique.problem import AUTO_MAXSAT_LARGE_CLIQUE
    # G(150, .3) (density < 0.7) with a clique planted on the first vertices
    for size, want in ((AUTO_MAXSAT_LARGE_CLIQUE + 2, "maxsat"), (20, "colour")):
        G = gnp(150, 0.3, seed=8).to_networkx()
        G.add_edges_from(itertools.combinations(range(size), 2))
        g = Graph.from_networkx(G)
        assert g.density() < 0.7
        problem = CliqueProblem(g)
        assert problem.bound == want, size
        r = solve(problem, backend="sequential")
        assert r.objective == max(len(c) for c in nx.find_cliques(G)) == size and r.verified


def test_auto_takes_the_maxiset_order_where_its_partition_is_close_to_the_clique():
    from stealsearch.problems.clique.problem import AUTO_MAXISET_RATIO
    # hamming8-4: 20 maximum independent sets for omega 16, within the ratio -> maxiset;
    # p_hat300-3: its partition is twice omega -> the degeneracy order stays
    # johnson8-4-4 (70 vertices) is below AUTO_MAXISET_MIN_N
    for name, want in (("hamming8-4", "maxiset"), ("p_hat300-1", "degeneracy"),
                       ("johnson8-4-4", "degeneracy"), ("keller4", "degeneracy")):
        g = read_dimacs(DATA / f"{name}.clq")
        problem = CliqueProblem(g)
        assert problem.order_name == want, name
        r = solve(problem, backend="sequential")
        omega = int(dict(line.split("\t")[::3] for line in
                         (DATA / "omega.tsv").read_text().splitlines()[1:])[name])
        assert r.status == "optimal" and r.objective == omega and r.verified, name
        if want == "maxiset":
            assert problem.root_bound <= AUTO_MAXISET_RATIO * len(problem.start_clique)
            assert problem.bound == "filtsat"
    # an explicit order other than the default is kept
    assert CliqueProblem(read_dimacs(DATA / "hamming8-4.clq"), order="degree").order_name == "degree"


@pytest.mark.parametrize("name", ["gen200_p0.9_55.clq.gz", "frb30-15-1.clq.gz"])
def test_a_proof_of_auto_in_the_maxiset_order_checks(tmp_path, name):
    # the proof's search keeps auto's order with the logged colour bound: a tree
    # (gen200_p0.9_55) and a root the partition alone closes (frb30-15-1: the root's
    # partition, renumbered with the vertices, is the one the proof writes)
    from stealsearch.check_proof import check_files

    g = read_dimacs(DATA / name)
    problem = CliqueProblem(g)
    assert problem.order_name == "maxiset"
    prefix = tmp_path / "p"
    r = solve(problem, backend="sequential", proof=str(prefix))
    assert r.status == "optimal" and r.info["proof"]["written"]
    check_files(f"{prefix}.opb", f"{prefix}.pbp")


def test_auto_with_the_maxiset_order_agrees_with_networkx_on_dense_graphs(monkeypatch):
    # dense G(n, p), the size threshold lifted: where the rule switches, the first
    # incumbent is carried into the new numbering (a clique of the graph, checked) and
    # omega stays networkx's, in max and decide mode, with and without the first incumbent
    import stealsearch.problems.clique.problem as problem_module

    monkeypatch.setattr(problem_module, "AUTO_MAXISET_MIN_N", 0)
    rng = np.random.default_rng(77)
    switched = 0
    for s in range(40):
        n = int(rng.integers(12, 60))
        p = float(rng.choice([0.6, 0.75, 0.85, 0.92]))
        g, G, omega = case(n, p, 3000 + s)
        for heuristic in ("amts", "none"):
            problem = CliqueProblem(g, heuristic=heuristic)
            switched += problem.order_name == "maxiset"
            if heuristic == "amts":
                assert check_clique(g, problem.initial_solution(), size=problem.initial_incumbent())
            r = solve(problem, backend="sequential")
            assert r.objective == omega and r.verified, (n, p, s, heuristic)
            assert omega <= problem.root_bound
        for k in (omega, omega + 1):
            problem = CliqueProblem(g, mode="decide", k=k)
            switched += problem.order_name == "maxiset"
            r = solve(problem, backend="sequential")
            assert r.status == ("found" if k == omega else "none"), (n, p, s, k)
            assert k > omega or (len(r.solution) >= k and r.verified)
    assert switched >= 40          # the rule fires on many of these problems


def test_count_maximal_and_count_ignore_the_bound_choice():
    g = gnp(60, 0.4, seed=3)
    want = sum(1 for _ in nx.find_cliques(g.to_networkx()))
    for bound in FAST_BOUNDS:
        r = solve(CliqueProblem(g, mode="count-maximal", bound=bound), backend="sequential")
        assert r.count == want
    want_all = 1 + sum(1 for _ in nx.enumerate_all_cliques(g.to_networkx()))
    assert solve(CliqueProblem(g, mode="count", bound="maxsat"), backend="sequential").count == want_all


@pytest.mark.parametrize("bound", FAST_BOUNDS)
def test_decide_with_every_bound(bound):
    for n, p, s in cases(25, 15):
        g, G, omega = case(n, p, s)
        for k in {1, max(1, omega), omega + 1}:
            r = solve(CliqueProblem(g, mode="decide", k=k, bound=bound), backend="sequential")
            assert (r.status == "found") == (k <= omega), (n, p, s, k)
            if r.status == "found":
                assert len(r.solution) >= k and r.verified


def test_initial_clique_is_a_verified_maximal_clique_and_the_answer_when_optimal():
    g = read_dimacs(DATA / "san200_0.9_1.clq")
    problem = CliqueProblem(g)                        # greedy heuristic by default
    start = problem.initial_solution()
    assert check_clique(g, start, size=len(start), maximal=True)
    assert problem.initial_incumbent() == len(start)
    r = solve(problem, backend="sequential")
    assert r.status == "optimal" and r.objective == 70 and r.verified
    # san200_0.9_1: the heuristic finds the planted 70-clique, the search only proves it
    assert len(start) == 70 and r.nodes <= 10
    none = CliqueProblem(g, heuristic="none")
    assert none.initial_incumbent() == 0 and none.initial_solution() == []


def test_heuristic_clique_is_maximal_on_random_graphs():
    for n, p, s in cases(40, 16):
        g, G, omega = case(n, p, s)
        adj = g.rows.view(np.int64)
        vs = [int(v) for v in greedy_clique(adj, g.n, g.n, 10 ** 6)]
        if g.n == 0:
            assert vs == []
            continue
        assert check_clique(g, g.labelled(sorted(vs)), size=len(vs), maximal=True)
        assert len(vs) <= omega


def test_orders_are_permutations():
    g = gnp(150, 0.3, seed=8)
    rows = g.rows.view(np.int64)
    dgn = degeneracy_order(rows, g.n)
    for order in (dgn, degree_order(rows, g.n), colour_sort_order(rows, g.n, dgn)):
        assert sorted(order.tolist()) == list(range(g.n))
    deg = [int(sum(bin(int(w) & (2 ** 64 - 1)).count("1") for w in r)) for r in rows]
    by_degree = degree_order(rows, g.n)
    assert all(deg[by_degree[i]] >= deg[by_degree[i + 1]] for i in range(g.n - 1))


def test_problem_rejects_unknown_order_and_heuristic():
    from stealsearch.problems.clique import CliqueInputError
    g = gnp(10, 0.5, seed=1)
    with pytest.raises(CliqueInputError, match="order"):
        CliqueProblem(g, order="random")
    with pytest.raises(CliqueInputError, match="heuristic"):
        CliqueProblem(g, heuristic="tabu")


def _peers_present():
    try:
        from stealsearch.benchmarks.bench_peers import find_peers
    except ImportError:
        return False
    peers = find_peers()
    return bool(peers["glasgow"]) and bool(peers["momc"])


@pytest.mark.skipif(not _peers_present(), reason="native peers not built "
                    "(see benchmarks/bench_peers.py; $STEALSEARCH_PEERS)")
def test_peer_benchmark_quick_mode_agrees_with_the_peers(tmp_path):
    from stealsearch.benchmarks.bench_peers import main
    rows = main(["--quick", "--runs", "1", "--no-uts", "--only", "brock200_2", "keller4",
                 "--out", str(tmp_path / "peers.md")])
    assert [r["instance"] for r in rows] == ["brock200_2", "keller4"]
    for r in rows:                                   # main() raises if any ω disagreed
        assert r["glasgow"]["omega"] == r["momc"]["omega"] == r["colour"]["omega"]
    assert "glasgow" in (tmp_path / "peers.md").read_text()
