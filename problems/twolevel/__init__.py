"""2LVDS scheduling (seed paper 004, Colin & Nakechbandi): tasks and communications on
a two-level (clustered) system with message contention, solved by 2LVDSOPT.

Faces: :mod:`.model` (instance + validation incl. conditions (2)-(3)), :mod:`.io`
(JSON / CSV / networkx), :mod:`.algorithm` (Algorithms 1-4), :mod:`.verify` (an
independent checker and lower bound), :mod:`.generators`, :mod:`.gantt`, :mod:`.sweep`
and :mod:`.cli` (``stealsearch twolevel``).
"""
from .model import (CycleError, SmallDelayError, TwoLevelInputError, TwoLevelInstance,
                    check_small_delays)
from .algorithm import (TwoLevelSchedule, build_schedule, critical_sequence_graph,
                        critical_sequences, earliest_start_dates, sequence_components,
                        two_level_opt)

__all__ = ["CycleError", "SmallDelayError", "TwoLevelInputError", "TwoLevelInstance",
           "check_small_delays", "TwoLevelSchedule", "build_schedule",
           "critical_sequence_graph", "critical_sequences", "earliest_start_dates",
           "sequence_components", "two_level_opt"]
