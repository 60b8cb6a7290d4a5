"""Ramp-up (stealsearch.engine.transports.rampup, the ``auto`` default): a short search starts no process, a long
one is handed over exactly (counts against published sizes, optima against independent
oracles, the phases' nodes adding up), limits count across both phases, a cluster that
cannot start does not matter to the auto default, and a Ctrl-C while the cluster starts
gives the interrupted result and leaves no process.  Plus the one SIGINT mechanism
(stealsearch.engine.deploy.interrupts.ShieldedStart): what it starts has SIGINT blocked, and abort ends it."""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import networkx as nx
import numpy as np
import psutil
import pytest

from stealsearch.engine.deploy import interrupts
from stealsearch.engine import solve
from stealsearch.engine.core.errors import InputError
from stealsearch.engine.core.policy import StealPolicy
from examples.subset_sum import PySubsetSum, SubsetSum, dp_oracle
from stealsearch.problems.clique import CliqueProblem, check_clique, gnp
from stealsearch.problems.uts import UTSProblem
from procutil import SpawnGate, _alive, end_processes, wait_until
from stealsearch.cli import main

ROOT = Path(__file__).resolve().parents[2]
STEALSEARCH = str(Path(sys.executable).parent / "stealsearch")
T1 = (4130071, 10, 3305118)          # UTS 2.1 release notes: nodes, depth, leaves


def figures(r):
    return (r.count, r.counters["depth"], r.counters["leaves"])


def phase1_label(threads: int) -> str:
    """Phase 1's name: one stack, or lanes (stealsearch.engine.transports.lanes.Lanes)."""
    return "sequential" if threads == 1 else f"sequential[{threads} threads]"


def phase1_threads(workers: int) -> int:
    """Phase 1's threads for a nogil problem asked to run on ``workers`` workers."""
    from stealsearch.engine.deploy.cores import usable_cores

    return min(usable_cores(), workers)


def check_phases(r, carried=0):
    """Both phases reported; their nodes add up (nothing lost, nothing counted twice);
    the Dask phase's workers account for exactly its nodes; rows conserved."""
    assert r.backend.startswith("sequential") and "+dask[" in r.backend
    first, second = r.phases
    assert r.backend.split("+", 1)[0] == first["phase"]
    assert first["phase"].startswith("sequential") and first["cluster"] == "used"
    assert second["phase"] == r.backend.split("+", 1)[1]
    assert first["nodes"] >= 0 and second["nodes"] > 0
    assert first["nodes"] + second["nodes"] + carried == r.nodes
    assert sum(w.nodes for w in r.workers) == second["nodes"]
    assert first["rows_handed_over"] == second["rows_received"] > 0
    assert r.conservation()["holds"]


def descendants(pid):
    from procutil import descendants as living_descendants

    return living_descendants(pid)


# -- short searches: this process only -----------------------------------------------------

def here_on_usable_cores() -> str:
    """The backend "auto" names with no place flag: lanes on every usable core here."""
    from stealsearch.engine.deploy.cores import usable_cores

    cores = usable_cores()
    return "sequential" if cores == 1 else f"sequential[{cores} threads]"


def test_a_short_search_under_auto_starts_no_process():
    before = descendants(os.getpid())
    r = solve(UTSProblem.preset("default"))                 # backend "auto", no place
    assert descendants(os.getpid()) == before
    assert (r.count, r.status, r.backend) == (1732, "exhausted", here_on_usable_cores())
    assert r.phases == [dict(r.phases[0], phase=here_on_usable_cores(), nodes=1732,
                             where="this process")]


def test_a_gil_bound_problem_under_auto_ramps_up_and_a_short_one_starts_nothing():
    # the plain-Python tier cannot use lanes: "auto" ramps it up onto a LocalCluster
    # of usable-cores processes instead, which a short search never starts
    before = descendants(os.getpid())
    w = [3, 5, 7, 11, 13, 17]
    nodes, count, best = dp_oracle(w, 20)
    r = solve(PySubsetSum(w, 20))
    assert descendants(os.getpid()) == before
    assert (r.status, r.nodes, r.count, r.backend) == ("exhausted", nodes, count, "sequential")
    assert r.phases[0]["cluster"] == "not started"


def test_the_default_command_starts_no_process_for_a_short_search():
    """The console script with no place flag: the process tree, by PID, every 10 ms."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "stealsearch" / "schemas" / "result.schema.json").read_text())
    proc = subprocess.Popen([STEALSEARCH, "uts", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            seen |= descendants(proc.pid)
            time.sleep(0.01)
        out, err = proc.communicate(timeout=60)
    finally:
        end_processes([proc.pid, *seen], grace=0)
    assert proc.returncode == 0, err
    assert not seen, f"processes started: {seen}"
    res = json.loads(out)
    jsonschema.validate(res, schema)
    assert res["count"] == 1732 and res["backend"] == here_on_usable_cores()
    assert [p["phase"] for p in res["phases"]] == [here_on_usable_cores()]


def test_liquid_commands_follow_the_same_default(capsys):
    assert main(["liquid", "example", "--json", "--quiet"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["liquid"] is True and res["length"] == 6           # Fig. 1: Λ = 6
    assert res["backend"] == here_on_usable_cores() and len(res["phases"]) == 1


def test_resume_under_auto_continues_a_checkpoint_exactly(tmp_path):
    from stealsearch.engine import resume
    from stealsearch.problems.uts import UTSParams

    tree = UTSProblem(UTSParams(tree_type=1, shape=3, gen_mx=7, b0=4, root_seed=19))
    full = solve(tree, backend="sequential")
    part = solve(tree, backend="sequential", node_limit=50_000, checkpoint=str(tmp_path / "ck"))
    assert part.status == "interrupted" and part.nodes == 50_000
    r = resume(str(tmp_path / "ck"), grace=60)                     # backend "auto"
    assert (r.status, r.count, r.nodes) == ("exhausted", full.count, full.nodes)
    assert r.backend == here_on_usable_cores() and r.phases[0]["nodes"] + 50_000 == r.nodes


# -- long searches: handed over, exact ---------------------------------------------------------
# Every hand-over below is forced: ``handover_nodes`` holds phase 1 at a node count until
# the cluster takes the rows (stealsearch.engine.transports.rampup), so a tree larger than
# that count is handed over however fast this machine searches it.  With the caller's
# cluster and a grace no phase 1 reaches, the hand-over comes at exactly that count.
NEVER = 3600.0          # a grace (seconds) no phase 1 below lasts


def test_handover_counts_T1_exactly(cluster4):
    from stealsearch.engine.transports.rampup import Place, run_rampup

    r = run_rampup(UTSProblem.preset("T1"), place=Place(client=cluster4, workers=2),
                   grace=NEVER, handover_nodes=1_000_000)
    assert r.status == "exhausted" and figures(r) == T1
    check_phases(r)
    assert r.phases[0]["nodes"] == 1_000_000        # held there, then the rest on Dask
    assert r.backend == f"{phase1_label(phase1_threads(2))}+dask[2]" and len(r.workers) == 2


@pytest.mark.parametrize("threads", [1, 2])
def test_a_handover_at_a_node_count_is_exact_on_one_stack_and_on_lanes(cluster4, threads):
    """The hold at ``handover_nodes``, alone, on both kinds of phase 1: it hands over
    exactly there, and the count is T1's."""
    from stealsearch.engine.transports.rampup import Place, run_rampup

    r = run_rampup(UTSProblem.preset("T1"), place=Place(client=cluster4, workers=2),
                   grace=NEVER, handover_nodes=123_457, first_threads=threads,
                   policy=StealPolicy(budget=1_000, chunk_seconds=None))
    assert r.status == "exhausted" and figures(r) == T1
    assert r.phases[0]["nodes"] == 123_457 and r.phases[0]["phase"] == phase1_label(threads)
    check_phases(r)


G200 = gnp(200, 0.5, seed=1)


@pytest.fixture(scope="module")
def omega200():
    return nx.max_weight_clique(G200.to_networkx(), weight=None)[1]


@pytest.mark.parametrize("threads", [1, 2])
def test_handover_finds_omega_of_networkx(cluster4, omega200, threads):
    # grace 0 on the caller's cluster hands over after the first chunk: on one stack with
    # a fixed budget the same chunk on every machine (it ends early on its first
    # incumbent, which then crosses the hand-over); on lanes at the first poll after a
    # chunk (a moment: the test holds for any), and at the latest at the hold of 5,000
    # nodes (the search takes over a million on any number of lanes)
    from stealsearch.engine.transports.rampup import Place, run_rampup

    r = run_rampup(CliqueProblem(G200, bound="size"), place=Place(client=cluster4, workers=2),
                   grace=0, policy=StealPolicy(budget=3_000, chunk_seconds=None),
                   first_threads=threads, handover_nodes=5_000)
    assert r.status == "optimal" and r.objective == omega200 and r.verified
    assert check_clique(G200, r.solution, size=omega200)
    assert 0 < r.phases[0]["nodes"] <= 5_000 and r.phases[0]["rows_handed_over"] > 0
    assert r.phases[0]["chunks"] >= 1 and r.phases[1]["nodes"] > 0
    assert r.backend == f"{phase1_label(threads)}+dask[2]"
    check_phases(r)


@pytest.mark.parametrize("mode", ["optimise", "count"])
def test_handover_subset_sum_against_dynamic_programming(cluster4, mode):
    rng = np.random.default_rng(11)
    w = 2 * rng.integers(1, 5_000, size=26)        # even weights, odd capacity:
    cap = int(w.sum() * 0.37) | 1                  # the bound never closes the search early
    nodes, count, best = dp_oracle(w, cap)
    problem = SubsetSum(w, cap, "optimise") if mode == "optimise" else SubsetSum(w, cap)
    # a grace of milliseconds made this depend on the machine: phase 1 searched all
    # 14.9 M nodes before it on a quiet one; the hold hands over after 2 M (lanes or not)
    from stealsearch.engine.transports.rampup import Place, run_rampup

    r = run_rampup(problem, place=Place(client=cluster4, workers=2), grace=0.005,
                   policy=StealPolicy(budget=500), handover_nodes=2_000_000)
    if mode == "optimise":
        assert r.status == "optimal" and r.objective == best and r.verified
    else:
        assert (r.status, r.nodes, r.count) == ("exhausted", nodes, count)
    assert 0 < r.phases[0]["nodes"] <= 2_000_000
    check_phases(r)


# -- phase 1 on lanes (a nogil problem): exact through the lanes' hand-over --------------------

@pytest.mark.parametrize("seed", [3, 8])
def test_lanes_handover_is_exact_under_random_settings(cluster4, seed):
    """Enumerate and optimise, a random policy, grace, hold and phase-1 thread count:
    the count and nodes equal dynamic programming's, the optimum too, the phases add
    up.  The hold (at most 1 M nodes; the optimise trees have 1.6 M and more) makes the
    hand-over certain; the grace may bring it earlier."""
    from stealsearch.engine.transports.rampup import Place, run_rampup

    rng = np.random.default_rng(seed)
    w = 2 * rng.integers(1, 5_000, size=int(rng.integers(22, 25)))
    cap = int(w.sum() * rng.uniform(0.3, 0.45)) | 1
    nodes, count, best = dp_oracle(w, cap)
    policy = StealPolicy(budget=int(rng.integers(50, 2_000)), chunk_seconds=None,
                         k=int(rng.integers(1, 6)), release_threshold=int(rng.integers(2, 12)))
    threads, grace = int(rng.integers(2, 4)), float(rng.choice([0.0, 0.002, NEVER]))
    hold = int(rng.integers(1, 1_000_000))
    place = Place(client=cluster4, workers=2)
    r = run_rampup(SubsetSum(w, cap), place=place, policy=policy, grace=grace,
                   first_threads=threads, handover_nodes=hold)
    assert (r.status, r.nodes, r.count) == ("exhausted", nodes, count)
    assert r.phases[0]["phase"] == phase1_label(threads) and r.phases[0]["nodes"] <= hold
    check_phases(r)
    r = run_rampup(SubsetSum(w, cap, "optimise"), place=place, policy=policy, grace=grace,
                   first_threads=threads, handover_nodes=hold)
    assert r.status == "optimal" and r.objective == best and r.verified
    check_phases(r)


def test_a_search_that_ends_in_lanes_aborts_the_cluster_and_leaves_nothing(monkeypatch):
    """Phase 1 on lanes ends the search (a 665,782-node tree) while the LocalCluster it
    started at once (grace 0) is still starting: the count is exact, the start is
    abandoned and no process is left.  The start is held once its worker processes are
    up (before it loads the kernel there) until the abort cancels it, so it is still
    starting when phase 1 ends on any machine, however slow."""
    from stealsearch.engine.transports import rampup
    from stealsearch.engine.transports.rampup import Place, run_rampup
    from stealsearch.problems.uts import UTSParams

    def held_until_cancelled(client, problem, cancelled):
        assert cancelled.wait(120), "phase 1 never ended the start"

    monkeypatch.setattr(rampup, "_warm", held_until_cancelled)
    tree = UTSProblem(UTSParams(tree_type=1, shape=3, gen_mx=7, b0=6, root_seed=19))
    full = solve(tree, backend="sequential")
    interrupts._quiet_resource_tracker()    # this process's one tracker, there for good
    before = descendants(os.getpid())
    r = run_rampup(tree, place=Place(workers=2), grace=0, first_threads=2)
    assert descendants(os.getpid()) == before
    assert (r.status, r.count, r.nodes) == ("exhausted", full.count, full.nodes) == \
        ("exhausted", 665_782, 665_782)
    assert r.backend == "sequential[2 threads]" and len(r.phases) == 1
    assert r.phases[0]["cluster"] == "cancelled while starting"
    assert r.phases[0]["nodes"] == r.nodes


def test_a_hold_starts_the_cluster_at_once_and_hands_over_there(monkeypatch):
    """``handover_nodes`` onto a LocalCluster started for the search: a grace no phase 1
    reaches, so the start begins at the hold (not before: nothing is started until
    then), phase 1 waits for it, the rows go over at exactly that count, the count is
    exact and the cluster's processes end with the search."""
    from stealsearch.engine.transports import rampup
    from stealsearch.engine.transports.rampup import Place, run_rampup

    starts = []
    real_connect = rampup._connect

    def connect(place, problem, cancelled):
        starts.append(place)
        return real_connect(place, problem, cancelled)

    monkeypatch.setattr(rampup, "_connect", connect)
    interrupts._quiet_resource_tracker()    # this process's one tracker, there for good
    before = descendants(os.getpid())
    r = run_rampup(UTSProblem.preset("T1"), place=Place(workers=2), grace=NEVER,
                   handover_nodes=250_000, first_threads=2)
    wait_until(lambda: descendants(os.getpid()) == before, 30, "the cluster's processes ended")
    assert len(starts) == 1          # begun by the hold: the grace never passed
    assert r.status == "exhausted" and figures(r) == T1
    assert r.phases[0]["nodes"] == 250_000 and r.backend == "sequential[2 threads]+dask[2]"
    check_phases(r)


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_while_phase_1_holds_gives_the_result_at_the_hold(monkeypatch, threads):
    """A stop request while phase 1 holds for a cluster that is still starting: the
    result is the interrupted one, with exactly the nodes of the hold, and the start is
    abandoned.  Forced: the start (once its processes are up) waits until phase 1 holds,
    then records the request, then waits for the abort."""
    from stealsearch.engine.core import stop_request
    from stealsearch.engine.transports import rampup
    from stealsearch.engine.transports.rampup import Place, run_rampup

    holding = threading.Event()
    real_hold = rampup._HandOver.hold

    def hold(self, chunks, deadline):
        holding.set()
        return real_hold(self, chunks, deadline)

    def press_ctrl_c_once_held(client, problem, cancelled):
        assert holding.wait(120), "phase 1 never held"
        stop_request.record(signal.SIGINT)
        assert cancelled.wait(120), "phase 1 never ended the start"

    monkeypatch.setattr(rampup._HandOver, "hold", hold)
    monkeypatch.setattr(rampup, "_warm", press_ctrl_c_once_held)
    interrupts._quiet_resource_tracker()    # this process's one tracker, there for good
    before = descendants(os.getpid())
    try:
        r = run_rampup(UTSProblem.preset("T1"), place=Place(workers=2), grace=0,
                       handover_nodes=30_000, first_threads=threads)
    finally:
        stop_request.reset()
    assert descendants(os.getpid()) == before
    assert (r.status, r.stop_reason, r.nodes) == ("interrupted", "interrupted", 30_000)
    assert r.backend == phase1_label(threads) and len(r.phases) == 1
    assert r.phases[0]["cluster"] == "cancelled while starting"
    assert r.conservation()["holds"]


def test_phase1_threads_follow_the_gil_and_the_workers_asked(monkeypatch):
    from stealsearch.engine.deploy import cores
    from stealsearch.engine.transports.rampup import Place, first_phase_threads

    monkeypatch.setattr(cores, "usable_cores", lambda *a: 16)
    fast = UTSProblem.preset("default")
    assert first_phase_threads(fast, Place(workers=4)) == 4
    assert first_phase_threads(fast, Place(workers=4), threads_per_worker=2) == 8
    assert first_phase_threads(fast, Place(workers=64)) == 16
    assert first_phase_threads(fast, Place()) == 16               # a LocalCluster of ours
    assert first_phase_threads(PySubsetSum([3, 5], 7), Place(workers=4)) == 1   # holds the GIL


def test_node_limit_counts_across_both_phases(cluster4):
    from stealsearch.engine.transports.rampup import Place, run_rampup

    limit = 400_000
    # handed over at 100,000 nodes (the hold), the limit reached on Dask: a grace of
    # 20 ms let phase 1 reach the limit itself on a quiet machine
    r = run_rampup(UTSProblem.preset("T1L"), place=Place(client=cluster4, workers=2),
                   grace=NEVER, handover_nodes=100_000, node_limit=limit)
    assert r.status == "interrupted" and r.stop_reason == "node_limit"
    assert limit <= r.nodes < 102_181_082 and r.count == r.nodes
    assert r.phases[0]["nodes"] == 100_000
    check_phases(r)
    # a limit reached in phase 1 stops there, exactly, and never starts the cluster
    r = solve(UTSProblem.preset("T1L"), node_limit=limit, grace=60)
    assert (r.status, r.nodes, r.backend) == ("interrupted", limit, here_on_usable_cores())
    assert r.phases[0]["cluster"] == "not started"


# -- a cluster that cannot start --------------------------------------------------------------

@pytest.mark.parametrize("threads", [1, None])
def test_a_cluster_that_cannot_start_does_not_stop_the_auto_default(caplog, threads):
    from stealsearch.engine.transports.rampup import Place, run_rampup

    problem = UTSProblem.preset("T1")
    # a start that fails (a missing config) after importing distributed: phase 1 holds
    # at 10,000 nodes until it has, so the failure is seen mid-search on any machine
    nowhere = Place(cluster_config="no/such/cluster.yaml")
    r = run_rampup(problem, place=nowhere, grace=0, fall_back=True, handover_nodes=10_000,
                   first_threads=threads)
    assert r.status == "exhausted" and figures(r) == T1
    assert r.backend == ("sequential" if threads == 1 else here_on_usable_cores())
    assert r.phases[0]["cluster"].startswith("failed: ")
    assert "no/such/cluster.yaml" in r.phases[0]["cluster"]
    assert "the search goes on in this process" in caplog.text
    # asked for explicitly, the same failure is the user's error, in one line
    with pytest.raises(InputError, match="no/such/cluster.yaml"):
        run_rampup(problem, place=nowhere, grace=0, fall_back=False, handover_nodes=10_000,
                   first_threads=threads)


# -- Ctrl-C while the cluster starts ------------------------------------------------------------

def test_ctrl_c_while_the_rampup_cluster_starts_prints_the_interrupted_result(tmp_path):
    """SIGINT to the whole process group (a terminal's Ctrl-C) once a worker process of
    the background cluster exists, i.e. while the search runs in the client.  Forced:
    the cluster's worker processes are held at their start (a spawn gate,
    tests/procutil.py), so it cannot be ready for a hand-over, and the search (a clique
    of G(400, 0.8): hours) cannot end first."""
    gate = SpawnGate(tmp_path)
    proc = subprocess.Popen([STEALSEARCH, "clique", "--gnp", "400", "0.8", "--grace", "0.1", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=ROOT, env=gate.env)
    seen: set[int] = set()
    left = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            kids = descendants(proc.pid)
            seen |= kids
            if any("spawn_main" in " ".join(_cmdline(k)) for k in kids):
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the command ended before its cluster started"
        os.killpg(proc.pid, signal.SIGINT)
        while proc.poll() is None and time.monotonic() < deadline:
            seen |= descendants(proc.pid)
            time.sleep(0.05)
        out, err = proc.communicate(timeout=60)
        end = time.monotonic() + 15
        while time.monotonic() < end and any(_alive(p) for p in seen):
            time.sleep(0.1)
        left = [p for p in seen if _alive(p)]
    finally:
        gate.open()
        end_processes([proc.pid, *seen, *descendants(proc.pid)], grace=0)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "AssertionError" not in err, err
    res = json.loads(out)
    assert res["status"] == "interrupted" and res["stop_reason"] == "interrupted"
    assert res["bound"] >= (res["objective"] or 0) and res["nodes"] > 0
    assert res["backend"] == here_on_usable_cores()              # lanes while it starts
    assert res["phases"][0]["cluster"] == "cancelled while starting"
    assert seen and not left, f"left behind: {left}"


def _cmdline(pid):
    try:
        return psutil.Process(pid).cmdline()
    except psutil.Error:
        return []


# -- the one SIGINT mechanism -------------------------------------------------------------------

def _sigblk(pid) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("SigBlk:"):
                return int(line.split()[1], 16)
    raise AssertionError("no SigBlk line")


def test_a_shielded_start_blocks_sigint_in_what_it_starts_not_in_the_caller():
    def start():
        return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])

    starter = interrupts.ShieldedStart(start)
    assert starter.wait(30)
    child = starter.result()
    try:
        assert _sigblk(child.pid) & (1 << (signal.SIGINT - 1)), "the child can get Ctrl-C"
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    finally:
        starter.abort(lambda p: None, timeout=10)
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL       # abort ended it, by PID


def test_aborting_a_start_that_still_runs_ends_its_processes():
    started = threading.Event()
    cancelled = threading.Event()
    holder = {}

    def start():
        holder["p"] = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        started.set()
        holder["p"].wait()            # a start that would take a minute: its process dies
        if cancelled.is_set():
            raise RuntimeError("cancelled")
        return holder["p"]

    starter = interrupts.ShieldedStart(start, cancelled=cancelled)
    assert started.wait(30)
    starter.abort(lambda p: None, timeout=30)
    assert starter.done() and starter.failed and cancelled.is_set()
    assert holder["p"].poll() is not None


@pytest.mark.timeout(50)      # the hang guard: before the fix this abort took 60 s
def test_aborting_a_start_whose_workers_it_killed_does_not_wait_for_them(monkeypatch, caplog):
    """The ramp-up's search ends just after its LocalCluster came up and before the
    start confirmed its workers: the abort kills the worker processes (and those their
    nannies restart), so the workers the start then waits for can never come.  The wait
    sees the cancel and ends the start; it used to wait out its whole 60 s timeout and
    print "waiting for 2 workers ..." (a 61.7 s stall of `clique --workers 2` seen on
    61e9e37).  The start is held just before its wait until the kills took effect."""
    import logging

    from stealsearch.engine.deploy import cluster
    from stealsearch.engine.transports import rampup

    real_wait = cluster._wait_for_workers
    up = threading.Event()

    def held_wait(client, *args, **kwargs):
        up.set()
        deadline = time.monotonic() + 30
        while cluster._running_workers(client) >= 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        return real_wait(client, *args, **kwargs)

    monkeypatch.setattr(cluster, "_wait_for_workers", held_wait)
    interrupts._quiet_resource_tracker()    # this process's one tracker, there for good
    before = descendants(os.getpid())
    cancelled = threading.Event()
    starter = interrupts.ShieldedStart(
        lambda: rampup._connect(rampup.Place(workers=2), UTSProblem.preset("T1"), cancelled),
        cancelled=cancelled)
    assert up.wait(40)
    with caplog.at_level(logging.INFO, logger="stealsearch"):
        starter.abort(rampup._close, timeout=120)
    assert starter.failed
    with pytest.raises(cluster.StartCancelled):
        starter.result()
    assert "waiting for" not in caplog.text
    wait_until(lambda: descendants(os.getpid()) == before, 10, "the start's processes ended")


# -- flags ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["uts", "--ramp-up", "--sequential"], "not with --sequential"),
    (["uts", "--workers", "2", "--no-ramp-up", "--grace", "1"], "--grace applies to a ramp-up"),
    (["uts", "--scheduler", "127.0.0.1:1", "--grace", "1"], "--grace applies to a ramp-up"),
    (["uts", "--grace", "-1"], "expected a finite number >= 0"),
])
def test_rampup_flags_refused_in_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize("bad", [0, -5, 1.5, True, "100"])
def test_handover_nodes_must_be_a_whole_number_of_nodes(bad):
    from stealsearch.engine.transports.rampup import run_rampup

    with pytest.raises(InputError, match="handover_nodes"):
        run_rampup(UTSProblem.preset("default"), handover_nodes=bad)


def test_grace_applies_to_a_rampup_only():
    with pytest.raises(InputError, match="grace"):
        solve(UTSProblem.preset("default"), backend="sequential", grace=1)
    with pytest.raises(InputError, match="grace"):
        solve(UTSProblem.preset("default"), grace=-1)
