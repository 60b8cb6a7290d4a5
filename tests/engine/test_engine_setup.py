"""The Dask set-up path on a real LocalCluster (3 worker processes): the problem is
loaded once per search per worker (not per epoch), a worker killed while loading is
a lost worker, workers drop problems nobody uses, a problem the workers cannot load
fails the search in one line, and a worker retired mid-search hands its rows over
without a rollback.  Every worker process is ended by PID.

What must happen in the middle of something is held there by a gate
(tests/engine/forced.py): a load waits for it, a search expands nothing until it opens;
the test acts, then opens it."""
import dataclasses
import os
import signal
import threading
import time

import pytest

from stealsearch.engine import SearchFailed, solve
from stealsearch.engine.transports.dask import calls
from stealsearch.engine.transports.dask.tables import (load_count, loaded_problems, loads_under_way,
                                        running_searches)
from stealsearch.engine.core.epochs import EpochSpec
from stealsearch.engine.core.loop import run_epochs
from stealsearch.engine.transports.dask.driver import DaskTransport
from stealsearch.problems.uts import UTSParams, UTSProblem
from forced import Gate, HeldLoad, NodeEpochs, hooked_uts
from procutil import _alive, owned_cluster, wait_until, worker_pids

TREE = UTSParams.parse("-t 1 -a 3 -d 9 -b 4 -r 19")     # 1,031,269 nodes
TREE_COUNT = 1031269
T1 = 4130071
SEEN_PIDS: set[int] = set()


class BrokenOnWorkers(UTSProblem):
    """A UTS tree that cannot be unpickled (on a worker)."""

    def __setstate__(self, state):
        raise RuntimeError("this problem cannot be loaded here")


def pids(client) -> dict:
    return worker_pids(client, SEEN_PIDS)


@pytest.fixture(scope="module")
def cluster():
    with owned_cluster(3, SEEN_PIDS) as client:
        yield client


def test_repeated_tiny_solves_load_the_problem_once_per_worker(cluster):
    before = cluster.run(load_count)
    n = 8
    for _ in range(n):
        r = solve(UTSProblem.preset("default"), client=cluster)
        assert r.status == "exhausted" and r.count == 1732
        assert r.conservation()["holds"]
        info = r.info
        assert len(info["last_epoch_workers"]) == 3
        assert info["problem_loads"] == 3
        assert info["bytes_shipped"] == 3 * info["problem_bytes"] > 0
        assert info["setup_seconds"] > 0
    after = cluster.run(load_count)
    assert set(after) == set(before)
    assert all(after[a] - before[a] == n for a in after), (before, after)
    assert cluster in calls._registered          # the plugin: registered once per client
    # every search's teardown unloads its problem from every worker
    wait_until(lambda: not any(cluster.run(loaded_problems).values()), 15,
               "the workers dropped the problems")


def test_progress_snapshot_has_each_workers_local_size_and_idle_flag():
    """The coordinator's progress snapshot (the dashboard's per-worker figures): the
    existing keys, plus each worker's local stack size and whether it is looking for
    work, as of its latest report (a late report does not win)."""
    from stealsearch.engine.core.termination import CoordinatorEndpoint
    from stealsearch.engine.core.termination import Coordinator

    end = CoordinatorEndpoint(search=None, coordinator=Coordinator(2, None))
    end.handle_report(rank=0, nodes=10, shared=3, steals=0, best=None, seq=1, local=40,
                      looking=False)
    end.handle_report(rank=1, nodes=5, shared=0, steals=1, best=None, seq=2, local=0,
                      looking=True)
    end.handle_report(rank=1, nodes=4, shared=2, steals=1, best=None, seq=1, local=9,
                      looking=False)            # late: an older report of rank 1
    snap = end.handle_progress()
    assert snap["per_worker"] == [10, 5] and snap["shared"] == [3, 0]
    assert snap["local"] == [40, 0] and snap["idle"] == [False, True]


def test_the_problem_is_not_sent_again_per_epoch(cluster):
    assert "problem" not in {f.name for f in dataclasses.fields(EpochSpec)}
    # an epoch every 300,000 nodes (not every few ms: a fast machine did the tree in one)
    r = run_epochs(UTSProblem(TREE), NodeEpochs(DaskTransport(cluster), 300_000),
                   checkpoint_every=3600)
    assert r.count == TREE_COUNT and r.conservation()["holds"]
    assert r.epochs == 4                              # 1,031,269 nodes, 300,000 an epoch
    n = len(r.info["last_epoch_workers"])
    assert r.info["problem_loads"] == n == 3
    assert r.info["bytes_shipped"] == n * r.info["problem_bytes"]


def test_a_worker_killed_while_loading_is_a_lost_worker(cluster, tmp_path):
    """SIGKILL of a worker while it unpickles the problem: the first epoch (whose task
    waits there for the load) rolls back, the others go on, the count stays exact.
    Every load waits for a gate; the test kills the victim once all three are under
    way and opens the gate once the scheduler has seen it go."""
    found = pids(cluster)
    victim_addr = sorted(found)[1]
    gate = Gate(tmp_path)
    held = {}

    def kill_while_loading():
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                loading = cluster.run(loads_under_way, on_error="ignore")
                if sum(1 for a in found if loading.get(a)) == len(found):
                    break
                time.sleep(0.02)
            held["from"] = time.perf_counter()
            os.kill(found[victim_addr], signal.SIGKILL)
            wait_until(lambda: victim_addr not in cluster.scheduler_info()["workers"], 60,
                       "the scheduler saw the victim go")
            held["to"] = time.perf_counter()
        finally:
            gate.open()

    t = threading.Thread(target=kill_while_loading, daemon=True)
    t.start()
    r = solve(HeldLoad(TREE, gate), client=cluster, checkpoint_every=0.3)
    t.join(10)
    assert not _alive(found[victim_addr])
    assert r.status == "exhausted" and r.count == TREE_COUNT
    assert r.conservation()["holds"]
    assert r.recoveries >= 1          # the victim was a worker of the first epoch
    # the clock starts once loaded workers run: loading is set-up, not search (every
    # load was under way before the kill and ended after the gate opened)
    held_seconds = held["to"] - held["from"]
    assert r.info["setup_seconds"] >= held_seconds
    assert r.info["load_seconds_max"] >= held_seconds
    assert victim_addr not in r.info["last_epoch_workers"]
    cluster.wait_for_workers(3, timeout=60)        # the nanny restarted the victim
    pids(cluster)


def test_a_problem_nobody_uses_is_dropped_by_its_worker(cluster):
    """A load whose client never comes back (no epoch, no teardown): the worker drops
    the problem after the idle time the client asked for."""
    from distributed.protocol import to_serialize
    from distributed.protocol.pickle import dumps

    addr = sorted(calls.live_workers(cluster))[0]
    blob = dumps(UTSProblem.preset("default"))
    loads_before = cluster.run(load_count, workers=[addr])[addr]

    async def load():
        return await cluster.rpc(addr).stealsearch_load(
            search_id="orphaned-load", blob=to_serialize(blob), keep_idle=0.5)

    reply = cluster.sync(load)
    # loaded (not whether it is still there: 0.5 s may have passed on a loaded machine)
    assert reply["status"] == "ok" and reply["loaded"]
    assert cluster.run(load_count, workers=[addr])[addr] == loads_before + 1
    wait_until(lambda: "orphaned-load" not in cluster.run(loaded_problems, workers=[addr])[addr],
               15, "the idle problem was dropped")


def test_a_problem_the_workers_cannot_load_fails_the_search(cluster):
    with pytest.raises(SearchFailed, match="cannot be loaded on .*: RuntimeError: this "
                                           "problem cannot be loaded here"):
        solve(BrokenOnWorkers(TREE), client=cluster)
    # nothing of it is left running on the workers
    wait_until(lambda: not any(cluster.run(running_searches).values()), 15,
               "the workers ended the failed search")


def retire_when_searching(cluster, victim: str, retired: dict, gate: Gate) -> threading.Thread:
    """A thread that retires ``victim`` once an epoch runs on it (at most 60 s of
    looking), recording ``retire_workers``' reply in ``retired``, then opens ``gate``
    (which held the search, or the other workers' loads, until then)."""
    def retire_once_searching():
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if cluster.run(running_searches, workers=[victim], on_error="ignore").get(victim):
                    break
                time.sleep(0.02)
            retired.update(cluster.retire_workers([victim]))
        finally:
            gate.open()

    t = threading.Thread(target=retire_once_searching, daemon=True)
    t.start()
    return t


def test_a_retired_worker_hands_its_rows_over_without_a_rollback(cluster, tmp_path):
    """client.retire_workers mid-epoch: the worker's plugin ends its epoch as a cut and
    hands the outcome to its peers; the client commits the epoch (no rollback) and deals
    the next ones without it."""
    cluster.wait_for_workers(3, timeout=60)
    found = pids(cluster)
    victim = sorted(found)[1]
    retired = {}
    gate = Gate(tmp_path)
    t = retire_when_searching(cluster, victim, retired, gate)
    # the retire lands inside the first epoch: the search expands nothing until the
    # retire is done (the gate), and the epoch is an hour long (a retire between two
    # epochs finds no running epoch to hand over, and that epoch rolls back)
    options = "-t 1 -a 3 -d 11 -b 4 -r 19"
    r = solve(hooked_uts(options, tmp_path, gate=gate), client=cluster, checkpoint_every=3600)
    t.join(30)
    assert victim in retired
    reference = solve(UTSProblem(UTSParams.parse(options)), backend="sequential")
    assert r.status == "exhausted" and r.count == reference.count
    assert r.conservation()["holds"]
    assert r.recoveries == 0 and r.nodes_redone == 0
    handed = [e for e, who in r.info["handovers"] if victim in who]
    assert handed, r.info["handovers"]
    assert r.epochs > handed[0]                     # epochs went on after the hand-over
    assert victim not in r.info["last_epoch_workers"]
    assert victim not in calls.live_workers(cluster)
    wait_until(lambda: not _alive(found[victim]), 15, "the retired worker's process ended")


def test_a_worker_retired_while_its_peers_still_load_hands_over_too(cluster, tmp_path):
    """The retiring worker is the only one loaded; the others are still loading when
    the epoch is ended as a cut (their loads wait for a gate the test opens once the
    retire is done): they wait for their load, return their rows untouched and the
    epoch is committed (no rollback).  Runs after the test above: 2 workers are left (a
    retired worker does not come back)."""
    found = pids(cluster)
    live = sorted(calls.live_workers(cluster))
    assert len(live) >= 2
    victim = live[0]
    retired = {}
    gate = Gate(tmp_path)
    t = retire_when_searching(cluster, victim, retired, gate)
    r = solve(HeldLoad(TREE, gate, fast_pid=found[victim]), client=cluster, checkpoint_every=3600)
    t.join(30)
    assert victim in retired
    assert r.status == "exhausted" and r.count == TREE_COUNT
    assert r.conservation()["holds"]
    assert r.recoveries == 0
    assert [e for e, who in r.info["handovers"] if victim in who], r.info["handovers"]
    assert victim not in r.info["last_epoch_workers"]
