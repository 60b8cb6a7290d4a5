"""Mapping the best partition to machine groups."""
import numpy as np
import pytest

from stealsearch.problems.commclust import (CommTableError, cg_like, characterize, map_clusters_to_groups,
                                paper_table1, parse_groups)
from stealsearch.problems.commclust.mapping import default_placement, group_traffic


def test_commclust_parse_groups():
    assert parse_groups("4,4") == [4, 4] and parse_groups("3x2") == [2, 2, 2]
    for bad in ("4,x", "", "0,4", "-1", "2x"):
        with pytest.raises(CommTableError, match="--groups"):
            parse_groups(bad)


def test_commclust_group_traffic_adds_up():
    t = cg_like(16)
    for placement in (default_placement(16, [8, 8]), np.arange(16) % 3):
        g = group_traffic(t, placement)
        assert g["intra_group"] + g["inter_group"] + g["self"] == t.sum()


def test_commclust_mapping_recovers_hidden_structure():
    """Shuffled CG-16: rank-order placement mixes the rows; the mapping of the best
    partition puts every row on its own node and cuts inter-group traffic."""
    rng = np.random.default_rng(5)
    perm = rng.permutation(16)
    t = np.empty((16, 16), dtype=np.int64)
    t[np.ix_(perm, perm)] = cg_like(16)
    r = characterize(t, seed=1, groups=[4, 4, 4, 4])
    mp = r["mapping"]
    place = np.array(mp["placement"])
    for row in range(4):
        procs = perm[row * 4:(row + 1) * 4]
        assert len(set(place[procs])) == 1
    assert mp["after"]["inter_group"] < 0.3 * mp["before"]["inter_group"]
    assert sorted(np.bincount(place).tolist()) == [4, 4, 4, 4]


def test_commclust_largest_cluster_to_largest_group_and_splits():
    t = paper_table1()
    r = map_clusters_to_groups(t, [[0, 1, 2, 3, 4, 5], [6, 7]], [2, 6])
    assert r["placement"] == [1, 1, 1, 1, 1, 1, 0, 0]
    # a cluster larger than any group is split over the emptiest groups; capacities respected
    r = map_clusters_to_groups(t, [[0, 1, 2, 3, 4, 5, 6, 7]], [3, 3, 3])
    counts = np.bincount(r["placement"], minlength=3)
    assert counts.sum() == 8 and counts.max() <= 3
    with pytest.raises(CommTableError, match="capacities add up to 6 < 8"):
        map_clusters_to_groups(t, [[0, 1, 2, 3], [4, 5, 6, 7]], [3, 3])
    with pytest.raises(CommTableError, match="partition"):
        map_clusters_to_groups(t, [[0, 1, 2, 3], [4, 5, 6]], [4, 4])
