"""MoMC's incremental bound over the engine's finished subtrees (CliqueProblem's
``incremental``; stealsearch.engine.core.finished) against networkx.

Every search is checked three ways: ω equals networkx's; every bound the engine
published for a finished key u is at least networkx's largest clique of G_u (the
vertices up to u in the kernel's numbering) that contains u, the fact the kernel
prunes with; and the accounting saw no row of a key after it finished (``stale``),
nor a count that disagrees with the rows dealt at an epoch's start
(``recount_changes``).
"""
import dataclasses
import pickle

import networkx as nx
import numpy as np
import pytest

from stealsearch.engine.core.loop import run_epochs
from stealsearch.engine.core.policy import StealPolicy
from stealsearch.engine.solve import resume, solve
from stealsearch.engine.transports.lanes import Lanes
from stealsearch.problems.clique import CliqueProblem
from stealsearch.problems.clique.model import CliqueInputError
from forced import NodeEpochs

BOUNDS = ("colour", "maxsat", "incmaxsat", "auto")
HEURISTICS = ("amts", "none")


def random_cases(count, seed):
    """Seeded G(n, p), n <= 60, with a bound and an initial clique each."""
    rng = np.random.default_rng(seed)
    out = []
    for s in range(count):
        n = int(rng.integers(1, 61))
        p = float(rng.choice([0.1, 0.3, 0.5, 0.7, 0.85]))
        out.append((nx.gnp_random_graph(n, p, seed=int(seed * 1000 + s)),
                    BOUNDS[s % len(BOUNDS)], HEURISTICS[(s // 2) % 2]))
    return out


def nx_omega(G):
    return max((len(c) for c in nx.find_cliques(G)), default=0)


def prefix_omegas(G, problem):
    """For each vertex u of the kernel's numbering, networkx's largest clique of G_u (the
    vertices up to u) that contains u (1 + ω of u's neighbours before it), from G and
    the problem's vertex order alone."""
    label = [problem.graph.labelled([int(v)])[0] for v in problem.order]
    out = []
    for u in range(len(label)):
        before = [label[w] for w in range(u) if G.has_edge(label[u], label[w])]
        out.append(1 + nx_omega(G.subgraph(before)))
    return np.array(out, dtype=np.int64)


def off_twin(G, bound, heuristic):
    """The same search with the capability off: the same prefix decomposition and the
    initial bounds u + 1, but no key ever finished (nothing armed)."""
    p = CliqueProblem(G, bound=bound, heuristic=heuristic, incremental=True)
    p.subtree_keys = 0
    return p


def check_accounting(G, p, r):
    """What every search with the capability must show (see the module docstring)."""
    assert r.status == "optimal"
    assert r.objective == nx_omega(G)
    acc = p._finished_bounds
    assert acc.stale == 0
    assert acc.recount_changes == 0
    # a finished search: no row left of any key, and every key finished exactly once
    # (the root's children are every vertex), or none where the root was pruned
    assert not acc.open.any()
    keys = [k for k, _ in acc.log]
    assert len(keys) == len(set(keys))
    assert set(keys) in (set(), set(range(G.number_of_nodes())))
    assert set(np.flatnonzero(acc.made).tolist()) <= set(keys)
    facts = prefix_omegas(G, p)
    assert (p.finished[0] >= facts).all(), (p.finished[0], facts)
    for k, bound in acc.log:
        assert bound >= facts[k]
    return keys


def lanes(problem, threads, policy=None, epoch_nodes=None, **kw):
    transport = Lanes(threads)
    if epoch_nodes is not None:
        transport = NodeEpochs(transport, epoch_nodes)
    return run_epochs(problem, transport, policy=policy or StealPolicy(), **kw)


@pytest.mark.parametrize("G,bound,heuristic", random_cases(24, 1))
def test_one_stack_exact_and_never_more_nodes(G, bound, heuristic):
    p = CliqueProblem(G, bound=bound, heuristic=heuristic, incremental=True)
    r = lanes(p, 1)
    check_accounting(G, p, r)
    off = off_twin(G, bound, heuristic)
    r_off = lanes(off, 1)
    assert r_off.objective == r.objective
    assert not hasattr(off, "_finished_bounds")
    # one stack searches in one order: a subtree the finished bounds prune holds no
    # clique above the incumbent of that moment, so every other node is as without
    assert r.nodes <= r_off.nodes
    if r.counters["finished_pruned"] == 0:
        assert r.nodes == r_off.nodes
    plain = solve(CliqueProblem(G, bound=bound, heuristic=heuristic), backend="sequential")
    assert plain.objective == r.objective


@pytest.mark.parametrize("bound", ["colour", "maxsat"])
def test_the_bound_prunes_where_the_incumbent_grows(bound):
    """From the empty clique (no initial heuristic) the first prefixes finish with small
    bounds, and a later subtree is pruned by them: fewer nodes than without (a graph
    where it happens; on most it prunes nothing, benchmarks/RESULTS.md)."""
    G = nx.gnp_random_graph(32, 0.5, seed=33)
    p = CliqueProblem(G, bound=bound, heuristic="none", incremental=True)
    r = lanes(p, 1)
    check_accounting(G, p, r)
    r_off = lanes(off_twin(G, bound, "none"), 1)
    assert r.nodes < r_off.nodes
    assert r.counters["finished_pruned"] > 0


@pytest.mark.parametrize("G,bound,heuristic", random_cases(10, 2))
def test_lanes_forced_hand_overs_random_policies(G, bound, heuristic):
    """Two or three lanes, every chunk a few nodes, the release threshold 1: rows go
    through the shared portion all the time (released and acquired: forced, counted),
    several epochs (each recounts the rows it is dealt against the folded counts)."""
    rng = np.random.default_rng(G.number_of_nodes() * 31 + G.number_of_edges())
    policy = StealPolicy(k=int(rng.integers(1, 4)), release_threshold=1,
                         acquire=int(rng.integers(1, 5)), budget=int(rng.integers(1, 20)),
                         chunk_seconds=None, seed=int(rng.integers(0, 1000)))
    threads = int(rng.integers(2, 4))
    p = CliqueProblem(G, bound=bound, heuristic=heuristic, incremental=True)
    r = lanes(p, threads, policy, epoch_nodes=int(rng.integers(5, 40)))
    check_accounting(G, p, r)
    # in one epoch, one node a chunk: the root's children cannot stay on the lane that
    # expanded the root (threshold 1), so rows are released, and acquired to be searched
    one = CliqueProblem(G, bound=bound, heuristic=heuristic, incremental=True)
    r = lanes(one, threads, dataclasses.replace(policy, budget=1, max_budget=1))
    keys = check_accounting(G, one, r)
    if len(keys) > 2:
        assert r.workers[0].rows_released > 0
        assert r.workers[0].rows_acquired > 0


def test_resume_starts_with_no_finished_bound(tmp_path):
    """A search stopped by a node limit and checkpointed, resumed on a rebuilt problem
    (its finished bounds the initial ones): the same ω; the bounds found before the stop
    were facts, those after it are proved again."""
    G = nx.gnp_random_graph(60, 0.7, seed=3)
    p = CliqueProblem(G, bound="maxsat", heuristic="none", incremental=True)
    first = solve(p, backend="sequential", threads_per_worker=2, node_limit=30,
                  checkpoint=str(tmp_path / "ck"))
    assert first.status != "optimal"
    again = CliqueProblem(G, bound="maxsat", heuristic="none", incremental=True)
    r = resume(str(tmp_path / "ck"), again, backend="sequential", threads_per_worker=2)
    assert r.objective == nx_omega(G)
    acc = again._finished_bounds
    assert acc.stale == 0
    assert (again.finished[0] >= prefix_omegas(G, again)).all()


def test_a_copy_elsewhere_keeps_the_facts_not_the_accounting():
    G = nx.gnp_random_graph(40, 0.5, seed=4)
    p = CliqueProblem(G, bound="colour", heuristic="none", incremental=True)
    lanes(p, 1)
    q = pickle.loads(pickle.dumps(p))
    assert not hasattr(q, "_finished_bounds")
    assert (q.finished[0] == p.finished[0]).all()
    assert (q.finished[0] >= prefix_omegas(G, q)).all()


def test_a_proof_does_not_use_the_finished_bounds():
    G = nx.gnp_random_graph(30, 0.5, seed=5)
    p = CliqueProblem(G, bound="auto", incremental=True)
    proved = p.proof_problem()
    assert not proved.incremental and proved.subtree_keys == 0
    assert proved.bound == "colour"
    assert len(proved.kernel_data()) == 1


def test_bad_options():
    G = nx.gnp_random_graph(10, 0.5, seed=6)
    with pytest.raises(CliqueInputError, match="incremental"):
        CliqueProblem(G, mode="count", incremental=True)
    with pytest.raises(CliqueInputError, match="incremental"):
        CliqueProblem(G, bound="greedy", incremental=True)
