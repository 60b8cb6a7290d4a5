"""Data model of seed paper 002: the *table of communication* between processes.

Orduña, Arnau, Duato, "Characterization of Communications between Processes in
Message-Passing Applications", section 2: an ``N x N`` table ``T`` where ``T[i, j]`` is the
number of messages (or bytes) process ``i`` has sent to process ``j``.  The table is not
symmetric and its diagonal need not be zero (Table 1 has ``T[0, 0] = 416``).

Choices made here (the paper leaves them open):

* The amount *exchanged* between two distinct processes ``i != j`` is ``T[i, j] + T[j, i]``
  (the paper's "6 pairs of nodes that exchange 2533 messages" in Table 1 are
  ``1266 + 1267``).  :func:`exchanged_table` builds that symmetric matrix with a zero
  diagonal; it is what the clustering (eq. 1) works on.  The quality functions
  (eqs. 2-6) work on ``T`` itself.
* A valid table is a 2-D, square, finite, non-negative numeric array with ``N >= 2`` and some
  traffic between distinct processes (otherwise nothing can be clustered and ``D_G``'s
  normalisation, see :mod:`stealsearch.problems.commclust.quality`, is 0/0).
* Every problem raises :class:`CommTableError` (an :class:`stealsearch.engine.core.errors.InputError`) with a
  one-line message naming the source and the offending row/column.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from stealsearch.engine.core.errors import InputError


class CommTableError(InputError):
    """A communication table, trace, option or group list that cannot be used."""


def validate_table(table, source: str = "<table>") -> np.ndarray:
    """Check a communication table and return it as a C-contiguous ``float64`` array.

    >>> validate_table([[0, 3], [4, 0]]).tolist()
    [[0.0, 3.0], [4.0, 0.0]]
    >>> validate_table([[0, -1], [1, 0]])
    Traceback (most recent call last):
    ...
    stealsearch.problems.commclust.model.CommTableError: <table>: negative value -1 at row 0, col 1
    """
    try:
        arr = np.asarray(table)
    except (ValueError, TypeError):
        raise CommTableError(f"{source}: rows of different lengths (not a square table)") from None
    if arr.dtype == object:
        raise CommTableError(f"{source}: rows of different lengths or non-numeric values")
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iuf":
        raise CommTableError(f"{source}: table must be numeric, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise CommTableError(f"{source}: table must be 2-D, got {arr.ndim}-D of shape {arr.shape}")
    n_rows, n_cols = arr.shape
    if n_rows != n_cols:
        raise CommTableError(f"{source}: table is not square ({n_rows} rows x {n_cols} columns)")
    if n_rows < 2:
        raise CommTableError(f"{source}: need at least 2 processes, got {n_rows}")
    out = np.ascontiguousarray(arr, dtype=np.float64)
    kind, i, j, off = _scan_table(out)
    if kind == 1:
        raise CommTableError(f"{source}: non-finite value {arr[i, j]} at row {i}, col {j}")
    if kind == 2:
        raise CommTableError(f"{source}: negative value {_fmt(arr[i, j])} at row {i}, col {j}")
    if not off > 0:
        raise CommTableError(f"{source}: no traffic between distinct processes; nothing to cluster")
    return out


@njit(cache=True, nogil=True)
def _scan_table(t):
    """One pass: (0, -1, -1, off-diagonal sum) or (1 non-finite | 2 negative, row, col, 0)."""
    n = t.shape[0]
    first_neg_i = -1
    first_neg_j = -1
    off = 0.0
    for i in range(n):
        for j in range(n):
            v = t[i, j]
            if not np.isfinite(v):
                return 1, i, j, 0.0
            if v < 0 and first_neg_i < 0:
                first_neg_i = i
                first_neg_j = j
            if i != j:
                off += v
    if first_neg_i >= 0:
        return 2, first_neg_i, first_neg_j, 0.0
    return 0, -1, -1, off


@njit(cache=True, nogil=True)
def _symmetrize(t):
    """``t + t.T`` with a zero diagonal, in 64 x 64 tiles (no strided sweep of memory)."""
    n = t.shape[0]
    e = np.empty((n, n), dtype=np.float64)
    tile = 64
    for bi in range(0, n, tile):
        for bj in range(bi, n, tile):
            for i in range(bi, min(bi + tile, n)):
                for j in range(max(bj, i + 1), min(bj + tile, n)):
                    v = t[i, j] + t[j, i]
                    e[i, j] = v
                    e[j, i] = v
    for i in range(n):
        e[i, i] = 0.0
    return e


def _fmt(value) -> str:
    v = float(value)
    return str(int(v)) if v.is_integer() else repr(v)


def exchanged_table(table: np.ndarray) -> np.ndarray:
    """``E[i, j] = T[i, j] + T[j, i]`` for ``i != j`` and ``E[i, i] = 0`` (eq. 1's ``T_rs``).

    >>> exchanged_table(np.array([[416., 1266.], [1267., 416.]])).tolist()
    [[0.0, 2533.0], [2533.0, 0.0]]
    """
    return _symmetrize(np.ascontiguousarray(table, dtype=np.float64))


@dataclass
class Dendrogram:
    """The whole dendrogram of one clustering run (paper's Table 2).

    ``merges[k] = (a, b)`` are the ids of the clusters joined at step ``k`` (scipy's numbering:
    leaves ``0..N-1``, the cluster made at step ``k`` has id ``N + k``); ``a`` is the cluster
    holding the earlier node of ``order``.  ``f[k]`` is eq. 1's value of that merge and
    ``exchanged[k]`` its numerator (the traffic between the two clusters).  ``order`` is the
    random sorting of the processes used to break ties (``order[0]`` is the "first node").
    Partition ``k`` (``k = 0..N-1``) is the one after ``k`` merges: ``N - k`` clusters.
    """

    n: int
    merges: np.ndarray          # (N-1, 2) int64
    f: np.ndarray               # (N-1,) float64
    exchanged: np.ndarray       # (N-1,) float64
    sizes: np.ndarray           # (N-1,) int64, size of the new cluster
    order: np.ndarray           # (N,) int64 permutation of the processes
    seed: int | None = None
    _members: list | None = field(default=None, repr=False)

    def members(self) -> list[list[int]]:
        """Members of every cluster id (leaves then merged), in merge order (A's then B's)."""
        if self._members is None:
            mem: list[list[int]] = [[i] for i in range(self.n)]
            for a, b in self.merges:
                mem.append(mem[int(a)] + mem[int(b)])
            self._members = mem
        return self._members

    def partition_ids(self, k: int) -> list[int]:
        """Cluster ids present in partition ``k`` (after ``k`` merges), ordered by the rank of
        their first node in ``order`` (the paper's listing order in Table 2)."""
        if not 0 <= k < self.n:
            raise CommTableError(f"partition {k} out of range 0..{self.n - 1}")
        alive = set(range(self.n))
        for step in range(k):
            a, b = map(int, self.merges[step])
            alive.discard(a)
            alive.discard(b)
            alive.add(self.n + step)
        rank = np.empty(self.n, dtype=np.int64)
        rank[self.order] = np.arange(self.n)
        mem = self.members()
        return sorted(alive, key=lambda c: min(rank[m] for m in mem[c]))

    def partition(self, k: int) -> list[list[int]]:
        """Partition ``k`` as lists of processes (paper's order, see :meth:`partition_ids`)."""
        mem = self.members()
        return [list(mem[c]) for c in self.partition_ids(k)]

    def labels(self, k: int) -> np.ndarray:
        """Partition ``k`` as a label per process (labels ``0..N-k-1`` in listing order)."""
        lab = np.empty(self.n, dtype=np.int64)
        for label, cluster in enumerate(self.partition(k)):
            lab[cluster] = label
        return lab

    def linkage_matrix(self) -> np.ndarray:
        """scipy-style linkage ``Z`` with height ``f[0] - f`` (non-decreasing, 0 first)."""
        z = np.empty((self.n - 1, 4), dtype=np.float64)
        z[:, 0:2] = self.merges
        z[:, 2] = np.maximum.accumulate(self.f[0] - self.f) if self.n > 1 else 0.0
        z[:, 3] = self.sizes
        return z


def canonical_partition(clusters) -> tuple[tuple[int, ...], ...]:
    """A partition as a hashable canonical form: sorted tuples sorted by first member.

    >>> canonical_partition([[4, 6], [0, 2, 1, 3]])
    ((0, 1, 2, 3), (4, 6))
    """
    return tuple(sorted(tuple(sorted(int(x) for x in c)) for c in clusters))


def labels_to_clusters(labels) -> list[list[int]]:
    """Group processes by label; clusters ordered by their smallest process.

    >>> labels_to_clusters([1, 1, 0, 2])
    [[0, 1], [2], [3]]
    """
    groups: dict[int, list[int]] = {}
    for proc, lab in enumerate(np.asarray(labels).tolist()):
        groups.setdefault(int(lab), []).append(proc)
    return sorted(groups.values(), key=lambda c: c[0])
