"""Generators of random traffics for tests and benchmarks (seed 000).

>>> x = random_traffic(seed=1, links=6, transfers=8)
>>> x.size, len(x.links) <= 6
(8, True)
"""
from __future__ import annotations

import itertools

import numpy as np

from .model import Traffic


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
