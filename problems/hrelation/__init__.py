"""h-relation scheduling (seed 001: Sanders & Solis-Oba, "How helpers hasten h-relations").

Plain functions over plain data::

    from stealsearch.problems.hrelation import forwarding, verify_schedule, random_instance
    m = random_instance(16, 100, seed=1)
    s = forwarding(m)                  # Schedule: rounds of transfers, time in 1/5 packets
    assert verify_schedule(s, m).ok    # independent simulation of the simplex model
    print(s.length)                    # <= 12/5 * ceil(h/2) for even P
"""
from .algorithms import (ALGORITHMS, direct, forwarding, naive, regular, regular_rounds,
                         regular_schedule, regular_split, two_phase, upper_bound, weighted)
from .bounds import load_lower_bound, three_cycle_lower_bound
from .generators import all_to_all, figure1_instance, random_instance, three_cycle_family
from .model import HRelation, HRelationInputError, read_messages, validate_messages, write_messages
from .schedule import UNIT, Schedule
from .verify import verify_schedule

__all__ = [
    "ALGORITHMS", "direct", "forwarding", "naive", "regular", "regular_rounds", "regular_schedule",
    "regular_split", "two_phase", "upper_bound", "weighted", "load_lower_bound",
    "three_cycle_lower_bound", "all_to_all", "figure1_instance", "random_instance",
    "three_cycle_family", "HRelation", "HRelationInputError", "read_messages", "validate_messages",
    "write_messages", "UNIT", "Schedule", "verify_schedule",
]
