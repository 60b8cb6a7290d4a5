"""Model, topology and round-robin facts of seed 000 (Fig. 1, Fig. 4, Annex)."""
import json

import pytest

from stealsearch.engine.core.problem import SolutionError
from stealsearch.problems.liquid import (LiquidInputError, Traffic, fig1_traffic, load_topology, load_traffic,
                             round_robin_schedule, swiss_t1, verify_schedule)
from stealsearch.problems.liquid.topology import Topology


def test_fig1_facts():
    x = fig1_traffic()
    assert x.size == 25
    assert x.duration() == 6
    assert x.bottlenecks() == ["l11", "l12"]
    assert x.liquid_throughput() == pytest.approx(416.6667, abs=1e-3)
    load = x.load()
    assert load["l11"] == load["l12"] == 6 and load["l1"] == 5


def test_fig1_round_robin_is_seven_steps_and_valid():
    x = fig1_traffic()
    rr = round_robin_schedule(x)
    assert len(rr) == 7
    assert verify_schedule(x, rr) == {"length": 7, "duration": 6, "liquid": False}
    # phase 1 (T_i -> R_i) is one step and leaves both bottlenecks idle (Fig. 2)
    assert rr[0] == [0, 6, 12, 18, 24]
    used = set().union(*(x.transfers[t].links for t in rr[0]))
    assert not {"l11", "l12"} & used


def test_teams_and_full_teams_definitions():
    x = fig1_traffic()
    ids = {t.label(): i for i, t in enumerate(x.transfers)}
    team = [ids["T1->R4"], ids["T4->R1"]]
    assert x.is_team(team) and not x.is_full_team(team)
    full = team + [ids["T2->R2"], ids["T3->R3"], ids["T5->R5"]]
    assert x.is_full_team(full)
    assert not x.is_team([ids["T1->R1"]])


def test_swiss_t1_32_nodes_matches_annex():
    t1 = swiss_t1()
    x = t1.all_to_all([4] * 8)
    assert x.size == 1024
    assert len(x.congestion_edges()) == 48704
    assert x.link_throughput == 86.0
    assert len(t1.cables) == 16
    # every route has at most one intermediate switch and is cabled hop by hop
    assert max(len(r) for r in t1.routes.values()) == 3


def test_swiss_t1_routes_follow_fig4():
    t1 = swiss_t1()
    assert t1.routes[("1", "3")] == ["1", "2", "3"]
    assert t1.routes[("6", "8")] == ["6", "1", "8"]
    assert t1.routes[("1", "2")] == ["1", "2"]


@pytest.mark.parametrize("sets,msg", [
    ([["a"], []], "transfer 1 is empty"),
    ([["a", "b"], ["b", "a"]], "transfers 0 and 1 have the same links"),
    ([["a", "zz"]], "unknown link 'zz'"),
    ([["a", "a"]], "names a link twice"),
])
def test_validation_errors(sets, msg):
    with pytest.raises(LiquidInputError, match=msg):
        Traffic.from_link_sets(sets, links=["a", "b", "c"])


def test_routes_that_do_not_connect_are_rejected():
    with pytest.raises(LiquidInputError, match="does not connect"):
        Topology.build(["A", "B", "C"], 1, [["A", "B"], ["B", "C"]],
                       {"A": {"B": "direct", "C": "direct"}, "B": {"A": "direct", "C": "direct"},
                        "C": {"A": "B", "B": "direct"}})
    with pytest.raises(LiquidInputError, match="no path"):
        Topology.build(["A", "B", "C"], 1, [["A", "B"]])
    with pytest.raises(LiquidInputError, match="unknown switch"):
        Topology.build(["A", "B"], 1, [["A", "Q"]])


def test_topology_and_traffic_files(tmp_path):
    topo = {"name": "line", "switches": ["A", "B", "C"], "nodes": {"A": 1, "B": 1, "C": 2},
            "cables": [["A", "B"], ["B", "C"]], "routing": "shortest", "link_throughput": 10}
    (tmp_path / "line.yaml").write_text(json.dumps(topo))
    t = load_topology(str(tmp_path / "line.yaml"))
    assert t.routes[("A", "C")] == ["A", "B", "C"]
    (tmp_path / "t.json").write_text(json.dumps({"topology": "line.yaml", "allocation": [1, 1, 2]}))
    x = load_traffic(tmp_path / "t.json")
    assert x.size == 16 and x.link_throughput == 10
    # by hand: nodes A.1, B.1, C.1, C.2; B>C carries {A.1, B.1} -> {C.1, C.2} = 4,
    # A>B carries A.1 -> {B.1, C.1, C.2} = 3; every tx/rx link carries 4
    load = x.load()
    assert load["B>C"] == 4 and load["A>B"] == 3 and load["tx:C.2"] == 4
    assert x.duration() == 4
    (tmp_path / "m.yaml").write_text("topology: line.yaml\nmatrix: [[0,1,0,0],[0,0,1,0],[0,0,0,1],[1,0,0,0]]\n")
    y = load_traffic(tmp_path / "m.yaml")
    assert y.size == 4
    (tmp_path / "bad.yaml").write_text("topology: line.yaml\nmatrix: [[0,2,0,0],[0,0,1,0],[0,0,0,1],[1,0,0,0]]\n")
    with pytest.raises(LiquidInputError, match="row 1, column 2"):
        load_traffic(tmp_path / "bad.yaml")
    (tmp_path / "broken.yaml").write_text("transfers: [[a, b]\n")
    with pytest.raises(LiquidInputError, match="line"):
        load_traffic(tmp_path / "broken.yaml")


def test_verifier_rejects_bad_schedules():
    x = Traffic.from_link_sets([["a", "b"], ["b", "c"], ["a", "c"], ["d"]])
    with pytest.raises(SolutionError, match="congest"):
        verify_schedule(x, [[0, 1], [2, 3]])
    with pytest.raises(SolutionError, match="in no step"):
        verify_schedule(x, [[0], [1], [2]])
    with pytest.raises(SolutionError, match="in steps"):
        verify_schedule(x, [[0, 3], [1, 3], [2]])
    with pytest.raises(SolutionError, match="not liquid|duration"):
        verify_schedule(x, [[0, 3], [1], [2]], require_liquid=True)


def test_example_files_match_the_built_ins():
    from pathlib import Path

    import stealsearch.problems.liquid as pkg

    ex = Path(pkg.__file__).parent / "examples"
    x = load_traffic(ex / "fig1.yaml")
    assert [t.links for t in x.transfers] == [t.links for t in fig1_traffic().transfers]
    assert len(round_robin_schedule(x)) == 7
    t = load_topology(str(ex / "t1_table.yaml"))
    assert t.routes == swiss_t1().routes
    ring = load_traffic(ex / "ring4_alltoall.yaml")
    assert ring.size == 64 and ring.duration() == 12
