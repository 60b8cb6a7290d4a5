"""The reference tier: a search problem written in plain Python.

A user subclasses :class:`PythonProblem` and writes

* ``root()``            the root node: any picklable Python object;
* ``children(node)``    a list (or iterator) of child nodes.  They are pushed in the
                        order given, so the **last child is explored first**;
* ``objective(node)``   (optimise / decide) the node's value as a solution, or ``None``
                        when the node is not a solution;
* ``bound(node)``       (optimise / decide, optional) an upper bound on the objective of
                        every node below ``node`` (``node`` included).  A node whose
                        bound is ``<= incumbent`` is not expanded;
* ``is_solution(node)`` (enumerate) whether the node counts as a solution;

and optionally ``decode_node(node)`` (what the result shows, default: the node itself)
and ``verify(solution, value)`` (an independent check; see :class:`engine.Problem`).

The engine owns the loop (:meth:`ReferenceStack.run`): pop a node, count it, prune it
against the incumbent, count it as a solution, push its children, and return
``IMPROVED`` after a node whose objective beats the incumbent has been expanded.  The
fast tier's generated driver (:mod:`stealsearch.engine.core.fast`) follows the same rules node for
node, so both tiers visit the same tree and count the same nodes.

Nodes move between Dask workers as pickled batches (:class:`PickleCodec`); the
sequential backend, stealing, the incumbent, limits and termination are the engine's
own.  Speed is honest: tens of thousands of nodes per second, enough for tests and for
an oracle; the fast tier (:mod:`stealsearch.engine.core.fast`) is the same search at numba speed.

>>> from stealsearch.engine import PythonProblem, solve
>>> class Bits(PythonProblem):          # all bit strings of length 3
...     def root(self): return ""
...     def children(self, s): return [s + "0", s + "1"] if len(s) < 3 else []
...     def is_solution(self, s): return len(s) == 3
>>> r = solve(Bits(), backend="sequential")
>>> r.count, r.nodes
(8, 15)
"""
from __future__ import annotations

import pickle

import numpy as np

from .problem import (BUDGET, EMPTY, ENUMERATE, IMPROVED, NODES, SOLUTIONS, Problem)

_NO_BOUND = np.iinfo(np.int64).max


def object_batch(items) -> np.ndarray:
    """A 1-D ``object`` array holding ``items`` (each item one element, even tuples)."""
    items = list(items)
    out = np.empty(len(items), dtype=object)
    for i, x in enumerate(items):
        out[i] = x
    return out


class PickleCodec:
    """The batch codec of the reference tier: a batch is a 1-D ``object`` array of
    nodes; on the wire and on disk it is a pickle of the list of nodes."""

    def empty(self) -> np.ndarray:
        return np.empty(0, dtype=object)

    def concat(self, parts: list) -> np.ndarray:
        if not parts:
            return self.empty()
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def encode(self, batch) -> bytes:
        return pickle.dumps(list(batch), protocol=pickle.HIGHEST_PROTOCOL)

    def decode(self, payload: bytes) -> np.ndarray:
        return object_batch(pickle.loads(payload))

    def write(self, path, batch) -> None:
        with open(path, "wb") as f:
            f.write(self.encode(batch))

    def read(self, path) -> np.ndarray:
        with open(path, "rb") as f:
            return self.decode(f.read())


class PythonProblem(Problem):
    """Base class of a reference-tier (pure Python) problem; see the module docstring.

    ``mode`` and ``target`` are given to ``__init__`` (or set as class attributes; a
    string such as ``"optimise"`` is accepted).  Decide mode looks for a node with
    ``objective(node) >= target``; a problem that only defines ``is_solution`` has the
    objective 1 on its solutions, so ``target=1`` means "find any solution".
    """

    name = "python-problem"
    row_width = 0          # nodes are Python objects, not rows
    solution_size = 1

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)    # Problem parses a mode string
        if "stack_class" not in cls.__dict__:
            cls.stack_class = ReferenceStack

    # -- what the user writes ---------------------------------------------------------
    def root(self):
        """The root node (any picklable object)."""
        raise NotImplementedError(f"{type(self).__name__} must define root()")

    def children(self, node):
        """The children of ``node``, a list or iterator; the last is explored first."""
        raise NotImplementedError(f"{type(self).__name__} must define children(node)")

    def objective(self, node):
        """The node's value as a solution, or None.  Default: 1 on ``is_solution``."""
        return 1 if self._defines("is_solution") and self.is_solution(node) else None

    def bound(self, node) -> int:
        """Upper bound on the objective at and below ``node`` (default: none)."""
        return _NO_BOUND

    def is_solution(self, node) -> bool:
        """Whether ``node`` is a solution (enumerate mode).  Default: it has an objective."""
        return self._defines("objective") and self.objective(node) is not None

    def decode_node(self, node):
        """What the result shows for the best node (default: the node itself)."""
        return node

    # -- the engine's side ---------------------------------------------------------------
    def counts_solutions(self) -> bool:
        """Whether an enumerate-mode search can count a node: ``is_solution`` or
        ``objective`` is defined (:func:`stealsearch.engine.core.problem.check_problem`)."""
        return self._defines("is_solution") or self._defines("objective")

    def _defines(self, method: str) -> bool:
        return getattr(type(self), method) is not getattr(PythonProblem, method)

    def root_frontier(self) -> np.ndarray:
        # The backends take the frontier as an int64 array: one row of width 0 stands
        # for "the root"; ReferenceStack.push replaces it by root().
        return np.zeros((1, 0), dtype=np.int64)

    def row_bounds(self, rows) -> np.ndarray:
        if not self._defines("bound"):
            return np.full(len(rows), _NO_BOUND, dtype=np.int64)
        return np.array([int(self.bound(n)) for n in rows], dtype=np.int64)

    def decode(self, solution, value):
        return self.decode_node(solution[0])


class ReferenceStack:
    """A worker's stack of Python nodes, with :class:`stealsearch.engine.core.stack.LocalStack`'s face
    (push, take_bottom, take_all, live, len, nodes, counters, solution, run, codec).

    ``solution`` is a 1-element ``object`` array holding the improving node, so the
    backends' ``stack.solution.copy()`` keeps it."""

    def __init__(self, problem: PythonProblem, capacity: int = 0):
        self.problem = problem
        self.mode = int(problem.mode.value)
        self.codec = PickleCodec()
        self.items: list = []
        self.counters = np.zeros(problem.n_counters(), dtype=np.int64)
        self.solution = np.empty(1, dtype=object)
        self._prune = problem._defines("bound")
        self._improve = problem._defines("objective") or problem._defines("is_solution")

    def __len__(self) -> int:
        return len(self.items)

    @property
    def nodes(self) -> int:
        return int(self.counters[NODES])

    def push(self, batch) -> None:
        """Put a batch (bottom-to-top order) on top; an int64 frontier (rows of width 0,
        see :meth:`PythonProblem.root_frontier`) stands for the root."""
        if isinstance(batch, np.ndarray) and batch.dtype != object:
            self.items.extend(self.problem.root() for _ in range(len(batch)))
        else:
            self.items.extend(batch)

    def take_bottom(self, k: int) -> np.ndarray:
        k = min(k, len(self.items))
        out = object_batch(self.items[:k])
        del self.items[:k]
        return out

    def take_all(self) -> np.ndarray:
        return self.take_bottom(len(self.items))

    def live(self) -> np.ndarray:
        return object_batch(self.items)

    def run(self, budget: int, incumbent: int) -> tuple[int, int]:
        """Expand at most ``budget`` nodes; return ``(status, value)`` as a kernel does."""
        p, items = self.problem, self.items
        optimising = self.mode != ENUMERATE
        prune, improve = optimising and self._prune, optimising and self._improve
        done = solutions = 0
        status, value = BUDGET, 0
        while done < budget and items:
            node = items.pop()
            done += 1
            if prune and p.bound(node) <= incumbent:
                continue
            if not optimising and p.is_solution(node):
                solutions += 1
            items.extend(p.children(node))
            if improve:
                v = p.objective(node)
                if v is not None and v > incumbent:
                    self.solution[0] = node
                    status, value = IMPROVED, int(v)
                    break
        self.counters[NODES] += done
        self.counters[SOLUTIONS] += solutions
        if status != IMPROVED:
            status = BUDGET if items else EMPTY
        return status, value
