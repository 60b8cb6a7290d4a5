"""Chaos tests: SIGKILL workers of a real LocalCluster in the middle of running searches
(at a random point of the search, among short epochs, while checkpoints are written,
rank 0 with the coordinator, before the first epoch, two in one run, the last worker
while a new one joins) and check that the answer does not change: UTS counts exact,
clique optima exact and verified, clique decisions right.

One cluster serves the module: the nannies restart killed workers under new addresses,
so restarted workers also join running searches.  Every kill but the one before the
first epoch is FORCED into the search: the problem's kernel is hooked
(tests/engine/forced.py) so that a worker kills itself inside a chunk once it has
expanded a random number N of nodes; N is at most the search's nodes over the number of
processes that can search it, so some worker always gets there (pigeonhole), and the
epoch it dies in is always rolled back: every such test asserts a recovery.
"""
import os
import signal
import threading
import time

import dask
import numpy as np
import pytest

from stealsearch.engine import solve
from stealsearch.engine.deploy.cluster import dask_client
from stealsearch.problems.clique import CliqueProblem
from stealsearch.problems.clique.generators import gnp
from stealsearch.problems.uts import UTSParams, UTSProblem
from forced import Gate, HookedClique, HookedUTS
from procutil import _alive, end_processes

# T1 one level shallower: 1,031,269 nodes, depth 9, 825,408 leaves
TREE = UTSParams.parse("-t 1 -a 3 -d 9 -b 4 -r 19")
TREE_FIGURES = (1_031_269, 9, 825_408)
GRAPH = gnp(200, 0.7, seed=3)      # omega 18; 47,477 nodes (colour bound; decide 19: the same)
EVERY = 0.2                        # seconds between cuts: several cuts per run
WORKERS = 3
#: the largest N of a kill: at most (the search's nodes) / (processes that can search it,
#: a restarted one included), here 47,477 / 5 for the clique searches
MOST_NODES_BEFORE_A_KILL = 5_000
SEEN_PIDS: set[int] = set()


#: every kill here makes a nanny restart its worker; a restart that takes longer than
#: distributed's lost-worker-timeout (15 s) on a loaded machine got that worker dropped
#: from the cluster for good, and after a few of them the module ran out of workers
LOST_WORKER_TIMEOUT = {"distributed.deploy.lost-worker-timeout": "600s"}


@pytest.fixture(scope="module")
def cluster():
    with dask.config.set(LOST_WORKER_TIMEOUT), dask_client(workers=WORKERS) as client:
        SEEN_PIDS.update(client.run(os.getpid).values())
        solve(UTSProblem.preset("default"), client=client)       # kernels loaded everywhere
        yield client
        SEEN_PIDS.update(client.run(os.getpid, on_error="ignore").values())
    end_processes(sorted(SEEN_PIDS))
    assert not any(_alive(p) for p in SEEN_PIDS), "worker processes survived the cluster"


@pytest.fixture(scope="module")
def oracle():
    """UTS: the tree's figures (above; the sequential backend's, itself checked against
    hashlib and the published sizes in test_engine_uts.py); clique: the sequential
    backend's omega (18 for this graph)."""
    clique = solve(CliqueProblem(GRAPH), backend="sequential")
    assert clique.status == "optimal" and clique.verified and clique.objective == 18
    return {"count": TREE_FIGURES, "omega": clique.objective}


def searching(client) -> bool:
    """True while a search's tasks run on the workers (a joiner's warm-up excepted)."""
    try:
        busy = client.processing()
    except Exception:
        return False
    return any(str(k).startswith("stealsearch-") and "warm" not in str(k)
               for keys in busy.values() for k in keys)


def live_pids(client, at_least: int) -> list[int]:
    """The worker PIDs once ``at_least`` workers are there (killed ones come back through
    their nannies; on a loaded machine that can take a while: then add a worker)."""
    deadline, grown = time.time() + 20, False
    while True:
        pids = sorted(client.run(os.getpid, on_error="ignore").values())
        SEEN_PIDS.update(pids)
        if len(pids) >= at_least or time.time() > deadline + 40:
            return pids
        if time.time() > deadline and not grown:
            client.cluster.scale(len(client.cluster.worker_spec) + 1)
            grown = True
        time.sleep(0.1)


def killing(problem, client, tmp_path, rng, kills=1, victims=None, most=MOST_NODES_BEFORE_A_KILL):
    """``problem`` hooked so that ``kills`` worker processes (among ``victims``, a
    function of the address -> PID map; default any) each kill themselves inside a chunk
    once they have expanded a random 1..``most`` nodes; enough workers are there first."""
    live_pids(client, kills + 1)
    chosen = None if victims is None else victims(dict(client.run(os.getpid, on_error="ignore")))
    return problem.hook(tmp_path, kill_after=int(rng.integers(1, most + 1)), kills=kills,
                        victims=chosen)


def kill_before_the_search(client, victim) -> threading.Thread:
    """SIGKILL ``victim`` (a function of the address -> PID map) at once, while the
    client sets the next search up."""
    pid = victim(dict(client.run(os.getpid, on_error="ignore")))

    def go():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


def check(r, problem=None):
    """Rows conserved; a hooked problem's kills all happened and each cost a rollback."""
    c = r.conservation()
    assert c["holds"], c
    if problem is not None:
        assert problem.killed() == problem.kills, "a forced kill did not happen"
        assert r.recoveries >= 1, "a worker died inside an epoch that was not rolled back"


def uts_figures(r):
    return r.count, r.counters["depth"], r.counters["leaves"]


@pytest.mark.parametrize("seed", range(10))
def test_uts_count_exact_through_a_kill(cluster, oracle, seed, tmp_path):
    tree = killing(HookedUTS(TREE), cluster, tmp_path, np.random.default_rng(seed),
                   most=20_000)
    r = solve(tree, client=cluster, checkpoint_every=EVERY)
    assert r.status == "exhausted" and uts_figures(r) == oracle["count"]
    assert r.nodes == oracle["count"][0]
    check(r, tree)


@pytest.mark.parametrize("seed", range(3))
def test_uts_count_exact_through_two_kills(cluster, oracle, seed, tmp_path):
    tree = killing(HookedUTS(TREE), cluster, tmp_path, np.random.default_rng(100 + seed),
                   kills=2, most=20_000)
    r = solve(tree, client=cluster, checkpoint_every=EVERY)
    assert r.status == "exhausted" and uts_figures(r) == oracle["count"]
    check(r, tree)


@pytest.mark.parametrize("seed", range(3))
def test_kill_during_checkpoint_writes(cluster, oracle, seed, tmp_path):
    # a cut (and a checkpoint write) every 50 ms: kills land next to writes
    tree = killing(HookedUTS(TREE), cluster, tmp_path, np.random.default_rng(200 + seed),
                   most=20_000)
    r = solve(tree, client=cluster, checkpoint_every=0.05, checkpoint=str(tmp_path / "ck"))
    assert uts_figures(r) == oracle["count"]
    assert (tmp_path / "ck" / "manifest.json").is_file()
    check(r, tree)


def test_rank0_killed_mid_search(cluster, oracle, tmp_path):
    """Rank 0 (the lowest address: it hosts the coordinator) dies in its first chunk
    (every worker of the first epoch is dealt a row, so it has one)."""
    tree = killing(HookedUTS(TREE), cluster, tmp_path, np.random.default_rng(300),
                   victims=lambda m: [m[sorted(m)[0]]], most=1)
    r = solve(tree, client=cluster, checkpoint_every=EVERY)
    assert uts_figures(r) == oracle["count"]
    check(r, tree)


def test_a_worker_killed_before_the_first_epoch(cluster, oracle):
    """A worker killed while the client sets the search up (before or while its first
    epoch is dealt: either way the count is exact; a rollback is not forced here)."""
    live_pids(cluster, 2)
    t = kill_before_the_search(cluster, lambda m: m[sorted(m)[0]])
    r = solve(UTSProblem(TREE), client=cluster, checkpoint_every=EVERY)
    t.join(60)
    assert uts_figures(r) == oracle["count"]
    check(r)


@pytest.mark.parametrize("seed", range(6))
def test_clique_optimum_exact_through_a_kill(cluster, oracle, seed, tmp_path):
    problem = killing(HookedClique(GRAPH), cluster, tmp_path, np.random.default_rng(400 + seed))
    r = solve(problem, client=cluster, checkpoint_every=EVERY)
    assert r.status == "optimal" and r.objective == oracle["omega"] and r.verified
    assert len(r.solution) == oracle["omega"]
    assert all(GRAPH.has_edge(u, v) for i, u in enumerate(r.solution) for v in r.solution[i + 1:])
    check(r, problem)


@pytest.mark.parametrize("seed", range(6))
def test_clique_decide_through_a_kill(cluster, oracle, seed, tmp_path):
    # k = omega: a clique exists (the search may end at any node: the first worker to
    # finish a chunk dies, before it can report one); k = omega + 1: none (the whole
    # tree must be searched)
    k = oracle["omega"] + (seed % 2)
    problem = killing(HookedClique(GRAPH, mode="decide", k=k), cluster, tmp_path,
                      np.random.default_rng(500 + seed), most=1 if seed % 2 == 0 else
                      MOST_NODES_BEFORE_A_KILL)
    r = solve(problem, client=cluster, checkpoint_every=EVERY)
    if seed % 2 == 0:
        assert r.status == "found" and r.verified and len(r.solution) >= k
        assert all(GRAPH.has_edge(u, v) for i, u in enumerate(r.solution) for v in r.solution[i + 1:])
    else:
        assert r.status == "none" and r.solution is None
    check(r, problem)


@pytest.mark.parametrize("seed", range(4))
def test_exact_through_a_kill_with_threads_per_worker(cluster, oracle, seed, tmp_path):
    """Lanes (2-3 search threads per worker, engine/core/worker.py) through a
    SIGKILL: the UTS count and the clique optimum stay exact."""
    threads = 2 + seed % 2
    rng = np.random.default_rng(600 + seed)
    if seed < 2:
        tree = killing(HookedUTS(TREE), cluster, tmp_path, rng, most=20_000)
        r = solve(tree, client=cluster, checkpoint_every=EVERY, threads_per_worker=threads)
        assert r.status == "exhausted" and uts_figures(r) == oracle["count"]
        check(r, tree)
    else:
        problem = killing(HookedClique(GRAPH), cluster, tmp_path, rng)
        r = solve(problem, client=cluster, checkpoint_every=EVERY, threads_per_worker=threads)
        assert r.status == "optimal" and r.objective == oracle["omega"] and r.verified
        check(r, problem)


def test_kill_the_last_worker_while_a_new_one_joins(oracle, tmp_path):
    """One worker, killed mid-search; its nanny's restart and a worker added by
    scale() are the only ones left: the search waits for them and stays exact.  The
    search holds (a gate) until scale() was called; then the worker dies after a few
    thousand nodes of its own."""
    with dask.config.set(LOST_WORKER_TIMEOUT), dask_client(workers=1) as client:
        pids = set(client.run(os.getpid).values())
        solve(UTSProblem.preset("default"), client=client)       # kernels loaded
        cluster = client.cluster
        gate = Gate(tmp_path)
        tree = HookedUTS(TREE).hook(tmp_path, gate=gate, kill_after=5_000)

        def go():
            deadline = time.time() + 60
            while not searching(client) and time.time() < deadline:
                time.sleep(0.005)
            cluster.scale(2)
            gate.open()

        t = threading.Thread(target=go, daemon=True)
        t.start()
        try:
            r = solve(tree, client=client, checkpoint_every=EVERY)
        finally:
            gate.open()
            t.join(60)
            pids.update(client.run(os.getpid, on_error="ignore").values())
        assert uts_figures(r) == oracle["count"]
        check(r, tree)
    end_processes(sorted(pids))
    assert not any(_alive(p) for p in pids)
