"""liquid's topology / traffic reader: one bad file per error site, each with its exact
one-line message ("FILE: what is wrong"), through the public ``load_traffic``."""
import json

import pytest

from stealsearch.problems.liquid import LiquidInputError, load_traffic

T = {"switches": ["A", "B"], "nodes": [1, 1], "cables": [["A", "B"]]}


def topo(**kw):
    """A traffic file over the valid topology ``T`` with some of its keys replaced."""
    return {"topology": dict(T, **kw), "allocation": [1, 1]}


CASES = [  # (name, file content, message after 'FILE: ')
    ("transfers_not_list", {"transfers": 3},
     "'transfers' must be a list"),
    ("transfer_no_links", {"transfers": [{"source": "a"}]},
     "transfer 0 has no 'links'"),
    ("transfer_not_list", {"transfers": [5]},
     'transfer 0 must be a list of links, got 5'),
    ("links_not_list", {"transfers": [["l1"]], "links": "l1"},
     "'links' must be a list of link names"),
    ("no_transfers_no_topology", {"foo": 1},
     "expected 'transfers', or 'topology' with 'allocation' or 'matrix'"),
    ("allocation_not_list", {"topology": T, "allocation": 2},
     "'allocation' must be a list of node counts per switch"),
    ("no_allocation_no_matrix", {"topology": T},
     "a topology traffic needs 'allocation' or 'matrix'"),
    ("topology_wrong_type", {"topology": 5, "allocation": [1, 1]},
     "topology must be 'swiss-t1', a file name or a mapping"),
    ("topology_missing_switches", {"topology": {"cables": []}, "allocation": [1]},
     "missing key 'switches'"),
    ("topology_missing_cables", {"topology": {"switches": ["A"]}, "allocation": [1]},
     "missing key 'cables'"),
    ("switches_empty", topo(switches=[]),
     "'switches' must be a non-empty list (or a count)"),
    ("switch_twice", topo(switches=["A", "A"]),
     "switch 'A' is listed twice"),
    ("nodes_unknown_switch", topo(nodes={"A": 1, "Z": 1}),
     "nodes given for unknown switch 'Z'"),
    ("nodes_wrong_length", topo(nodes=[1, 1, 1]),
     "'nodes' lists 3 counts for 2 switches"),
    ("nodes_wrong_type", topo(nodes="many"),
     "'nodes' must be a mapping switch -> count, a list or a number"),
    ("nodes_negative", topo(nodes=[1, -1]),
     "switch 'B' has -1 nodes (need an integer >= 0)"),
    ("cable_not_pair", topo(cables=[["A", "B", "A"]]),
     "cable 0 must be a pair of switches, got ['A', 'B', 'A']"),
    ("cable_unknown_switch", topo(cables=[["A", "Z"]]),
     "cable 0 names unknown switch 'Z'"),
    ("cable_self_loop", topo(cables=[["A", "A"]]),
     "cable 0 connects switch 'A' to itself"),
    ("cable_twice", topo(cables=[["A", "B"], ["B", "A"]]),
     'cable 1 (B-A) is listed twice'),
    ("throughput_zero", topo(link_throughput=0),
     'link throughput must be a number > 0, got 0'),
    ("no_path", topo(switches=["A", "B", "C"], nodes=[1, 1, 1], cables=[["A", "B"]]),
     'no path from switch A to switch C over the cables'),
    ("routing_bad_string", topo(routing="longest"),
     "routing must be 'shortest', a table or a matrix, got 'longest'"),
    ("routing_matrix_rows", topo(routing=[["x", "direct"]]),
     'routing matrix has 1 rows for 2 switches'),
    ("routing_matrix_row_len", topo(routing=[["x", "direct"], ["direct"]]),
     'routing matrix row 2 has 1 entries, expected 2'),
    ("routing_table_unknown_src", topo(routing={"Z": {"A": "direct"}}),
     "routing table names unknown switch 'Z'"),
    ("routing_table_row_not_map", topo(routing={"A": 3}),
     "routing table row 'A' must map destinations to routes"),
    ("routing_table_unknown_dst", topo(routing={"A": {"Z": "direct"}, "B": {"A": "direct"}}),
     "routing entry A->Z names unknown switch 'Z'"),
    ("routing_table_missing", topo(routing={"A": {"B": "direct"}, "B": {}}),
     'routing table has no route from switch B to switch A'),
    ("alloc_wrong_length", {"topology": T, "allocation": [1, 1, 1]},
     '3 counts given for 2 switches of topology'),
    ("alloc_not_int", {"topology": T, "allocation": [1, "x"]},
     "count 'x' for switch B is not an integer"),
    ("alloc_too_many", {"topology": T, "allocation": [1, 5]},
     'switch B has 1 nodes, cannot allocate 5'),
    ("matrix_rows", {"topology": T, "matrix": [[0, 1]]},
     '1 rows for 2 nodes'),
    ("matrix_row_len", {"topology": T, "matrix": [[0, 1], [1]]},
     'row 2 has 1 entries, expected 2'),
    ("matrix_entry", {"topology": T, "matrix": [[0, 1], [-1, 0]]},
     'row 2, column 1: entry -1 is not 0 or 1 (a sender sends to a receiver at most once)'),
]


@pytest.mark.parametrize("name,data,message", CASES, ids=[c[0] for c in CASES])
def test_bad_traffic_file_gives_its_one_line_message(tmp_path, name, data, message):
    path = tmp_path / "traffic.json"
    path.write_text(json.dumps(data))
    with pytest.raises(LiquidInputError) as info:
        load_traffic(path)
    assert str(info.value) == f"{path}: {message}"
    assert "\n" not in str(info.value)


def test_a_good_file_of_the_same_shape_loads(tmp_path):
    # the control for every case above: the base topology and allocation are valid
    path = tmp_path / "traffic.json"
    path.write_text(json.dumps({"topology": T, "allocation": [1, 1]}))
    x = load_traffic(path)
    assert x.size == 4                  # all-to-all over 2 nodes, self-transfers included


# -- routes given as a table: each route error site, one bad file each -----------------------
SW4 = ["A", "B", "C", "D"]
STAR = [["A", "B"], ["A", "C"], ["A", "D"]]        # A is the hub: every other route goes via A


def star_routes(**override):
    """A complete, valid routing table over the star ``STAR``; ``override`` replaces the
    entry for one pair, e.g. ``BC=["D"]`` (the route B -> C)."""
    table = {a: {b: ("direct" if "A" in (a, b) else "A") for b in SW4 if b != a} for a in SW4}
    for pair, via in override.items():
        table[pair[0]][pair[1]] = via
    return {"topology": {"switches": SW4, "nodes": 1, "cables": STAR, "routing": table},
            "allocation": [1, 1, 1, 1]}


ROUTE_CASES = [
    ("routing_wrong_type", topo(routing=5),
     "routing must be 'shortest', a table or a matrix"),
    ("routing_self_entry_off_diagonal", topo(routing=[["x", "v"], ["x", "x"]]),
     "routing entry B->A is 'x' but B != A"),
    ("route_unknown_hop", star_routes(BC="Z"),
     "route B->C passes unknown switch 'Z'"),
    ("route_visits_twice", star_routes(BC=["A", "B"]),
     "route B->C visits a switch twice: ['B', 'A', 'B', 'C']"),
    ("route_via_uncabled_hop", star_routes(BC="D"),
     "route B->C via ['D'] does not connect: no cable between B and D"),
    ("route_direct_without_cable", star_routes(CD="direct"),
     "route C->D via [] does not connect: no cable between C and D"),
    ("route_list_without_cable", star_routes(DB=["C"]),
     "route D->B via ['C'] does not connect: no cable between D and C"),
]


@pytest.mark.parametrize("name,data,message", ROUTE_CASES, ids=[c[0] for c in ROUTE_CASES])
def test_bad_route_gives_its_one_line_message(tmp_path, name, data, message):
    path = tmp_path / "traffic.json"
    path.write_text(json.dumps(data))
    with pytest.raises(LiquidInputError) as info:
        load_traffic(path)
    assert str(info.value) == f"{path}: {message}"


def test_the_star_table_itself_is_valid(tmp_path):
    # the control of the route cases: the unmodified table loads, and B -> C goes via A
    # (by hand: 4 nodes, 16 transfers; the cable A>C carries B.1, D.1 and A.1 -> C.1)
    path = tmp_path / "traffic.json"
    path.write_text(json.dumps(star_routes()))
    x = load_traffic(path)
    assert x.size == 16 and x.load()["A>C"] == 3 and x.load()["B>A"] == 3


# -- file syntax: JSON and YAML, one case per site -------------------------------------------
SYNTAX_CASES = [  # (file name, text, message after 'FILE: ')
    ("t.json", '{"transfers": [["a"]', "line 1, column 21: invalid JSON (Expecting ',' delimiter)"),
    ("t.json", "[" * 100_000, "JSON nested too deeply"),
    ("t.json", "3", "expected a mapping at the top level"),
    ("t.yaml", "transfers: [[a, b]\nlinks: x\n",
     "line 2, column 1: invalid YAML (expected ',' or ']', but got '<scalar>')"),
    ("t.yaml", "transfers:\n  - [a, b]\n bad: 1\n",
     "line 3, column 2: invalid YAML (expected <block end>, but found '<block mapping start>')"),
    ("t.yaml", "a: *nope\n", "line 1, column 4: invalid YAML (found undefined alias 'nope')"),
    ("t.yaml", "when: 2020-02-30\n", "invalid YAML (ValueError)"),      # no such day
    ("t.yaml", "[" * 100_000, "nested deeper than 100 levels"),
    ("t.yaml", "- 1\n- 2\n", "expected a mapping at the top level"),
]


@pytest.mark.parametrize("fname,text,message", SYNTAX_CASES,
                         ids=[f"{i}-{c[0]}" for i, c in enumerate(SYNTAX_CASES)])
def test_bad_file_syntax_gives_its_one_line_message(tmp_path, fname, text, message):
    path = tmp_path / fname
    path.write_text(text)
    with pytest.raises(LiquidInputError) as info:
        load_traffic(path)
    assert str(info.value) == f"{path}: {message}"
    assert "\n" not in str(info.value)


def test_a_bad_topology_file_is_named_in_the_message(tmp_path):
    # a traffic file that points at a topology file: the error names the topology file
    (tmp_path / "topo.yaml").write_text("switches: [A, B\ncables: []\n")
    (tmp_path / "t.yaml").write_text("topology: topo.yaml\nallocation: [1, 1]\n")
    with pytest.raises(LiquidInputError) as info:
        load_traffic(tmp_path / "t.yaml")
    assert str(info.value) == (f"{tmp_path / 'topo.yaml'}: line 2, column 7: "
                               "invalid YAML (expected ',' or ']', but got ':')")


@pytest.mark.parametrize("fname,text,message", [
    ("syntax.yaml", "transfers: [[a, b]\nlinks: x\n",
     "line 2, column 1: invalid YAML (expected ',' or ']', but got '<scalar>')"),
    ("route.json", json.dumps(star_routes(BC=["A", "B"])),
     "route B->C visits a switch twice: ['B', 'A', 'B', 'C']"),
    ("deep.json", "[" * 100_000, "JSON nested too deeply"),
])
def test_cli_bad_file_is_one_line_and_exit_2(tmp_path, capsys, fname, text, message):
    from stealsearch.cli import main

    path = tmp_path / fname
    path.write_text(text)
    assert main(["liquid", "traffic", str(path), "--sequential"]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"stealsearch: error: {path}: {message}\n"
    assert captured.out == ""
