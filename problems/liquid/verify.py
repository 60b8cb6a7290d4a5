"""Independent verifier of schedules (seed 000, §3.1).

It shares no code with the model's helpers nor with the search kernels: loads are
counted here from the raw link sets, with plain Python sets.

A schedule of a traffic X is a collection of simultaneous sub-traffics partitioning X;
it is liquid iff its length equals Λ(X).

>>> from stealsearch.problems.liquid.model import Traffic
>>> x = Traffic.from_link_sets([["a", "b"], ["b", "c"], ["a", "c"]])
>>> verify_schedule(x, [[0], [1], [2]])
{'length': 3, 'duration': 2, 'liquid': False}
"""
from __future__ import annotations

from typing import Sequence

from stealsearch.engine.core.problem import SolutionError


def verify_schedule(traffic, schedule: Sequence[Sequence[int]], *, require_liquid: bool = False) -> dict:
    """Check that ``schedule`` (steps of transfer ids) partitions the traffic into
    simultaneous steps; return its length, the traffic's duration and liquidity.

    Raises :class:`stealsearch.engine.core.problem.SolutionError` saying what is wrong."""
    link_sets = [set(t.links) for t in traffic.transfers]
    n = len(link_sets)
    seen: dict[int, int] = {}
    for s, step in enumerate(schedule):
        if len(step) == 0:
            raise SolutionError(f"step {s} is empty (a partition has non-empty parts)")
        used: dict = {}
        for t in step:
            if not isinstance(t, int) or isinstance(t, bool) or not 0 <= t < n:
                raise SolutionError(f"step {s} names transfer {t!r}, not an id in 0..{n - 1}")
            if t in seen:
                raise SolutionError(f"transfer {t} is in steps {seen[t]} and {s}")
            seen[t] = s
            for link in link_sets[t]:
                if link in used:
                    raise SolutionError(f"step {s}: transfers {used[link]} and {t} congest on link {link}")
                used[link] = t
    if len(seen) != n:
        missing = min(set(range(n)) - set(seen))
        raise SolutionError(f"transfer {missing} is in no step ({n - len(seen)} missing)")
    counts: dict = {}
    for ls in link_sets:
        for link in ls:
            counts[link] = counts.get(link, 0) + 1
    duration = max(counts.values(), default=0)
    liquid = len(schedule) == duration
    if require_liquid and not liquid:
        raise SolutionError(f"schedule has {len(schedule)} steps but the duration is {duration}")
    return {"length": len(schedule), "duration": duration, "liquid": liquid}
