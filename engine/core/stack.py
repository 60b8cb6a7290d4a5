"""A worker's explicit DFS stack and the driver that runs the kernel over it in chunks.

The live rows are ``rows[base:top]``; the top of the stack (where the kernel pushes
and pops) is ``rows[top - 1]``.  Taking rows from the *bottom* (RELEASE, which hands
the oldest rows, nearest the root and so the largest subtrees, to the shared
portion) only advances ``base``: no copy of the remaining rows.  The stack is
compacted or doubled only when the kernel reports ``GROW``.

Both backends use this class, so the sequential reference and every Dask worker
run exactly the same code around the kernel.
"""
from __future__ import annotations

import time

import numpy as np

from .finished import new_key_rows
from .problem import GROW, NODES, Problem


class RowCodec:
    """How a *batch* of nodes is joined, sent and stored: here an ``int64`` array of
    ``width`` columns, one node per row.

    Everything outside a stack (the shared portion, steal replies, checkpoints)
    handles batches only through a codec and ``len()`` / slicing, so a stack whose
    nodes are not rows (the Python reference tier's picklable objects) plugs in with
    a codec of its own.  ``encode`` gives bytes for the wire; ``decode`` gives back a
    read-only view (every taker copies: a stack's ``push``, the next ``encode``)."""

    def __init__(self, width: int):
        self.width = int(width)

    def empty(self) -> np.ndarray:
        return np.empty((0, self.width), dtype=np.int64)

    def concat(self, parts: list) -> np.ndarray:
        # No copy for a single part: batches are never written after release.
        if not parts:
            return self.empty()
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def encode(self, batch: np.ndarray) -> bytes:
        return np.ascontiguousarray(batch, dtype=np.int64).tobytes()

    def decode(self, payload: bytes) -> np.ndarray:
        return np.frombuffer(payload, dtype=np.int64).reshape(-1, self.width)

    # -- checkpoints (stealsearch.engine.core.checkpoint): one batch per file ---------------------------
    #: file suffix of a stored batch; a codec of Python objects would use ".pickle"
    suffix = ".npy"

    def write(self, fileobj, batch) -> None:
        """Store ``batch`` in an open binary file (``.npy``, no pickle)."""
        np.save(fileobj, np.ascontiguousarray(batch, dtype=np.int64), allow_pickle=False)

    def read(self, fileobj):
        """The batch :meth:`write` stored; ``ValueError`` if it is not one of this width."""
        batch = np.load(fileobj, allow_pickle=False)
        if batch.dtype != np.int64 or batch.ndim != 2 or batch.shape[1] != self.width:
            raise ValueError(f"rows of dtype {batch.dtype} and shape {batch.shape}, "
                             f"expected int64 rows of width {self.width}")
        return batch


class LocalStack:
    def __init__(self, problem: Problem, capacity: int = 4096):
        self.problem = problem
        self.kernel = problem.kernel
        self.data = tuple(problem.kernel_data())
        self.mode = int(problem.mode.value)
        self.width = int(problem.row_width)
        self.codec = RowCodec(self.width)
        self.max_children = int(problem.max_children)
        capacity = max(capacity, 4 * self.max_children + 16)
        self.rows = np.zeros((capacity, self.width), dtype=np.int64)
        self.base = 0
        self.top = 0
        self.counters = np.zeros(problem.n_counters(), dtype=np.int64)
        self.solution = np.zeros(max(1, int(problem.solution_size)), dtype=np.int64)
        #: a proof's scaffold buffer (:func:`stealsearch.engine.core.proof.attach_scaffold`),
        #: drained after every kernel call; None when the search logs no proof
        self.scaffold = None
        #: the process's accounting of finished subtrees (:func:`.finished.arm`), folded
        #: after every kernel call; None: this stack's calls are counted nowhere
        self.finished = None
        if getattr(problem, "subtree_keys", 0):
            # the kernel's last data array is this stack's own key rows: no two threads
            # ever write one (the problem's contract, stealsearch.engine.core.problem)
            self.data = self.data[:-1] + (new_key_rows(problem.subtree_keys),)

    def __len__(self) -> int:
        return self.top - self.base

    @property
    def nodes(self) -> int:
        return int(self.counters[NODES])

    # -- moving rows ------------------------------------------------------------------
    def push(self, rows: np.ndarray) -> None:
        """Put ``rows`` (bottom-to-top order) on top of the stack."""
        n = len(rows)
        if n == 0:
            return
        if rows.ndim != 2 or rows.shape[1] != self.width:
            raise ValueError(f"rows of shape {rows.shape} do not match row width {self.width}")
        self._make_room(n)
        self.rows[self.top:self.top + n] = rows
        self.top += n

    def take_bottom(self, k: int) -> np.ndarray:
        """Remove and return the ``k`` oldest rows (a copy, safe to ship)."""
        k = min(k, len(self))
        out = self.rows[self.base:self.base + k].copy()
        self.base += k
        if self.base == self.top:
            self.base = self.top = 0
        return out

    def take_all(self) -> np.ndarray:
        return self.take_bottom(len(self))

    def live(self) -> np.ndarray:
        return self.rows[self.base:self.top]

    def _make_room(self, n: int) -> None:
        live = self.top - self.base
        need = live + n + 2 * self.max_children + 16
        cap = len(self.rows)
        if self.top + n + self.max_children <= cap:
            return
        if need <= cap // 2 + cap // 4 and self.base > 0:
            # compaction is enough: slide the live rows down to row 0
            self.rows[:live] = self.rows[self.base:self.top]
        else:
            new = np.zeros((max(2 * cap, need * 2), self.width), dtype=np.int64)
            new[:live] = self.rows[self.base:self.top]
            self.rows = new
        self.base, self.top = 0, live

    # -- running the kernel -------------------------------------------------------------
    def run(self, budget: int, incumbent: int) -> tuple[int, int]:
        """Expand at most ``budget`` nodes; return the kernel's ``(status, value)``.

        ``GROW`` never escapes: the stack is enlarged and the kernel resumed with the
        rest of the budget."""
        start = self.counters[NODES]
        while True:
            view = self.rows[self.base:]
            top, status, value = self.kernel(view, self.top - self.base, budget, self.mode,
                                             incumbent, self.counters, self.solution, *self.data)
            if self.scaffold is not None:
                self.scaffold.drain()
            if self.finished is not None:
                # before any row leaves this stack (stealsearch.engine.core.finished)
                self.finished.fold(self.data[-1])
            self.top = self.base + int(top)
            if self.top == self.base:
                self.base = self.top = 0
            if status != GROW:
                return int(status), int(value)
            budget = max(1, budget - int(self.counters[NODES] - start))
            start = self.counters[NODES]
            self._make_room(self.max_children)


def make_stack(problem: Problem):
    """The stack a backend runs ``problem`` on: the problem's own ``stack_class`` if it
    names one (a tier whose nodes are not int64 rows), else :class:`LocalStack`."""
    return (getattr(problem, "stack_class", None) or LocalStack)(problem)


class BudgetTuner:
    """Adapts the node budget of a chunk so that one chunk lasts ~``chunk_seconds``.

    Doubling or halving at most per chunk keeps it stable on trees whose node cost
    varies; a chunk that ended early (stack empty, improvement) says nothing and is
    ignored."""

    def __init__(self, policy):
        self.budget = policy.budget
        # (a policy a transport did not resolve is one process's: for_workers(1))
        self.target = policy.for_workers(1).chunk_seconds
        self.max_budget = max(policy.max_budget, policy.budget)

    def run(self, stack: LocalStack, incumbent: int, cap: int | None = None) -> tuple[int, int]:
        """One chunk of at most ``budget`` (and ``cap``) expansions; adapts the budget."""
        budget = self.budget if cap is None else min(self.budget, cap)
        before, t0 = stack.nodes, time.perf_counter()
        status, value = stack.run(budget, incumbent)
        self.update(stack.nodes - before, time.perf_counter() - t0)
        return status, value

    def update(self, nodes_done: int, seconds: float) -> None:
        if self.target is None:
            return
        if seconds > 2 * self.target:
            self.budget = max(1, self.budget // 2)
        elif nodes_done >= self.budget and seconds < self.target / 2:
            self.budget = min(self.max_budget, self.budget * 2)
