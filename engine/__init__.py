"""stealsearch's generic parallel backtracking engine (knows nothing of any problem).

>>> from stealsearch.engine import solve, StealPolicy
>>> from stealsearch.engine import PythonProblem, FastProblem, RowLayout  # the reference and fast tiers

Layers, each importing only those below it: ``core`` (the search and its records),
``deploy`` (processes, clusters, signals), ``transports`` (where a search runs),
``solve`` (the choice of a transport), ``app`` (what every command shares).  Which file a
change belongs in: docs/architecture.md.
"""
from .core.errors import InputError, SearchFailed  # noqa: F401
from .core.fast import NOT_A_SOLUTION, FastProblem  # noqa: F401
from .core.layout import Bits, RowLayout  # noqa: F401
from .core.policy import StealPolicy  # noqa: F401
from .core.problem import (BUDGET, DECIDE, EMPTY, ENUMERATE, GROW, IMPROVED,  # noqa: F401
                           N_ENGINE_COUNTERS, NODES, OPTIMISE, SOLUTIONS, ContractError,
                           InvalidProblem, Mode, Problem, SolutionError, check_problem)
from .core.reference import PythonProblem  # noqa: F401
from .core.result import SearchResult, WorkerStats  # noqa: F401
from .solve import resume, solve  # noqa: F401
