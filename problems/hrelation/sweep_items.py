"""The ``hrelation`` item of parameter sweeps (:mod:`stealsearch.engine.app.sweep`): one schedule of a
random h-relation by one algorithm, checked by the independent simulator
(:func:`~stealsearch.problems.hrelation.verify.verify_schedule`) and against the paper's bound.

>>> r = hrelation(P=8, h=20, seed=1, algorithm="forwarding")
>>> r["verified"], r["length"] <= r["bound"]
(True, True)
"""
from __future__ import annotations

import time

from stealsearch.engine.core.problem import SolutionError

from .model import HRelationInputError


def hrelation(*, P: int, h: int, skew: float = 0.0, seed: int = 0, density: float = 1.0,
              algorithm: str = "forwarding") -> dict:
    from .algorithms import ALGORITHMS, upper_bound
    from .bounds import load_lower_bound
    from .generators import random_instance
    from .verify import verify_schedule

    if algorithm not in ALGORITHMS:
        raise HRelationInputError(f"unknown algorithm {algorithm!r}; expected one of "
                                  f"{', '.join(ALGORITHMS)}")
    # one empty row on skewed instances, as problems/hrelation/sweep.py draws them
    m = random_instance(P, h, seed=seed, skew=skew, density=density,
                        zero_rows=1 if skew > 0 else 0)
    t0 = time.perf_counter()
    schedule = ALGORITHMS[algorithm](m)
    seconds = time.perf_counter() - t0
    report = verify_schedule(schedule, m)
    if not report.ok:
        raise SolutionError(f"{algorithm}: schedule fails verification: "
                            f"{(report.errors or ['?'])[0]}")
    lower = load_lower_bound(m)
    bound = upper_bound(algorithm, m)
    if bound is not None and schedule.length > bound + 1e-9:
        raise SolutionError(f"{algorithm}: length {schedule.length} exceeds the bound {bound}")
    return {"load": lower, "length": schedule.length, "bound": bound,
            "length_over_h": schedule.length / lower if lower else None,
            "rounds": schedule.num_rounds, "transfers": int(len(schedule.transfers)),
            "verified": True, "algorithm_seconds": seconds}


def _warmup() -> None:
    """Load every algorithm's kernels in this process on a 4-processor instance."""
    from .algorithms import ALGORITHMS
    from .generators import random_instance

    m = random_instance(4, 6, seed=0)
    for algorithm in ALGORITHMS.values():
        algorithm(m)


hrelation.warmup = _warmup


def hrelation_cycles(*, k: int, h: int, algorithm: str = "forwarding") -> dict:
    """One schedule of the lower-bound family of §3.3 (P = 3k PEs in k directed 3-cycles,
    h/2 packets per message), verified by the simulator, with the family's lower bound
    for schedules with forwarding (6h/5 for even P).

    >>> r = hrelation_cycles(k=2, h=20, algorithm="direct")
    >>> r["length_over_h"]
    1.5
    """
    from .algorithms import ALGORITHMS, upper_bound
    from .bounds import load_lower_bound, three_cycle_lower_bound
    from .generators import three_cycle_family
    from .verify import verify_schedule

    if algorithm not in ALGORITHMS:
        raise HRelationInputError(f"unknown algorithm {algorithm!r}; expected one of "
                                  f"{', '.join(ALGORITHMS)}")
    m = three_cycle_family(k, h)
    schedule = ALGORITHMS[algorithm](m)
    report = verify_schedule(schedule, m)
    if not report.ok:
        raise SolutionError(f"{algorithm}: schedule fails verification: "
                            f"{(report.errors or ['?'])[0]}")
    load = load_lower_bound(m)
    return {"P": 3 * k, "load": load, "length": schedule.length,
            "length_over_h": schedule.length / h, "bound": upper_bound(algorithm, m),
            "family_lower_bound": three_cycle_lower_bound(3 * k, h), "verified": True}


hrelation_cycles.warmup = _warmup
