"""Vertex orders and partitions computed once per instance: degeneracy, degree and
colour-sort orders, the independent-set partition, and the renumbering by an order."""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import _ctpop64 as popcount
from stealsearch.engine.core.bitset import _cttz64 as ctz

from stealsearch.engine.core.problem import GROW, IMPROVED, N_ENGINE_COUNTERS, NODES, OPTIMISE

from .bounds_colour import colour_kernel
from .colour_classes import _meets, _only_neighbour
from .rows import BOUND, LEVEL, X0

#: counters of :func:`maxiset_partition`'s searches (the engine's and the clique kernels')
N_COUNTERS = N_ENGINE_COUNTERS + 3



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


@njit(nogil=True, cache=True)
def degree_order(adj, n):
    """Vertices by decreasing degree (ties: smaller index first); position 0 holds the
    highest degree (MCQ's initial order)."""
    W = adj.shape[1]
    key = np.empty(n, np.int64)
    for v in range(n):
        d = 0
        for w in range(W):
            d += popcount(adj[v, w])
        key[v] = -d * (n + 1) + v
    return np.argsort(key)


@njit(nogil=True, cache=True)
def colour_sort_order(adj, n, base):
    """Colour-sort: greedy-colour G in the order ``base`` (first-fit, vertex at a
    time), then list the vertices by colour, lowest first, keeping ``base`` order
    within a colour.  Position 0 starts the first (largest-first) colour class."""
    W = adj.shape[1]
    colour = np.zeros(n, np.int64)
    used = np.zeros((max(n, 1), W), np.int64)   # members of each colour so far
    one = np.int64(1)
    for i in range(n):
        v = base[i]
        k = 0
        while _meets(used[k], adj, v, W):
            k += 1
        used[k, v >> 6] |= one << (v & 63)
        colour[v] = k
    key = np.empty(n, np.int64)
    for i in range(n):
        key[i] = colour[base[i]] * (n + 1) + i
    pos = np.argsort(key)
    out = np.empty(n, np.int64)
    for i in range(n):
        out[i] = base[pos[i]]
    return out


@njit(nogil=True, cache=True, inline="always")
def _fewest_neighbours(cand, adj, n, W):
    """The vertex of the bitset ``cand`` with the fewest neighbours in ``cand`` (the
    lowest on ties; -1 if ``cand`` is empty): the minimum-degree rule that grows a large
    independent set."""
    one = np.int64(1)
    pick = -1
    fewest = n + 1
    for w in range(W):
        q = cand[w]
        while q != 0:
            b = ctz(q)
            q &= ~(one << b)
            v = w * 64 + b
            d = 0
            for w2 in range(W):
                d += popcount(cand[w2] & adj[v, w2])
            if d < fewest:
                fewest = d
                pick = v
    return pick


@njit(nogil=True, cache=True)
def iset_partition(adj, n):
    """A partition of V into independent sets (colour classes), each grown greedily in
    the vertices not yet placed: the next member is the candidate with the fewest
    neighbours among the remaining candidates (the minimum-degree heuristic for a large
    independent set), as in MoMC's MaxIndSet ordering (which searches for a maximum
    independent set each time) and CliSAT's COLOR-SORT; then the smallest classes are
    emptied where their vertices fit elsewhere (:func:`_empty_small_classes`).  The
    number of classes bounds omega; on BHOSLIB graphs (n/k groups of mutually
    non-adjacent vertices) it finds the groups, so the bound is omega itself, as with
    MoMC's exact MaxIndSet (the emptying removes a class the greedy growth can leave
    over).  Returns the vertices listed class by class (first class first), the number
    of classes and each vertex's class (0 .. classes - 1).  O(n^2 W) word operations."""
    W = adj.shape[1]
    one = np.int64(1)
    out = np.empty(n, np.int64)
    vcls = np.zeros(max(n, 1), np.int64)
    R = np.zeros(W, np.int64)
    for v in range(n):
        R[v >> 6] |= one << (v & 63)
    cand = np.empty(W, np.int64)
    placed = 0
    k = 0
    while placed < n:
        for w in range(W):
            cand[w] = R[w]
        while True:
            pick = _fewest_neighbours(cand, adj, n, W)
            if pick < 0:
                break
            out[placed] = pick
            vcls[pick] = k
            placed += 1
            R[pick >> 6] &= ~(one << (pick & 63))
            for w in range(W):
                cand[w] &= ~adj[pick, w]
            cand[pick >> 6] &= ~(one << (pick & 63))
        k += 1
    if k > 1:
        k = _empty_small_classes(adj, n, vcls, k)
        # the vertices class by class, each class in the order its members were placed
        start = np.zeros(k + 1, np.int64)
        for v in range(n):
            start[vcls[v] + 1] += 1
        for c in range(k):
            start[c + 1] += start[c]
        order = np.empty(n, np.int64)
        for i in range(n):
            v = out[i]
            order[start[vcls[v]]] = v
            start[vcls[v]] += 1
        out = order
    return out, k, vcls[:n].copy()


@njit(nogil=True, cache=True)
def _move(x, src, dst, cls, vcls, size):
    """Move vertex ``x`` from class ``src`` to class ``dst`` (bitsets ``cls``, each
    vertex's class ``vcls``, class sizes ``size``)."""
    one = np.int64(1)
    cls[src, x >> 6] &= ~(one << (x & 63))
    cls[dst, x >> 6] |= one << (x & 63)
    vcls[x] = dst
    size[src] -= 1
    size[dst] += 1


#: classes :func:`_empty_small_classes` tries (smallest first) before it gives up
EMPTY_CLASS_TRIES = 8


@njit(nogil=True, cache=True)
def _empty_small_classes(adj, n, vcls, k):
    """Fewer classes in a partition of V into independent sets: a small class is emptied
    when each of its vertices v can be put into another class, either one holding no
    neighbour of v, or one holding a single neighbour w that itself moves to a third
    class holding no neighbour of w (Tomita's Re-NUMBER, applied to a whole class).
    Classes stay independent sets.  The smallest classes are tried first, up to
    EMPTY_CLASS_TRIES in a row that cannot be emptied (an attempt that fails is undone).
    ``vcls`` (each vertex's class) is rewritten with the classes left renumbered
    0 .. k' - 1 in their old order; returns k'.  O(tries x |class| x k x W) per class."""
    W = adj.shape[1]
    one = np.int64(1)
    cls = np.zeros((k, W), np.int64)
    size = np.zeros(k, np.int64)
    for v in range(n):
        cls[vcls[v], v >> 6] |= one << (v & 63)
        size[vcls[v]] += 1
    alive = np.ones(k, np.bool_)
    tried = np.zeros(k, np.bool_)
    mv = np.empty(2 * n + 2, np.int64)           # undo log: vertex, from, to
    mf = np.empty(2 * n + 2, np.int64)
    mt = np.empty(2 * n + 2, np.int64)
    left = k
    fails = 0
    while left > 1 and fails < EMPTY_CLASS_TRIES:
        ci = -1
        for c in range(k):
            if alive[c] and not tried[c] and (ci < 0 or size[c] < size[ci]):
                ci = c
        if ci < 0:
            break
        tried[ci] = True
        nm = 0
        ok = True
        for w0 in range(W):
            q = cls[ci, w0]
            while q != 0 and ok:
                b = ctz(q)
                q &= ~(one << b)
                v = w0 * 64 + b
                to = -1
                for cj in range(k):
                    if cj != ci and alive[cj] and not _meets(cls[cj], adj, v, W):
                        to = cj
                        break
                wv = -1
                wto = -1
                if to < 0:
                    for cj in range(k):
                        if cj == ci or not alive[cj]:
                            continue
                        x = _only_neighbour(cls[cj], adj, v, W)
                        if x < 0:
                            continue
                        for ck in range(k):
                            if ck != ci and ck != cj and alive[ck] \
                                    and not _meets(cls[ck], adj, x, W):
                                wv = x
                                wto = ck
                                break
                        if wv >= 0:
                            to = cj
                            break
                if to < 0:
                    ok = False
                    break
                if wv >= 0:
                    _move(wv, to, wto, cls, vcls, size)
                    mv[nm] = wv
                    mf[nm] = to
                    mt[nm] = wto
                    nm += 1
                _move(v, ci, to, cls, vcls, size)
                mv[nm] = v
                mf[nm] = ci
                mt[nm] = to
                nm += 1
            if not ok:
                break
        if ok:
            alive[ci] = False
            left -= 1
            fails = 0
            for c in range(k):
                tried[c] = False
        else:
            fails += 1
            for i in range(nm - 1, -1, -1):
                _move(mv[i], mt[i], mf[i], cls, vcls, size)
    newid = np.full(k, -1, np.int64)
    c2 = 0
    for c in range(k):
        if alive[c]:
            newid[c] = c2
            c2 += 1
    for v in range(n):
        vcls[v] = newid[vcls[v]]
    return c2


@njit(nogil=True, cache=True)
def maxiset_partition(adj, n, budget):
    """A partition of V into independent sets, each a *maximum* independent set of the
    vertices not yet placed as far as a search of ``budget`` nodes finds: MoMC's
    MaxIndSet ordering (Li, Jiang and Manyà 2017), which searches each set exactly with
    a cutoff.  Each set is a clique of the complement of G[R] (R: the vertices left),
    searched by :func:`.bounds_colour.colour_kernel` from the greedy set of
    :func:`iset_partition`'s rule (fewest neighbours first) as its first incumbent, so
    a set is never smaller than the greedy rule's; then the smallest classes are
    emptied where their vertices fit elsewhere (:func:`_empty_small_classes`).  On
    graphs like the keller graphs the greedy sets leave far more classes than omega,
    and the root's partition is the order every node's colouring inherits.  Returns what :func:`iset_partition` returns, the classes listed largest
    first (the search's colouring takes them in that order, so the classes below the
    threshold hold the most vertices)."""
    W = adj.shape[1]
    one = np.int64(1)
    R = np.zeros(W, np.int64)
    for v in range(n):
        R[v >> 6] |= one << (v & 63)
    comp = np.empty((max(n, 1), W), np.int64)      # the complement, loops removed
    for v in range(n):
        for w in range(W):
            comp[v, w] = ~adj[v, w] & R[w]
        comp[v, v >> 6] &= ~(one << (v & 63))
    vcls = np.zeros(max(n, 1), np.int64)
    sizes = np.zeros(max(n, 1), np.int64)
    cand = np.empty(W, np.int64)
    greedy = np.zeros(W, np.int64)
    width = X0 + 2 * W
    stack = np.zeros((4 * n + 4, width), np.int64)
    counters = np.zeros(N_COUNTERS, np.int64)
    solution = np.zeros(1 + W, np.int64)
    left = n
    k = 0
    while left > 0:
        # the greedy set: the candidate with the fewest neighbours among the candidates
        size = 0
        for w in range(W):
            cand[w] = R[w]
            greedy[w] = 0
        while True:
            pick = _fewest_neighbours(cand, adj, n, W)
            if pick < 0:
                break
            greedy[pick >> 6] |= one << (pick & 63)
            size += 1
            for w in range(W):
                cand[w] &= ~adj[pick, w]
            cand[pick >> 6] &= ~(one << (pick & 63))
        # a larger one, by the clique search on the complement over R
        stack[0, LEVEL] = 0
        stack[0, BOUND] = left + 1
        for w in range(W):
            stack[0, X0 + w] = 0
            stack[0, X0 + W + w] = R[w]
        top = 1
        best = size
        spent = 0
        while top > 0 and spent < budget:
            before = counters[NODES]
            top, status, value = colour_kernel(stack, top, budget - spent, OPTIMISE, best,
                                               counters, solution, comp)
            spent += counters[NODES] - before
            if status == IMPROVED:                # solution holds the larger set
                best = value
                for w in range(W):
                    greedy[w] = solution[1 + w]
            elif status == GROW:
                bigger = np.zeros((2 * stack.shape[0], width), np.int64)
                bigger[:top] = stack[:top]
                stack = bigger
        for w in range(W):
            q = greedy[w] & R[w]
            while q != 0:
                b = ctz(q)
                q &= ~(one << b)
                vcls[w * 64 + b] = k
                sizes[k] += 1
                left -= 1
            R[w] &= ~greedy[w]
        k += 1
    if k > 1:
        k = _empty_small_classes(adj, n, vcls, k)
    sizes[:] = 0
    for v in range(n):
        sizes[vcls[v]] += 1
    # classes largest first (ties: the order found), each class in vertex order
    key = np.empty(max(k, 1), np.int64)
    for c in range(k):
        key[c] = -sizes[c] * (k + 1) + c
    rank = np.empty(max(k, 1), np.int64)
    byrank = np.argsort(key[:k])
    for i in range(k):
        rank[byrank[i]] = i
    for v in range(n):
        vcls[v] = rank[vcls[v]]
    ckey = np.empty(n, np.int64)
    for v in range(n):
        ckey[v] = vcls[v] * (n + 1) + v
    out = np.argsort(ckey)
    return out, k, vcls[:n].copy()
