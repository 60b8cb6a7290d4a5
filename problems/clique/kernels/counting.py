"""The counting kernels of the clique search: every clique, and the maximal cliques
(Bron-Kerbosch with Tomita's pivot)."""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import _ctpop64 as popcount
from stealsearch.engine.core.bitset import _cttz64 as ctz
from stealsearch.engine.core.problem import BUDGET, EMPTY, GROW, NODES, SOLUTIONS

from .rows import BOUND, LEVEL, MAX_DEPTH, X0, _later_candidates



@njit(nogil=True, cache=True)
def count_all_kernel(stack, top, budget, mode, incumbent, counters, solution, adj):
    """Count every clique, the empty clique included, once: each node is one clique, in
    natural vertex order (a leaf is counted without a push).  A kernel of the engine's
    contract (:mod:`stealsearch.engine.core.problem`); each clique is one solution."""
    n = adj.shape[0]
    W = adj.shape[1]
    P0 = X0 + W
    cap = stack.shape[0]
    maxc = max(n, 1)
    P = np.empty(W, np.int64)
    Xs = np.empty(W, np.int64)
    done = 0
    one = np.int64(1)
    while top > 0:
        if done >= budget:
            return top, BUDGET, incumbent
        if top + maxc > cap:
            return top, GROW, incumbent
        top -= 1
        r = top
        lev = stack[r, LEVEL]
        done += 1
        counters[NODES] += 1
        counters[SOLUTIONS] += 1
        if lev > counters[MAX_DEPTH]:
            counters[MAX_DEPTH] = lev
        for w in range(W):
            Xs[w] = stack[r, X0 + w]
            P[w] = stack[r, P0 + w]
        ch = r
        for w in range(W):
            q = P[w]
            while q != 0:
                b = ctz(q)
                bit = one << b
                q &= ~bit
                x = w * 64 + b
                if _later_candidates(stack, ch, P, adj, x, W) == 0:
                    # a leaf: the clique X + x, counted without a push
                    done += 1
                    counters[NODES] += 1
                    counters[SOLUTIONS] += 1
                    if lev + 1 > counters[MAX_DEPTH]:
                        counters[MAX_DEPTH] = lev + 1
                    continue
                stack[ch, LEVEL] = lev + 1
                stack[ch, BOUND] = 0
                for w2 in range(W):
                    stack[ch, X0 + w2] = Xs[w2]
                stack[ch, X0 + w] |= bit
                ch += 1
        top = ch
    return 0, EMPTY, incumbent


@njit(nogil=True, cache=True)
def count_maximal_kernel(stack, top, budget, mode, incumbent, counters, solution, adj):
    """Count maximal cliques: Bron-Kerbosch with Tomita's pivot (the u of P ∪ E with
    the most neighbours in P); rows carry the excluded set E.  A kernel of the engine's
    contract (:mod:`stealsearch.engine.core.problem`)."""
    n = adj.shape[0]
    W = adj.shape[1]
    P0 = X0 + W
    E0 = X0 + 2 * W
    cap = stack.shape[0]
    maxc = max(n, 1)
    P = np.empty(W, np.int64)
    E = np.empty(W, np.int64)
    Xs = np.empty(W, np.int64)
    cand = np.empty(W, np.int64)
    done = 0
    one = np.int64(1)
    while top > 0:
        if done >= budget:
            return top, BUDGET, incumbent
        if top + maxc > cap:
            return top, GROW, incumbent
        top -= 1
        r = top
        lev = stack[r, LEVEL]
        done += 1
        counters[NODES] += 1
        if lev > counters[MAX_DEPTH]:
            counters[MAX_DEPTH] = lev
        pe = 0
        ee = 0
        for w in range(W):
            Xs[w] = stack[r, X0 + w]
            P[w] = stack[r, P0 + w]
            E[w] = stack[r, E0 + w]
            pe |= P[w]
            ee |= E[w]
        if pe == 0:
            if ee == 0:
                counters[SOLUTIONS] += 1
            continue
        # pivot u in P ∪ E maximising |P ∩ N(u)|
        pivot = -1
        pbest = -1
        for w in range(W):
            q = P[w] | E[w]
            while q != 0:
                b = ctz(q)
                q &= ~(one << b)
                u = w * 64 + b
                s = 0
                for w2 in range(W):
                    s += popcount(P[w2] & adj[u, w2])
                if s > pbest:
                    pbest = s
                    pivot = u
        for w in range(W):
            cand[w] = P[w] & ~adj[pivot, w]
        ch = r
        for w in range(W):
            q = cand[w]
            while q != 0:
                b = ctz(q)
                bit = one << b
                q &= ~bit
                v = w * 64 + b
                stack[ch, LEVEL] = lev + 1
                stack[ch, BOUND] = 0
                for w2 in range(W):
                    stack[ch, X0 + w2] = Xs[w2]
                    stack[ch, P0 + w2] = P[w2] & adj[v, w2]
                    stack[ch, E0 + w2] = E[w2] & adj[v, w2]
                stack[ch, X0 + w] |= bit
                P[w] &= ~bit
                E[w] |= bit
                ch += 1
        top = ch
    return 0, EMPTY, incumbent
