"""The initial clique: AMTS, an adaptive multistart tabu search (Wu and Hao 2013).

Qinghua Wu and Jin-Kao Hao, *An adaptive multistart tabu search approach to solve the
maximum clique problem*, Journal of Combinatorial Optimization 26 (2013) 86-108.  CliSAT
(San Segundo, Furini, Alvarez, Pardalos 2023) runs it for 0.05 s before its search; on
graphs with a large planted clique (gen400_p0.9_*, san*, frb*) it finds the optimum that
the exact search would otherwise reach late, and the exact search then only proves it.

AMTS looks for a clique of a fixed size k as a k-subset S of the vertices that maximises
f(S), the number of edges inside S (a k-clique when f = k(k-1)/2), then raises k:

* **constrained swap**: remove a non-tabu u in S of minimum d_S(u) (neighbours in S) and
  add a non-tabu v outside S of maximum d_S(v), a non-adjacent pair when one exists (the
  gain is d_S(v) - d_S(u) - [u ~ v]);
* **probabilistic diversification**: when that swap does not improve f, with probability
  min((l + 2) / n, 0.1) (l = k(k-1)/2 - f, the missing edges) swap a random u in S for a
  random v outside S with d_S(v) < floor(k rho) (rho: the graph's density) instead;
* **dynamic tabu tenure**: u may not re-enter S for l + random(C) iterations, v may not
  leave for 0.6 l + random(0.6 C), C = max(floor(k / 40), 6);
* **adaptive restart**: after ``depth`` iterations without improving f, a new S is built
  from the vertex moved least often (the long-term frequency memory), then by maximum
  d_S, ties to the least moved; the counts reset once all exceed k.

Choices where the paper leaves room or where this code differs (stated, tested):

* the budget is a number of iterations, not seconds, so a run is reproducible (fixed
  seed): :func:`amts_iterations` scales it with the graph, ``AMTS_ITERATIONS`` x n x
  density^2 (sparse graphs, where the greedy clique is usually optimal and the search
  is short, get little; the dense structured ones, where it decides, get the most);
* the search starts from the greedy clique (k = its size + 1) and stops as soon as k
  would exceed ``upper`` (a proven upper bound on omega: nothing larger exists);
* the k-clique found last is extended to a maximal clique (greedily) before it is
  returned, so the first incumbent is maximal, like the greedy heuristic's;
* no aspiration criterion (the paper's tabu rule without one); ties are broken
  uniformly at random among the candidates.

>>> import numpy as np
>>> from stealsearch.problems.clique.generators import gnp
>>> g = gnp(60, 0.5, seed=1)
>>> clique, iterations = amts(g.rows.view(np.int64), g.n, np.zeros(0, np.int64), 2000, 500, g.n, 1)
>>> len(clique)
8
"""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.bitset import _ctpop64 as popcount
from stealsearch.engine.bitset import _cttz64 as ctz

#: iterations per vertex at density 1 (see :func:`amts_iterations`)
AMTS_ITERATIONS = 100
#: at least this many iterations on any graph with an edge
AMTS_MIN_ITERATIONS = 500
#: iterations without improving f before a restart (the paper's search depth)
AMTS_DEPTH = 4000


def amts_iterations(n: int, density: float) -> int:
    """The iteration budget of :func:`amts` for a graph of ``n`` vertices: AMTS_ITERATIONS
    x n x density^2, at least AMTS_MIN_ITERATIONS (an iteration costs O(n) word operations)."""
    if n < 2:
        return 0
    return max(AMTS_MIN_ITERATIONS, int(AMTS_ITERATIONS * n * density * density))


@njit(nogil=True, cache=True)
def _enter(adj, v, inS, dS, S, pos, size, W):
    """Put ``v`` into S at position ``size``; its neighbours gain one neighbour in S."""
    one = np.int64(1)
    inS[v] = True
    pos[v] = size
    S[size] = v
    for w in range(W):
        q = adj[v, w]
        while q != 0:
            b = ctz(q)
            q &= ~(one << b)
            dS[w * 64 + b] += 1


@njit(nogil=True, cache=True)
def _leave(adj, u, inS, dS, S, pos, size, W):
    """Take ``u`` out of S (of ``size`` vertices; the last one fills its place)."""
    one = np.int64(1)
    inS[u] = False
    i = pos[u]
    last = S[size - 1]
    S[i] = last
    pos[last] = i
    pos[u] = -1
    for w in range(W):
        q = adj[u, w]
        while q != 0:
            b = ctz(q)
            q &= ~(one << b)
            dS[w * 64 + b] -= 1


@njit(nogil=True, cache=True)
def _adjacent(adj, u, v):
    return (adj[u, v >> 6] >> (v & 63)) & 1


@njit(nogil=True, cache=True)
def _fill(adj, n, k, size, inS, dS, S, pos, freq, W):
    """Grow S to k vertices: each time the outside vertex of maximum d_S, ties to the
    least moved (frequency memory), then uniformly at random."""
    while size < k:
        bv = -1
        bd = -1
        bf = 0
        cnt = 0
        for v in range(n):
            if inS[v]:
                continue
            if dS[v] > bd or (dS[v] == bd and freq[v] < bf):
                bd = dS[v]
                bf = freq[v]
                bv = v
                cnt = 1
            elif dS[v] == bd and freq[v] == bf:
                cnt += 1
                if np.random.randint(cnt) == 0:
                    bv = v
        _enter(adj, bv, inS, dS, S, pos, size, W)
        size += 1
    return size


@njit(nogil=True, cache=True)
def _edges_in(S, k, dS):
    f = 0
    for i in range(k):
        f += dS[S[i]]
    return f // 2


@njit(nogil=True, cache=True)
def amts(adj, n, start, max_iters, depth, upper, seed):
    """Adaptive multistart tabu search for a maximum clique (see the module docstring).

    ``adj``: int64 bitset rows; ``start``: a clique to begin from (k = len + 1);
    ``max_iters``: the iteration budget over every k; ``depth``: iterations without
    improvement before a restart; ``upper``: a proven upper bound on omega (the search
    stops when the clique reaches it); ``seed``: numba's random seed.  Returns ``(clique,
    iterations used)``: a maximal clique at least as large as ``start``.
    """
    np.random.seed(seed)
    W = adj.shape[1]
    inS = np.zeros(max(n, 1), np.bool_)
    dS = np.zeros(max(n, 1), np.int64)
    S = np.empty(max(n, 1), np.int64)
    pos = np.full(max(n, 1), -1, np.int64)
    tabu = np.zeros(max(n, 1), np.int64)
    freq = np.zeros(max(n, 1), np.int64)
    A = np.empty(max(n, 1), np.int64)
    B = np.empty(max(n, 1), np.int64)
    Bb = np.zeros(W, np.int64)
    best = start.copy()
    nb = len(best)
    it = 0
    if n >= 2 and nb < upper and max_iters > 0:
        m2 = 0
        for v in range(n):
            for w in range(W):
                m2 += popcount(adj[v, w])
        rho = m2 / (n * (n - 1.0))
        size = 0
        for i in range(nb):
            _enter(adj, best[i], inS, dS, S, pos, size, W)
            size += 1
        k = nb + 1
        while it < max_iters and k <= min(upper, n):
            C = max(k // 40, 6)
            C6 = max(int(0.6 * C), 1)
            size = _fill(adj, n, k, size, inS, dS, S, pos, freq, W)
            target = k * (k - 1) // 2
            f = _edges_in(S, k, dS)
            fbest = f
            noimp = 0
            while f < target and it < max_iters:
                it += 1
                l = target - f
                # A: non-tabu vertices of S with minimum d_S; B: non-tabu outside with maximum
                mn = n + 1
                na = 0
                for i in range(k):
                    u = S[i]
                    if tabu[u] > it:
                        continue
                    if dS[u] < mn:
                        mn = dS[u]
                        na = 0
                    if dS[u] == mn:
                        A[na] = u
                        na += 1
                mx = -1
                nbb = 0
                for v in range(n):
                    if inS[v] or tabu[v] > it:
                        continue
                    if dS[v] > mx:
                        mx = dS[v]
                        nbb = 0
                    if dS[v] == mx:
                        B[nbb] = v
                        nbb += 1
                u = -1
                v = -1
                delta = -1
                if na > 0 and nbb > 0:
                    # a non-adjacent pair if one exists: the members of B as a bitset,
                    # each u of A (from a random one on) against its non-neighbours there
                    for w in range(W):
                        Bb[w] = 0
                    for j in range(nbb):
                        Bb[B[j] >> 6] |= np.int64(1) << (B[j] & 63)
                    u = A[np.random.randint(na)]
                    v = B[np.random.randint(nbb)]
                    a0 = np.random.randint(na)
                    for j in range(na):
                        x = A[(a0 + j) % na]
                        w0 = np.random.randint(W)
                        hit = -1
                        for t in range(W):
                            w = (w0 + t) % W
                            q = Bb[w] & ~adj[x, w]
                            if q != 0:
                                hit = w * 64 + ctz(q)
                                break
                        if hit >= 0:
                            u = x
                            v = hit
                            break
                    delta = mx - mn - _adjacent(adj, u, v)
                if u < 0 or (delta <= 0 and np.random.random() < min((l + 2.0) / n, 0.1)):
                    # probabilistic diversification
                    u = S[np.random.randint(k)]
                    lim = int(k * rho)
                    cnt = 0
                    v = -1
                    for x in range(n):
                        if not inS[x] and dS[x] < lim:
                            cnt += 1
                            if np.random.randint(cnt) == 0:
                                v = x
                    while v < 0:
                        x = np.random.randint(n)
                        if not inS[x]:
                            v = x
                f = f - dS[u] + dS[v] - _adjacent(adj, u, v)
                _leave(adj, u, inS, dS, S, pos, k, W)
                _enter(adj, v, inS, dS, S, pos, k - 1, W)
                tabu[u] = it + l + np.random.randint(C)
                tabu[v] = it + int(0.6 * l) + np.random.randint(C6)
                freq[u] += 1
                freq[v] += 1
                if f > fbest:
                    fbest = f
                    noimp = 0
                elif f < target:
                    noimp += 1
                    if noimp > depth:
                        # restart from the least-moved vertex (frequency memory)
                        for i in range(k - 1, -1, -1):
                            _leave(adj, S[i], inS, dS, S, pos, i + 1, W)
                        for x in range(n):
                            tabu[x] = 0
                        reset = True
                        for x in range(n):
                            if freq[x] <= k:
                                reset = False
                                break
                        if reset:
                            for x in range(n):
                                freq[x] = 0
                        v0 = -1
                        fmin = np.int64(1) << 62
                        cnt = 0
                        for x in range(n):
                            if freq[x] < fmin:
                                fmin = freq[x]
                                v0 = x
                                cnt = 1
                            elif freq[x] == fmin:
                                cnt += 1
                                if np.random.randint(cnt) == 0:
                                    v0 = x
                        _enter(adj, v0, inS, dS, S, pos, 0, W)
                        _fill(adj, n, k, 1, inS, dS, S, pos, freq, W)
                        f = _edges_in(S, k, dS)
                        fbest = f
                        noimp = 0
            if f < target:
                break
            best = S[:k].copy()
            k += 1
            size = k - 1
    # extend the best clique to a maximal one
    nb = len(best)
    out = np.empty(max(n, 1), np.int64)
    P = np.zeros(W, np.int64)
    one = np.int64(1)
    for v in range(n):
        P[v >> 6] |= one << (v & 63)
    for i in range(nb):
        out[i] = best[i]
        for w in range(W):
            P[w] &= adj[best[i], w]
    while True:
        pick = -1
        pbest = -1
        for w in range(W):
            q = P[w]
            while q != 0:
                b = ctz(q)
                q &= ~(one << b)
                x = w * 64 + b
                d = 0
                for w2 in range(W):
                    d += popcount(P[w2] & adj[x, w2])
                if d > pbest:
                    pbest = d
                    pick = x
        if pick < 0:
            break
        out[nb] = pick
        nb += 1
        for w in range(W):
            P[w] &= adj[pick, w]
    return out[:nb].copy(), it
