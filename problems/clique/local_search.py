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

**Colour classes** (our addition).  The caller may pass a partition of V into
independent sets (the root bound's colour classes).  A clique holds at most one vertex of
each class, so S is kept to such sets: a swap takes v from a class S does not use, or
from u's own class (then u and v are never adjacent), and S is grown and rebuilt the same
way.  No clique is lost, and the space shrinks from every k-subset to the transversals of
k classes: when k equals the number of classes (BHOSLIB: the frb groups, found by the
independent-set partition; san400_0.7_3) S holds one vertex of every class and a swap
changes the vertex of one class, the min-conflicts move of the constraint problem the
graph came from; on BHOSLIB graphs the classes make AMTS reach omega in far fewer
iterations (benchmarks/results/dimacs_notes.md).  With a class per vertex (``vcls`` = 0 .. n - 1) it is the paper's AMTS.

Choices where the paper leaves room or where this code differs (stated, tested):

* the budget is counted work, not seconds, so a run is reproducible (fixed seed, our
  own xorshift generator): :func:`amts_iterations` scales it with the graph, in
  iterations of the paper's AMTS (n vertex reads each), and :func:`amts` counts the
  vertices it reads, so with colour classes more (cheaper) iterations fit;
* the search starts from the greedy clique (k = its size + 1) and stops as soon as k
  would exceed ``upper`` (a proven upper bound on omega: nothing larger exists);
* the k-clique found last is extended to a maximal clique (greedily) before it is
  returned, so the first incumbent is maximal, like the greedy heuristic's;
* no aspiration criterion (the paper's tabu rule without one); ties are broken
  uniformly at random among the candidates, except that the non-adjacent pair is the
  first one found from a random start;
* the candidates of a swap are read class by class (classes S does not use, and the
  classes of A), so with the frb groups an iteration reads a few dozen vertices, not n;
  d_S is kept for every vertex, on dense graphs (density > 1/2) by walking the
  non-neighbours of u and v (the +-1 every vertex gets from u leaving and v entering
  cancel), so a swap costs 2 (n - degree) bit steps, not 2 degree.

>>> import numpy as np
>>> from stealsearch.problems.clique.generators import gnp
>>> g = gnp(60, 0.5, seed=1)
>>> classes = np.arange(g.n, dtype=np.int64)
>>> clique, iterations = amts(g.rows.view(np.int64), g.n, np.zeros(0, np.int64), 2000, 500,
...                           g.n, 1, classes, g.n)
>>> len(clique)
8
"""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import _ctpop64 as popcount
from stealsearch.engine.core.bitset import _cttz64 as ctz

from .kernels.greedy import densest_candidate

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


# -- a small random generator (xorshift64*): reproducible whatever numba's own is ------

@njit(nogil=True, cache=True)
def _next(state):
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return x * np.uint64(2685821657736338717)


@njit(nogil=True, cache=True)
def _randint(state, m):
    """Uniform in 0 .. m - 1 (m >= 1)."""
    return np.int64((_next(state) >> np.uint64(32)) % np.uint64(m))


@njit(nogil=True, cache=True)
def _random(state):
    """Uniform in [0, 1)."""
    return np.float64(_next(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(nogil=True, cache=True)
def _seeded(seed):
    """The generator's state from ``seed`` (splitmix64; never zero)."""
    z = np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    state = np.empty(1, np.uint64)
    state[0] = z if z != np.uint64(0) else np.uint64(1)
    return state


# -- S, d_S and the classes -----------------------------------------------------------

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
def _swap(adj, u, v, inS, dS, S, pos, W, dense, lastmask):
    """``v`` (outside) takes the place of ``u`` (in S).  Every vertex loses u's edge and
    gains v's: on a dense graph the two -1/+1 over all vertices cancel and only the
    non-neighbours of u (+1) and of v (-1) change, fewer bits to walk."""
    one = np.int64(1)
    inS[u] = False
    inS[v] = True
    i = pos[u]
    S[i] = v
    pos[v] = i
    pos[u] = -1
    for w in range(W):
        if dense:
            m = lastmask if w == W - 1 else np.int64(-1)
            up = ~adj[u, w] & m
            down = ~adj[v, w] & m
        else:
            up = adj[v, w]
            down = adj[u, w]
        while up != 0:
            b = ctz(up)
            up &= ~(one << b)
            dS[w * 64 + b] += 1
        while down != 0:
            b = ctz(down)
            down &= ~(one << b)
            dS[w * 64 + b] -= 1


@njit(nogil=True, cache=True)
def _adjacent(adj, u, v):
    return (adj[u, v >> 6] >> (v & 63)) & 1


@njit(nogil=True, cache=True)
def _fill(adj, k, size, inS, dS, S, pos, freq, W, vcls, used, cstart, cmem, ncls, rng):
    """Grow S to k vertices: each time the vertex of a class S does not use with the
    maximum d_S, ties to the least moved (frequency memory), then uniformly at random.
    Returns the size reached (k unless fewer than k classes are left)."""
    while size < k:
        bv = -1
        bd = -1
        bf = 0
        cnt = 0
        for c in range(ncls):
            if used[c] > 0:
                continue
            for i in range(cstart[c], cstart[c + 1]):
                v = cmem[i]
                if dS[v] > bd or (dS[v] == bd and freq[v] < bf):
                    bd = dS[v]
                    bf = freq[v]
                    bv = v
                    cnt = 1
                elif dS[v] == bd and freq[v] == bf:
                    cnt += 1
                    if _randint(rng, cnt) == 0:
                        bv = v
        if bv < 0:
            return size
        _enter(adj, bv, inS, dS, S, pos, size, W)
        used[vcls[bv]] += 1
        size += 1
    return size


@njit(nogil=True, cache=True)
def _edges_in(S, k, dS):
    f = 0
    for i in range(k):
        f += dS[S[i]]
    return f // 2


@njit(nogil=True, cache=True)
def amts(adj, n, start, max_iters, depth, upper, seed, vcls, ncls):
    """Adaptive multistart tabu search for a maximum clique (see the module docstring).

    ``adj``: int64 bitset rows; ``start``: a clique to begin from (k = len + 1);
    ``max_iters``: the budget over every k, in iterations of the paper's AMTS: ``max_iters``
    x n vertex reads (its iteration reads every vertex outside S; ours counts the vertices
    it reads, so with colour classes an iteration is cheaper and more of them fit, as
    many as the same work allows); ``depth``: iterations without
    improvement before a restart; ``upper``: a proven upper bound on omega (the search
    stops when the clique reaches it); ``seed``: the random seed; ``vcls``: each
    vertex's class in a partition of V into ``ncls`` independent sets (0 .. n - 1 for
    none).  Returns ``(clique, iterations used)``: a maximal clique at least as large
    as ``start``.
    """
    rng = _seeded(seed)
    W = adj.shape[1]
    N = max(n, 1)
    C1 = max(ncls, 1)
    inS = np.zeros(N, np.bool_)
    dS = np.zeros(N, np.int64)
    S = np.empty(N, np.int64)
    pos = np.full(N, -1, np.int64)
    tabu = np.zeros(N, np.int64)
    freq = np.zeros(N, np.int64)
    A = np.empty(N, np.int64)
    B = np.empty(N, np.int64)
    Bb = np.zeros(W, np.int64)
    used = np.zeros(C1, np.int64)            # members of S in each class (0 or 1)
    cbest = np.zeros(C1, np.int64)           # per class of A: best d_S outside S ...
    ccnt = np.zeros(C1, np.int64)            # ... and how many share it
    # the classes' members, class by class (CSR)
    cstart = np.zeros(C1 + 1, np.int64)
    for v in range(n):
        cstart[vcls[v] + 1] += 1
    for c in range(C1):
        cstart[c + 1] += cstart[c]
    cmem = np.empty(N, np.int64)
    fillp = cstart[:C1].copy()
    for v in range(n):
        cmem[fillp[vcls[v]]] = v
        fillp[vcls[v]] += 1
    best = start.copy()
    nb = len(best)
    it = 0
    # the budget in vertex reads: an iteration of the paper's AMTS reads every vertex
    # outside S (to find B), ours only the members of the classes it looks at
    reads = 0
    budget = max_iters * N
    kmax = min(upper, n, ncls)
    if n >= 2 and nb < kmax and max_iters > 0:
        m2 = 0
        for v in range(n):
            for w in range(W):
                m2 += popcount(adj[v, w])
        rho = m2 / (n * (n - 1.0))
        dense = rho > 0.5
        lastmask = np.int64(-1) if n % 64 == 0 else (np.int64(1) << (n % 64)) - 1
        size = 0
        for i in range(nb):
            _enter(adj, best[i], inS, dS, S, pos, size, W)
            used[vcls[best[i]]] += 1
            size += 1
        k = nb + 1
        f = 0
        target = 0
        while reads < budget and k <= kmax:
            C = max(k // 40, 6)
            C6 = max(int(0.6 * C), 1)
            size = _fill(adj, k, size, inS, dS, S, pos, freq, W, vcls, used, cstart, cmem,
                         ncls, rng)
            if size < k:
                break
            target = k * (k - 1) // 2
            f = _edges_in(S, k, dS)
            fbest = f
            noimp = 0
            while f < target and reads < budget:
                it += 1
                reads += k + 2 * W
                l = target - f
                # A: non-tabu vertices of S with minimum d_S
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
                # B: non-tabu vertices of the classes S does not use, maximum d_S
                mx = -1
                nbb = 0
                for c in range(ncls):
                    if used[c] > 0:
                        continue
                    reads += cstart[c + 1] - cstart[c]
                    for i in range(cstart[c], cstart[c + 1]):
                        v = cmem[i]
                        if tabu[v] > it:
                            continue
                        if dS[v] > mx:
                            mx = dS[v]
                            nbb = 0
                        if dS[v] == mx:
                            B[nbb] = v
                            nbb += 1
                u = -1
                v = -1
                delta = -(n + 2)
                if na > 0 and nbb > 0:
                    # a non-adjacent pair if one exists: the members of B as a bitset,
                    # each u of A (from a random one on) against its non-neighbours there
                    for w in range(W):
                        Bb[w] = 0
                    for j in range(nbb):
                        Bb[B[j] >> 6] |= np.int64(1) << (B[j] & 63)
                    u = A[_randint(rng, na)]
                    v = B[_randint(rng, nbb)]
                    a0 = _randint(rng, na)
                    for j in range(na):
                        x = A[(a0 + j) % na]
                        reads += W
                        w0 = _randint(rng, W)
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
                # a swap inside the class of a u of A (never an adjacent pair)
                cb = -(n + 2)
                cu = -1
                ct = 0
                for j in range(na):
                    x = A[j]
                    c = vcls[x]
                    bd = -1
                    bc = 0
                    reads += cstart[c + 1] - cstart[c]
                    for i in range(cstart[c], cstart[c + 1]):
                        y = cmem[i]
                        if y == x or tabu[y] > it:
                            continue
                        if dS[y] > bd:
                            bd = dS[y]
                            bc = 1
                        elif dS[y] == bd:
                            bc += 1
                    cbest[c] = bd
                    ccnt[c] = bc
                    if bc > 0:
                        d = bd - mn
                        if d > cb:
                            cb = d
                            cu = x
                            ct = bc
                        elif d == cb:
                            ct += bc
                            if _randint(rng, ct) < bc:
                                cu = x
                if cu >= 0 and (cb > delta or (cb == delta and _randint(rng, 2) == 0)):
                    c = vcls[cu]
                    pick = _randint(rng, ccnt[c])
                    for i in range(cstart[c], cstart[c + 1]):
                        y = cmem[i]
                        if y == cu or tabu[y] > it or dS[y] != cbest[c]:
                            continue
                        if pick == 0:
                            v = y
                            break
                        pick -= 1
                    u = cu
                    delta = cb
                if u < 0 or (delta <= 0 and _random(rng) < min((l + 2.0) / n, 0.1)):
                    # probabilistic diversification: a random u, a random v it may swap
                    # with (its class or an unused one), d_S(v) < floor(k rho) if any
                    lim = int(k * rho)
                    v = -1
                    for tries in range(k):
                        u = S[_randint(rng, k)]
                        cu = vcls[u]
                        low = 0
                        anyv = 0
                        for c in range(ncls):
                            if used[c] > 0 and c != cu:
                                continue
                            for i in range(cstart[c], cstart[c + 1]):
                                y = cmem[i]
                                if inS[y]:
                                    continue
                                anyv += 1
                                if dS[y] < lim:
                                    low += 1
                        reads += 2 * anyv
                        if anyv == 0:
                            continue
                        pick = _randint(rng, low) if low > 0 else _randint(rng, anyv)
                        for c in range(ncls):
                            if used[c] > 0 and c != cu:
                                continue
                            for i in range(cstart[c], cstart[c + 1]):
                                y = cmem[i]
                                if inS[y] or (low > 0 and dS[y] >= lim):
                                    continue
                                if pick == 0:
                                    v = y
                                    break
                                pick -= 1
                            if v >= 0:
                                break
                        break
                    if v < 0:
                        break                 # no swap at all (every class used, singletons)
                f = f - dS[u] + dS[v] - _adjacent(adj, u, v)
                used[vcls[u]] -= 1
                used[vcls[v]] += 1
                _swap(adj, u, v, inS, dS, S, pos, W, dense, lastmask)
                tabu[u] = it + l + _randint(rng, C)
                tabu[v] = it + int(0.6 * l) + _randint(rng, C6)
                freq[u] += 1
                freq[v] += 1
                if f > fbest:
                    fbest = f
                    noimp = 0
                elif f < target:
                    noimp += 1
                    if noimp > depth:
                        # restart from the least-moved vertex (frequency memory)
                        reads += n
                        for i in range(k - 1, -1, -1):
                            used[vcls[S[i]]] -= 1
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
                                if _randint(rng, cnt) == 0:
                                    v0 = x
                        _enter(adj, v0, inS, dS, S, pos, 0, W)
                        used[vcls[v0]] += 1
                        size = _fill(adj, k, 1, inS, dS, S, pos, freq, W, vcls, used, cstart,
                                     cmem, ncls, rng)
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
    out = np.empty(N, np.int64)
    P = np.zeros(W, np.int64)
    one = np.int64(1)
    for v in range(n):
        P[v >> 6] |= one << (v & 63)
    for i in range(nb):
        out[i] = best[i]
        for w in range(W):
            P[w] &= adj[best[i], w]
    while True:
        pick = densest_candidate(P, adj, W)[0]
        if pick < 0:
            break
        out[nb] = pick
        nb += 1
        for w in range(W):
            P[w] &= adj[pick, w]
    return out[:nb].copy(), it
