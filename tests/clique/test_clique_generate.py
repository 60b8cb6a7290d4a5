"""Generators: G(n, p) as specified, design graphs, k-factor graphs (seed 003 §1.2)."""
import networkx as nx
import numpy as np
import pytest

from stealsearch.engine.solve import solve
from stealsearch.problems.clique import CliqueInputError, CliqueProblem, gnp
from stealsearch.problems.clique.generators import (decode_design, decode_factorization, design_blocks_needed,
                                      design_graph, factor_graph, factors_needed, k_factors,
                                      named_graph)


def test_gnp_is_exactly_the_specified_draw():
    n, p, seed = 57, 0.37, 12
    rng = np.random.default_rng(seed)
    i, j = np.triu_indices(n, 1)
    keep = rng.random(i.size) < p
    expected = np.stack([i[keep], j[keep]], 1)
    np.testing.assert_array_equal(gnp(n, p, seed).edges(), expected)
    with pytest.raises(CliqueInputError):
        gnp(5, 1.5)


def test_design_graph_2_7_3_is_the_seeds():
    g = design_graph(2, 7, 3)
    assert g.n == 35 and set(g.degrees().tolist()) == {22}          # §1.2.1
    assert g.labels[0] == (0, 1, 2) and g.labels[34] == (4, 5, 6)    # Fig. 1.4 order
    assert design_blocks_needed(2, 7, 3) == 7
    r = solve(CliqueProblem(g), backend="sequential")
    assert r.objective == 7
    d = decode_design(r.solution, 2, 7)
    assert d["is_design"]                                            # a Fano plane
    # the seed's two cliques, given as x-indices, are designs and cliques of G
    for xs in ([1, 8, 12, 16, 24, 26, 32], [3, 6, 11, 15, 23, 30, 31]):
        blocks = [g.labels[x] for x in xs]
        assert decode_design(blocks, 2, 7)["is_design"]
        assert CliqueProblem(g).verify(blocks, 7)
    assert not decode_design([(0, 1, 2)] * 7, 2, 7)["is_design"]


def test_no_design_when_counting_fails():
    assert design_blocks_needed(2, 8, 3) is None     # 28/3
    g = design_graph(2, 6, 3)                        # b = 15/3 = 5, but no 2-(6,3,1) design
    r = solve(CliqueProblem(g, mode="decide", k=5), backend="sequential")
    assert r.status == "none"


def test_cube_one_factorizations():
    cube = named_graph("cube")
    assert cube.n == 8 and cube.m == 12
    fg, factors = factor_graph(cube, 1)
    assert fg.n == 9 == len(factors)                 # the cube has 9 perfect matchings
    assert factors_needed(cube, 1) == 3
    r = solve(CliqueProblem(fg, mode="decide", k=3), backend="sequential")
    assert r.status == "found"
    assert decode_factorization(cube, r.solution, 1)["is_factorization"]
    # the number of 1-factorizations = the number of triangles of the factor graph
    triangles = sum(1 for c in nx.enumerate_all_cliques(fg.to_networkx()) if len(c) == 3)
    assert triangles == 4
    assert solve(CliqueProblem(fg), backend="sequential").objective == 3


def test_k_factors_of_complete_graphs():
    assert len(k_factors(named_graph("K6"), 1)) == 15      # 5!! perfect matchings
    assert len(k_factors(named_graph("K5"), 2)) == 12      # Hamiltonian cycles of K5
    assert len(k_factors(named_graph("K7"), 2)) == 465     # 360 Hamiltonian + 105 (3+4)
    k5 = named_graph("K5")
    fg, _ = factor_graph(k5, 2)
    r = solve(CliqueProblem(fg, mode="decide", k=factors_needed(k5, 2)), backend="sequential")
    assert decode_factorization(k5, r.solution, 2)["is_factorization"]
    assert factor_graph(named_graph("petersen"), 1)[0].n == 6
    with pytest.raises(CliqueInputError):
        named_graph("dodecahedron")
