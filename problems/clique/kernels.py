"""numba kernels of the clique search: one DFS chunk over an explicit stack of rows.

Every kernel follows the engine contract (:mod:`stealsearch.engine.core.problem`):
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
                    included here: MCS's Re-NUMBER and BBMC's infra-chromatic
                    recolouring (see ``reason_kernel``); the node counts match
                    MCS-style native solvers without them (G(1000,.5): 79.2 M nodes
                    here, 78.7 M native).
``reason_kernel``   the colour kernel plus reasoning over the colour classes before
                    branching, by ``level`` (level 0 is ``colour_kernel`` itself: the
                    reason kernel hands it over, one code path; both push children
                    through ``_push_children``): 1 Re-NUMBER (Tomita's MCS, San Segundo's
                    BBMCR), 2 + the infra-chromatic test (San Segundo, Nikolaev and
                    Batsyn's BBMCX), 3 failed-literal detection by unit propagation
                    over the classes, dropping whole colour classes (Li and Quan's
                    IncMaxCLQ, Li, Jiang and Manyà's MoMC), 4 MoMC's reasoning: the
                    classes of an inconsistent subset get virtual literals instead of
                    being frozen (Li and Quan's MaxCLQ transformation), Re-NUMBER and
                    the two-literal lookahead.  Bounds ``recolour``, ``infra``,
                    ``maxsat``, ``incmaxsat``.
``greedy_clique``   the initial clique heuristic (first incumbent, max mode).
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

from stealsearch.engine.core.bitset import _ctpop64 as popcount
from stealsearch.engine.core.bitset import _cttz64 as ctz
from stealsearch.engine.core.problem import (BUDGET, EMPTY, GROW, IMPROVED, NODES, SOLUTIONS,
                            N_ENGINE_COUNTERS)

LEVEL, BOUND, X0 = 0, 1, 2
#: problem counter slot: deepest clique level reached (reduced by "max")
MAX_DEPTH = N_ENGINE_COUNTERS

SIZE, GREEDY, SAMPLING = 0, 1, 2
#: reason_kernel levels that apply Re-NUMBER (level 3 does not: see its docstring)
RENUMBER_UPTO = 2
#: reason_kernel level of MoMC's reasoning with virtual literals (bound ``incmaxsat``)
INCMAXSAT = 4
#: virtual literals per node (one int64 mask per clause)
MAX_VIRTUAL = 62
SEED_BOUNDS = {"size": SIZE, "greedy": GREEDY, "sampling": SAMPLING}


@njit(nogil=True, cache=True)
def _improve(stack, r, lev, W, solution):
    solution[0] = lev
    for w in range(W):
        solution[1 + w] = stack[r, X0 + w]


@njit(nogil=True, cache=True)
def _push_children(stack, r, lev, cnt, order, col, Xs, U, adj, W):
    """The children of the node at row ``r`` (clique Xs, level ``lev``): vertex
    ``order[i]`` with bound ``lev + col[i]`` at row ``r + i``, the last one on top; child i
    sees the candidates not yet branched on (the vertices after it are removed)."""
    P0 = X0 + W
    one = np.int64(1)
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
            _push_children(stack, r, lev, cnt, order, col, Xs, U, adj, W)
        top = r + cnt
        if improved:
            return top, IMPROVED, best
    return 0, EMPTY, best


@njit(nogil=True, cache=True)
def _first_killer(x, forced, t, adj):
    """The first forcing step s < t whose vertex ``forced[s]`` is not adjacent to x."""
    xw = x >> 6
    xb = np.int64(1) << (x & 63)
    for s in range(t):
        if adj[forced[s], xw] & xb == 0:
            return s
    return -1


@njit(nogil=True, cache=True)
def _failed_literal(u, adj, cls, nc, active, vcls, M, cnt, fixed, queue, forced, stepcls, inv,
                    W):
    """Unit propagation over the colour classes with vertex ``u`` set true (IncMaxCLQ /
    MoMC's failed-literal test; BBMCX's infra-chromatic bound is its one-unit case).

    Soft clauses: the active classes (independent sets: a clique takes at most one
    vertex of each) and the unit clause {u}.  ``M`` holds the class members adjacent to
    every forced vertex (u first), ``cnt[k]`` how many of class k are in M.  A class
    with one left forces it (a clique using that class and u must take it), a class
    with none is a conflict.  Forcing v removes ``M & ~N(v)`` from M and decrements the
    counts of those vertices' classes (``vcls``), so a step costs the vertices it
    removes, not a rescan of every class.  On a conflict, the classes it depends on are
    traced back through the forcing steps (each eliminated vertex is charged to the
    first forced vertex not adjacent to it); with u they form an inconsistent subset
    S u {u}: a clique meets at most |S| of those |S| + 1 sets, so u joins the
    non-branching vertices without raising the colour bound.  The classes of S are
    marked in ``inv``; the caller freezes them (``active`` false) once it uses the
    conflict: an inconsistent subset counts once, and a frozen class must not change.
    True when a conflict was found."""
    one = np.int64(1)
    for w in range(W):
        M[w] = 0
    conflict = -1
    nq = 0
    for k in range(nc):
        if not active[k]:
            continue
        fixed[k] = False
        c = 0
        for w in range(W):
            x = cls[k, w] & adj[u, w]
            M[w] |= x
            c += popcount(x)
        cnt[k] = c
        if c == 0 and conflict < 0:
            conflict = k
        elif c == 1:
            queue[nq] = k
            nq += 1
    forced[0] = u
    t = 1
    qi = 0
    while conflict < 0 and qi < nq and t < 63:
        k = queue[qi]
        qi += 1
        if fixed[k]:
            continue
        v = -1
        for w in range(W):
            x = cls[k, w] & M[w]
            if x != 0:
                v = w * 64 + ctz(x)
                break
        fixed[k] = True
        stepcls[t] = k
        forced[t] = v
        t += 1
        for w in range(W):
            R = M[w] & ~adj[v, w]
            M[w] &= adj[v, w]
            while R != 0:
                b = ctz(R)
                R &= ~(one << b)
                k2 = vcls[w * 64 + b]
                if fixed[k2]:
                    continue
                cnt[k2] -= 1
                if cnt[k2] == 1:
                    queue[nq] = k2
                    nq += 1
                elif cnt[k2] == 0:
                    conflict = k2
        # (a conflict found mid-way leaves M partly updated: not used again)
    if conflict < 0:
        return False
    # trace: the steps that eliminated the conflict class, then what forced those steps
    need = np.int64(0)
    for w in range(W):
        q = cls[conflict, w]
        while q != 0:
            b = ctz(q)
            q &= ~(one << b)
            s = _first_killer(w * 64 + b, forced, t, adj)
            need |= one << s
    for s in range(t - 1, 0, -1):
        if (need >> s) & one == 0:
            continue
        k = stepcls[s]
        for w in range(W):
            q = cls[k, w]
            while q != 0:
                b = ctz(q)
                q &= ~(one << b)
                x = w * 64 + b
                if x != forced[s]:
                    need |= one << _first_killer(x, forced, s, adj)
    inv[conflict] = True
    for s in range(1, t):
        if (need >> s) & one:
            inv[stepcls[s]] = True
    return True


@njit(nogil=True, cache=True)
def _first_real_killer(x, forced, t, adj):
    """The first forcing step s < t whose forced literal is a real vertex not adjacent
    to x (virtual literals, stored as ``-1 - z``, remove no real vertex)."""
    xw = x >> 6
    xb = np.int64(1) << (x & 63)
    for s in range(t):
        f = forced[s]
        if f >= 0 and adj[f, xw] & xb == 0:
            return s
    return -1


@njit(nogil=True, cache=True)
def _force(lit, k, adj, cls, nc, vz, vcls, M, Zs, cnt, fixed, queue, nq, forced, stepcls,
           zstep, rstep, t, log, nlog, W):
    """One forcing step ``t``: literal ``lit`` (a vertex, or ``-1 - z`` for virtual
    literal z) satisfies clause ``k``.  A vertex removes its non-neighbours from ``M``, a
    virtual literal leaves every other clause; each clause that loses a literal is
    counted down, queued at one literal left.  Every change to ``cnt`` and ``fixed`` is
    appended to ``log`` (k, or -1 - k for a clause fixed) so a lookahead can undo it;
    ``rstep[x]`` records the step that removed vertex x (what a trace charges x to).
    Returns ``(conflict, nq, nlog)``: conflict is the first clause left with no literal
    (-1 if none)."""
    one = np.int64(1)
    conflict = -1
    fixed[k] = True
    log[nlog] = -1 - k
    nlog += 1
    stepcls[t] = k
    forced[t] = lit
    if lit >= 0:
        for w in range(W):
            R = M[w] & ~adj[lit, w]
            M[w] &= adj[lit, w]
            while R != 0:
                b = ctz(R)
                R &= ~(one << b)
                x = w * 64 + b
                rstep[x] = t
                k2 = vcls[x]
                if fixed[k2]:
                    continue
                cnt[k2] -= 1
                log[nlog] = k2
                nlog += 1
                if cnt[k2] == 1:
                    queue[nq] = k2
                    nq += 1
                elif cnt[k2] == 0 and conflict < 0:
                    conflict = k2
    else:
        z = -1 - lit
        zstep[z] = t
        Zs[0] &= ~(one << z)
        for k2 in range(nc):
            if fixed[k2] or (vz[k2] >> z) & one == 0:
                continue
            cnt[k2] -= 1
            log[nlog] = k2
            nlog += 1
            if cnt[k2] == 1:
                queue[nq] = k2
                nq += 1
            elif cnt[k2] == 0 and conflict < 0:
                conflict = k2
    return conflict, nq, nlog


@njit(nogil=True, cache=True)
def _propagate(adj, cls, nc, vz, vcls, M, Zs, cnt, fixed, queue, qi, nq, forced, stepcls,
               zstep, rstep, t, log, nlog, W):
    """Unit propagation from queue position ``qi``: each clause with one literal left
    forces it (a vertex before a virtual literal), until a conflict, an empty queue or
    63 steps (the traces are 64-bit masks).  Returns ``(conflict, t, nq, nlog)``."""
    conflict = -1
    while conflict < 0 and qi < nq and t < 63:
        k = queue[qi]
        qi += 1
        if fixed[k]:
            continue
        lit = -1
        for w in range(W):
            x = cls[k, w] & M[w]
            if x != 0:
                lit = w * 64 + ctz(x)
                break
        if lit < 0:
            lit = -1 - ctz(vz[k] & Zs[0])
        conflict, nq, nlog = _force(lit, k, adj, cls, nc, vz, vcls, M, Zs, cnt, fixed, queue,
                                    nq, forced, stepcls, zstep, rstep, t, log, nlog, W)
        t += 1
    return conflict, t, nq, nlog


@njit(nogil=True, cache=True)
def _trace(conflict, u, adj, cls, vz, forced, stepcls, zstep, rstep, t, t_assume, other, W):
    """The forcing steps (a 64-bit mask) a conflict depends on: every literal of the
    empty clause, then of each needed step's clause but its forced one, is charged to
    the step that removed it (a vertex not adjacent to ``u`` to step 0, any other to
    ``rstep``, the first real forced vertex not adjacent to it; a virtual literal to
    the step that used it).  Step ``t_assume`` (if >= 1) is an assumption, not a unit:
    the literal ``other`` of its clause was never removed."""
    one = np.int64(1)
    need = np.int64(0)
    for w in range(W):
        q = cls[conflict, w] & adj[u, w]          # the others were removed by u (step 0)
        while q != 0:
            b = ctz(q)
            q &= ~(one << b)
            need |= one << rstep[w * 64 + b]
    q = vz[conflict]
    while q != 0:
        z = ctz(q)
        q &= ~(one << z)
        need |= one << zstep[z]
    for s in range(t - 1, 0, -1):
        if (need >> s) & one == 0:
            continue
        k = stepcls[s]
        f = forced[s]
        g = other if s == t_assume else f
        for w in range(W):
            q = cls[k, w] & adj[u, w]
            while q != 0:
                b = ctz(q)
                q &= ~(one << b)
                x = w * 64 + b
                if x != f and x != g:
                    need |= one << rstep[x]
        q = vz[k]
        while q != 0:
            z = ctz(q)
            q &= ~(one << z)
            if -1 - z != f and -1 - z != g:
                need |= one << zstep[z]
    return need


@njit(nogil=True, cache=True)
def _failed_literal_virtual(u, adj, cls, nc, vz, nz, vcls, M, cnt, fixed, queue, forced,
                            stepcls, zstep, rstep, inv, M2, cnt0, inv2, Zs, log, lookahead, W):
    """Unit propagation with ``u`` true over colour classes that carry *virtual
    literals*: Li and Quan's MaxCLQ / IncMaxCLQ transformation of an inconsistent
    subset, as in MoMC (Li, Jiang and Manyà 2017).

    Each class k is a soft clause whose literals are its vertices (``cls[k]``) and the
    virtual literals ``z`` with bit z of ``vz[k]``.  A virtual literal stands for the
    one clause of an earlier inconsistent subset that a clique may leave unsatisfied:
    it can satisfy one clause only, so forcing it for clause k removes it from every
    other clause.  A vertex forced true removes its non-neighbours.  Unlike the
    freezing of :func:`_failed_literal`, the caller keeps the clauses of a conflict
    active and gives each of them one new virtual literal: they stay available to later
    conflicts, which is what makes MoMC's bound strong on dense graphs.

    Without a conflict and with ``lookahead``, MoMC's failed-literal lookahead
    (``inc_maxsatz_lookahead_by_fl2``): a clause that propagation cut down to two
    literals, both of which lead to a conflict, is a conflict.  The clauses a conflict
    depends on are marked in ``inv``.  True when a conflict was found."""
    one = np.int64(1)
    for w in range(W):
        M[w] = 0
    Zs[0] = (one << nz) - 1
    conflict = -1
    nq = 0
    for k in range(nc):
        fixed[k] = False
        c = popcount(vz[k])
        c0 = c
        for w in range(W):
            x = cls[k, w] & adj[u, w]
            M[w] |= x
            c += popcount(x)
            c0 += popcount(cls[k, w])
        cnt[k] = c
        cnt0[k] = c0
        if c == 0 and conflict < 0:
            conflict = k
        elif c == 1:
            queue[nq] = k
            nq += 1
    for z in range(nz):
        zstep[z] = -1
    forced[0] = u
    t = 1
    if conflict < 0:
        conflict, t, nq, nlog = _propagate(adj, cls, nc, vz, vcls, M, Zs, cnt, fixed, queue, 0,
                                           nq, forced, stepcls, zstep, rstep, t, log, 0, W)
    if conflict >= 0:
        need = _trace(conflict, u, adj, cls, vz, forced, stepcls, zstep, rstep, t, -1, -1, W)
        inv[conflict] = True
        for s in range(1, t):
            if (need >> s) & one:
                inv[stepcls[s]] = True
        return True
    if not lookahead or t >= 61:
        return False
    # lookahead: both literals of a clause reduced to two fail
    t0 = t
    Z0 = Zs[0]
    for k in range(nc):
        if fixed[k] or cnt[k] != 2 or cnt0[k] == 2:
            continue
        for w in range(W):
            M2[w] = M[w]
        lits0 = -1
        lits1 = -1
        for w in range(W):
            q = cls[k, w] & M[w]
            while q != 0:
                b = ctz(q)
                q &= ~(one << b)
                if lits0 == -1:
                    lits0 = w * 64 + b
                else:
                    lits1 = w * 64 + b
        q = vz[k] & Z0
        while q != 0:
            z = ctz(q)
            q &= ~(one << z)
            if lits0 == -1:
                lits0 = -1 - z
            else:
                lits1 = -1 - z
        for k2 in range(nc):
            inv2[k2] = False
        ok = True
        for side in range(2):
            lit = lits0 if side == 0 else lits1
            oth = lits1 if side == 0 else lits0
            c2, nq2, nlog = _force(lit, k, adj, cls, nc, vz, vcls, M, Zs, cnt, fixed, queue, 0,
                                   forced, stepcls, zstep, rstep, t0, log, 0, W)
            t2 = t0 + 1
            if c2 < 0:
                c2, t2, nq2, nlog = _propagate(adj, cls, nc, vz, vcls, M, Zs, cnt, fixed, queue,
                                               0, nq2, forced, stepcls, zstep, rstep, t2, log,
                                               nlog, W)
            if c2 >= 0:
                need = _trace(c2, u, adj, cls, vz, forced, stepcls, zstep, rstep, t2, t0, oth, W)
                for s in range(1, t2):
                    if (need >> s) & one:
                        inv2[stepcls[s]] = True
                inv2[c2] = True
            else:
                ok = False
            # undo the branch (the log holds its changes only)
            for w in range(W):
                M[w] = M2[w]
            for i in range(nlog - 1, -1, -1):
                x = log[i]
                if x >= 0:
                    cnt[x] += 1
                else:
                    fixed[-1 - x] = False
            Zs[0] = Z0
            for z in range(nz):
                if zstep[z] >= t0:
                    zstep[z] = -1
            if not ok:
                break
        if ok:
            for k2 in range(nc):
                if inv2[k2]:
                    inv[k2] = True
            return True
    return False


@njit(nogil=True, cache=True)
def _infra(u, adj, cls, nc, active, W):
    """San Segundo et al.'s infra-chromatic test (BBMCX), the two-class case of the
    MaxSAT reasoning: a class k1 where ``u`` has exactly one neighbour w, and a class
    k2 holding no common neighbour of u and w.  Then no clique meets all of {u}, C_k1,
    C_k2: the three count for two.  Freezes k1 and k2; True if found."""
    for k1 in range(nc):
        if not active[k1]:
            continue
        c = 0
        wv = -1
        for w in range(W):
            x = cls[k1, w] & adj[u, w]
            if x != 0:
                c += popcount(x)
                if c > 1:
                    break
                wv = w * 64 + ctz(x)
        if c != 1:
            continue
        for k2 in range(nc):
            if k2 == k1 or not active[k2]:
                continue
            ok = True
            for w in range(W):
                if cls[k2, w] & adj[u, w] & adj[wv, w] != 0:
                    ok = False
                    break
            if ok:
                active[k1] = False
                active[k2] = False
                return True
    return False


@njit(nogil=True, cache=True)
def _renumber(u, adj, cls, nc, active, vcls, W):
    """Tomita's Re-NUMBER (MCS) on bitset colour classes (San Segundo's BBMCR): put
    ``u`` into an active class it has no neighbour in; else, for a class k1 where u has
    exactly one neighbour w, move w into another active class k2 where w has no
    neighbour and put u in w's place.  Classes stay independent sets.  True if placed."""
    one = np.int64(1)
    for k1 in range(nc):
        if not active[k1]:
            continue
        c = 0
        wv = -1
        for w in range(W):
            x = cls[k1, w] & adj[u, w]
            if x != 0:
                c += popcount(x)
                if c > 1:
                    break
                wv = w * 64 + ctz(x)
        if c == 0:
            cls[k1, u >> 6] |= one << (u & 63)
            vcls[u] = k1
            return True
        if c == 1:
            for k2 in range(nc):
                if k2 == k1 or not active[k2]:
                    continue
                ok = True
                for w in range(W):
                    if cls[k2, w] & adj[wv, w] != 0:
                        ok = False
                        break
                if ok:
                    cls[k2, wv >> 6] |= one << (wv & 63)
                    cls[k1, wv >> 6] &= ~(one << (wv & 63))
                    cls[k1, u >> 6] |= one << (u & 63)
                    vcls[wv] = k2
                    vcls[u] = k1
                    return True
    return False


@njit(nogil=True, cache=True)
def reason_kernel(stack, top, budget, mode, incumbent, counters, solution, adj, level):
    """The colour kernel with reasoning over the colour classes before branching.

    At a node with clique X (|X| = ℓ) and candidates P, children need colour
    k >= kmin = incumbent - ℓ + 1.  First kmin - 1 colour classes are built greedily
    (BBMC, class at a time, vertex order); the vertices left over would all be
    branching vertices in MCS/BBMC.  Each of them, in vertex order, is tried:

    * ``level`` 1 and 2 -- Re-NUMBER (Tomita et al.'s MCS; San Segundo's BBMCR):
      moved into a class below the threshold, directly or by displacing its only
      neighbour there (:func:`_renumber`);
    * ``level == 2`` -- then San Segundo et al.'s infra-chromatic test (BBMCX): a
      class with one neighbour w of the vertex and a class with no common neighbour
      of both (:func:`_infra`).  As in MoMC, once one vertex must branch the node
      cannot be pruned, and neither test is tried on the vertices after it;
    * ``level == 3`` -- MaxSAT reasoning (Li and Quan's IncMaxCLQ, Li, Jiang and
      Manyà's MoMC): the would-be branching vertices are coloured into new classes;
      a new class every vertex of which is a failed literal under unit propagation
      over the classes (:func:`_failed_literal`) is dropped whole, with the union of
      its vertices' conflict classes frozen, until the first class that cannot be.
      No Re-NUMBER at this level: measured, it cost more time than it saved nodes.
    * ``level == 4`` -- MoMC's reasoning (Li, Jiang and Manyà 2017, with Li and
      Quan's MaxCLQ / IncMaxCLQ clause transformation): Re-NUMBER on every would-be
      branching vertex, then new classes absorbed as at level 3, but the clauses of
      each inconsistent subset stay active with one new *virtual literal* each
      (:func:`_failed_literal_virtual`) instead of being frozen, the absorbed class
      joins the clauses, a class absorbed in part leaves its failed prefix out, and
      a vertex whose propagation ends without conflict is still failed when both
      literals of a clause it cut down to two lead to one (MoMC's
      ``inc_maxsatz_lookahead_by_fl2``).  Measured (benchmarks/results/peers_notes.md):
      3.6x fewer nodes than level 3 on G(200, .9), 2.8x on G(200, .8), at 3-5x the
      cost per node.

    The non-branching vertices then have ω <= kmin - 1 (active classes count one each,
    an inconsistent subset S u {u} or S u K counts |S|), so they can be skipped as children, as
    the vertices of colour < kmin are in MCS.  The remaining (branching) vertices are
    coloured greedily with colours kmin, kmin + 1, ... and become children in
    decreasing colour, each with bound ℓ + its colour, exactly as in ``colour_kernel``.
    Choices where the papers differ: units are propagated first-found-first (MoMC
    orders them); propagation stops after 62 forcing steps (the reasons are a 64-bit
    mask); Re-NUMBER may move the displaced vertex to any other active class; the
    vertices are tried in vertex order.
    ``level = 0`` is :func:`colour_kernel` (one code path: this kernel hands level 0 to it).
    """
    if level == 0:
        return colour_kernel(stack, top, budget, mode, incumbent, counters, solution, adj)
    n = adj.shape[0]
    W = adj.shape[1]
    P0 = X0 + W
    cap = stack.shape[0]
    maxc = max(n, 1)
    Xs = np.empty(W, np.int64)
    U = np.empty(W, np.int64)
    Q = np.empty(W, np.int64)
    B = np.empty(W, np.int64)
    order = np.empty(maxc, np.int64)
    col = np.empty(maxc, np.int64)
    cls = np.empty((maxc, W), np.int64)
    M = np.empty(W, np.int64)
    vcls = np.empty(maxc, np.int64)
    cnt_k = np.empty(maxc, np.int64)
    queue = np.empty(maxc + 1, np.int64)
    inv = np.empty(maxc, np.bool_)
    fixed = np.empty(maxc, np.bool_)
    active = np.empty(maxc, np.bool_)
    forced = np.empty(64, np.int64)
    stepcls = np.empty(64, np.int64)
    zstep = np.empty(64, np.int64)
    rstep = np.empty(maxc, np.int64)
    vz = np.empty(maxc, np.int64)
    M2 = np.empty(W, np.int64)
    cnt0 = np.empty(maxc, np.int64)
    # every literal removal of one propagation: at most n vertices + 62 virtual per clause
    log = np.empty(64 * maxc + 64, np.int64)
    inv2 = np.empty(maxc, np.bool_)
    Zs = np.empty(1, np.int64)
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
            # 1. classes 1 .. kmin-1, kept as bitsets
            nc = 0
            while remaining > 0 and nc < kmin - 1:
                for w in range(W):
                    Q[w] = U[w]
                    cls[nc, w] = 0
                for w in range(W):
                    q = Q[w]
                    while q != 0:
                        b = ctz(q)
                        bit = one << b
                        v = w * 64 + b
                        U[w] &= ~bit
                        cls[nc, w] |= bit
                        vcls[v] = nc
                        q &= ~bit
                        q &= ~adj[v, w]
                        for w2 in range(w + 1, W):
                            Q[w2] &= ~adj[v, w2]
                        remaining -= 1
                nc += 1
            # 2. Re-NUMBER / infra-chromatic: move would-be branching vertices to the
            #    non-branching side one by one
            for k in range(nc):
                active[k] = True
            if remaining > 0 and (1 <= level <= RENUMBER_UPTO or level == INCMAXSAT) and nc > 0:
                for w in range(W):
                    B[w] = 0
                reasoning = True
                for w in range(W):
                    q = U[w]
                    while q != 0:
                        b = ctz(q)
                        bit = one << b
                        q &= ~bit
                        u = w * 64 + b
                        placed = False
                        if reasoning or level != 2:
                            placed = _renumber(u, adj, cls, nc, active, vcls, W)
                        if not placed and level == 2 and reasoning:
                            placed = _infra(u, adj, cls, nc, active, W)
                        if not placed:
                            B[w] |= bit
                            # MoMC: once one vertex must branch the node is not pruned;
                            # the costly test is not tried on the vertices after it
                            if level <= RENUMBER_UPTO:
                                reasoning = False
                remaining = 0
                for w in range(W):
                    U[w] = B[w]
                    remaining += popcount(B[w])
            # 3. the branching vertices: colours nc+1, nc+2, ... (>= kmin).  Level 3
            #    (MoMC): a new class whose every vertex is a failed literal is dropped
            #    whole -- the class, with the union of its vertices' conflict classes
            #    S, is an inconsistent subset (a clique meeting it in u would meet all
            #    of u's conflict set) -- until the first class that cannot be dropped.
            # 3'. level 4 (MoMC): new classes from the branching vertices, each absorbed
            #     when every vertex of it is a failed literal; the clauses of the
            #     inconsistent subset get a new virtual literal instead of being frozen
            #     (see _failed_literal_virtual), and the class joins them as a clause.
            #     A class absorbed only in part: its failed prefix is non-branching.
            if level == INCMAXSAT and nc > 0 and remaining > 0:
                nc0 = nc
                nz = 0
                for k2 in range(nc):
                    vz[k2] = 0
                absorbing = True
                while remaining > 0 and absorbing:
                    for w in range(W):
                        Q[w] = U[w]
                        B[w] = 0
                    for w in range(W):
                        q = Q[w]
                        while q != 0:
                            b = ctz(q)
                            bit = one << b
                            v = w * 64 + b
                            U[w] &= ~bit
                            B[w] |= bit
                            q &= ~bit
                            q &= ~adj[v, w]
                            for w2 in range(w + 1, W):
                                Q[w2] &= ~adj[v, w2]
                            remaining -= 1
                    for k2 in range(nc):
                        inv[k2] = False
                    whole = True
                    for w in range(W):
                        q = B[w]
                        while q != 0:
                            b = ctz(q)
                            if not _failed_literal_virtual(w * 64 + b, adj, cls, nc, vz, nz,
                                                           vcls, M, cnt_k, fixed, queue,
                                                           forced, stepcls, zstep, rstep, inv,
                                                           M2,
                                                           cnt0, inv2, Zs, log,
                                                           True, W):
                                whole = False
                                break
                            q &= ~(one << b)
                        if not whole:
                            # u and the class's vertices after it branch; the failed
                            # prefix stays out (with the prefix as its clause, the
                            # conflicts found stay an inconsistent subset)
                            U[w] |= q
                            remaining += popcount(q)
                            for w2 in range(w + 1, W):
                                U[w2] |= B[w2]
                                remaining += popcount(B[w2])
                            absorbing = False
                            break
                    if whole:
                        if nz < MAX_VIRTUAL:
                            zb = one << nz
                            nz += 1
                            for k2 in range(nc):
                                if inv[k2]:
                                    vz[k2] |= zb
                            for w in range(W):
                                cls[nc, w] = B[w]
                                q = B[w]
                                while q != 0:
                                    b = ctz(q)
                                    q &= ~(one << b)
                                    vcls[w * 64 + b] = nc
                            vz[nc] = zb
                            nc += 1
                        else:
                            absorbing = False     # absorbed, but no more reasoning
                nc = nc0
            k = nc
            dropping = level == 3 and nc > 0
            while remaining > 0:
                for w in range(W):
                    Q[w] = U[w]
                    B[w] = 0
                for w in range(W):
                    q = Q[w]
                    while q != 0:
                        b = ctz(q)
                        bit = one << b
                        v = w * 64 + b
                        U[w] &= ~bit
                        B[w] |= bit
                        q &= ~bit
                        q &= ~adj[v, w]
                        for w2 in range(w + 1, W):
                            Q[w2] &= ~adj[v, w2]
                        remaining -= 1
                if dropping:
                    for k2 in range(nc):
                        inv[k2] = False
                    failed = True
                    for w in range(W):
                        q = B[w]
                        while q != 0 and failed:
                            b = ctz(q)
                            q &= ~(one << b)
                            if not _failed_literal(w * 64 + b, adj, cls, nc, active, vcls, M,
                                                   cnt_k, fixed, queue, forced, stepcls,
                                                   inv, W):
                                failed = False
                        if not failed:
                            break
                    if failed:
                        for k2 in range(nc):
                            if inv[k2]:
                                active[k2] = False
                        continue
                    dropping = False
                k += 1
                for w in range(W):
                    q = B[w]
                    while q != 0:
                        b = ctz(q)
                        q &= ~(one << b)
                        order[cnt] = w * 64 + b
                        col[cnt] = k
                        cnt += 1
            _push_children(stack, r, lev, cnt, order, col, Xs, U, adj, W)
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
        while True:
            clash = False
            for w in range(W):
                if used[k, w] & adj[v, w] != 0:
                    clash = True
                    break
            if not clash:
                break
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


@njit(nogil=True, cache=True)
def iset_partition(adj, n):
    """A partition of V into independent sets (colour classes), each grown greedily in
    the vertices not yet placed: the next member is the candidate with the fewest
    neighbours among the remaining candidates (the minimum-degree heuristic for a large
    independent set), as in MoMC's MaxIndSet ordering (which searches for a maximum
    independent set each time) and CliSAT's COLOR-SORT; then the smallest classes are
    emptied where their vertices fit elsewhere (:func:`_empty_small_classes`).  The
    number of classes bounds omega; on BHOSLIB graphs (n/k groups of mutually
    non-adjacent vertices) it finds the groups, so the bound is omega itself (frb30-15-3
    and -5: 31 classes before the emptying, 30 after, as MoMC's exact MaxIndSet gets).
    Returns the vertices listed class by class (first class first), the number of
    classes and each vertex's class (0 .. classes - 1).  O(n^2 W) word operations."""
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
                    if cj == ci or not alive[cj]:
                        continue
                    clash = False
                    for w in range(W):
                        if cls[cj, w] & adj[v, w] != 0:
                            clash = True
                            break
                    if not clash:
                        to = cj
                        break
                wv = -1
                wto = -1
                if to < 0:
                    for cj in range(k):
                        if cj == ci or not alive[cj]:
                            continue
                        c1 = 0
                        x = -1
                        for w in range(W):
                            m = cls[cj, w] & adj[v, w]
                            if m != 0:
                                c1 += popcount(m)
                                if c1 > 1:
                                    break
                                x = w * 64 + ctz(m)
                        if c1 != 1:
                            continue
                        for ck in range(k):
                            if ck == ci or ck == cj or not alive[ck]:
                                continue
                            clash = False
                            for w in range(W):
                                if cls[ck, w] & adj[x, w] != 0:
                                    clash = True
                                    break
                            if not clash:
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
                    cls[to, wv >> 6] &= ~(one << (wv & 63))
                    cls[wto, wv >> 6] |= one << (wv & 63)
                    vcls[wv] = wto
                    size[to] -= 1
                    size[wto] += 1
                    mv[nm] = wv
                    mf[nm] = to
                    mt[nm] = wto
                    nm += 1
                cls[ci, v >> 6] &= ~(one << (v & 63))
                cls[to, v >> 6] |= one << (v & 63)
                vcls[v] = to
                size[ci] -= 1
                size[to] += 1
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
                x = mv[i]
                cls[mt[i], x >> 6] &= ~(one << (x & 63))
                cls[mf[i], x >> 6] |= one << (x & 63)
                vcls[x] = mf[i]
                size[mt[i]] -= 1
                size[mf[i]] += 1
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
def densest_candidate(P, adj, W):
    """The vertex of the bitset ``P`` with the most neighbours in ``P`` (the lowest
    numbered on ties): ``(vertex, its degree in P, vertices examined)``, ``(-1, -1, 0)``
    for an empty ``P``.  The greedy step of the initial cliques (here and AMTS's
    restart in local_search.py)."""
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
    one = np.int64(1)
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
