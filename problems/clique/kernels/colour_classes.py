"""Colour classes as bitsets: greedy colouring a class at a time, and the tests on one
class that Re-NUMBER and the class-emptying heuristics ask."""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import _ctpop64 as popcount
from stealsearch.engine.core.bitset import _cttz64 as ctz


@njit(nogil=True, cache=True, inline="always")
def _colour_class(U, Q, C, adj, W, vcls, k):
    """Move the next colour class of a greedy colouring out of the bitset ``U`` into
    ``C``: the lowest vertex of U, then each next vertex of U adjacent to none taken so far
    (BBMC's bitset colouring, a class at a time: the same classes as first-fit in vertex
    order).  ``Q`` is scratch.  Unless ``vcls`` is None, ``vcls[v] = k`` for each vertex
    v taken (numba compiles the None case without the store).  Returns the size of the
    class."""
    one = np.int64(1)
    for w in range(W):
        Q[w] = U[w]
        C[w] = 0
    size = 0
    for w in range(W):
        q = Q[w]
        while q != 0:
            b = ctz(q)
            bit = one << b
            v = w * 64 + b
            U[w] &= ~bit
            C[w] |= bit
            if vcls is not None:
                vcls[v] = k
            q &= ~bit
            q &= ~adj[v, w]
            for w2 in range(w + 1, W):
                Q[w2] &= ~adj[v, w2]
            size += 1
    return size


@njit(nogil=True, cache=True, inline="always")
def _append_class(C, k, order, col, cnt, W):
    """Append the vertices of the bitset ``C`` (increasing) to ``order`` with colour ``k``
    in ``col``, from position ``cnt``; returns the new count."""
    one = np.int64(1)
    for w in range(W):
        q = C[w]
        while q != 0:
            b = ctz(q)
            q &= ~(one << b)
            order[cnt] = w * 64 + b
            col[cnt] = k
            cnt += 1
    return cnt


@njit(nogil=True, cache=True, inline="always")
def _label_class(C, k, vcls, W):
    """``vcls[v] = k`` for every vertex v of the bitset ``C``."""
    one = np.int64(1)
    for w in range(W):
        q = C[w]
        while q != 0:
            b = ctz(q)
            q &= ~(one << b)
            vcls[w * 64 + b] = k


@njit(nogil=True, cache=True, inline="always")
def _meets(C, adj, v, W):
    """True if the bitset ``C`` holds a neighbour of ``v``."""
    for w in range(W):
        if C[w] & adj[v, w] != 0:
            return True
    return False


@njit(nogil=True, cache=True, inline="always")
def _only_neighbour(C, adj, v, W):
    """The one neighbour of ``v`` in the bitset ``C``: -1 if there is none, -2 if there
    are several."""
    c = 0
    only = -1
    for w in range(W):
        x = C[w] & adj[v, w]
        if x != 0:
            c += popcount(x)
            if c > 1:
                return -2
            only = w * 64 + ctz(x)
    return only


@njit(nogil=True, cache=True)
def greedy_colour_classes(adj, n):
    """First-fit greedy colouring of all of G in natural vertex order, as a
    ``(colours, W)`` array of colour-class bitsets (one empty class when n = 0): the
    sampling bound's colouring, and the greedy half of the root bound."""
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
        remaining -= _colour_class(U, Q, classes[k], adj, W, None, 0)
        k += 1
    return classes[:max(k, 1)].copy()


@njit(nogil=True, cache=True)
def class_of_vertices(classes, n):
    """Each vertex's class (0 .. colours - 1) from colour classes as bitsets."""
    W = classes.shape[1]
    one = np.int64(1)
    out = np.zeros(n, np.int64)
    for k in range(classes.shape[0]):
        for w in range(W):
            q = classes[k, w]
            while q != 0:
                b = ctz(q)
                q &= ~(one << b)
                out[w * 64 + b] = k
    return out
