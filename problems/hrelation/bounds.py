"""Lower bounds (seed 001, §1 and §3.3).

* ``h``: every PE sends or receives one packet per unit of time, so any schedule takes at least
  the largest load h.
* The 3-cycle family (``generators.three_cycle_family``): P = 3k PEs in triangles carrying h/2
  packets per edge.  At most P/3 packets move directly at a time (one per triangle), the other
  PEs can only forward, and a forwarded packet is sent twice.  §3.3 integrates this "progress"
  to T >= h / (5/6 - 1/(2P)) >= 6/5 (1 + 3/(5P)) h for odd P, and T >= 6/5 h for even P (there
  the P - 2D free PEs form (P - 2D)/2 pairs).
"""
from __future__ import annotations

import numpy as np


def load_lower_bound(m) -> int:
    """The trivial bound h.

    >>> load_lower_bound([[0, 2], [1, 0]])
    3
    """
    m = np.asarray(m, dtype=np.int64)
    return int((m.sum(0) + m.sum(1)).max()) if m.size else 0


def three_cycle_lower_bound(P: int, h: int) -> float:
    """§3.3's bound for the 3-cycle family with P = 3k PEs and maximum load h.

    >>> three_cycle_lower_bound(6, 10)
    12.0
    >>> round(three_cycle_lower_bound(3, 10), 4)       # 10 / (5/6 - 1/6)
    15.0
    """
    if P % 3:
        raise ValueError(f"the 3-cycle family has P = 3k PEs, got P = {P}")
    if P % 2 == 0:
        return 6 * h / 5
    return h / (5 / 6 - 1 / (2 * P))
