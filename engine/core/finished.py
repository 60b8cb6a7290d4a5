"""Finished subtrees: the exact bound of each keyed subtree, handed to the kernel as it
finishes (a problem with ``subtree_keys``, :mod:`stealsearch.engine.core.problem`).

A problem that keys its subtrees (every row carries one key, or none above the keyed
subtrees; a child has its parent's key) gets, for each key, an upper bound on the
objective of its subtree the moment no row of that key is left, in
``finished[0, key]``, which its kernel reads at every node.  MoMC's incremental upper
bound is the use: the subtree of a later key is bounded by those of earlier ones.

How a key is known to be finished (the same accounting argument as termination's
credit, :mod:`stealsearch.engine.core.stealstack`).  The kernel adds, in its stack's own
*key rows* (``int64[4, K]``, one per stack: no two threads write one), per key: row
``OPEN`` the rows it pushed minus the rows it popped, row ``MADE`` the rows it pushed,
row ``CLOSED`` the largest bound it closed a row of that key with (a row popped and
pruned closes with the bound that pruned it; an expanded row with the incumbent after
its expansion: whatever its children do not cover is at most that), row ``STALE`` the
rows it popped of a key already marked finished (an accounting error: none ever).
:meth:`FinishedBounds.fold` adds them into the process's totals after *every* kernel
call, before the stack gives a row away (:meth:`.stack.LocalStack.run`).  Then:

* every row in the process whose push is folded and whose pop is not is counted once
  in ``open``: rows move between stacks, the shared portion and back without changing
  it, and a row leaves a stack only between two kernel calls, after the fold;
* a row pushed in a kernel call not yet folded descends, through rows popped in that
  call, from a row that was on that stack when the call began: pushed and folded
  before, popped in the unfolded call, so still counted.  Children have their
  parent's key, so while any row of key k exists anywhere, or is being made,
  ``open[k] >= 1``;
* so ``open[k] == 0`` for a key that has had a row (``MADE``) means no row of k exists
  and none ever will (rows of k are made only from rows of k, or once, from the row
  above the keyed subtrees, whose push is the key's first ``MADE``): the key is
  finished.  Its bound is the largest ``CLOSED`` over its rows, every one folded by
  then; every solution below a row of k lies below a row that was closed with a bound
  at least its value (the bound that pruned it, or the incumbent when it was
  expanded, which is at least the solutions found there).

The accounting is complete only where every row of the search lives in this process:
one stack, or the lanes of a one-worker epoch (:mod:`stealsearch.engine.core.worker`).
Elsewhere (several Dask workers: rows in flight between processes) nothing is armed,
and ``finished`` keeps the problem's initial bounds, still valid.  What a stack does
before it is armed (a probe's copy of rows, a warm-up) never reaches the totals.

Epochs: :func:`arm` recounts ``open`` from the rows dealt at the start of an epoch (a
rollback or a resume deals a cut: the recount is the truth, whatever was folded
before); a key with rows at that point starts its ``CLOSED`` at the incumbent then
(rows of it closed earlier closed with bounds up to it).  ``finished[0]`` is never
reset: a finished subtree's bound is a fact about the instance, true whatever is
redone.  ``finished[1]`` (1: finished in this epoch's accounting) is what ``STALE``
checks against.
"""
from __future__ import annotations

import threading

import numpy as np

#: rows of a stack's key-row array
OPEN, MADE, CLOSED, STALE = 0, 1, 2, 3
KEY_ROWS = 4
#: ``CLOSED``'s empty value (no row closed): below any objective
NO_CLOSE = np.iinfo(np.int64).min // 4


def new_key_rows(keys: int) -> np.ndarray:
    """A stack's key rows, empty."""
    rows = np.zeros((KEY_ROWS, max(1, int(keys))), dtype=np.int64)
    rows[CLOSED] = NO_CLOSE
    return rows


class FinishedBounds:
    """One process's accounting of a problem's keyed subtrees (see the module
    docstring).  ``finished`` is the problem's ``int64[2, K]`` array the kernels read."""

    def __init__(self, finished: np.ndarray):
        self.finished = finished
        k = finished.shape[1]
        self.lock = threading.Lock()
        self.open = np.zeros(k, dtype=np.int64)
        self.made = np.zeros(k, dtype=bool)
        self.closed = np.full(k, NO_CLOSE, dtype=np.int64)
        #: keys finished by this accounting, in order, with their bounds (for tests)
        self.log: list[tuple[int, int]] = []
        #: rows popped of a key already finished (an accounting error; 0 always)
        self.stale = 0
        #: keys whose recounted rows differ from the folded count at the start of an
        #: epoch of the search armed before: 0 unless an epoch was rolled back (its
        #: cut's rows are dealt again), so an accounting error where none was
        self.recount_changes = 0
        self.search = None

    def recount(self, keys: np.ndarray, incumbent: int, search=None) -> None:
        """Start an epoch of search ``search``: ``keys`` are the keys of every row now in
        the process (-1: a row above the keyed subtrees)."""
        keys = np.asarray(keys, dtype=np.int64)
        keys = keys[keys >= 0]
        with self.lock:
            counted = np.bincount(keys, minlength=len(self.open))[:len(self.open)]
            if search is not None and search == self.search:
                self.recount_changes += int(np.count_nonzero(counted != self.open))
            self.search = search
            self.open[:] = counted
            self.made[:] = self.open > 0
            self.closed[:] = NO_CLOSE
            self.closed[self.made] = int(incumbent)
            self.finished[1] = 0

    def fold(self, key_rows: np.ndarray) -> None:
        """Add one kernel call's key rows into the totals and empty them; mark and
        publish every key that finished."""
        with self.lock:
            touched = np.flatnonzero(key_rows[MADE] | key_rows[OPEN]
                                     | (key_rows[CLOSED] != NO_CLOSE) | key_rows[STALE])
            if not len(touched):
                return
            self.open[touched] += key_rows[OPEN, touched]
            self.made[touched] |= key_rows[MADE, touched] > 0
            self.closed[touched] = np.maximum(self.closed[touched], key_rows[CLOSED, touched])
            self.stale += int(key_rows[STALE, touched].sum())
            done = touched[(self.open[touched] == 0) & self.made[touched]
                           & (self.finished[1, touched] == 0)]
            for k in done.tolist():
                bound = int(self.closed[k])
                if bound < self.finished[0, k]:       # only ever tighter
                    self.finished[0, k] = bound
                self.finished[1, k] = 1
                self.log.append((k, bound))
            key_rows[OPEN, touched] = 0
            key_rows[MADE, touched] = 0
            key_rows[CLOSED, touched] = NO_CLOSE
            key_rows[STALE, touched] = 0


def tracker(problem) -> FinishedBounds | None:
    """The process's accounting of ``problem`` (made once, kept on the problem), or None
    when the problem keys no subtrees."""
    if not getattr(problem, "subtree_keys", 0):
        return None
    found = getattr(problem, "_finished_bounds", None)
    if found is None:
        found = FinishedBounds(problem.finished_array())
        problem._finished_bounds = found
    return found


def arm(problem, stacks, rows, incumbent: int, search=None) -> FinishedBounds | None:
    """Make ``stacks`` (every stack of the search in this process) fold their kernel
    calls into the problem's accounting, ``rows`` being every row now in the process
    (on them or about to be pushed), at the start of an epoch of ``search`` (its id).
    None, and nothing armed, when the problem keys no subtrees."""
    found = tracker(problem)
    if found is None:
        return None
    found.recount(problem.subtree_key(np.asarray(rows).reshape(-1, problem.row_width)),
                  incumbent, search)
    for stack in stacks:
        stack.finished = found
    return found
