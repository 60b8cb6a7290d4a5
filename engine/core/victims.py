"""FINDWORK's polling order (seed 003, §3.1): whom an idle worker asks for rows.

* ``ring``        T_{i+1}, T_{i+2}, ... (mod n): the paper's simplest order;
* ``random``      a fresh random order every round;
* ``permutation`` one fixed random permutation per worker, drawn at start;
* ``richest``     peers by their last known shared-portion size, largest first
                  (sizes arrive with the coordinator's answer to progress reports
                  and with every steal reply, so they may be a little stale).

``polling`` (0 = everybody) cuts each round to that many victims.
"""
from __future__ import annotations

import numpy as np


class VictimOrder:
    def __init__(self, policy, rank: int, n: int):
        policy = policy.for_workers(n)      # an order left to the run: chosen for n workers
        self.kind = policy.victims
        self.rank = rank
        self.n = n
        self.polling = policy.polling or (n - 1)
        self.rng = np.random.default_rng([policy.seed, rank])
        peers = [r for r in range(n) if r != rank]
        self._permutation = list(self.rng.permutation(peers)) if peers else []
        self.known_sizes = [0] * n

    def round(self) -> list[int]:
        if self.n <= 1:
            return []
        if self.kind == "ring":
            order = [(self.rank + i) % self.n for i in range(1, self.n)]
        elif self.kind == "random":
            order = list(self.rng.permutation([r for r in range(self.n) if r != self.rank]))
        elif self.kind == "permutation":
            order = self._permutation
        else:  # richest
            order = sorted((r for r in range(self.n) if r != self.rank),
                           key=lambda r: (-self.known_sizes[r], (r - self.rank) % self.n))
        return [int(r) for r in order[:self.polling]]
