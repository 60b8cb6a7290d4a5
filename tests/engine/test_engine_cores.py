"""Defaults that use the machine: the usable cores (affinity and cgroup
quota, stealsearch.engine.deploy.cores), what "auto" chooses with and without a place, and a
worker process that dies while its LocalCluster starts (the run goes on without it)."""
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from stealsearch.engine.deploy.cores import cpu_quota, usable_cores
from stealsearch.engine.core.errors import InputError
from stealsearch.engine.core.problem import holds_gil
from stealsearch.engine.solve import choose_backend
from procutil import _alive, descendants, end_processes


# -- the usable cores ------------------------------------------------------------------------

def test_restricted_affinity_is_what_counts():
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no CPU affinity on this platform")
    one = min(os.sched_getaffinity(0))
    code = textwrap.dedent(f"""
        import os
        os.sched_setaffinity(0, {{{one}}})
        from stealsearch.engine.deploy.cores import usable_cores
        print(usable_cores(), os.cpu_count())
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    assert int(out[0]) == 1 and int(out[1]) >= 1      # not os.cpu_count()


@pytest.mark.parametrize("files, quota", [
    ({"cpu.max": "150000 100000"}, 1.5),                  # v2: 1.5 CPUs
    ({"cpu.max": "max 100000"}, None),                    # v2: no limit
    ({"cpu,cpuacct/cpu.cfs_quota_us": "100000",           # v1: 1 CPU
      "cpu,cpuacct/cpu.cfs_period_us": "100000"}, 1.0),
    ({"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"}, None),
    ({"cpu.max": "garbage"}, None),                       # unreadable: no limit, no error
])
def test_a_fake_cgroup_quota(tmp_path, files, quota):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text + "\n")
    assert cpu_quota(tmp_path) == quota
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    expect = affinity if quota is None else min(affinity, -(-quota // 1))
    assert usable_cores(tmp_path) == max(1, int(expect))


def test_a_quota_below_one_cpu_still_gives_one_core(tmp_path):
    (tmp_path / "cpu.max").write_text("20000 100000\n")
    assert cpu_quota(tmp_path) == 0.2 and usable_cores(tmp_path) == 1


# -- what "auto" chooses ----------------------------------------------------------------------

def test_auto_chooses_lanes_here_a_rampup_for_python_and_a_rampup_for_workers(monkeypatch):
    from examples.subset_sum import FastSubsetSum, PySubsetSum
    from stealsearch.engine.deploy import cores

    fast, python = FastSubsetSum([3, 5, 7], 9), PySubsetSum([3, 5, 7], 9)
    assert not holds_gil(fast) and holds_gil(python)
    monkeypatch.setattr(cores, "usable_cores", lambda cgroup_root=None: 6)
    assert choose_backend(fast) == ("sequential", False, None, 6)            # lanes, 6 cores
    assert choose_backend(python)[:2] == ("rampup", True)                    # onto LocalCluster
    assert choose_backend(fast, workers=3) == ("rampup", False, 0.0, None)   # no start-up tax
    assert choose_backend(fast, scheduler="tcp://127.0.0.1:1")[0] == "dask"
    monkeypatch.setattr(cores, "usable_cores", lambda cgroup_root=None: 1)
    assert choose_backend(python)[0] == "sequential"                         # nothing to gain


@pytest.mark.parametrize("argv, workers", [(["--workers"], "cores"), (["--workers", "auto"], "cores"),
                                          (["--workers", "3"], 3), ([], None)])
def test_workers_flag_alone_or_auto_means_the_usable_cores(argv, workers):
    import argparse

    from stealsearch.engine.app.commandline import add_workers_argument

    parser = argparse.ArgumentParser()
    add_workers_argument(parser, "help")
    expect = usable_cores() if workers == "cores" else workers
    assert parser.parse_args(argv).workers == expect


def test_workers_auto_in_the_api_and_bad_values(monkeypatch):
    from stealsearch.engine.deploy.cluster import parse_workers

    assert parse_workers("auto") == usable_cores() and parse_workers(None) is None
    for bad in (0, -1, "2", "lots", 2.5, True):
        with pytest.raises(InputError, match="^workers must") as refused:
            parse_workers(bad)
        assert "--workers" not in str(refused.value)    # the API's keyword, not the flag


def test_the_no_flag_default_runs_lanes_on_the_usable_cores_and_starts_no_process():
    """The console script with no place flag on a search that lasts (~1 s): one thread
    per usable core in its own process, no child process ever (by PID, every 10 ms)."""
    stealsearch = os.path.join(os.path.dirname(sys.executable), "stealsearch")
    proc = subprocess.Popen([stealsearch, "uts", "--tree", "T1", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: set[int] = set()
    try:
        while proc.poll() is None:
            seen |= descendants(proc.pid)
            time.sleep(0.01)
        out, err = proc.communicate(timeout=120)
    finally:
        end_processes([proc.pid, *seen], grace=0)
    assert proc.returncode == 0, err
    assert not seen, f"processes started: {seen}"
    res = json.loads(out)
    cores = usable_cores()
    assert res["count"] == 4130071                     # UTS T1, published size
    assert res["backend"] == ("sequential" if cores == 1 else f"sequential[{cores} threads]")


# -- a worker process that dies while the cluster starts ----------------------------------------

PRELOAD = '''
import os

def dask_setup(worker):
    # the first worker process to get here dies at once (a crash while it starts)
    try:
        os.close(os.open({flag!r}, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return
    os._exit(3)
'''


def test_a_worker_that_dies_while_the_cluster_starts_does_not_end_the_run(tmp_path, caplog):
    from distributed import Client, LocalCluster

    from stealsearch.engine import solve
    from stealsearch.engine.deploy.cluster import _start_local, close_quietly
    from stealsearch.problems.uts import UTSProblem

    preload = tmp_path / "die_once.py"
    preload.write_text(PRELOAD.format(flag=str(tmp_path / "died")))
    before = descendants()
    cluster = _start_local(LocalCluster, 2, 1, {"preload": [str(preload)],
                                                 "dashboard_address": None})
    try:
        assert (tmp_path / "died").exists() and len(cluster.workers) == 1
        assert "1 of 2 worker processes did not start" in caplog.text
        with Client(cluster) as client:
            pids = list(client.run(os.getpid).values())
            r = solve(UTSProblem.preset("default"), backend="dask", client=client)
        assert (r.status, r.count, len(r.workers)) == ("exhausted", 1732, 1)
    finally:
        close_quietly(cluster)
        end_processes(list(descendants() - before))
    assert not any(_alive(p) for p in pids)


# -- honest clocks --------------------------------------------------------------------------

#: seconds a load reply may take to reach the client after its worker started searching
#: (the clock starts at the first reply the client reads; an ordering, not a speed)
REPLY_LATENCY = 0.05


def test_search_seconds_cover_every_workers_own_search(cluster4):
    from stealsearch.engine import solve
    from stealsearch.problems.uts import UTSProblem

    r = solve(UTSProblem.preset("T3"), backend="dask", client=cluster4, workers=3)
    assert r.status == "exhausted" and r.nodes == 4112897         # UTS T3, published
    assert len(r.workers) == 3
    for w in r.workers:     # one lane each: its epochs' seconds, all searched in the clock
        assert w.busy_seconds + w.idle_seconds <= r.search_seconds + REPLY_LATENCY * r.epochs
    assert r.search_seconds <= r.wall_seconds


def test_resume_counts_only_its_own_nodes_in_its_rate(tmp_path):
    from stealsearch.engine import resume, solve
    from stealsearch.problems.uts import UTSProblem

    tree = UTSProblem.preset("T1")
    part = solve(tree, backend="sequential", node_limit=4_000_000, checkpoint=str(tmp_path / "ck"))
    assert part.status == "interrupted" and part.nodes == 4_000_000
    r = resume(str(tmp_path / "ck"), backend="sequential")
    assert (r.status, r.nodes) == ("exhausted", 4130071)
    assert r.nodes_this_run == 130071 == sum(p["nodes"] for p in r.phases)
    assert r.nodes_per_second == pytest.approx(130071 / r.search_seconds)
    assert r.process_nodes_per_second == pytest.approx(130071 / r.wall_seconds)
    assert r.as_dict()["nodes_per_second"] == r.nodes_per_second


# -- steal order: which rows move, never how many -----------------------------

def test_nearest_steal_order_takes_the_top_of_the_oldest_batch_and_loses_nothing():
    import numpy as np

    from stealsearch.engine.core.stack import RowCodec
    from stealsearch.engine.core.stealstack import SharedPortion

    rows = np.arange(24, dtype=np.int64).reshape(-1, 1)
    for order, first in (("oldest", [0, 1, 2]), ("nearest", [5, 6, 7])):
        portion = SharedPortion(RowCodec(1), steal_order=order)
        for i in range(0, 24, 8):
            portion.release(rows[i:i + 8])
        got = [portion.steal(3, half=False)[0]]
        assert got[0][:, 0].tolist() == first
        while len(portion):
            got.append(portion.steal(5, half=True)[0])
        assert sorted(np.concatenate(got)[:, 0].tolist()) == list(range(24))   # each once


def test_nearest_steal_order_finds_the_same_optimum(cluster4):
    import networkx as nx

    from stealsearch.engine import solve
    from stealsearch.engine.core.policy import StealPolicy
    from stealsearch.problems.clique import CliqueProblem, gnp

    g = gnp(120, 0.5, seed=3)
    omega = nx.max_weight_clique(g.to_networkx(), weight=None)[1]
    problem = CliqueProblem(g)
    problem.steal_order = "nearest"
    r = solve(problem, backend="dask", client=cluster4, workers=2,
              policy=StealPolicy(budget=200, chunk_seconds=None, release_threshold=4, k=2))
    assert r.status == "optimal" and r.objective == omega and r.verified
    assert r.conservation()["holds"]
    problem.steal_order = "sideways"
    with pytest.raises(Exception, match="steal_order"):
        solve(problem, backend="sequential")
