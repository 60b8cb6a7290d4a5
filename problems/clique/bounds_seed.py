"""The seed's clique kernel: Kreher and Stinson's MAXCLIQUE2(ℓ) with the size, greedy
or sampling bound (seed 003 Algorithm 2.1.1)."""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import _cttz64 as ctz
from stealsearch.engine.core.problem import IMPROVED

from .colour_classes import _colour_class
from .rows import BOUND, LEVEL, X0, _later_candidates, _next_node, _open_node

SIZE, GREEDY, SAMPLING = 0, 1, 2
SEED_BOUNDS = {"size": SIZE, "greedy": GREEDY, "sampling": SAMPLING}


@njit(nogil=True, cache=True)
def _greedy_colours(adj, P, size, U, Q, C, W):
    """Number of colours first-fit greedy (natural order) uses on the set P of ``size``
    vertices."""
    for w in range(W):
        U[w] = P[w]
    remaining = size
    k = 0
    while remaining > 0:
        k += 1
        remaining -= _colour_class(U, Q, C, adj, W)
    return k


@njit(nogil=True, cache=True)
def seed_kernel(stack, top, budget, mode, incumbent, counters, solution, adj, bound_kind,
                classes):
    """MAXCLIQUE2(ℓ) (seed 003 Algorithm 2.1.1) in natural vertex order, a kernel of the
    engine's contract (:mod:`stealsearch.engine.core.problem`).

    The bound ``bound_kind``: ``SIZE`` (ℓ + |C_ℓ|), ``GREEDY`` (ℓ + colours of a greedy
    colouring of C_ℓ at every node) or ``SAMPLING`` (ℓ + number of the colour classes
    ``classes`` of one initial greedy colouring of G meeting C_ℓ).  The bound M of a node
    is computed once and checked before each child ("if M <= OptSize then return"); on
    the explicit stack the check happens when the child is popped, against the incumbent
    of that moment, so node counts equal the recursive algorithm's.
    """
    n = adj.shape[0]
    W = adj.shape[1]
    maxc = max(n, 1)
    P = np.empty(W, np.int64)
    Xs = np.empty(W, np.int64)
    U = np.empty(W, np.int64)
    Q = np.empty(W, np.int64)
    C = np.empty(W, np.int64)
    best = incumbent
    done = 0
    one = np.int64(1)
    while True:
        # a row whose bound M <= best is dropped: "if M <= OptSize then return"
        top, status = _next_node(stack, top, best, done, budget, maxc)
        if status >= 0:
            return top, status, best
        r = top
        lev = stack[r, LEVEL]
        done += 1
        best, improved, c = _open_node(stack, r, lev, best, counters, solution, Xs, P, W)
        if c == 0:
            M = lev
        elif bound_kind == SIZE:
            M = lev + c
        elif bound_kind == GREEDY:
            M = lev + _greedy_colours(adj, P, c, U, Q, C, W)
        else:
            used = 0
            for k in range(classes.shape[0]):
                for w in range(W):
                    if classes[k, w] & P[w] != 0:
                        used += 1
                        break
            M = lev + used
        cnt = 0
        if M > best:
            # children x in C_ℓ, increasing; the first one on top of the stack
            i = 0
            for w in range(W):
                q = P[w]
                while q != 0:
                    b = ctz(q)
                    bit = one << b
                    q &= ~bit
                    x = w * 64 + b
                    ch = r + c - 1 - i
                    stack[ch, LEVEL] = lev + 1
                    stack[ch, BOUND] = M
                    for w2 in range(W):
                        stack[ch, X0 + w2] = Xs[w2]
                    stack[ch, X0 + w] |= bit
                    _later_candidates(stack, ch, P, adj, x, W)
                    i += 1
            cnt = c
        top = r + cnt
        if improved:
            return top, IMPROVED, best
