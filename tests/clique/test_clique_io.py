"""Graph files: DIMACS reader/writer, edge lists, networkx; strict validation."""
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from stealsearch.engine.core.errors import InputWarning

from stealsearch.cli import main
from stealsearch.problems.clique import CliqueInputError, Graph, gnp, read_dimacs, read_edge_list, read_graph, write_dimacs

DATA = Path(__file__).parent / "data"


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_read_dimacs_instance_matches_its_p_line():
    g = read_dimacs(DATA / "hamming6-2.clq")
    assert (g.n, g.m) == (64, 1824)
    assert g.labels == list(range(1, 65))
    # 'e 1 2' style check: the first edge line of the file is an edge
    first = [l for l in (DATA / "hamming6-2.clq").read_text().splitlines() if l.startswith("e")][0]
    u, v = map(int, first.split()[1:])
    assert g.has_edge(u - 1, v - 1)


def test_dimacs_round_trip(tmp_path):
    g = gnp(150, 0.3, seed=4)
    path = tmp_path / "g.clq"
    write_dimacs(g, path, comment="round trip\nsecond comment line")
    h = read_dimacs(path)
    assert h == g and h.m == g.m
    np.testing.assert_array_equal(h.edges(), g.edges())


def test_dimacs_tolerates_duplicates_col_blank_lines_and_crlf(tmp_path):
    p = write(tmp_path, "d.clq", "c x\r\np col 4 3\r\ne 1 2\r\n\r\ne 2 1\r\ne 3 4\r\n")
    with pytest.warns(InputWarning, match="merged 1 duplicate edge"):
        g = read_dimacs(p)
    assert (g.n, g.m) == (4, 2)   # 3 edge lines, 2 distinct edges; M counts lines


BAD_DIMACS = [
    ("c only a comment\n", "no 'p edge N M' line"),
    ("p edge 3 1\ne 1 4\n", ":2: vertex 4 outside 1..3"),
    ("p edge 3 1\ne 0 2\n", ":2: vertex 0 outside 1..3"),
    ("e 1 2\np edge 3 1\n", ":1: edge before the 'p edge N M' line"),
    ("p edge 3 1\np edge 3 1\ne 1 2\n", ":2: second 'p' line"),
    ("p edge 3 1\ne 1 x\n", ":2: vertex ids must be positive integers"),
    ("p edge 3 1\ne 1 2 3\n", ":2: expected 'e U V'"),
    ("p edge three 1\ne 1 2\n", ":1: N and M of the 'p' line must be"),
    ("p graph 3 1\ne 1 2\n", ":1: expected 'p edge N M'"),
    ("p edge 3 5\ne 1 2\n", ":1: 'p' line says 5 edges, the file has 1 edge lines"),
    ("c ok\nx 1 2\n", ":2: unknown line type 'x'"),
    ("p edge 3 1\ne -1 2\n", ":2: vertex ids must be positive integers"),
]


@pytest.mark.parametrize("text,message", BAD_DIMACS)
def test_bad_dimacs_names_file_and_line(tmp_path, text, message):
    p = write(tmp_path, "bad.clq", text)
    with pytest.raises(CliqueInputError) as exc:
        read_dimacs(p)
    assert str(p) in str(exc.value) and message in str(exc.value)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("text,message", BAD_DIMACS[:6])
def test_bad_file_exits_2_with_one_line(tmp_path, capsys, text, message):
    p = write(tmp_path, "bad.clq", text)
    assert main(["clique", str(p), "--sequential"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("stealsearch: error:") and message in err


def test_missing_file(tmp_path, capsys):
    assert main(["clique", str(tmp_path / "nope.clq"), "--sequential"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_edge_list_with_labels(tmp_path):
    p = write(tmp_path, "g.txt", "# a triangle and a tail\nalice bob\nbob carol\n\ncarol alice\n"
                                 "% other comment\ncarol dave\n")
    g = read_edge_list(p)
    assert g.labels == ["alice", "bob", "carol", "dave"] and g.m == 4
    assert read_graph(p) == g
    q = write(tmp_path, "n.txt", "10 20\n20 30\n30 10\n10 20\n")
    with pytest.warns(InputWarning, match="merged 1 duplicate edge"):
        h = read_graph(q)
    assert h.labels == [10, 20, 30] and h.m == 3


@pytest.mark.parametrize("text,message", [("1 2\n2 3 4\n", ":2: expected 'U V'"),
                                          ("1\n", ":1: expected 'U V'")])
def test_bad_edge_list(tmp_path, text, message):
    p = write(tmp_path, "bad.txt", text)
    with pytest.raises(CliqueInputError, match=message):
        read_edge_list(p)


def test_self_loops_and_duplicates_dropped_with_one_warning(tmp_path):
    from stealsearch.engine.core.errors import InputWarning

    p = write(tmp_path, "loops.clq", "p edge 3 3\ne 1 1\ne 1 2\ne 2 1\n")
    with pytest.warns(InputWarning, match=r"dropped 1 self-loop\(s\) \(the first at vertex 1\); "
                                          r"merged 1 duplicate edge"):
        g = read_dimacs(p)
    assert (g.n, g.m) == (3, 1)
    q = write(tmp_path, "loops.txt", "a b\nc c\nb a\n")
    with pytest.warns(InputWarning, match="self-loop.*vertex c"):
        h = read_edge_list(q)
    assert h.labels == ["a", "b", "c"] and h.m == 1


def test_gzip_inputs_and_unreadable_files_are_one_line(tmp_path, capsys):
    import gzip

    text = (DATA / "hamming6-2.clq").read_bytes()
    gz = tmp_path / "h.clq.gz"
    gz.write_bytes(gzip.compress(text))
    g = read_graph(gz)
    assert g.name == "h" and g.m == read_dimacs(DATA / "hamming6-2.clq").m
    el = tmp_path / "e.txt.gz"
    el.write_bytes(gzip.compress(b"1 2\n2 3\n"))
    assert read_graph(el).m == 2
    bad = tmp_path / "bad.clq.gz"
    bad.write_bytes(gzip.compress(text)[:100])
    binary = tmp_path / "bin.clq"
    binary.write_bytes(bytes(range(256)) * 4)
    for path, message in ((bad, "not a valid gzip file"), (binary, "binary data"),
                          (tmp_path, "is a directory")):
        assert main(["clique", str(path), "--sequential"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err and "\\x" not in err


def test_read_graph_detects_dimacs_without_suffix(tmp_path):
    p = write(tmp_path, "plain", "c hi\np edge 2 1\ne 1 2\n")
    assert read_graph(p).m == 1


def test_networkx_round_trip_and_validation():
    G = nx.les_miserables_graph()
    g = Graph.from_networkx(G)
    assert g.n == G.number_of_nodes() and g.m == G.number_of_edges()
    assert set(map(frozenset, g.to_networkx().edges())) == set(map(frozenset, G.edges()))
    H = nx.Graph([(1, 1)])
    with pytest.raises(CliqueInputError, match="self-loop"):
        Graph.from_networkx(H)
    with pytest.raises(CliqueInputError, match="outside"):
        Graph.from_edges(3, [(0, 3)])
    with pytest.raises(CliqueInputError, match="not distinct"):
        Graph.from_edges(2, [(0, 1)], labels=["a", "a"])


def test_bitset_rows_are_symmetric_and_loop_free():
    g = gnp(130, 0.4, seed=3)
    bits = np.unpackbits(g.rows.view(np.uint8), axis=1, bitorder="little")[:, :g.n]
    assert (bits == bits.T).all() and not bits.diagonal().any()
    assert g.complement().m == g.n * (g.n - 1) // 2 - g.m
