"""Synthetic tables shaped like the paper's benchmarks."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from stealsearch.problems.commclust import CommTableError, cg_like, ep_like, example_table, is_like, paper_table1
from stealsearch.problems.commclust.generators import cg_exchange_partner, cg_grid


def test_commclust_cg8_is_paper_table1():
    assert np.array_equal(cg_like(8), paper_table1())


@pytest.mark.parametrize("n", [16, 32, 64])
def test_commclust_cg_like_structure(n):
    t = cg_like(n)
    rows, cols = cg_grid(n)
    assert rows * cols == n and cols in (rows, 2 * rows)
    # heavy traffic only inside grid rows (blocks of npcols), between me and me^2^b
    heavy = np.argwhere(t >= 1266)
    assert all(i // cols == j // cols and bin(i ^ j).count("1") == 1 for i, j in heavy)
    assert len(heavy) == n * (cols.bit_length() - 1)
    # transpose partner is an involution
    assert all(cg_exchange_partner(cg_exchange_partner(m, rows, cols), rows, cols) == m
               for m in range(n))


def test_commclust_generators_deterministic_and_shaped():
    assert not np.array_equal(ep_like(16, seed=4), ep_like(16, seed=5))
    t = is_like(32, seed=1, noise=0.0)
    assert np.all(t == 1000)
    e = ep_like(32, seed=2)
    assert np.trace(e) == 0 and (e >= 40).sum() == 2 * round(0.7 * 16)
    assert example_table("cg8").shape == (8, 8) and example_table("is16").shape == (16, 16)
    with pytest.raises(CommTableError, match="unknown example"):
        example_table("lu8")
    with pytest.raises(CommTableError, match="power of 2"):
        cg_like(12)


def test_commclust_seeded_results_are_the_same_in_a_fresh_process():
    """Seeds fix the generated tables, the tie order and the dendrogram in any process
    (another hash seed, another interpreter): compared across a process boundary, not
    with a second call in the same one."""
    from stealsearch.problems.commclust import cluster_table, tie_order

    code = ("import json; from stealsearch.problems.commclust import cluster_table, is_like, ep_like, tie_order;"
            "t = is_like(16, seed=4); d = cluster_table(ep_like(12, seed=3), seed=7);"
            "print(json.dumps([t.tolist(), tie_order(9, seed=3).tolist(), "
            "[list(map(list, d.partition(k))) for k in range(12)]]))")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120, check=True).stdout
    table, order, partitions = json.loads(out)
    assert table == is_like(16, seed=4).tolist()
    assert order == tie_order(9, seed=3).tolist()
    d = cluster_table(ep_like(12, seed=3), seed=7)
    assert partitions == [list(map(list, d.partition(k))) for k in range(12)]
