"""The greedy initial clique of the clique search, and its step (the densest candidate)."""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import _ctpop64 as popcount
from stealsearch.engine.core.bitset import _cttz64 as ctz



@njit(nogil=True, cache=True)
def densest_candidate(P, adj, W):
    """The vertex of the bitset ``P`` with the most neighbours in ``P`` (the lowest
    numbered on ties): ``(vertex, its degree in P, vertices examined)``, ``(-1, -1, 0)``
    for an empty ``P``.  The greedy step of the initial cliques (here and AMTS's
    restart in :mod:`stealsearch.problems.clique.local_search`)."""
    one = np.int64(1)
    pick = -1
    pbest = -1
    examined = 0
    for w in range(W):
        q = P[w]
        while q != 0:
            b = ctz(q)
            q &= ~(one << b)
            v = w * 64 + b
            d = 0
            for w2 in range(W):
                d += popcount(P[w2] & adj[v, w2])
            examined += 1
            if d > pbest:
                pbest = d
                pick = v
    return pick, pbest, examined


@njit(nogil=True, cache=True)
def greedy_clique(adj, n, starts, effort):
    """Initial clique heuristic (run before the exact search; its clique is the first
    incumbent).  From each of the first ``starts`` vertices (in the search's vertex
    numbering, i.e. the densest part of the ordering first), grow a clique greedily,
    always adding the candidate with the most neighbours among the remaining
    candidates (dynamic degree, as in the initial heuristics of MCS-era solvers; MoMC
    uses static degree).  The result is maximal.  ``effort`` caps the total number of
    candidate evaluations (word operations / W), so the heuristic stays a small share
    of the search.  Returns the best clique's vertices."""
    W = adj.shape[1]
    P = np.empty(W, np.int64)
    cur = np.empty(max(n, 1), np.int64)
    best = np.empty(max(n, 1), np.int64)
    nbest = 0
    spent = 0
    for s in range(min(starts, n)):
        if spent > effort:
            break
        # a start whose degree cannot beat the best clique is skipped
        deg = 0
        for w in range(W):
            P[w] = adj[s, w]
            deg += popcount(P[w])
        if deg + 1 <= nbest:
            continue
        size = 1
        cur[0] = s
        while True:
            pick, pbest, examined = densest_candidate(P, adj, W)
            spent += examined
            if pick < 0:
                break
            cur[size] = pick
            size += 1
            for w in range(W):
                P[w] &= adj[pick, w]
            if size + pbest <= nbest:
                break           # cannot beat the best any more (not maximal: dropped)
        if size > nbest:
            # only reached with a maximal clique: a cut-off one has size <= nbest
            nbest = size
            for i in range(size):
                best[i] = cur[i]
    return best[:nbest].copy()
