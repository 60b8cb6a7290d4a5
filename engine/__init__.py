"""stealsearch's generic parallel backtracking engine (knows nothing of any problem)."""
from .problem import Mode, Problem, InvalidProblem, SolutionError  # noqa: F401
from .errors import InputError, SearchFailed  # noqa: F401
