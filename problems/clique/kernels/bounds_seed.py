"""The seed's clique kernel: Kreher and Stinson's MAXCLIQUE2(ℓ) with the size, greedy
or sampling bound (seed 003 Algorithm 2.1.1)."""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import _ctpop64 as popcount
from stealsearch.engine.core.bitset import _cttz64 as ctz
from stealsearch.engine.core.problem import BUDGET, EMPTY, GROW, IMPROVED, NODES

from .rows import BOUND, LEVEL, MAX_DEPTH, X0, _improve, _later_candidates

SIZE, GREEDY, SAMPLING = 0, 1, 2
SEED_BOUNDS = {"size": SIZE, "greedy": GREEDY, "sampling": SAMPLING}


@njit(nogil=True, cache=True)
def _greedy_colours(adj, P, U, Q, W):
    """Number of colours first-fit greedy (natural order) uses on the set P."""
    remaining = 0
    for w in range(W):
        U[w] = P[w]
        remaining += popcount(U[w])
    k = 0
    one = np.int64(1)
    while remaining > 0:
        k += 1
        for w in range(W):
            Q[w] = U[w]
        for w in range(W):
            q = Q[w]
            while q != 0:
                b = ctz(q)
                bit = one << b
                v = w * 64 + b
                U[w] &= ~bit
                q &= ~bit
                q &= ~adj[v, w]
                for w2 in range(w + 1, W):
                    Q[w2] &= ~adj[v, w2]
                remaining -= 1
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
    P0 = X0 + W
    cap = stack.shape[0]
    maxc = max(n, 1)
    P = np.empty(W, np.int64)
    Xs = np.empty(W, np.int64)
    U = np.empty(W, np.int64)
    Q = np.empty(W, np.int64)
    best = incumbent
    done = 0
    one = np.int64(1)
    while top > 0:
        if done >= budget:
            return top, BUDGET, best
        if top + maxc > cap:
            return top, GROW, best
        top -= 1
        r = top
        lev = stack[r, LEVEL]
        if stack[r, BOUND] <= best:       # "if M <= OptSize then return"
            continue
        done += 1
        counters[NODES] += 1
        if lev > counters[MAX_DEPTH]:
            counters[MAX_DEPTH] = lev
        improved = False
        if lev > best:                    # "if ℓ > OptSize then OptClique <- X"
            best = lev
            _improve(stack, r, lev, W, solution)
            improved = True
        c = 0
        for w in range(W):
            Xs[w] = stack[r, X0 + w]
            P[w] = stack[r, P0 + w]
            c += popcount(P[w])
        if c == 0:
            M = lev
        elif bound_kind == SIZE:
            M = lev + c
        elif bound_kind == GREEDY:
            M = lev + _greedy_colours(adj, P, U, Q, W)
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
    return 0, EMPTY, best
