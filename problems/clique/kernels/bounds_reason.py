"""The colour-bound kernel with reasoning over the colour classes before branching
(bounds ``recolour``, ``infra``, ``maxsat``, ``incmaxsat``)."""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import _ctpop64 as popcount
from stealsearch.engine.core.bitset import _cttz64 as ctz
from stealsearch.engine.core.problem import BUDGET, EMPTY, GROW, IMPROVED, NODES

from .bounds_colour import colour_kernel
from .colour_classes import _append_class, _colour_class, _label_class
from .finished import _expanded, _pop_row, _push_prefix
from .partite import _filter_partite, _is_independent
from .reasoning import (MAX_VIRTUAL, _failed_literal, _failed_literal_virtual, _infra,
                        _renumber)
from .rows import BOUND, BRANCHED, LEVEL, MAX_DEPTH, X0, _improve, _push_children

#: reason_kernel levels that apply Re-NUMBER (level 3 does not: see its docstring)
RENUMBER_UPTO = 2
#: reason_kernel level of MoMC's reasoning with virtual literals (bound ``incmaxsat``)
INCMAXSAT = 4
#: reason_kernel level of MoMC's reasoning plus CliSAT's SAT filtering (bound ``filtsat``)
FILTSAT = 5


@njit(nogil=True, cache=True)
def reason_kernel(stack, top, budget, mode, incumbent, counters, solution, adj, level,
                  finished=None, key_rows=None):
    """The colour kernel with reasoning over the colour classes before branching.

    At a node with clique X (|X| = ℓ) and candidates P, children need colour
    k >= kmin = incumbent - ℓ + 1.  First kmin - 1 colour classes are built greedily
    (BBMC, class at a time, vertex order); the vertices left over would all be
    branching vertices in MCS/BBMC.  Each of them, in vertex order, is tried:

    * ``level`` 1 and 2 -- Re-NUMBER (Tomita et al.'s MCS; San Segundo's BBMCR):
      moved into a class below the threshold, directly or by displacing its only
      neighbour there (:func:`.reasoning._renumber`);
    * ``level == 2`` -- then San Segundo et al.'s infra-chromatic test (BBMCX): a
      class with one neighbour w of the vertex and a class with no common neighbour
      of both (:func:`.reasoning._infra`).  As in MoMC, once one vertex must branch
      the node cannot be pruned, and neither test is tried on the vertices after it;
    * ``level == 3`` -- MaxSAT reasoning (Li and Quan's IncMaxCLQ, Li, Jiang and
      Manyà's MoMC): the would-be branching vertices are coloured into new classes;
      a new class every vertex of which is a failed literal under unit propagation
      over the classes (:func:`.reasoning._failed_literal`) is dropped whole, with the
      union of its vertices' conflict classes frozen, until the first class that
      cannot be.  No Re-NUMBER at this level: it costs more time than it saves nodes.
    * ``level == 4`` -- MoMC's reasoning (Li, Jiang and Manyà 2017, with Li and
      Quan's MaxCLQ / IncMaxCLQ clause transformation): Re-NUMBER on every would-be
      branching vertex, then new classes absorbed as at level 3, but the clauses of
      each inconsistent subset stay active with one new *virtual literal* each
      (:func:`.reasoning._failed_literal_virtual`) instead of being frozen, the
      absorbed class joins the clauses, a class absorbed in part leaves its failed
      prefix out, and a vertex whose propagation ends without conflict is still
      failed when both literals of a clause it cut down to two lead to one (MoMC's
      ``inc_maxsatz_lookahead_by_fl2``).  It expands fewer nodes than level 3 on dense
      graphs at a higher cost per node (benchmarks/RESULTS.md).
    * ``level == 5`` -- level 4, and where Re-NUMBER leaves the would-be branching
      vertices one independent set, CliSAT's SAT filtering (San Segundo, Furini,
      Alvarez and Pardalos 2023, FiltSAT): the candidates are then kmin independent
      sets and a clique worth finding takes one vertex of each, so every class is a
      hard clause and a vertex whose unit propagation empties a class is removed from
      the candidates, not just from the bound (:func:`.partite._filter_partite`); a
      class emptied prunes the node.  Each child's candidates are the other classes
      restricted to its neighbours, one class fewer and one vertex fewer to find, and
      are filtered the same way before the child is pushed: a child whose filter
      empties a class is not pushed.

    The non-branching vertices then have ω <= kmin - 1 (active classes count one each,
    an inconsistent subset S u {u} or S u K counts |S|), so they can be skipped as
    children, as the vertices of colour < kmin are in MCS.  The remaining (branching)
    vertices are coloured greedily with colours kmin, kmin + 1, ... and become children
    in decreasing colour, each with bound ℓ + its colour, exactly as in
    :func:`.bounds_colour.colour_kernel`.  Choices where the papers differ: units are
    propagated first-found-first (MoMC orders them); propagation stops after 62 forcing
    steps (the reasons are a 64-bit mask); Re-NUMBER may move the displaced vertex to
    any other active class; the vertices are tried in vertex order.  The bounds
    ``recolour``, ``infra``, ``maxsat`` and ``incmaxsat`` are levels 1 to 4; ``level = 0``
    is :func:`.bounds_colour.colour_kernel` (one code path: this kernel hands level 0 to
    it).  ``finished`` and ``key_rows``: MoMC's incremental bound over the engine's
    finished subtrees, as in :func:`.bounds_colour.colour_kernel`.
    """
    if level == 0:
        return colour_kernel(stack, top, budget, mode, incumbent, counters, solution, adj,
                             None, None, finished, key_rows)
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
    csize = np.empty(maxc, np.int64)
    cls2 = np.empty((maxc, W), np.int64) if level == FILTSAT else np.empty((1, W), np.int64)
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
        closed, key = _pop_row(stack, r, lev, best, finished, key_rows, counters, W)
        if closed:
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
        # what this node's cliques not below a child reach (the engine's finished
        # subtrees): ℓ + |P| where no child can be, else the reasoning's kmin - 1
        closing = lev + remaining if remaining < kmin else best
        if finished is not None and lev == 0:
            cnt = _push_prefix(stack, r, U, adj, finished, key_rows, W)
            if cnt > 0:
                counters[BRANCHED] += 1
        elif remaining >= kmin:
            # 1. classes 1 .. kmin-1, kept as bitsets
            nc = 0
            while remaining > 0 and nc < kmin - 1:
                remaining -= _colour_class(U, Q, cls[nc], adj, W, vcls, nc)
                nc += 1
            # 2. Re-NUMBER / infra-chromatic: move would-be branching vertices to the
            #    non-branching side one by one
            for k in range(nc):
                active[k] = True
            if remaining > 0 and (1 <= level <= RENUMBER_UPTO or level >= INCMAXSAT) and nc > 0:
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
            partite = (level == FILTSAT and remaining > 0 and nc == kmin - 1
                       and _is_independent(U, adj, W))
            if partite:
                # the candidates are kmin independent sets: filter them, then the
                # children (one per vertex of the last set), each filtered in turn
                for w in range(W):
                    cls[nc, w] = U[w]
                    M2[w] = stack[r, P0 + w]
                if _filter_partite(cls, nc + 1, M2, adj, vcls, csize, M, cnt_k, fixed, queue,
                                   W):
                    cnt = _append_class(cls[nc], kmin, order, col, 0, W)
                    cnt = _push_partite(stack, r, lev, cnt, order, kmin, Xs, cls, nc, cls2,
                                        B, adj, vcls, csize, M, cnt_k, fixed, queue, W)
                remaining = 0
            if level >= INCMAXSAT and nc > 0 and remaining > 0:
                nc0 = nc
                nz = 0
                for k2 in range(nc):
                    vz[k2] = 0
                absorbing = True
                while remaining > 0 and absorbing:
                    remaining -= _colour_class(U, Q, B, adj, W, None, 0)
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
                            _label_class(B, nc, vcls, W)
                            vz[nc] = zb
                            nc += 1
                        else:
                            absorbing = False     # absorbed, but no more reasoning
                nc = nc0
            k = nc
            dropping = level == 3 and nc > 0
            while remaining > 0:
                remaining -= _colour_class(U, Q, B, adj, W, None, 0)
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
                cnt = _append_class(B, k, order, col, cnt, W)
            if not partite:
                _push_children(stack, r, lev, cnt, order, col, Xs, U, adj, W)
            if cnt > 0:
                counters[BRANCHED] += 1
        _expanded(key_rows, key, cnt, closing)
        top = r + cnt
        if improved:
            return top, IMPROVED, best
    return 0, EMPTY, best


@njit(nogil=True, cache=True)
def _push_partite(stack, r, lev, nb, order, kmin, Xs, cls, K, cls2, Pc, adj, vcls, csize, M,
                  cnt_k, fixed, queue, W):
    """The children of a node whose candidates are the independent sets ``cls[0..K]``
    (K + 1 = kmin of them): one per vertex b = ``order[i]`` of the last set, the last on
    top as in :func:`.rows._push_children`, with candidates the vertices of
    ``cls[0..K)`` adjacent to b (the other vertices of b's own set are not), which are K
    independent sets for the K vertices still to find.  Each child is filtered
    (:func:`.partite._filter_partite`) and written only when no set empties.  Returns
    how many children were written."""
    P0 = X0 + W
    one = np.int64(1)
    c = 0
    for i in range(nb):
        b = order[i]
        for w in range(W):
            Pc[w] = 0
        for j in range(K):
            for w in range(W):
                x = cls[j, w] & adj[b, w]
                cls2[j, w] = x
                Pc[w] |= x
        if K > 0 and not _filter_partite(cls2, K, Pc, adj, vcls, csize, M, cnt_k, fixed, queue,
                                         W):
            continue
        ch = r + c
        stack[ch, LEVEL] = lev + 1
        stack[ch, BOUND] = lev + kmin
        for w in range(W):
            stack[ch, X0 + w] = Xs[w]
            stack[ch, P0 + w] = Pc[w]
        stack[ch, X0 + (b >> 6)] |= one << (b & 63)
        c += 1
    return c
