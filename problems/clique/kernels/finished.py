"""MoMC's incremental upper bound over the engine's finished subtrees (option
``incremental``; Li, Jiang and Manyà 2017).

The root is branched on every vertex in vertex order, the *prefix decomposition*: the
child of vertex v holds the cliques of G_v = G[{0, ..., v}] that contain v, so its
candidates are v's neighbours before it, and it is on top of v + 1's (searched first
on one stack).  Its subtree is the engine's key v (:mod:`stealsearch.engine.core.finished`):
a row's key is the highest vertex of its clique X, since every other vertex of a row
below v's child comes from v's candidates.  ``finished[0, u]`` bounds the cliques of
G_u that contain u: u + 1 at the start, and once the key u finished, the largest bound
any row of it was closed with.

The bound at a node (X, P), |X| = ℓ: a clique K of P has a highest vertex u in P, and K
is a clique of G_u containing u, so |K| <= finished[0, u] and every clique below the
node has at most ℓ + max over u in P of finished[0, u] vertices.  Its test scans P from
its highest vertex down and stops at the first u whose bound is too large to prune
(the highest vertices, whose prefixes are largest, usually have the largest bounds).
A node it prunes is popped and not expanded, as one its stored bound prunes.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import _ctlz64
from stealsearch.engine.core.bitset import _cttz64 as ctz
from stealsearch.engine.core.finished import CLOSED, MADE, OPEN, STALE

from .rows import BOUND, FINISHED_PRUNED, LEVEL, X0


@njit(nogil=True, cache=True, inline="always")
def _pop_key(stack, r, lev, finished, key_rows, W):
    """Row ``r``, being popped: its key (-1 for the root), counted out of its key's open
    rows; a row of a key already finished is counted as stale (an accounting error)."""
    if lev == 0:
        return -1
    key = -1
    for w in range(W - 1, -1, -1):
        x = stack[r, X0 + w]
        if x != 0:
            key = w * 64 + 63 - _ctlz64(x)
            break
    key_rows[OPEN, key] -= 1
    if finished[1, key] != 0:
        key_rows[STALE, key] += 1
    return key


@njit(nogil=True, cache=True, inline="always")
def _close(key_rows, key, bound):
    """A row of ``key`` closed with ``bound`` (see the engine's contract)."""
    if bound > key_rows[CLOSED, key]:
        key_rows[CLOSED, key] = bound


@njit(nogil=True, cache=True, inline="always")
def _made(key_rows, key, cnt):
    """``cnt`` children of a row of ``key`` pushed."""
    key_rows[OPEN, key] += cnt
    key_rows[MADE, key] += cnt


@njit(nogil=True, cache=True, inline="always")
def _finished_bound(stack, r, lev, best, finished, W):
    """ℓ + the largest ``finished[0, u]`` over the candidates u of row ``r``, or a value
    above ``best`` as soon as one u shows the node cannot be pruned."""
    P0 = X0 + W
    limit = best - lev
    most = 0
    for w in range(W - 1, -1, -1):
        q = stack[r, P0 + w]
        while q != 0:
            b = 63 - _ctlz64(q)
            ub = finished[0, w * 64 + b]
            if ub > most:
                most = ub
                if most > limit:
                    return lev + most
            q &= ~(np.int64(1) << b)
    return lev + most


@njit(nogil=True, cache=True, inline="always")
def _pop_row(stack, r, lev, best, finished, key_rows, counters, W):
    """Row ``r``, being popped: ``(closed, key)``.  ``closed``: it is not expanded, its
    stored bound or the finished subtrees' bound (counted in ``FINISHED_PRUNED``) being
    at most ``best``, and its key's row is closed with that bound.  ``key``: its key
    (-1 for the root, and always without ``finished``)."""
    if finished is None:
        return stack[r, BOUND] <= best, -1
    key = _pop_key(stack, r, lev, finished, key_rows, W)
    if stack[r, BOUND] <= best:
        if key >= 0:
            _close(key_rows, key, stack[r, BOUND])
        return True, key
    if key >= 0:
        fb = _finished_bound(stack, r, lev, best, finished, W)
        if fb <= best:
            _close(key_rows, key, fb)
            counters[FINISHED_PRUNED] += 1
            return True, key
    return False, key


@njit(nogil=True, cache=True, inline="always")
def _expanded(key_rows, key, cnt, closing):
    """Row of ``key`` expanded: ``cnt`` children pushed, the rest of it closed with
    ``closing`` (nothing without ``key_rows``, or for the root)."""
    if key_rows is None:
        return
    if key >= 0:
        _made(key_rows, key, cnt)
        _close(key_rows, key, closing)


@njit(nogil=True, cache=True)
def _push_prefix(stack, r, U, adj, finished, key_rows, W):
    """The root's children in the prefix decomposition: for each vertex v of ``U`` (the
    root's candidates, a copy: the children overwrite row ``r``), the clique {v} with
    candidates v's neighbours before it in ``U`` and bound min(1 + their number,
    ``finished[0, v]``), from row ``r`` up, the first vertex on top.  Returns how many."""
    P0 = X0 + W
    one = np.int64(1)
    cnt = 0
    for w in range(W):
        q = U[w]
        while q != 0:
            cnt += 1
            q &= q - 1
    c = r + cnt - 1
    below = np.int64(0)           # U's vertices of the current word before v
    for w in range(W):
        q = U[w]
        below = 0
        while q != 0:
            b = ctz(q)
            bit = one << b
            q &= ~bit
            v = w * 64 + b
            size = 0
            for w2 in range(W):
                t = 0
                if w2 < w:
                    t = U[w2] & adj[v, w2]
                elif w2 == w:
                    t = below & adj[v, w2]
                stack[c, P0 + w2] = t
                stack[c, X0 + w2] = 0
                while t != 0:
                    size += 1
                    t &= t - 1
            stack[c, X0 + w] = bit
            stack[c, LEVEL] = 1
            stack[c, BOUND] = min(1 + size, finished[0, v])
            key_rows[OPEN, v] += 1
            key_rows[MADE, v] += 1
            below |= bit
            c -= 1
    return cnt
