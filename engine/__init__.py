"""stealsearch's generic parallel backtracking engine (knows nothing of any problem).

>>> from engine import solve, StealPolicy
"""
from .errors import InputError, SearchFailed  # noqa: F401
from .policy import StealPolicy  # noqa: F401
from .problem import InvalidProblem, Mode, Problem, SolutionError  # noqa: F401
from .result import SearchResult, WorkerStats  # noqa: F401
from .solve import resume, solve  # noqa: F401
