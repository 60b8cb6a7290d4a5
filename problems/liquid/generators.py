"""Generators of traffics and topologies for tests and benchmarks (seed 000).

>>> x = random_traffic(seed=1, links=6, transfers=8)
>>> x.size, len(x.links) <= 6
(8, True)
"""
from __future__ import annotations

import itertools

import numpy as np

from .model import Traffic
from .topology import Topology


def random_traffic(seed: int, links: int = 6, transfers: int = 8, max_len: int = 3,
                   min_len: int = 1) -> Traffic:
    """``transfers`` distinct random link sets of ``min_len..max_len`` links drawn from
    ``l1..l<links>`` (fewer transfers if there are not that many distinct sets)."""
    rng = np.random.default_rng(seed)
    names = [f"l{i + 1}" for i in range(links)]
    possible = sum(len(list(itertools.combinations(range(links), k)))
                   for k in range(min_len, max_len + 1))
    want = min(transfers, possible)
    seen, sets = set(), []
    while len(sets) < want:
        k = int(rng.integers(min_len, max_len + 1))
        s = frozenset(int(i) for i in rng.choice(links, size=k, replace=False))
        if s not in seen:
            seen.add(s)
            sets.append(sorted(s))
    return Traffic.from_link_sets([[names[i] for i in s] for s in sets], links=names,
                                  name=f"random-{seed}")


def random_topology(seed: int, switches: int = 4, max_nodes: int = 2, extra_cables: int = 1) -> Topology:
    """A connected random switch graph (a random spanning tree plus ``extra_cables``),
    1..``max_nodes`` nodes per switch, shortest-path routing."""
    rng = np.random.default_rng(seed)
    sw = [f"s{i + 1}" for i in range(switches)]
    cables = set()
    for i in range(1, switches):
        j = int(rng.integers(0, i))
        cables.add((sw[j], sw[i]))
    tries = 0
    while len(cables) < switches - 1 + extra_cables and tries < 100:
        tries += 1
        a, b = sorted(int(v) for v in rng.choice(switches, size=2, replace=False))
        cables.add((sw[a], sw[b]))
    nodes = [int(rng.integers(1, max_nodes + 1)) for _ in sw]
    return Topology.build(sw, nodes, [list(c) for c in sorted(cables)], "shortest",
                          name=f"random-topology-{seed}")
