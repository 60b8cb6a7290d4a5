"""Reasoning over the colour classes of a node, one would-be branching vertex at a
time: Re-NUMBER, the infra-chromatic test, and failed literals under unit propagation
(with and without MaxCLQ's virtual literals).  :func:`.bounds_reason.reason_kernel`
applies them."""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import _ctpop64 as popcount
from stealsearch.engine.core.bitset import _cttz64 as ctz

from .colour_classes import _meets, _only_neighbour

#: virtual literals per node (one int64 mask per clause)
MAX_VIRTUAL = 62


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
        wv = _only_neighbour(cls[k1], adj, u, W)
        if wv < 0:
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
        wv = _only_neighbour(cls[k1], adj, u, W)
        if wv == -1:
            cls[k1, u >> 6] |= one << (u & 63)
            vcls[u] = k1
            return True
        if wv >= 0:
            for k2 in range(nc):
                if k2 == k1 or not active[k2]:
                    continue
                if not _meets(cls[k2], adj, wv, W):
                    cls[k2, wv >> 6] |= one << (wv & 63)
                    cls[k1, wv >> 6] &= ~(one << (wv & 63))
                    cls[k1, u >> 6] |= one << (u & 63)
                    vcls[wv] = k2
                    vcls[u] = k1
                    return True
    return False
