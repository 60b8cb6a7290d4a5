"""Instance generators for tests, benchmarks and sweeps (seed 001).

* ``random_instance(P, h, seed, skew, density, zero_rows)``: random messages scaled so that the
  largest PE load is exactly ``h`` (when ``h`` is reachable).  ``skew = 0`` draws uniform
  weights; ``skew > 0`` draws log-normal weights with sigma = ``skew`` (a few long messages,
  many short ones, as in sample sort on bad inputs, §5.3).  ``density`` is the fraction of
  non-zero messages; ``zero_rows`` PEs send nothing.
* ``all_to_all(P, length)``: every PE sends ``length`` packets to every other (§5.2).
* ``three_cycle_family(k, h)``: the lower-bound family of §3.3, P = 3k PEs in triangles
  3i -> 3i+1 -> 3i+2 -> 3i, every message h/2 packets.
* ``figure1_instance()``: the two 3-cycles of Figure 1 (h = 2).
"""
from __future__ import annotations

import numpy as np

from .model import HRelationInputError


def random_instance(P: int, h: int, seed: int = 0, skew: float = 0.0, density: float = 1.0,
                    zero_rows: int = 0) -> np.ndarray:
    """A random message matrix with maximum load ``h``.

    >>> m = random_instance(6, 20, seed=1)
    >>> int((m.sum(0) + m.sum(1)).max())
    20
    """
    if P < 2:
        raise HRelationInputError(f"random instance needs P >= 2, got {P}")
    if h < 0:
        raise HRelationInputError(f"random instance needs h >= 0, got {h}")
    rng = np.random.default_rng(seed)
    if skew > 0:
        w = rng.lognormal(0.0, skew, size=(P, P))
    else:
        w = rng.random((P, P))
    w *= rng.random((P, P)) < density
    np.fill_diagonal(w, 0.0)
    if zero_rows:
        rows = rng.choice(P, size=min(zero_rows, P - 1), replace=False)
        w[rows, :] = 0.0
    loads = w.sum(0) + w.sum(1)
    if h == 0 or loads.max() == 0:
        return np.zeros((P, P), dtype=np.int64)
    m = np.floor(w * (h / loads.max())).astype(np.int64)
    # top up the busiest PE to exactly h through the least loaded partner that has room,
    # never making a silent PE (zero row) send
    L = m.sum(0) + m.sum(1)
    top = int(np.argmax(L))
    gap = h - int(L[top])
    silent = ~w.any(axis=1)
    if gap > 0:
        for j in np.argsort(L, kind="stable").tolist():
            if j == top or L[j] + gap > h:
                continue
            if not silent[top] and (silent[j] or rng.random() < 0.5):
                m[top, j] += gap
                break
            if not silent[j]:
                m[j, top] += gap
                break
    return m


def all_to_all(P: int, length: int = 1) -> np.ndarray:
    """Every PE sends ``length`` packets to every other PE.

    >>> all_to_all(3, 2).tolist()
    [[0, 2, 2], [2, 0, 2], [2, 2, 0]]
    """
    m = np.full((P, P), length, dtype=np.int64)
    np.fill_diagonal(m, 0)
    return m


def three_cycle_family(k: int, h: int) -> np.ndarray:
    """§3.3: P = 3k, messages 3i -> 3i+1 -> 3i+2 -> 3i of h/2 packets (h even).

    >>> three_cycle_family(1, 4).tolist()
    [[0, 2, 0], [0, 0, 2], [2, 0, 0]]
    """
    if h % 2:
        raise HRelationInputError(f"the 3-cycle family needs an even h, got {h}")
    P = 3 * k
    m = np.zeros((P, P), dtype=np.int64)
    for i in range(k):
        a, b, c = 3 * i, 3 * i + 1, 3 * i + 2
        m[a, b] = m[b, c] = m[c, a] = h // 2
    return m


def figure1_instance() -> np.ndarray:
    """Figure 1: two 3-cycles a0 -> a1 -> a2 -> a0 and b0 -> b1 -> b2 -> b0, one packet each."""
    return three_cycle_family(2, 2)
