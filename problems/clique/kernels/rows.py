"""The row layout of the clique kernels and the node steps they share.

A row is int64 words, ``W = ceil(n / 64)``::

    [0]            level  = |X|, the size of the clique of this node
    [1]            bound  = upper bound on any clique below this node, computed by the
                            parent (pruned on pop when ``bound <= incumbent``)
    [2, 2+W)       X      = the clique, a bitset
    [2+W, 2+2W)    C      = the extension set C_ℓ (candidates), a bitset
    [2+2W, 2+3W)   E      = excluded set (Bron-Kerbosch, count-maximal mode only)

Every row is self-contained: any worker can resume from it alone (seed 003 §3.2:
"each node ... contains a clique, its size, and its extension set").  A node is
*expanded* (counted in ``counters[NODES]``) when it is popped and not pruned by its
stored bound, as a recursive call is one node of the recursive algorithms.  A kernel
allocates its scratch arrays once per call, never per node.

numba's cache of a kernel holds the helpers it calls, and is not renewed when a
helper's file alone changes: after editing a helper, clear the ``__pycache__`` folders
of the clique package (the test session's warm-up does, see ``tests/warm_kernels.py``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.problem import N_ENGINE_COUNTERS

LEVEL, BOUND, X0 = 0, 1, 2
#: problem counter slot: deepest clique level reached (reduced by "max")
MAX_DEPTH = N_ENGINE_COUNTERS
#: problem counter slot: expanded nodes that pushed at least one child (reduced by "sum").
#: CliSAT counts its recursive calls, whose bound tests run in the parent's loop, so a
#: child its bound prunes is no call; here that child is popped and counted in NODES,
#: and BRANCHED is the count that compares with CliSAT's
BRANCHED = N_ENGINE_COUNTERS + 1
#: problem counter slot, with the incremental bound only: popped rows the finished
#: subtrees' bound pruned (:mod:`.finished`; reduced by "sum")
FINISHED_PRUNED = N_ENGINE_COUNTERS + 2


@njit(nogil=True, cache=True)
def _improve(stack, r, lev, W, solution):
    """The clique of the node at row ``r`` (level ``lev``) as the new incumbent."""
    solution[0] = lev
    for w in range(W):
        solution[1 + w] = stack[r, X0 + w]


@njit(nogil=True, cache=True)
def _push_children(stack, r, lev, cnt, order, col, Xs, U, adj, W):
    """The children of the node at row ``r`` (clique Xs, level ``lev``): vertex
    ``order[i]`` with bound ``lev + col[i]`` at row ``r + i``, the last one on top; child i
    sees the candidates not yet branched on (the vertices after it are removed)."""
    P0 = X0 + W
    one = np.int64(1)
    for w in range(W):
        U[w] = stack[r, P0 + w]
    for i in range(cnt - 1, -1, -1):
        v = order[i]
        c = r + i
        stack[c, LEVEL] = lev + 1
        stack[c, BOUND] = lev + col[i]
        for w in range(W):
            stack[c, X0 + w] = Xs[w]
            stack[c, P0 + w] = U[w] & adj[v, w]
        vw = v >> 6
        vb = one << (v & 63)
        stack[c, X0 + vw] |= vb
        U[vw] &= ~vb


@njit(nogil=True, cache=True, inline="always")
def _later_candidates(stack, ch, P, adj, x, W):
    """Row ``ch``'s candidates: those of ``P`` adjacent to ``x`` and after it in vertex
    order (seed Algorithm 2.1.1's C_{ℓ+1} = A_x ∩ B_x ∩ C_ℓ).  Returns their words OR-ed
    (zero when there are none)."""
    P0 = X0 + W
    xw = x >> 6
    b = x & 63
    bit = np.int64(1) << b
    for w2 in range(xw):
        stack[ch, P0 + w2] = 0
    t = P[xw] & adj[x, xw] & ~((bit << 1) - 1) if b < 63 else 0
    stack[ch, P0 + xw] = t
    nonempty = t
    for w2 in range(xw + 1, W):
        t = P[w2] & adj[x, w2]
        stack[ch, P0 + w2] = t
        nonempty |= t
    return nonempty
