"""Invariants of the multi-lane scaling model (benchmarks/simulate_cluster.py).

Not timing: the simulated clock is checked against its own inputs (one lane, zero
latency: the kernel time plus the overheads it was given; a case computed by hand; a
dilated run is the same run D times slower) and work against the real tree's count.
"""
import pytest

from stealsearch.benchmarks.simulate import Machine, Profile, SimPolicy
from stealsearch.benchmarks.simulate_cluster import Levers, main, scaled, simulate_cluster

T1 = "benchmarks/profiles/T1.npz"
T1_NODES = 4_130_071


@pytest.fixture(scope="module")
def t1():
    return Profile.load(T1)


def test_one_lane_zero_latency_is_the_kernel_time_plus_overheads(t1):
    mc = Machine(rate=4.0e6, latency=0.0, handler_seconds=3e-6, chunk_overhead=1e-5)
    r = simulate_cluster(t1, 1, 1, SimPolicy(), mc, seed=1)
    assert r["nodes"] == T1_NODES and r["setup_nodes"] == 0
    # every chunk pays its overhead; the stop is one message on rank 0's loop
    expected = T1_NODES / 4.0e6 + r["chunks"] * 1e-5 + 3e-6
    assert r["search_seconds"] == pytest.approx(expected, rel=1e-9)
    # idle only while the stop is on its way
    assert r["steals_tried"] == 0
    assert r["idle_fraction"] * r["search_seconds"] == pytest.approx(3e-6, rel=1e-6)


@pytest.mark.parametrize("machines,lanes,policy,levers", [
    (1, 4, SimPolicy(), Levers()),
    (2, 3, SimPolicy(), Levers()),
    (3, 2, SimPolicy(victims="random", steal_half=False, probes=2), Levers()),
    (4, 2, SimPolicy(victims="richest", k=3, release_threshold=4, acquire=2), Levers()),
    (5, 2, SimPolicy(victims="permutation", polling=2, reserve=2), Levers()),
    (3, 2, SimPolicy(stealing=False), Levers()),
    (4, 3, SimPolicy(probes=4, reserve=2), Levers(remote_rows=2)),
    (6, 2, SimPolicy(), Levers(lifelines=2)),
    (5, 3, SimPolicy(victims="random"), Levers(deal_lanes=True, remote_rows=1, lifelines=3)),
    (4, 2, SimPolicy(probes=3), Levers(demand_wait_chunks=0.0, remote_rows=2)),
    (3, 4, SimPolicy(), Levers(feed_siblings=True)),
])
def test_work_is_conserved(t1, machines, lanes, policy, levers):
    mc = Machine(rate=4.0e6, latency=0.0005)
    r = simulate_cluster(t1, machines, lanes, policy, mc, levers, seed=machines)
    assert r["nodes"] == T1_NODES
    assert sum(r["per_lane_nodes"]) + r["setup_nodes"] == T1_NODES
    assert sum(r["per_machine_nodes"]) + r["setup_nodes"] == T1_NODES
    # no lane can finish before its own nodes are expanded
    assert r["search_seconds"] >= max(r["per_lane_nodes"]) / mc.rate
    if not policy.stealing or machines == 1:
        assert r["steals_tried"] == 0
    if not levers.lifelines:
        assert r["pushes"] == 0
    # the idle time by cause adds up to the lanes' own idle clocks
    assert sum(r["idle_by"].values()) == pytest.approx(r["idle_fraction"], rel=1e-9, abs=1e-12)


def test_a_case_by_hand():
    # root -> two leaves' worth of blocks, 1,000 and 3,000 nodes: the client expands the
    # root (1 set-up node) and deals one block to each machine; nothing can be stolen
    # (a block is one row), so machine 1 ends 3 s after the set-up node and the stop
    # costs one round trip and one message on rank 0's loop
    prof = Profile.from_tree([-1, 0, 0], [4_001, 1_000, 3_000])
    mc = Machine(rate=1_000.0, latency=0.002, handler_seconds=0.0001, chunk_overhead=0.0)
    pol = SimPolicy(chunk_seconds=None, budget=10_000)
    r = simulate_cluster(prof, 2, 1, pol, mc, cutoff=10**6)
    assert r["setup_nodes"] == 1 and r["per_machine_nodes"] == [1_000, 3_000]
    assert r["search_seconds"] == pytest.approx(0.001 + 3.0 + 0.002 + 0.0001, rel=1e-12)
    assert r["steals"] == 0 and r["steals_tried"] > 0
    assert r["efficiency"] == pytest.approx(4.0 / (2 * r["search_seconds"]), rel=1e-12)


def test_dilation_is_the_same_search_slower(t1):
    # the engine's Periods: with dilation D every period is D times longer; a node
    # costing D times more and a D times longer round trip then give the same search,
    # D times slower (D a power of two: every simulated time scales exactly)
    D = 8
    pol = SimPolicy(probes=2, reserve=1)
    real = simulate_cluster(t1, 4, 3, pol, Machine(rate=4e6, latency=0.0005,
                                                   handler_seconds=0.0, chunk_overhead=0.0))
    emulated = simulate_cluster(t1, 4, 3, pol.with_(dilation=D),
                                Machine(rate=4e6 / D, latency=0.0005 * D,
                                        handler_seconds=0.0, chunk_overhead=0.0))
    # the client's set-up expansions are not dilated (the emulation's client runs them)
    setup = real["setup_seconds"]
    assert emulated["setup_seconds"] == setup > 0
    assert emulated["search_seconds"] - setup == pytest.approx(
        D * (real["search_seconds"] - setup), rel=1e-12)
    for key in ("steals", "steals_tried", "acquires", "releases", "chunks", "per_lane_nodes"):
        assert emulated[key] == real[key], key
    # the same but for the set-up node, which is not dilated
    assert emulated["efficiency"] == pytest.approx(real["efficiency"], rel=1e-4)



def test_a_scaled_tree_holds_factor_times_the_work(t1):
    big = scaled(t1, 4)
    leaves = sum(int(t1.size[i]) for i, kids in enumerate(t1.children) if not kids)
    internal = T1_NODES - leaves
    assert big.total == internal + 4 * leaves
    r = simulate_cluster(big, 3, 2, SimPolicy(), Machine(rate=4e6, latency=0.0005), seed=2)
    assert r["nodes"] == big.total


def test_the_command(capsys):
    main(["run", T1, "--machines", "2", "--lanes", "2", "--seeds", "1", "--policy", "probes=2"])
    assert "2 x 2 =      4 cores" in capsys.readouterr().out
    for bad in (["run", "no/such/profile.npz"], ["run", T1, "--lanes", "0"],
                ["run", T1, "--policy", "k=0"]):
        with pytest.raises(SystemExit) as stop:
            main(bad)
        assert stop.value.code == 2


def test_the_study_writes_its_tables_figure_and_json(tmp_path, monkeypatch, capsys):
    import json

    import stealsearch.benchmarks.simulate_cluster as sc

    # the study's plumbing only: one emulated point and one size, on the small T1 tree
    # (the point's ideal time set for T1's size, so that a node costs what it costs there)
    monkeypatch.setattr(sc, "MEASURED", [dict(sc.MEASURED[0], ideal_s=0.5)])
    monkeypatch.setattr(sc, "CORES", (32,))
    monkeypatch.setattr(sc, "GROWN_CORES", (32,))
    png, out = tmp_path / "model.png", tmp_path / "model.json"
    main(["study", "--profile", T1, "--seeds", "1", "--grown-seconds", "0.01",
          "--plot", str(png), "--json", str(out)])
    assert png.read_bytes()[:4] == b"\x89PNG"
    data = json.loads(out.read_text())
    assert len(data["calibration"]) == 1
    # each tree: two round trips x two policies, and the change (the grown tree's at
    # 0.5 ms only)
    assert len(data["predictions"]) == 6 + 5
    assert all(r["nodes"] >= T1_NODES for r in data["predictions"])
    text = capsys.readouterr().out
    assert "### Fit" in text and "| 0.5 ms | defaults |" in text
