"""The round-robin schedule, the topology-unaware baseline (seed 000, §1 and Fig. 2).

Phase k (k = 0..N-1) carries T_i → R_((i+k) mod N) for every i, nodes in
switch-major order.  The paper only says that "phases 3 and 4 are carried out in two
steps, since they contain congesting transfers"; here each phase is split **first
fit in order of i**: transfer i goes into the first step of its phase that it does not
congest with (a new step if none).  On Fig. 1 this gives the paper's 7 steps.

Fig. 6 plots a *measured* round-robin throughput; here the throughput is the
model's: #(X)/steps × link throughput (each step lasts one transfer time).

A traffic needs sender/receiver indices (``traffic.meta["pairs"]``, set by every
topology traffic, by Fig. 1 and by labelled explicit traffics) for round robin to be
defined; otherwise :func:`round_robin_schedule` returns None.

>>> from stealsearch.problems.liquid.topology import fig1_traffic
>>> len(round_robin_schedule(fig1_traffic()))
7
"""
from __future__ import annotations

from .model import Traffic


def round_robin_schedule(traffic: Traffic) -> list[list[int]] | None:
    """Steps (lists of transfer ids) of the round-robin schedule, or None if the traffic
    has no sender/receiver indices."""
    pairs = traffic.meta.get("pairs")
    if not pairs or len(pairs) != traffic.size:
        return None
    n = max(max(i for i, _ in pairs), max(j for _, j in pairs)) + 1
    by_phase: dict[int, list[tuple[int, int]]] = {}
    for tid, (i, j) in enumerate(pairs):
        by_phase.setdefault((j - i) % n, []).append((i, tid))
    steps: list[list[int]] = []
    for k in range(n):
        phase_steps: list[tuple[set, list[int]]] = []
        for _, tid in sorted(by_phase.get(k, [])):
            links = traffic.transfers[tid].links
            for used, ids in phase_steps:
                if used.isdisjoint(links):
                    used |= links
                    ids.append(tid)
                    break
            else:
                phase_steps.append((set(links), [tid]))
        steps.extend(ids for _, ids in phase_steps)
    return steps


def round_robin_summary(traffic: Traffic) -> dict:
    """Length and throughput of the round-robin schedule (None when undefined)."""
    steps = round_robin_schedule(traffic)
    if steps is None:
        return {"round_robin_steps": None, "round_robin_throughput": None}
    return {"round_robin_steps": len(steps),
            "round_robin_throughput": traffic.throughput_of_length(len(steps))}
