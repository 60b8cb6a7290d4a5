"""The emulated cluster's sizing (benchmarks/emulate_cluster.py): a sized tree holds the
real cluster's work per core x the cores, D keeps the kernels under their share and the
ideal time at 20 emulated seconds or more, the old sizing is still there, and bad sizes
are one line and exit code 2.  No namespace is built: these run anywhere."""
import json
import math

import pytest

from stealsearch.benchmarks import emulate_cluster as ec
from stealsearch.problems.uts.problem import MAX_B0_ROWS


def _expected_t1xl(problem) -> float:
    d = problem.params.gen_mx
    return (4 ** (d + 1) - 1) / 3


def test_t1xl_grows_by_depth_to_at_least_the_nodes_asked():
    for nodes in (1e3, 3e5, 2.9e8, 1.2e9):
        tree = ec.sized_uts("T1XL", nodes)
        assert _expected_t1xl(tree) >= nodes
        d = tree.params.gen_mx
        if d > 1:             # the smallest depth: one depth less holds less than asked
            assert (4 ** d - 1) / 3 < nodes
    # the old sizing: the depth nearest on a log scale, which may hold less
    assert ec.sized_uts("T1XL", 1.2e8, at_least=False).params.gen_mx == 13
    assert ec.sized_uts("T1XL", 1.2e8).params.gen_mx == 14


def test_t3_grows_by_the_roots_children_then_by_q():
    q, m = ec.T3_SHAPE["q"], ec.T3_SHAPE["m"]
    small = ec.sized_uts("T3", 4e6)
    assert small.params.q == pytest.approx(q) and small.params.m == m
    assert small.params.b0 / (1 - q * m) >= 4e6
    big = ec.sized_uts("T3", 1e9)             # past MAX_B0_ROWS children: bigger subtrees
    p = big.params
    assert p.b0 == MAX_B0_ROWS and q < p.q and p.q * p.m < 1
    assert p.b0 / (1 - p.q * p.m) == pytest.approx(1e9, rel=1e-6)
    assert not big.params.supercritical()


def test_nodes_wanted_and_the_dilation():
    c = 1e-7
    assert ec.nodes_wanted(128, c, work_per_core=0.25, ideal=None, share=0.5) == \
        pytest.approx(128 * 0.25 / c)
    # the old sizing ignores the cores
    assert ec.nodes_wanted(128, c, work_per_core=0.25, ideal=20.0, share=0.5) == \
        ec.nodes_wanted(512, c, work_per_core=0.25, ideal=20.0, share=0.5)
    for cores, W in ((128, 0.25), (512, 0.25), (4, 0.01), (2, 2.0)):
        nodes = cores * W / c
        D = ec.choose_dilation(cores, nodes, c, ec.IDEAL_FLOOR, 0.5)
        assert cores / D <= 0.5 + 1e-12                  # the kernels' real cores
        assert nodes * c * D / cores >= ec.IDEAL_FLOOR - 1e-9   # ideal = W x D
        assert D == pytest.approx(max(cores / 0.5, ec.IDEAL_FLOOR / W))


def test_calibrate_holds_the_work_asked_and_keeps_its_oracle(tmp_path):
    cores, W = 2, 0.003
    path = str(tmp_path / "oracles.json")
    problem, oracle = ec.calibrate("T1XL", cores, work_per_core=W, oracle_json=path)
    assert oracle["nodes"] * oracle["node_cpu_seconds"] >= cores * W
    assert oracle["status"] == "exhausted" and oracle["count"] == oracle["nodes"]
    kept = json.load(open(path))
    assert kept[ec.tree_key(problem)]["count"] == oracle["count"]
    # read back for the same tree, not searched again
    again = ec.cached_oracle(problem, path)
    assert again["from_file"] == path and again["count"] == oracle["count"]
    # an independent count of the same tree (a Python walker over hashlib's SHA-1)
    from stealsearch.problems.uts.reference import walk
    assert walk(problem.params)[0] == oracle["count"]


@pytest.mark.parametrize("argv", [["--work-per-core", "0"], ["--work-per-core", "nan"],
                                  ["--ideal-seconds", "-1"], ["--cpu-share", "0"]])
def test_bad_sizes_are_one_line_and_exit_2(argv, capsys):
    assert ec.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("emulate_cluster: --")


def test_the_two_sizings_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as e:
        ec.main(["--work-per-core", "0.5", "--ideal-seconds", "20"])
    assert e.value.code == 2
    assert math.isclose(ec.build_parser().parse_args([]).work_per_core,
                        ec.DEFAULT_WORK_PER_CORE)


def test_a_clique_tree_names_its_first_incumbent():
    # the first incumbent changes the tree searched, so the oracle file keeps them apart
    plain = ec.problem_from("gnp:40:0.5:3", 0.0)
    empty = ec.problem_from("gnp:40:0.5:3:none", 0.0)
    assert empty.heuristic == "none" and plain.heuristic != "none"
    assert ec.tree_key(plain) != ec.tree_key(empty)
    assert ec.tree_key(empty).endswith(", heuristic none")
    assert ec.parse_gnp("gnp:40:0.5:3") == (40, 0.5, 3, None)
    assert ec.parse_gnp("gnp:40:0.5:3:greedy") == (40, 0.5, 3, "greedy")


@pytest.mark.parametrize("tree", ["gnp:40:0.5", "gnp:40:0.5:3:tabu", "gnp:x:0.5:3",
                                  "gnp:40:1.5:3", "gnp:40:0.5:3:none:1"])
def test_a_bad_clique_tree_is_one_line_and_exit_2(tree, capsys):
    assert ec.main(["--tree", tree]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("emulate_cluster: --tree: gnp:N:P:SEED")
