"""numba kernels of the clique search: one DFS chunk over an explicit stack of rows.

Every kernel follows the engine contract (:mod:`engine.problem`):
``kernel(stack, top, budget, mode, incumbent, counters, solution, *data) -> (top, status, value)``.

Row layout (int64 words; ``W = ceil(n / 64)``)::

    [0]            level  = |X|, the size of the clique of this node
    [1]            bound  = upper bound on any clique below this node, computed by the
                            parent (pruned on pop when ``bound <= incumbent``)
    [2, 2+W)       X      = the clique, a bitset
    [2+W, 2+2W)    C      = the extension set C_ℓ (candidates), a bitset
    [2+2W, 2+3W)   E      = excluded set (Bron-Kerbosch, count-maximal mode only)

Every row is self-contained: any worker can resume from it alone (seed 003 §3.2:
"each node ... contains a clique, its size, and its extension set").

Kernels
-------
``seed_kernel``     MAXCLIQUE2(ℓ) of Kreher-Stinson as given in seed 003 Algorithm
                    2.1.1, natural vertex order, bound chosen by ``bound_kind``:
                    ``SIZE`` (ℓ + |C_ℓ|), ``GREEDY`` (ℓ + colours of a greedy
                    colouring of C_ℓ at every node), ``SAMPLING`` (ℓ + number of
                    colour classes of one initial greedy colouring of G meeting C_ℓ).
                    The bound M of a node is computed once and checked before each
                    child ("if M <= OptSize then return"); on the explicit stack the
                    check happens when the child is popped, against the incumbent of
                    that moment, so node counts equal the recursive algorithm's.
``colour_kernel``   the modern default (Tomita's MCS / San Segundo's BBMC): vertices
                    renumbered once in a degeneracy order; at every node a bitset
                    greedy colouring of C in that order; only vertices whose colour k
                    satisfies ℓ + k > incumbent become children, taken in decreasing
                    colour order; child bound = ℓ + k (prune by colour class).  Not
                    included: MCS's Re-NUMBER and BBMC's infra-chromatic recolouring;
                    the node counts match MCS-style native solvers without them
                    (G(1000,.5): 79.2 M nodes here, 78.7 M native).
``count_all_kernel``       every clique (the empty one too) once, natural order.
``count_maximal_kernel``   maximal cliques, Bron-Kerbosch with Tomita's pivot.

A node is *expanded* (counted in ``counters[NODES]``) when it is popped and not
pruned by its stored bound; that matches the node count of the recursive
algorithms (a recursive call is one node).  No allocation per node: scratch arrays
are allocated once per kernel call.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.bitset import _ctpop64 as popcount
from engine.bitset import _cttz64 as ctz
from engine.problem import (BUDGET, EMPTY, GROW, IMPROVED, NODES, SOLUTIONS,
                            N_ENGINE_COUNTERS)

LEVEL, BOUND, X0 = 0, 1, 2
#: problem counter slot: deepest clique level reached (reduced by "max")
MAX_DEPTH = N_ENGINE_COUNTERS

SIZE, GREEDY, SAMPLING = 0, 1, 2
SEED_BOUNDS = {"size": SIZE, "greedy": GREEDY, "sampling": SAMPLING}


@njit(nogil=True, cache=True)
def _improve(stack, r, lev, W, solution):
    solution[0] = lev
    for w in range(W):
        solution[1 + w] = stack[r, X0 + w]


@njit(nogil=True, cache=True)
def colour_kernel(stack, top, budget, mode, incumbent, counters, solution, adj):
    """MCS/BBMC-style branch and bound with a greedy colouring bound at every node."""
    n = adj.shape[0]
    W = adj.shape[1]
    P0 = X0 + W
    cap = stack.shape[0]
    maxc = max(n, 1)
    Xs = np.empty(W, np.int64)
    U = np.empty(W, np.int64)
    Q = np.empty(W, np.int64)
    order = np.empty(maxc, np.int64)
    col = np.empty(maxc, np.int64)
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
        if stack[r, BOUND] <= best:
            continue
        done += 1
        counters[NODES] += 1
        if lev > counters[MAX_DEPTH]:
            counters[MAX_DEPTH] = lev
        improved = False
        if lev > best:
            best = lev
            _improve(stack, r, lev, W, solution)
            improved = True
        remaining = 0
        for w in range(W):
            Xs[w] = stack[r, X0 + w]
            U[w] = stack[r, P0 + w]
            remaining += popcount(U[w])
        kmin = best - lev + 1
        cnt = 0
        if remaining >= kmin:
            # bitset greedy colouring, one colour class at a time (BBMC): the same
            # colouring as first-fit in vertex order
            k = 0
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
                        if k >= kmin:
                            order[cnt] = v
                            col[cnt] = k
                            cnt += 1
            # children: highest colour first (on top); child i sees the candidates
            # not yet branched on (vertices after it in the order are removed)
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
        top = r + cnt
        if improved:
            return top, IMPROVED, best
    return 0, EMPTY, best


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
def seed_kernel(stack, top, budget, mode, incumbent, counters, solution, adj, bound_kind, classes):
    """MAXCLIQUE2(ℓ) (seed 003 Algorithm 2.1.1) with the size, greedy or sampling bound."""
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
                    # C_{ℓ+1} = A_x ∩ B_x ∩ C_ℓ  (B_x: vertices greater than x)
                    for w2 in range(w):
                        stack[ch, P0 + w2] = 0
                    stack[ch, P0 + w] = P[w] & adj[x, w] & ~((bit << 1) - 1) if b < 63 else 0
                    for w2 in range(w + 1, W):
                        stack[ch, P0 + w2] = P[w2] & adj[x, w2]
                    i += 1
            cnt = c
        top = r + cnt
        if improved:
            return top, IMPROVED, best
    return 0, EMPTY, best


@njit(nogil=True, cache=True)
def count_all_kernel(stack, top, budget, mode, incumbent, counters, solution, adj):
    """Count every clique (the empty clique included): each node is one clique."""
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
                nonempty = 0
                for w2 in range(w):
                    stack[ch, P0 + w2] = 0
                t = P[w] & adj[x, w] & ~((bit << 1) - 1) if b < 63 else 0
                stack[ch, P0 + w] = t
                nonempty |= t
                for w2 in range(w + 1, W):
                    t = P[w2] & adj[x, w2]
                    stack[ch, P0 + w2] = t
                    nonempty |= t
                if nonempty == 0:
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
    """Count maximal cliques: Bron-Kerbosch with Tomita's pivot (max |P ∩ N(u)|)."""
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


# -- orderings and colourings computed once per instance -------------------------------

@njit(nogil=True, cache=True)
def degeneracy_order(adj, n):
    """Vertices in reverse min-degree removal order (the degeneracy / minimum-width
    order of MCS and BBMC): position 0 holds the last vertex removed."""
    W = adj.shape[1]
    deg = np.zeros(n, np.int64)
    for v in range(n):
        for w in range(W):
            deg[v] += popcount(adj[v, w])
    removed = np.zeros(n, np.bool_)
    order = np.empty(n, np.int64)
    one = np.int64(1)
    for step in range(n):
        best = -1
        bd = n + 1
        for v in range(n):
            if not removed[v] and deg[v] < bd:
                bd = deg[v]
                best = v
        removed[best] = True
        order[n - 1 - step] = best
        for w in range(W):
            q = adj[best, w]
            while q != 0:
                b = ctz(q)
                q &= ~(one << b)
                u = w * 64 + b
                if not removed[u]:
                    deg[u] -= 1
    return order


@njit(nogil=True, cache=True)
def greedy_colour_classes(adj, n):
    """First-fit greedy colouring of all of G in natural vertex order, as a
    ``(colours, W)`` array of colour-class bitsets (the sampling bound's colouring)."""
    W = adj.shape[1]
    classes = np.zeros((max(n, 1), W), np.int64)
    U = np.zeros(W, np.int64)
    Q = np.empty(W, np.int64)
    one = np.int64(1)
    remaining = n
    for v in range(n):
        U[v >> 6] |= one << (v & 63)
    k = 0
    while remaining > 0:
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
                classes[k, w] |= bit
                remaining -= 1
        k += 1
    return classes[:max(k, 1)].copy()


@njit(nogil=True, cache=True)
def permute_rows(adj, order):
    """Adjacency bitsets with vertex ``order[i]`` renamed ``i``: O(n W + m)."""
    n = adj.shape[0]
    W = adj.shape[1]
    inverse = np.empty(n, np.int64)
    for i in range(n):
        inverse[order[i]] = i
    out = np.zeros_like(adj)
    one = np.int64(1)
    for i in range(n):
        src = order[i]
        for w in range(W):
            q = adj[src, w]
            while q != 0:
                b = ctz(q)
                q &= ~(one << b)
                j = inverse[w * 64 + b]
                out[i, j >> 6] |= one << (j & 63)
    return out
