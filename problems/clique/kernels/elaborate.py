"""Elaboration of the colour bound's scaffold: the VeriPB 1.2 steps that justify each
recorded node, written as text into a byte buffer (numba writes no file; Python drains).

A record is the row of a node the colour kernel expanded: its level ℓ, clique X and
candidates P (bitsets in the kernel's vertex numbering).  With B the best clique size
of the whole search, the steps of one node are (see :mod:`stealsearch.problems.clique.proof`
for why they hold):

``p`` (the bound)
    the at-most-one constraint of each of the first B - ℓ classes of the node's greedy
    colouring (the kernel's own colouring, so the children it needs were expanded),
    each derived from the model's non-edge constraints by cutting planes, added to the
    objective constraint ``sum x >= B + 1`` (constraint ``obj_id``): no ``p`` where no
    class has two vertices;
``u`` (the nogood)
    ``sum_{v in X} ~x_v + sum_{v in E} x_v >= 1``, E = the common neighbours of X outside
    P and X, by reverse unit propagation.

Around them, VeriPB levels: the bound at level ``temp_level`` (wiped after the nogood),
the nogood at level ℓ + 1.  Variables are the graph's vertices in its own numbering,
1-based; non-edge ``{u, v}`` (u < v) is constraint ``offsets[u] + |{w : u < w < v,
w not adjacent to u}|`` of the model (the model lists them in that order).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import _ctpop64 as popcount
from stealsearch.engine.core.bitset import _cttz64 as ctz

from .colour_classes import _colour_class
from .rows import LEVEL, X0

SPACE, NEWLINE, PLUS, TIMES, DIVIDE, TILDE, SEMI = 32, 10, 43, 42, 100, 126, 59


@njit(nogil=True, cache=True)
def non_edge_offsets(rows, n):
    """``offsets[u]``: the model's constraint id of the first non-edge ``{u, v}``, v > u
    (ids from 1, pairs in lexicographic order); ``offsets[n]`` is one past the last."""
    W = rows.shape[1]
    offsets = np.empty(n + 1, np.int64)
    nxt = np.int64(1)
    for u in range(n):
        offsets[u] = nxt
        nxt += _non_neighbours_between(rows, u, u, n, W)
    offsets[n] = nxt
    return offsets


@njit(nogil=True, cache=True, inline="always")
def _non_neighbours_between(rows, u, lo, hi, W):
    """|{w : lo < w < hi, w not adjacent to u}| (w != u: u is not its own neighbour, but
    u <= lo here)."""
    one = np.int64(1)
    count = 0
    for w in range((lo + 1) >> 6, W):
        base = w << 6
        if base >= hi:
            break
        word = ~rows[u, w]
        first = lo + 1 - base
        if first > 0:
            word &= ~((one << first) - 1)
        last = hi - base
        if last < 64:
            word &= (one << last) - 1
        count += popcount(word)
    return count


@njit(nogil=True, cache=True)
def non_edge_id(rows, offsets, a, b):
    """The model's constraint id of the non-edge ``{a, b}`` (graph numbering, 0-based)."""
    u = min(a, b)
    v = max(a, b)
    return offsets[u] + _non_neighbours_between(rows, u, u, v, rows.shape[1])


@njit(nogil=True, cache=True, inline="always")
def _put_int(out, pos, value):
    """Write ``value`` (>= 0) in decimal at ``out[pos]``; returns the next position."""
    if value == 0:
        out[pos] = 48
        return pos + 1
    digits = 0
    v = value
    while v > 0:
        digits += 1
        v //= 10
    end = pos + digits
    v = value
    for i in range(end - 1, pos - 1, -1):
        out[i] = 48 + v % 10
        v //= 10
    return end


@njit(nogil=True, cache=True, inline="always")
def _put_token(out, pos, value, op):
    """`` value op`` (op a character code, or 0 for none)."""
    out[pos] = SPACE
    pos = _put_int(out, pos + 1, value)
    if op != 0:
        out[pos] = SPACE
        out[pos + 1] = op
        pos += 2
    return pos


@njit(nogil=True, cache=True, inline="always")
def _put_level(out, pos, rule, level):
    """A line ``# level`` (rule 35) or ``w level`` (rule 119)."""
    out[pos] = rule
    pos = _put_token(out, pos + 1, level, 0)
    out[pos] = NEWLINE
    return pos + 1


@njit(nogil=True, cache=True, inline="always")
def _put_literal(out, pos, vertex, negated):
    """`` 1 x<vertex+1>`` or `` 1 ~x<vertex+1>``."""
    out[pos] = SPACE
    out[pos + 1] = 49
    out[pos + 2] = SPACE
    pos += 3
    if negated:
        out[pos] = TILDE
        pos += 1
    out[pos] = 120
    return _put_int(out, pos + 1, vertex + 1)


@njit(nogil=True, cache=True, inline="always")
def _put_clause_end(out, pos):
    """`` >= 1 ;`` and a newline: the end of a clause's line."""
    for c in (SPACE, 62, 61, SPACE, 49, SPACE, SEMI, NEWLINE):
        out[pos] = c
        pos += 1
    return pos


@njit(nogil=True, cache=True)
def _members(C, order, W, dest):
    """The vertices of the bitset ``C`` (kernel numbering) as graph vertices, sorted,
    into ``dest``; returns how many."""
    one = np.int64(1)
    k = 0
    for w in range(W):
        q = C[w]
        while q != 0:
            b = ctz(q)
            q &= ~(one << b)
            dest[k] = order[w * 64 + b]
            k += 1
    dest[:k].sort()
    return k


@njit(nogil=True, cache=True)
def _put_at_most_one(out, pos, vs, k, rows, offsets):
    """The cutting-planes derivation, in reverse Polish notation, of
    ``sum_{i<k} ~x_vs[i] >= k - 1`` (at most one of an independent set) from the model's
    non-edges: for j = 3 .. k, (the constraint over the first j - 1) x (j - 2) plus the
    j - 1 non-edges of vertex j, divided by j - 1 (rounding up gives degree j - 1)."""
    pos = _put_token(out, pos, non_edge_id(rows, offsets, vs[0], vs[1]), 0)
    for j in range(3, k + 1):
        if j > 3:
            pos = _put_token(out, pos, j - 2, TIMES)
        for i in range(j - 1):
            pos = _put_token(out, pos, non_edge_id(rows, offsets, vs[i], vs[j - 1]), PLUS)
        pos = _put_token(out, pos, j - 1, DIVIDE)
    return pos


@njit(nogil=True, cache=True)
def _digits(value):
    d = 1
    while value >= 10:
        value //= 10
        d += 1
    return d


@njit(nogil=True, cache=True)
def elaborate_colour(recs, start, adj, order, rows, offsets, best, obj_id, temp_level, out,
                     text_start, text_len, levels, constraints):
    """The steps of records ``recs[start:]`` (see the module docstring), one record after
    another into ``out`` from position 0, until the next one might not fit.

    Record i's text is ``out[text_start[i]:text_start[i] + text_len[i]]``, its tree level
    ``levels[i]`` and the constraints it derives ``constraints[i]`` (indices from
    ``start``).  Returns ``(records written, bytes needed by the next record or 0)``:
    the caller drains ``out`` and calls again, or grows ``out`` when not even one record
    fit.  A level above ``best`` is a record no search of this best can have expanded:
    returned as ``(-1 - i, 0)`` for record ``start + i``."""
    n = adj.shape[0]
    W = adj.shape[1]
    P0 = X0 + W
    one = np.int64(1)
    U = np.empty(W, np.int64)
    Q = np.empty(W, np.int64)
    CN = np.empty(W, np.int64)
    maxc = max(n, 1)
    cls = np.empty((maxc, W), np.int64)
    size = np.empty(maxc, np.int64)
    vs = np.empty(maxc, np.int64)
    digits = _digits(max(offsets[n], obj_id, temp_level, n + 1)) + 4
    pos = 0
    done = 0
    for i in range(start, recs.shape[0]):
        lev = recs[i, LEVEL]
        if lev > best:
            return -1 - (i - start), 0
        # the first best - lev classes of the node's greedy colouring
        for w in range(W):
            U[w] = recs[i, P0 + w]
        nc = 0
        left = 0
        for w in range(W):
            left += popcount(U[w])
        while left > 0 and nc < best - lev:
            size[nc] = _colour_class(U, Q, cls[nc], adj, W, None, 0)
            left -= size[nc]
            nc += 1
        # the common neighbours of X outside P and X: E
        for w in range(W):
            CN[w] = -1
        nx = 0
        for w in range(W):
            q = recs[i, X0 + w]
            while q != 0:
                b = ctz(q)
                q &= ~(one << b)
                nx += 1
                for w2 in range(W):
                    CN[w2] &= adj[w * 64 + b, w2]
        ne = 0
        for w in range(W):
            CN[w] &= ~recs[i, P0 + w] & ~recs[i, X0 + w]
            if (w + 1) * 64 > n:
                if n - w * 64 < 64:
                    CN[w] &= (one << (n - w * 64)) - 1
            ne += popcount(CN[w])
        # room for the whole record, or stop here
        need = 64 + 6 * digits + (nx + ne) * (digits + 2)
        for k in range(nc):
            s = size[k]
            need += (s * (s - 1) // 2 + 2 * s + 2) * (digits + 3)
        if pos + need > out.shape[0]:
            return done, need
        text_start[i - start] = pos
        ncons = 0
        # the bound: p <amo> <amo> + ... <obj> +
        summands = 0
        for k in range(nc):
            if size[k] < 2:
                continue
            if summands == 0:
                pos = _put_level(out, pos, 35, temp_level)
                out[pos] = 112
                pos += 1
            m = _members(cls[k], order, W, vs)
            pos = _put_at_most_one(out, pos, vs, m, rows, offsets)
            if summands > 0:
                out[pos] = SPACE
                out[pos + 1] = PLUS
                pos += 2
            summands += 1
        if summands > 0:
            pos = _put_token(out, pos, obj_id, PLUS)
            out[pos] = SPACE
            out[pos + 1] = SEMI
            out[pos + 2] = NEWLINE
            pos += 3
            ncons += 1
        # the nogood at level lev + 1
        pos = _put_level(out, pos, 35, lev + 1)
        out[pos] = 117
        pos += 1
        m = _members(recs[i, X0:X0 + W], order, W, vs)
        for j in range(m):
            pos = _put_literal(out, pos, vs[j], True)
        m = _members(CN, order, W, vs)
        for j in range(m):
            pos = _put_literal(out, pos, vs[j], False)
        pos = _put_clause_end(out, pos)
        ncons += 1
        if summands > 0:
            pos = _put_level(out, pos, 119, temp_level)
        text_len[i - start] = pos - text_start[i - start]
        levels[i - start] = lev
        constraints[i - start] = ncons
        done += 1
    return done, 0


@njit(nogil=True, cache=True)
def partition_bound(classes, order, rows, offsets, obj_id, out):
    """``p`` of the at-most-one constraints of a partition of V into independent sets
    (``classes[v]``: the class of kernel vertex v) added to the objective constraint: a
    contradiction when there are at most B classes.  Written into ``out``; returns
    ``(bytes, constraints derived)`` (0 constraints: no class has two vertices, the
    objective constraint alone is the contradiction)."""
    n = classes.shape[0]
    nclasses = 0
    for v in range(n):
        nclasses = max(nclasses, classes[v] + 1)
    vs = np.empty(max(n, 1), np.int64)
    pos = 0
    summands = 0
    for k in range(nclasses):
        m = 0
        for v in range(n):
            if classes[v] == k:
                vs[m] = order[v]
                m += 1
        if m < 2:
            continue
        vs[:m].sort()
        if summands == 0:
            out[pos] = 112
            pos += 1
        pos = _put_at_most_one(out, pos, vs, m, rows, offsets)
        if summands > 0:
            out[pos] = SPACE
            out[pos + 1] = PLUS
            pos += 2
        summands += 1
    if summands == 0:
        return 0, 0
    pos = _put_token(out, pos, obj_id, PLUS)
    out[pos] = SPACE
    out[pos + 1] = SEMI
    out[pos + 2] = NEWLINE
    return pos + 3, 1


@njit(nogil=True, cache=True)
def group_by_level(out, text_start, text_len, levels, count, top_level, dest, bounds):
    """The texts of ``count`` records copied into ``dest`` grouped by level (each level's
    records in their order): level L's are ``dest[bounds[L]:bounds[L + 1]]``."""
    for L in range(top_level + 2):
        bounds[L] = 0
    for i in range(count):
        bounds[levels[i] + 1] += text_len[i]
    for L in range(top_level + 1):
        bounds[L + 1] += bounds[L]
    at = bounds[:top_level + 1].copy()
    for i in range(count):
        L = levels[i]
        s = text_start[i]
        d = at[L]
        for j in range(text_len[i]):
            dest[d + j] = out[s + j]
        at[L] = d + text_len[i]


@njit(nogil=True, cache=True)
def non_edge_lines(rows, n, u, out):
    """The model's lines ``1 ~xa 1 ~xb >= 1 ;`` of the non-edges {a, b}, a < b (graph
    numbering, written 1-based), from a = ``u`` on, in lexicographic order, into ``out``
    while the next vertex's lines surely fit.  Returns ``(bytes, next u)``; the caller
    makes ``out`` hold at least one vertex's lines (``(n + 1) * (2 * digits + 20)``)."""
    W = rows.shape[1]
    one = np.int64(1)
    width = 2 * _digits(n + 1) + 20
    pos = 0
    while u < n and pos + (n - u) * width <= out.shape[0]:
        for w in range((u + 1) >> 6, W):
            word = ~rows[u, w]
            first = u + 1 - (w << 6)
            if first > 0:
                word &= ~((one << first) - 1)
            last = n - (w << 6)
            if last < 64:
                word &= (one << last) - 1
            while word != 0:
                b = ctz(word)
                word &= ~(one << b)
                out[pos] = 49                       # "1 ~x<u+1>", then " 1 ~x<v+1>"
                out[pos + 1] = SPACE
                out[pos + 2] = TILDE
                out[pos + 3] = 120
                pos = _put_int(out, pos + 4, u + 1)
                pos = _put_literal(out, pos, w * 64 + b, True)
                pos = _put_clause_end(out, pos)
        u += 1
    return pos, u
