"""Chaos tests: SIGKILL workers of a real LocalCluster at random moments of running
searches (while rows are stolen, at the cuts that end the short epochs, while a
checkpoint is written, rank 0 with the coordinator, before the first epoch, two in one
run, the last worker while a new one joins) and check that the answer does not change:
UTS counts exact, clique optima exact and verified, clique decisions right.

One cluster serves the module: the nannies restart killed workers under new addresses,
so restarted workers also join running searches.  A kill is aimed at a running search:
the killer waits until the search's tasks run on the workers, then waits a random
0-0.15 s more (the trees take ~0.2-1 s on two cores), and a tally at the end checks
that most kills did land mid-search (each one cost a recovery).
"""
import os
import signal
import threading
import time

import numpy as np
import pytest

from stealsearch.engine import solve
from stealsearch.engine.deploy.cluster import dask_client
from stealsearch.problems.clique import CliqueProblem
from stealsearch.problems.clique.generators import gnp
from stealsearch.problems.uts import UTSParams, UTSProblem
from procutil import _alive, end_processes

# T1 one level shallower: 1,031,269 nodes, depth 9, 825,408 leaves
TREE = UTSProblem(UTSParams.parse("-t 1 -a 3 -d 9 -b 4 -r 19"))
TREE_FIGURES = (1_031_269, 9, 825_408)
GRAPH = gnp(200, 0.7, seed=3)      # omega 18; ~47k nodes (colour bound), ~1 s of one core
EVERY = 0.2                        # seconds between cuts: several cuts per run
WORKERS = 3
SEEN_PIDS: set[int] = set()
RECOVERIES: list[int] = []


@pytest.fixture(scope="module")
def cluster():
    with dask_client(workers=WORKERS) as client:
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


def kill_during_search(client, rng, kills, victims=None, at_once=False):
    """SIGKILL ``kills`` distinct workers (leaving one alive) once the next search runs,
    each after a random 0-0.15 s; ``victims`` picks them (a function of the sorted
    addresses -> PIDs map); ``at_once``: right away, before the search starts."""
    pids = live_pids(client, kills + 1)
    by_addr = dict(client.run(os.getpid, on_error="ignore"))
    if victims is not None:
        chosen = victims(by_addr)
    else:
        kills = min(kills, len(pids) - 1)
        chosen = [int(p) for p in rng.choice(pids, size=kills, replace=False)] if kills > 0 else []
    delays = [float(rng.uniform(0, 0.15)) for _ in chosen]

    def go():
        deadline = time.time() + 60
        while not at_once and not searching(client) and time.time() < deadline:
            time.sleep(0.005)
        for d, pid in zip(delays, chosen):
            time.sleep(d)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


def check(r):
    c = r.conservation()
    assert c["holds"], c
    RECOVERIES.append(r.recoveries)


def uts_figures(r):
    return r.count, r.counters["depth"], r.counters["leaves"]


@pytest.mark.parametrize("seed", range(10))
def test_uts_count_exact_through_a_kill(cluster, oracle, seed):
    t = kill_during_search(cluster, np.random.default_rng(seed), 1)
    r = solve(TREE, client=cluster, checkpoint_every=EVERY)
    t.join(60)
    assert r.status == "exhausted" and uts_figures(r) == oracle["count"]
    assert r.nodes == oracle["count"][0]
    check(r)


@pytest.mark.parametrize("seed", range(3))
def test_uts_count_exact_through_two_kills(cluster, oracle, seed):
    t = kill_during_search(cluster, np.random.default_rng(100 + seed), 2)
    r = solve(TREE, client=cluster, checkpoint_every=EVERY)
    t.join(60)
    assert r.status == "exhausted" and uts_figures(r) == oracle["count"]
    check(r)


@pytest.mark.parametrize("seed", range(3))
def test_kill_during_checkpoint_writes(cluster, oracle, seed, tmp_path):
    # a cut (and a checkpoint write) every 50 ms: kills land next to writes
    t = kill_during_search(cluster, np.random.default_rng(200 + seed), 1)
    r = solve(TREE, client=cluster, checkpoint_every=0.05, checkpoint=str(tmp_path / "ck"))
    t.join(60)
    assert uts_figures(r) == oracle["count"]
    assert (tmp_path / "ck" / "manifest.json").is_file()
    check(r)


@pytest.mark.parametrize("when", ["rank0", "before-the-first-epoch"])
def test_rank0_killed_or_killed_before_the_first_epoch(cluster, oracle, when):
    """Rank 0 (the lowest address: it hosts the coordinator) killed mid-search; or a
    worker killed while the client sets the search up."""
    rng = np.random.default_rng(300 if when == "rank0" else 301)
    t = kill_during_search(cluster, rng, 1, victims=lambda m: [m[sorted(m)[0]]],
                           at_once=when != "rank0")
    r = solve(TREE, client=cluster, checkpoint_every=EVERY)
    t.join(60)
    assert uts_figures(r) == oracle["count"]
    check(r)


@pytest.mark.parametrize("seed", range(6))
def test_clique_optimum_exact_through_a_kill(cluster, oracle, seed):
    t = kill_during_search(cluster, np.random.default_rng(400 + seed), 1)
    r = solve(CliqueProblem(GRAPH), client=cluster, checkpoint_every=EVERY)
    t.join(60)
    assert r.status == "optimal" and r.objective == oracle["omega"] and r.verified
    assert len(r.solution) == oracle["omega"]
    assert all(GRAPH.has_edge(u, v) for i, u in enumerate(r.solution) for v in r.solution[i + 1:])
    check(r)


@pytest.mark.parametrize("seed", range(6))
def test_clique_decide_through_a_kill(cluster, oracle, seed):
    # k = omega: a clique exists; k = omega + 1: none (the whole tree must be searched)
    k = oracle["omega"] + (seed % 2)
    t = kill_during_search(cluster, np.random.default_rng(500 + seed), 1)
    r = solve(CliqueProblem(GRAPH, mode="decide", k=k), client=cluster, checkpoint_every=EVERY)
    t.join(60)
    if seed % 2 == 0:
        assert r.status == "found" and r.verified and len(r.solution) >= k
        assert all(GRAPH.has_edge(u, v) for i, u in enumerate(r.solution) for v in r.solution[i + 1:])
    else:
        assert r.status == "none" and r.solution is None
    check(r)


@pytest.mark.parametrize("seed", range(4))
def test_exact_through_a_kill_with_threads_per_worker(cluster, oracle, seed):
    """Lanes (2-3 search threads per worker, engine/core/worker.py) through a
    SIGKILL: the UTS count and the clique optimum stay exact."""
    threads = 2 + seed % 2
    t = kill_during_search(cluster, np.random.default_rng(600 + seed), 1)
    if seed < 2:
        r = solve(TREE, client=cluster, checkpoint_every=EVERY, threads_per_worker=threads)
        t.join(60)
        assert r.status == "exhausted" and uts_figures(r) == oracle["count"]
    else:
        r = solve(CliqueProblem(GRAPH), client=cluster, checkpoint_every=EVERY,
                  threads_per_worker=threads)
        t.join(60)
        assert r.status == "optimal" and r.objective == oracle["omega"] and r.verified
    check(r)


def test_kill_the_last_worker_while_a_new_one_joins(oracle):
    """One worker, killed mid-search; its nanny's restart and a worker added by
    scale() are the only ones left: the search waits for them and stays exact."""
    with dask_client(workers=1) as client:
        pids = set(client.run(os.getpid).values())
        solve(UTSProblem.preset("default"), client=client)       # kernels loaded
        cluster = client.cluster

        def go():
            deadline = time.time() + 60
            while not searching(client) and time.time() < deadline:
                time.sleep(0.005)
            time.sleep(0.05)
            cluster.scale(2)
            os.kill(next(iter(pids)), signal.SIGKILL)

        t = threading.Thread(target=go, daemon=True)
        t.start()
        try:
            r = solve(TREE, client=client, checkpoint_every=EVERY)
        finally:
            t.join(60)
            pids.update(client.run(os.getpid, on_error="ignore").values())
        assert uts_figures(r) == oracle["count"]
        assert r.recoveries >= 1
        check(r)
    end_processes(sorted(pids))
    assert not any(_alive(p) for p in pids)


def test_zz_kills_landed_mid_search():
    """The kills above must have hit running searches, or they tested nothing."""
    assert len(RECOVERIES) >= 30
    assert sum(1 for x in RECOVERIES if x > 0) >= len(RECOVERIES) // 2, RECOVERIES
