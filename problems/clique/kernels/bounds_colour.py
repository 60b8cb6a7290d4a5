"""The colour-bound kernel of the clique search (Tomita's MCS, San Segundo's BBMC)."""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.bitset import _ctpop64 as popcount
from stealsearch.engine.core.problem import BUDGET, EMPTY, GROW, IMPROVED, NODES

from .colour_classes import _append_class, _colour_class
from .finished import _expanded, _pop_row, _push_prefix
from .rows import BRANCHED, LEVEL, MAX_DEPTH, X0, _improve, _push_children


@njit(nogil=True, cache=True)
def colour_kernel(stack, top, budget, mode, incumbent, counters, solution, adj, records=None,
                  fill=None, finished=None, key_rows=None):
    """Branch and bound with a greedy colouring bound at every node (bound ``colour``).

    A kernel of the engine's contract (:mod:`stealsearch.engine.core.problem`) over the
    adjacency bitsets ``adj``, whose vertices were renumbered once in the chosen order.
    At every node a bitset greedy colouring of the candidates C in vertex order; only
    the vertices whose colour k satisfies ℓ + k > incumbent become children, highest
    colour first (on top), each with bound ℓ + k (prune by colour class).  MCS's
    Re-NUMBER and BBMC's infra-chromatic recolouring are
    :func:`.bounds_reason.reason_kernel`'s; without them the node counts match those of
    MCS-style native solvers (benchmarks/RESULTS.md).

    With ``records`` and ``fill`` it is also the proof kernel of the colour bound (the
    engine's contract, :mod:`stealsearch.engine.core.proof`): each node it expands is
    copied, as its row, to ``records[fill[0]]``, and it returns ``BUDGET`` before a node
    when the buffer is full; the same nodes in the same order.  Without them numba
    compiles it with no logging at all (the branches on an omitted argument are dropped).

    With ``finished`` and ``key_rows`` (the engine's finished subtrees,
    :mod:`stealsearch.engine.core.problem`) the root branches in the prefix decomposition
    and every node is also bounded by MoMC's incremental bound (:mod:`.finished`).
    """
    n = adj.shape[0]
    W = adj.shape[1]
    P0 = X0 + W
    cap = stack.shape[0]
    maxc = max(n, 1)
    Xs = np.empty(W, np.int64)
    U = np.empty(W, np.int64)
    Q = np.empty(W, np.int64)
    C = np.empty(W, np.int64)
    order = np.empty(maxc, np.int64)
    col = np.empty(maxc, np.int64)
    best = incumbent
    done = 0
    while top > 0:
        if done >= budget:
            return top, BUDGET, best
        if top + maxc > cap:
            return top, GROW, best
        if records is not None:
            if fill[0] >= records.shape[0]:
                return top, BUDGET, best
        top -= 1
        r = top
        lev = stack[r, LEVEL]
        closed, key = _pop_row(stack, r, lev, best, finished, key_rows, counters, W)
        if closed:
            continue
        done += 1
        counters[NODES] += 1
        if records is not None:
            _record(stack, r, records, fill)
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
        # what this node's cliques not below a child reach: ℓ + the colours of the
        # candidates that are not children (the engine's finished subtrees)
        closing = lev + remaining
        if finished is not None and lev == 0:
            cnt = _push_prefix(stack, r, U, adj, finished, key_rows, W)
            if cnt > 0:
                counters[BRANCHED] += 1
        elif remaining >= kmin:
            k = 0
            while remaining > 0:
                k += 1
                remaining -= _colour_class(U, Q, C, adj, W, None, 0)
                if k >= kmin:
                    cnt = _append_class(C, k, order, col, cnt, W)
            closing = lev + min(k, kmin - 1)
            _push_children(stack, r, lev, cnt, order, col, Xs, U, adj, W)
            if cnt > 0:
                counters[BRANCHED] += 1
        _expanded(key_rows, key, cnt, closing)
        top = r + cnt
        if improved:
            return top, IMPROVED, best
    return 0, EMPTY, best


@njit(nogil=True, cache=True)
def _record(stack, r, records, fill):
    """Row ``r`` of the stack as the next scaffold record."""
    k = fill[0]
    for j in range(stack.shape[1]):
        records[k, j] = stack[r, j]
    fill[0] = k + 1
