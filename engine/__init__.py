"""stealsearch's generic parallel backtracking engine (knows nothing of any problem).

>>> from engine import solve, StealPolicy
>>> from engine import PythonProblem, FastProblem, RowLayout  # the reference and fast tiers
"""
from .errors import InputError, SearchFailed  # noqa: F401
from .policy import StealPolicy  # noqa: F401
from .problem import ContractError, InvalidProblem, Mode, Problem, SolutionError, check_problem  # noqa: F401
from .reference import PythonProblem  # noqa: F401
from .fast import NOT_A_SOLUTION, Bits, FastProblem, RowLayout  # noqa: F401
from .result import SearchResult, WorkerStats  # noqa: F401
from .solve import resume, solve  # noqa: F401
