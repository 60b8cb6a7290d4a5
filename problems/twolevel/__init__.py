"""2LVDS scheduling (seed paper 004, Colin & Nakechbandi): tasks and communications on
a two-level (clustered) system with message contention, solved by 2LVDSOPT.

Faces: :mod:`.model` (instance + validation incl. conditions (2)-(3)), :mod:`.io`
(JSON / CSV / networkx), :mod:`.algorithms` (Algorithms 1-4; their compiled core:
:mod:`.compiled`), :mod:`.verify` (an
independent checker and lower bound), :mod:`.generators`, :mod:`.gantt`, :mod:`.sweep`
and :mod:`.cli` (``stealsearch twolevel``).

The names below are imported lazily, so that ``stealsearch`` (which imports
``stealsearch.problems.twolevel.cli`` for every command) does not load numba unless needed.
"""
from importlib import import_module

_EXPORTS = {
    "CycleError": "model", "SmallDelayError": "model", "TwoLevelInputError": "model",
    "TwoLevelInstance": "model", "check_small_delays": "model",
    "TwoLevelSchedule": "algorithms", "build_schedule": "algorithms",
    "critical_sequence_graph": "algorithms", "critical_sequences": "algorithms",
    "earliest_start_dates": "algorithms", "sequence_components": "algorithms",
    "two_level_opt": "algorithms",
    "verify_schedule": "verify", "VerificationReport": "verify",
    "random_instance": "generators", "table1_instance": "generators",
    "read_instance": "io", "from_networkx": "io",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
