"""The plug-in contract between the engine and a search problem.

The engine knows *how* a tree is searched (stacks, chunks, stealing, termination); a
problem says *what* is searched.  A problem hands the engine

* a **root frontier**: a 2-D ``int64`` array, one node per row, every row
  self-contained (any worker can continue the search from it alone);
* a **kernel**: a numba function compiled ``@njit(nogil=True, cache=True)`` that
  advances a depth-first search over an explicit stack of such rows for at most
  ``budget`` node expansions;
* **decode / verify** for the solution the kernel writes into a flat buffer.

Python never runs per node: the engine calls the kernel once per chunk.

This module is the **raw tier**: the kernel is the whole chunk driver.  Two tiers sit
on top of it: :mod:`stealsearch.engine.core.reference` (``PythonProblem``: ``root()`` and
``children(node)`` in plain Python, its own stack of Python objects) and
:mod:`stealsearch.engine.core.fast` (``FastProblem``: per-node numba functions; the engine generates a
kernel of exactly this signature).  :func:`check_problem` checks any of them before a
search starts.

Kernel signature
----------------
::

    kernel(stack, top, budget, mode, incumbent, counters, solution, *data)
        -> (top, status, value)

=============  ================================================================
``stack``      ``int64[:, :]``, shape ``(capacity, row_width)``.  Rows ``stack[:top]``
               are the live nodes; the top of the stack is ``stack[top - 1]``.  The
               engine may hand in a view whose row 0 is not the physical row 0.
``top``        number of live rows on entry.
``budget``     at most this many nodes are *expanded* (popped and processed).
``mode``       ``OPTIMISE``, ``DECIDE`` or ``ENUMERATE`` (module constants below).
``incumbent``  the best objective known anywhere (optimise / decide).  Prune a node
               when its bound is ``<= incumbent``.  In decide mode the engine passes
               ``target - 1``, so "better than the incumbent" means "a solution".
               Ignored in enumerate mode.
``counters``   ``int64[:]`` of length ``N_ENGINE_COUNTERS + len(extra_counters)``.
               The kernel *adds* to it: ``counters[NODES]`` += nodes expanded,
               ``counters[SOLUTIONS]`` += solutions counted (enumerate mode), and
               ``counters[N_ENGINE_COUNTERS + i]`` for the problem's own counters
               (reduced over workers by ``"sum"`` or ``"max"``, see
               :attr:`Problem.extra_counters`).
``solution``   ``int64[:]`` of length :attr:`Problem.solution_size`; on an
               improvement the kernel writes the solution there (layout is the
               problem's business; :meth:`Problem.decode` reads it).  The engine
               copies it right after an ``IMPROVED`` return and reads it at no
               other time.
``*data``      the arrays returned by :meth:`Problem.kernel_data` (graph bitsets,
               tree parameters...), passed positionally, read-only by convention.
=============  ================================================================

Returned ``status``:

=============  ================================================================
``BUDGET``     the budget was spent; ``stack[:top]`` is non-empty.
``EMPTY``      the stack is exhausted (``top == 0``).
``IMPROVED``   a node with objective ``value > incumbent`` was found and written to
               ``solution``; the stack is left consistent (the node that improved has
               been fully expanded, its children pushed) so the search can resume.
               In decide mode this means "a solution exists" and the engine stops.
``GROW``       the next expansion may not fit: ``top + max_children > capacity``.
               The kernel returns *before* popping the node; the engine enlarges the
               stack and calls again.  A kernel must make progress when called with
               ``capacity - top >= Problem.max_children``.
=============  ================================================================

Counters, not return values, carry node counts, so a chunk that returns early
still reports exactly the work it did.  The engine's exactness tests (UTS) rely on
the kernel counting each expanded node exactly once.

Finished subtrees (optional)
----------------------------
A problem with ``subtree_keys = K > 0`` keys its subtrees: every row has a key in
``[0, K)`` (:meth:`Problem.subtree_key`; -1 for a row above every keyed subtree, such
as the root), a child has its parent's key, or a new key when its parent has none.
Its kernel data then ends with two arrays:

``finished``   ``int64[2, K]``, the one array :meth:`Problem.finished_array` returns
               (shared by every stack of the process).  ``finished[0, k]``: an upper
               bound on every objective in key k's subtree, the problem's own at the
               start, lowered by the engine (never raised) to the bound the search
               proved once no row of key k is left anywhere; the kernel may read it at
               every node (a stale, larger value is still a bound).  ``finished[1, k]``:
               1 once the key finished in the engine's accounting.  The kernel never
               writes it.
``key_rows``   ``int64[4, K]``, each stack's own (the engine replaces the problem's);
               the kernel *adds* to it, per key: row 0 the rows it pushed minus the rows
               it popped, row 1 the rows it pushed, row 2 the largest bound it closed a
               row with (``max``: the bound that pruned a popped row, or the incumbent
               after an expanded row's expansion), row 3 the rows it popped whose key
               has ``finished[1] == 1`` (an error the engine counts).

The engine folds ``key_rows`` after every kernel call and says which keys finished
(:mod:`stealsearch.engine.core.finished`, which holds the exactness argument) where it
holds every row of the search in one process: one stack, or lanes; elsewhere
``finished`` keeps the problem's own bounds.  A search that logs a proof runs the
problem's proof form, which should key nothing.
"""
from __future__ import annotations

import enum
from typing import Any, Sequence

import numpy as np

from .errors import InputError

# --- modes (passed to kernels as plain ints) ------------------------------------
OPTIMISE = 0
DECIDE = 1
ENUMERATE = 2

# --- kernel status codes ----------------------------------------------------------
BUDGET = 0
EMPTY = 1
IMPROVED = 2
GROW = 3

# --- engine-owned counter slots -----------------------------------------------------
NODES = 0
SOLUTIONS = 1
N_ENGINE_COUNTERS = 2


class Mode(enum.Enum):
    """What a search computes."""

    OPTIMISE = OPTIMISE    #: maximise an integer objective (minimise by negating it)
    DECIDE = DECIDE        #: find one solution with objective >= target, then stop everywhere
    ENUMERATE = ENUMERATE  #: visit the whole tree, count solutions (no pruning by incumbent)

    @classmethod
    def parse(cls, value: "Mode | str") -> "Mode":
        if isinstance(value, Mode):
            return value
        try:
            return cls[str(value).upper()]
        except KeyError:
            raise ValueError(
                f"unknown mode {value!r}; expected one of optimise, decide, enumerate"
            ) from None


class InvalidProblem(ValueError):
    """A problem instance or its data is malformed (raised by problem constructors)."""


class ContractError(InvalidProblem, InputError):
    """What was given as a problem does not keep the contract (not a Problem, a kernel of
    the wrong signature, a missing method, a fast-tier function that workers cannot
    import).  Raised by :func:`check_problem` before any search starts."""


class Problem:
    """Base class of every plug-in search problem.

    Subclasses set the class/instance attributes below and implement the methods.
    Instances must be picklable (they travel to Dask workers): keep numpy arrays and
    plain values in them, and refer to the kernel as a module-level numba function.

    Attributes
    ----------
    name : str
        Short name used in results ("uts", "clique", ...).
    kernel : numba dispatcher
        See the module docstring for its signature.
    row_width : int
        Number of int64 words per node row.
    max_children : int
        Upper bound on rows one expansion pushes (see ``GROW``).
    mode : Mode
    target : int | None
        Decide mode: the objective a solution must reach.
    solution_size : int
        Length of the solution buffer.
    extra_counters : tuple[tuple[str, str], ...]
        ``(name, "sum" | "max")`` for each problem counter after the engine's.
    objective_sense : int
        +1 if the reported objective is the kernel's value, -1 if the problem minimises
        and the kernel maximises ``-objective`` (results are shown un-negated).
    stack_class : type | None
        The stack the backends run this problem on (``None``: the int64 row stack,
        :class:`stealsearch.engine.core.stack.LocalStack`).  A tier whose nodes are not rows supplies its
        own, with the same methods and a batch codec (:class:`stealsearch.engine.core.stack.RowCodec`).
    steal_order : str
        Which of a victim's oldest rows a thief takes (:mod:`stealsearch.engine.core.stealstack`):
        ``"oldest"`` (the default: the bottom of the oldest released batch, the rows
        nearest the root and last in sequential order) or ``"nearest"`` (the top end of
        that batch: among those oldest siblings, the ones nearest the owner's current
        path, one discrepancy from it, McCreesh & Prosser 2015's splitting: for a
        problem whose sequential order is a value ordering, as clique's).  Which rows
        move, never how many: exactness is the same.
    """

    name: str = "problem"
    #: > 0: the number of subtree keys (see "Finished subtrees" in the module docstring)
    subtree_keys: int = 0
    kernel: Any = None
    row_width: int = 1
    max_children: int = 1
    mode: Mode = Mode.ENUMERATE
    target: int | None = None
    solution_size: int = 1
    extra_counters: tuple = ()
    objective_sense: int = 1
    stack_class: Any = None
    steal_order: str = "oldest"

    def __init__(self, mode: "Mode | str | None" = None, target: int | None = None):
        """Every tier's default constructor: an optional mode and decide target."""
        if mode is not None:
            self.mode = Mode.parse(mode)
        if target is not None:
            self.target = int(target)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if isinstance(cls.mode, str):           # mode = "optimise" in a class body (or a mixin)
            cls.mode = Mode.parse(cls.mode)

    # -- what the engine calls ---------------------------------------------------------
    def root_frontier(self) -> np.ndarray:
        """The nodes to start from, shape ``(r, row_width)``, dtype int64."""
        raise NotImplementedError

    def kernel_data(self) -> tuple:
        """Arrays passed to the kernel after the engine's arguments."""
        return ()

    def initial_incumbent(self) -> int:
        """Value every node must beat.  Decide: ``target - 1``.  Optimise: a known
        lower bound minus nothing (a solution equal to it is not reported unless the
        problem's own initial solution covers it; see :meth:`initial_solution`)."""
        if self.mode is Mode.DECIDE:
            if self.target is None:
                raise InvalidProblem("decide mode needs a target")
            return int(self.target) - 1
        return np.iinfo(np.int64).min // 2

    def initial_solution(self) -> Any:
        """A decoded solution achieving :meth:`initial_incumbent` (or None)."""
        return None

    def row_bounds(self, rows: np.ndarray) -> np.ndarray:
        """Upper bound on the objective reachable below each row (optimise mode),
        used for the proven bound of an interrupted search.  The default is +inf-like,
        meaning "no bound known"."""
        return np.full(len(rows), np.iinfo(np.int64).max, dtype=np.int64)

    def subtree_key(self, rows: np.ndarray) -> np.ndarray:
        """The key of each row (``int64``, -1 above every keyed subtree); only asked of a
        problem with ``subtree_keys > 0``."""
        raise NotImplementedError

    def finished_array(self) -> np.ndarray:
        """The ``int64[2, subtree_keys]`` array its kernel data passes as ``finished``
        (the same object every time); only asked of a problem with ``subtree_keys > 0``."""
        raise NotImplementedError

    def decode(self, solution: np.ndarray, value: int) -> Any:
        """Turn the kernel's solution buffer into the user's solution."""
        return solution.tolist()

    def verify(self, solution: Any, value: int) -> bool:
        """Check a decoded solution independently of the kernel.  Return True, or raise
        :class:`SolutionError` saying what is wrong."""
        return True

    def describe(self) -> dict:
        """Plain-data description of the instance for results and JSON."""
        return {"problem": self.name}

    # -- helpers shared by subclasses --------------------------------------------------
    def n_counters(self) -> int:
        return N_ENGINE_COUNTERS + len(self.extra_counters)

    def __getstate__(self):
        # a process's accounting of finished subtrees (stealsearch.engine.core.finished)
        # stays in its process: a copy elsewhere starts its own
        state = dict(self.__dict__)
        state.pop("_finished_bounds", None)
        return state


class SolutionError(AssertionError):
    """A verifier rejected a solution."""


def reduce_counters(problem: Problem, arrays: Sequence[np.ndarray]) -> np.ndarray:
    """Combine per-worker counter arrays: engine counters add up, problem counters by
    their declared reduction."""
    total = np.zeros(problem.n_counters(), dtype=np.int64)
    for arr in arrays:
        total[:N_ENGINE_COUNTERS] += arr[:N_ENGINE_COUNTERS]
        for i, (_, how) in enumerate(problem.extra_counters):
            j = N_ENGINE_COUNTERS + i
            total[j] = max(total[j], arr[j]) if how == "max" else total[j] + arr[j]
    return total


KERNEL_ARGS = ("stack", "top", "budget", "mode", "incumbent", "counters", "solution")


def check_problem(problem: Any, policy: Any = None) -> None:
    """Check that ``problem`` (and ``policy``) keep the contract; raise
    :class:`ContractError` with one clear line otherwise.  :func:`stealsearch.engine.solve` calls it
    first, so a wrong object fails here and not as an AttributeError deep in a backend.

    >>> check_problem("hello")
    Traceback (most recent call last):
    ...
    stealsearch.engine.core.problem.ContractError: solve() needs an engine.Problem (a PythonProblem, a FastProblem or a raw-tier Problem subclass), got str
    """
    import inspect

    from .policy import StealPolicy

    if policy is not None and not isinstance(policy, StealPolicy):
        raise ContractError(f"policy must be an engine.StealPolicy, got {type(policy).__name__}")
    if not isinstance(problem, Problem):
        raise ContractError("solve() needs an engine.Problem (a PythonProblem, a FastProblem or a "
                            f"raw-tier Problem subclass), got {type(problem).__name__}")
    cls = type(problem).__name__
    if getattr(problem, "steal_order", "oldest") not in ("oldest", "nearest"):
        raise ContractError(f"{cls}.steal_order must be 'oldest' or 'nearest', "
                            f"got {problem.steal_order!r}")
    if not isinstance(problem.mode, Mode):
        raise ContractError(f"{cls}.mode must be an engine.Mode, got {problem.mode!r}")
    if problem.mode is Mode.DECIDE and problem.target is None:
        raise ContractError(f"{cls}: decide mode needs a target")
    for name, how in problem.extra_counters:
        if how not in ("sum", "max"):
            raise ContractError(f"{cls}.extra_counters: {name!r} reduces by {how!r}, "
                                "expected 'sum' or 'max'")
    if getattr(problem, "stack_class", None) is not None:
        # a tier with its own stack (the reference tier): its own methods must exist
        for method in ("root", "children"):
            if hasattr(problem, "_defines") and not problem._defines(method):
                raise ContractError(f"{cls} must define {method}()")
        _check_counts(problem)
        return
    _check_counts(problem)
    for attr in ("row_width", "max_children", "solution_size"):
        value = getattr(problem, attr, None)
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ContractError(f"{cls}.{attr} must be a positive int, got {value!r}")
    kernel = problem.kernel         # a fast-tier problem generates its driver here
    if not callable(kernel):
        raise ContractError(f"{cls}.kernel must be a numba function, got {kernel!r}")
    try:
        params = list(inspect.signature(getattr(kernel, "py_func", kernel)).parameters.values())
    except (TypeError, ValueError):
        return
    n_data = len(tuple(problem.kernel_data()))
    star = any(p.kind is p.VAR_POSITIONAL for p in params)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    # parameters with a default may follow (a kernel that is also its own proof kernel
    # takes the scaffold's arrays there: stealsearch.engine.core.proof)
    required = [p for p in positional if p.default is p.empty]
    if (len(required) > len(KERNEL_ARGS) + n_data
            or (not star and len(positional) < len(KERNEL_ARGS) + n_data)):
        raise ContractError(
            f"{cls}.kernel takes {len(positional)} arguments; the engine calls "
            f"kernel({', '.join(KERNEL_ARGS)}, *data) with {n_data} data arrays from "
            f"kernel_data(), i.e. {len(KERNEL_ARGS) + n_data} arguments")


def _check_counts(problem: Problem) -> None:
    """An enumerate-mode search of a tier that counts a node only through its
    ``is_solution`` or ``objective`` (``counts_solutions()``) defines one of them:
    without either every count is 0, whatever the tree."""
    counts = getattr(problem, "counts_solutions", None)
    if problem.mode is Mode.ENUMERATE and counts is not None and not counts():
        raise ContractError(f"{type(problem).__name__} counts solutions (enumerate mode) but "
                            "defines neither is_solution nor objective, so its count would "
                            "always be 0: define is_solution (return True to count every node)")


def holds_gil(problem: Problem) -> bool:
    """Does ``problem``'s node code hold the GIL while it runs?  The reference tier's
    (Python ``children``) does, and so does a raw kernel compiled without ``nogil``;
    then threads of one process search one at a time, and only processes run in
    parallel.  A fast-tier driver and every kernel compiled ``nogil=True`` do not."""
    if getattr(problem, "stack_class", None) is not None:    # nodes are Python objects
        return True
    options = getattr(problem.kernel, "targetoptions", None)  # a numba dispatcher's flags
    return options is None or not options.get("nogil", False)
