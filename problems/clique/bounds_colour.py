"""The colour-bound kernel of the clique search (Tomita's MCS, San Segundo's BBMC)."""
from __future__ import annotations

import numpy as np
from numba import njit

from stealsearch.engine.core.problem import IMPROVED

from .colour_classes import _append_class, _colour_class
from .rows import LEVEL, _next_node, _open_node, _push_children


@njit(nogil=True, cache=True)
def colour_kernel(stack, top, budget, mode, incumbent, counters, solution, adj):
    """Branch and bound with a greedy colouring bound at every node (bound ``colour``).

    A kernel of the engine's contract (:mod:`stealsearch.engine.core.problem`) over the
    adjacency bitsets ``adj``, whose vertices were renumbered once in the chosen order.
    At every node a bitset greedy colouring of the candidates C in vertex order; only
    the vertices whose colour k satisfies ℓ + k > incumbent become children, highest
    colour first (on top), each with bound ℓ + k (prune by colour class).  MCS's
    Re-NUMBER and BBMC's infra-chromatic recolouring are
    :func:`.bounds_reason.reason_kernel`'s; without them the node counts match those of
    MCS-style native solvers (benchmarks/RESULTS.md).
    """
    n = adj.shape[0]
    W = adj.shape[1]
    maxc = max(n, 1)
    Xs = np.empty(W, np.int64)
    U = np.empty(W, np.int64)
    Q = np.empty(W, np.int64)
    C = np.empty(W, np.int64)
    order = np.empty(maxc, np.int64)
    col = np.empty(maxc, np.int64)
    best = incumbent
    done = 0
    while True:
        top, status = _next_node(stack, top, best, done, budget, maxc)
        if status >= 0:
            return top, status, best
        r = top
        lev = stack[r, LEVEL]
        done += 1
        best, improved, remaining = _open_node(stack, r, lev, best, counters, solution,
                                               Xs, U, W)
        kmin = best - lev + 1
        cnt = 0
        if remaining >= kmin:
            k = 0
            while remaining > 0:
                k += 1
                remaining -= _colour_class(U, Q, C, adj, W)
                if k >= kmin:
                    cnt = _append_class(C, k, order, col, cnt, W)
            _push_children(stack, r, lev, cnt, order, col, Xs, U, adj, W)
        top = r + cnt
        if improved:
            return top, IMPROVED, best
