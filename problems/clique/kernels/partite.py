"""SAT filtering of a node whose candidates fit in exactly as many independent sets as
the clique it must still find (San Segundo, Furini, Alvarez and Pardalos's CliSAT,
FiltSAT): :func:`.bounds_reason.reason_kernel` applies it at level 5 (bound
``filtsat``)."""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import _ctpop64 as popcount
from stealsearch.engine.core.bitset import _cttz64 as ctz

#: passes of failed-literal tests over every vertex; a pass that removes nothing ends
#: the filtering early (each removal can make a vertex tested before it fail)
FILTER_PASSES = 3


@njit(nogil=True, cache=True)
def _hard_failed(v, kv, P, adj, cls, K, vcls, M, cnt, fixed, queue, W):
    """True when no clique meeting every class of ``cls[0..K)`` contains ``v``.

    The classes partition the candidates ``P`` into independent sets and the clique
    sought has ``K`` vertices, so it takes exactly one vertex of each class: every class
    is a hard clause.  With ``v`` true (its class ``kv`` satisfied) the non-neighbours
    of v leave ``M``; a class with one vertex left in M forces it, whose non-neighbours
    leave M in turn; a class with none left is a conflict."""
    one = np.int64(1)
    for w in range(W):
        M[w] = P[w] & adj[v, w]
    nq = 0
    for k in range(K):
        fixed[k] = False
        if k == kv:
            continue
        c = 0
        for w in range(W):
            c += popcount(cls[k, w] & M[w])
        if c == 0:
            return True
        cnt[k] = c
        if c == 1:
            queue[nq] = k
            nq += 1
    fixed[kv] = True
    qi = 0
    while qi < nq:
        k = queue[qi]
        qi += 1
        if fixed[k]:
            continue
        u = -1
        for w in range(W):
            x = cls[k, w] & M[w]
            if x != 0:
                u = w * 64 + ctz(x)
                break
        fixed[k] = True
        for w in range(W):
            R = M[w] & ~adj[u, w]
            M[w] &= adj[u, w]
            while R != 0:
                b = ctz(R)
                R &= ~(one << b)
                k2 = vcls[w * 64 + b]
                if fixed[k2]:
                    continue
                cnt[k2] -= 1
                if cnt[k2] == 0:
                    return True
                if cnt[k2] == 1:
                    queue[nq] = k2
                    nq += 1
    return False


@njit(nogil=True, cache=True)
def _filter_partite(cls, K, P, adj, vcls, size, M, cnt, fixed, queue, W):
    """Remove from the classes ``cls[0..K)`` and from ``P`` (their union) every vertex in
    no clique that meets all K classes (:func:`_hard_failed`), class by class from the
    last, for up to FILTER_PASSES passes.  ``size`` is scratch (class sizes).

    Exact: a removed vertex is in no clique of K vertices of P, and the search below a
    node of this kind only looks for such cliques (one of fewer vertices cannot beat the
    incumbent, which only grows).  Returns False when a class empties: then P holds no
    such clique and the node has no child worth expanding."""
    one = np.int64(1)
    for k in range(K):
        s = 0
        for w in range(W):
            q = cls[k, w]
            s += popcount(q)
            while q != 0:
                b = ctz(q)
                q &= ~(one << b)
                vcls[w * 64 + b] = k
        if s == 0:
            return False
        size[k] = s
    for _ in range(FILTER_PASSES):
        removed = False
        for k in range(K - 1, -1, -1):
            for w in range(W):
                q = cls[k, w]
                while q != 0:
                    b = ctz(q)
                    bit = one << b
                    q &= ~bit
                    if _hard_failed(w * 64 + b, k, P, adj, cls, K, vcls, M, cnt, fixed, queue,
                                    W):
                        cls[k, w] &= ~bit
                        P[w] &= ~bit
                        removed = True
                        size[k] -= 1
                        if size[k] == 0:
                            return False
        if not removed:
            break
    return True


@njit(nogil=True, cache=True)
def _is_independent(S, adj, W):
    """True when no two vertices of the bitset ``S`` are adjacent."""
    one = np.int64(1)
    for w in range(W):
        q = S[w]
        while q != 0:
            b = ctz(q)
            q &= ~(one << b)
            v = w * 64 + b
            for w2 in range(w, W):
                if S[w2] & adj[v, w2] != 0:
                    return False
    return True
