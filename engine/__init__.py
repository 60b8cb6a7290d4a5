"""stealsearch's generic parallel backtracking engine (knows nothing of any problem).

>>> from stealsearch.engine import solve, StealPolicy
>>> from stealsearch.engine import PythonProblem, FastProblem, RowLayout  # the reference and fast tiers

Layers, each importing only those below it: ``core`` (the search and its records),
``deploy`` (processes, clusters, signals), ``transports`` (where a search runs),
``solve`` (the choice of a transport), ``app`` (what every command shares).  Which file a
change belongs in: docs/architecture.md.

The names below are loaded on first use, so that importing one small module of the engine
(the command line's signal handling, say) does not load numba or Dask.  ``solve`` and
``resume`` are bound at once (their module imports nothing heavy): an attribute loaded
later would be replaced by the module ``solve`` the first time anything imports it.
"""
from importlib import import_module

from .solve import resume, solve

#: public name -> the engine module that defines it
_API = {
    "InputError": "core.errors", "SearchFailed": "core.errors",
    "NOT_A_SOLUTION": "core.fast", "FastProblem": "core.fast",
    "Bits": "core.layout", "RowLayout": "core.layout",
    "StealPolicy": "core.policy",
    **{name: "core.problem" for name in (
        "BUDGET", "DECIDE", "EMPTY", "ENUMERATE", "GROW", "IMPROVED", "N_ENGINE_COUNTERS",
        "NODES", "OPTIMISE", "SOLUTIONS", "ContractError", "InvalidProblem", "Mode", "Problem",
        "SolutionError", "check_problem")},
    "PythonProblem": "core.reference",
    "SearchResult": "core.result", "WorkerStats": "core.result",
}

__all__ = ["resume", "solve", *_API]


def __getattr__(name):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'stealsearch.engine' has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value          # the next lookup is a plain attribute
    return value


def __dir__():
    return sorted(set(globals()) | set(_API))
