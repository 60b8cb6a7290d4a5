"""Chaos tests: SIGKILL workers of a real LocalCluster at random moments (during steals,
during cuts, while others join) and check that the answer does not change: UTS counts
exact, clique optima exact and verified, clique decisions right.  The nannies restart
killed workers under new addresses, so restarted workers also join running searches.
"""
import os
import signal
import threading
import time

import numpy as np
import pytest

from engine import solve
from engine.cluster import dask_client
from problems.clique import CliqueProblem
from problems.clique.generators import gnp
from problems.uts import UTSParams, UTSProblem
from procutil import _alive, end_processes

# T1 one level shallower: 1,031,269 nodes, ~1 s of one core
TREE = UTSProblem(UTSParams.parse("-t 1 -a 3 -d 9 -b 4 -r 19"))
GRAPH = gnp(250, 0.7, seed=3)      # ~1 M nodes
EVERY = 0.3          # seconds between cuts: several cuts per run
SEEN_PIDS: set[int] = set()
RECOVERIES: list[int] = []


@pytest.fixture(scope="module")
def cluster():
    with dask_client(workers=3) as client:
        SEEN_PIDS.update(client.run(os.getpid).values())
        yield client
        SEEN_PIDS.update(client.run(os.getpid, on_error="ignore").values())
    end_processes(sorted(SEEN_PIDS))
    assert not any(_alive(p) for p in SEEN_PIDS), "worker processes survived the cluster"


@pytest.fixture(scope="module")
def oracle():
    tree = solve(TREE, backend="sequential")
    clique = solve(CliqueProblem(GRAPH), backend="sequential")
    return {"count": (tree.count, tree.counters["depth"], tree.counters["leaves"]),
            "omega": clique.objective}


def kill_later(client, rng, kills):
    """SIGKILL ``kills`` distinct workers, each after a random delay (0.05-0.8 s),
    leaving one alive (restarted workers join back; on a loaded machine they may take
    a while, and the search must not wait for them)."""
    deadline, grown = time.time() + 10, False
    while True:
        pids = sorted(client.run(os.getpid, on_error="ignore").values())
        if len(pids) >= 2 or time.time() > deadline + 30:
            break
        if time.time() > deadline and not grown:
            # the nannies restart slowly on a loaded machine: add a worker instead
            client.cluster.scale(len(client.cluster.worker_spec) + 1)
            grown = True
        time.sleep(0.5)
    SEEN_PIDS.update(pids)
    kills = min(kills, len(pids) - 1)
    victims = [int(p) for p in rng.choice(pids, size=kills, replace=False)] if kills > 0 else []
    delays = [float(rng.uniform(0.05, 0.8)) for _ in victims]

    def go():
        for d, pid in zip(delays, victims):
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


@pytest.mark.parametrize("seed", range(12))
def test_uts_count_exact_through_a_kill(cluster, oracle, seed):
    rng = np.random.default_rng(seed)
    t = kill_later(cluster, rng, 1)
    r = solve(TREE, client=cluster, checkpoint_every=EVERY)
    t.join(5)
    assert r.status == "exhausted"
    assert (r.count, r.counters["depth"], r.counters["leaves"]) == oracle["count"]
    check(r)


@pytest.mark.parametrize("seed", range(3))
def test_uts_count_exact_through_two_kills(cluster, oracle, seed):
    rng = np.random.default_rng(100 + seed)
    t = kill_later(cluster, rng, 2)
    r = solve(TREE, client=cluster, checkpoint_every=EVERY)
    t.join(5)
    assert (r.count, r.counters["depth"], r.counters["leaves"]) == oracle["count"]
    check(r)


@pytest.mark.parametrize("seed", range(3))
def test_kill_during_checkpoint_writes(cluster, oracle, seed, tmp_path):
    rng = np.random.default_rng(200 + seed)
    t = kill_later(cluster, rng, 1)
    r = solve(TREE, client=cluster, checkpoint_every=0.1, checkpoint=str(tmp_path / "ck"))
    t.join(5)
    assert r.count == oracle["count"][0]
    assert (tmp_path / "ck" / "manifest.json").is_file()
    check(r)


@pytest.mark.parametrize("seed", range(7))
def test_clique_optimum_exact_through_a_kill(cluster, oracle, seed):
    rng = np.random.default_rng(300 + seed)
    t = kill_later(cluster, rng, 1 + seed % 2)
    r = solve(CliqueProblem(GRAPH), client=cluster, checkpoint_every=EVERY)
    t.join(5)
    assert r.status == "optimal" and r.objective == oracle["omega"] and r.verified
    assert len(r.solution) == oracle["omega"]
    check(r)


@pytest.mark.parametrize("seed", range(6))
def test_clique_decide_through_a_kill(cluster, oracle, seed):
    rng = np.random.default_rng(400 + seed)
    # k = omega: a clique exists; k = omega + 1: none (the whole tree must be searched)
    k = oracle["omega"] + (seed % 2)
    t = kill_later(cluster, rng, 1)
    r = solve(CliqueProblem(GRAPH, mode="decide", k=k), client=cluster, checkpoint_every=EVERY)
    t.join(5)
    if seed % 2 == 0:
        assert r.status == "found" and r.verified and len(r.solution) >= k
    else:
        assert r.status == "none" and r.solution is None
    check(r)


def test_kill_the_last_worker_while_a_new_one_joins(oracle):
    """One worker, killed mid-search; its nanny's restart and a worker added by
    scale() are the only ones left: the search waits for them and stays exact."""
    with dask_client(workers=1) as client:
        pids = set(client.run(os.getpid).values())
        cluster = client.cluster

        def go():
            time.sleep(0.4)
            cluster.scale(2)
            os.kill(next(iter(pids)), signal.SIGKILL)

        t = threading.Thread(target=go, daemon=True)
        t.start()
        r = solve(TREE, client=client, checkpoint_every=EVERY)
        t.join(5)
        pids.update(client.run(os.getpid, on_error="ignore").values())
        assert r.count == oracle["count"][0]
        assert r.recoveries >= 1
        check(r)
    end_processes(sorted(pids))


def test_zz_kills_landed_mid_search():
    """The kills above must have hit running searches, or they tested nothing."""
    assert len(RECOVERIES) >= 30
    assert sum(1 for x in RECOVERIES if x > 0) >= len(RECOVERIES) // 2, RECOVERIES
