"""The compiled core (numba) of 2LVDSOPT (seed paper 004, section 2.2, Algorithms 1-4).

Plain loops over CSR arrays, compiled once (``cache=True``) and GIL-free, so that
n = 10^5 tasks run in well under a second.  The Python driver is
:mod:`stealsearch.problems.twolevel.algorithms`; the verifier (:mod:`stealsearch.problems.twolevel.verify`)
uses none of this.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def topological_order(n, pred_ptr, succ_ptr, succ_dst):
    """Kahn's algorithm; returns fewer than n tasks iff there is a cycle."""
    indeg = np.empty(n, np.int64)
    for v in range(n):
        indeg[v] = pred_ptr[v + 1] - pred_ptr[v]
    order = np.empty(n, np.int64)
    tail = 0
    for v in range(n):
        if indeg[v] == 0:
            order[tail] = v
            tail += 1
    head = 0
    while head < tail:
        v = order[head]
        head += 1
        for k in range(succ_ptr[v], succ_ptr[v + 1]):
            w = succ_dst[k]
            indeg[w] -= 1
            if indeg[w] == 0:
                order[tail] = w
                tail += 1
    return order[:tail]


@njit(cache=True, nogil=True)
def earliest_start_dates(order, p, src, c1, pred_ptr, pred_arc):
    """Algorithm 1 (2LVDSLWB): b_i in topological order.

    b_i = max(b_g + p_g, max_{h != g} b_h + p_h + c_hi(1)) with g a predecessor that
    maximises b_h + p_h + c_hi(1); b_i = 0 for a source.
    """
    n = p.shape[0]
    b = np.zeros(n)
    for t in range(order.shape[0]):
        i = order[t]
        lo = pred_ptr[i]
        hi = pred_ptr[i + 1]
        if lo == hi:
            continue
        best = -np.inf
        second = -np.inf
        g = -1
        for k in range(lo, hi):
            a = pred_arc[k]
            h = src[a]
            v = b[h] + p[h] + c1[a]
            if v > best:
                second = best
                best = v
                g = h
            elif v > second:
                second = v
        e = b[g] + p[g]
        b[i] = e if e > second else second
    return b


@njit(cache=True, nogil=True)
def forest_tour(parent, child_ptr, child, roots):
    """Depth-first tour of the critical forest GC.

    Returns tin/tout (v is an ancestor of w iff tin[v] <= tin[w] < tout[v]),
    leaf_lo/leaf_hi (the leaves under v are leaves[leaf_lo[v]:leaf_hi[v]]), depth,
    and the leaves in tour order (one critical sequence per leaf).
    """
    n = parent.shape[0]
    tin = np.empty(n, np.int64)
    tout = np.empty(n, np.int64)
    leaf_lo = np.empty(n, np.int64)
    leaf_hi = np.empty(n, np.int64)
    depth = np.empty(n, np.int64)
    leaves = np.empty(n, np.int64)
    stack = np.empty(n, np.int64)
    nxt = np.empty(n, np.int64)
    nleaves = 0
    t = 0
    for r in roots:
        sp = 0
        stack[0] = r
        nxt[r] = child_ptr[r]
        depth[r] = 0
        tin[r] = t
        t += 1
        leaf_lo[r] = nleaves
        while sp >= 0:
            v = stack[sp]
            if nxt[v] < child_ptr[v + 1]:
                w = child[nxt[v]]
                nxt[v] += 1
                depth[w] = depth[v] + 1
                tin[w] = t
                t += 1
                leaf_lo[w] = nleaves
                nxt[w] = child_ptr[w]
                sp += 1
                stack[sp] = w
            else:
                if child_ptr[v] == child_ptr[v + 1]:
                    leaves[nleaves] = v
                    nleaves += 1
                leaf_hi[v] = nleaves
                tout[v] = t
                sp -= 1
    return tin, tout, leaf_lo, leaf_hi, depth, leaves[:nleaves]


@njit(cache=True, nogil=True)
def _find(par, x):
    while par[x] != x:
        par[x] = par[par[x]]
        x = par[x]
    return x


@njit(cache=True, nogil=True)
def _union(par, x, y):
    rx = _find(par, x)
    ry = _find(par, y)
    if rx != ry:
        if rx < ry:
            par[ry] = rx
        else:
            par[rx] = ry


@njit(cache=True, nogil=True)
def _union_range(par, right, lo, hi):
    # ``right`` is a second union-find forest, each made link k -- k+1 pointing k at k+1:
    # _find(right, k) is the smallest k' >= k whose link k' -- k'+1 is not made yet
    k = _find(right, lo)
    while k < hi - 1:
        _union(par, k, k + 1)
        right[k] = k + 1
        k = _find(right, k + 1)


@njit(cache=True, nogil=True)
def sequence_components(nleaves, tight_src, tight_dst, leaf_lo, leaf_hi):
    """Algorithm 3 (2LVDSCC) without building GSC edge by edge.

    Every "tight" arc (i, j) (b_j < b_i + p_i + c_ij(2), i not in the sequences of j)
    joins every sequence through i with every sequence through j.  Those are the
    contiguous leaf ranges [leaf_lo, leaf_hi) of i and j, so a union-find with a
    "next unjoined neighbour" pointer joins each range in amortised O(alpha) per leaf.
    Returns the union-find root of each sequence.
    """
    par = np.arange(nleaves)
    right = np.arange(nleaves)
    for e in range(tight_src.shape[0]):
        i = tight_src[e]
        j = tight_dst[e]
        _union_range(par, right, leaf_lo[i], leaf_hi[i])
        _union_range(par, right, leaf_lo[j], leaf_hi[j])
        _union(par, leaf_lo[i], leaf_lo[j])
    root = np.empty(nleaves, np.int64)
    for s in range(nleaves):
        root[s] = _find(par, s)
    return root


@njit(cache=True, nogil=True)
def place_copies(proc_leaf, depth, parent, b, processor_cluster):
    """Algorithm 4, first part: processor q runs the path root -> proc_leaf[q] of GC.

    Returns row offsets per processor and, per copy row (root first on each processor):
    task, copy number (1, 2, ... per task in processor order: the paper's i^k),
    processor, cluster and start date b_i.
    """
    nproc = proc_leaf.shape[0]
    n = parent.shape[0]
    offs = np.empty(nproc + 1, np.int64)
    offs[0] = 0
    for q in range(nproc):
        offs[q + 1] = offs[q] + depth[proc_leaf[q]] + 1
    total = offs[nproc]
    task = np.empty(total, np.int64)
    proc = np.empty(total, np.int64)
    cluster = np.empty(total, np.int64)
    start = np.empty(total)
    for q in range(nproc):
        v = proc_leaf[q]
        r = offs[q + 1] - 1
        while v != -1:
            task[r] = v
            proc[r] = q
            cluster[r] = processor_cluster[q]
            start[r] = b[v]
            r -= 1
            v = parent[v]
    seen = np.zeros(n, np.int64)
    index = np.empty(offs[nproc], np.int64)
    for r in range(offs[nproc]):
        seen[task[r]] += 1
        index[r] = seen[task[r]]
    return offs, task, index, proc, cluster, start


@njit(cache=True, nogil=True)
def gather_messages(offs, copy_task, pred_ptr, pred_arc, src, tin, tout, b, p, c1, c2):
    """Algorithm 4, second part: one message per (predecessor task, receiving processor).

    For every copy of j on processor q and every predecessor i of j that has no copy
    on q (i is not a GC ancestor of j), processor q needs i's result.  The first such
    copy (earliest, rows are in start order) names the message; ``need_intra`` records
    whether some consumer has b_j < b_i + p_i + c_ij(2) (the message must then come
    from the same cluster); ``max_c1``/``max_c2`` the longest delay among its consumers.
    """
    n = b.shape[0]
    nproc = offs.shape[0] - 1
    mark = np.full(n, -1, np.int64)
    count = 0
    for q in range(nproc):
        for r in range(offs[q], offs[q + 1]):
            j = copy_task[r]
            for k in range(pred_ptr[j], pred_ptr[j + 1]):
                i = src[pred_arc[k]]
                if tin[i] <= tin[j] and tin[j] < tout[i]:
                    continue
                if mark[i] != q:
                    mark[i] = q
                    count += 1
    msg_task = np.empty(count, np.int64)
    msg_proc = np.empty(count, np.int64)
    msg_first = np.empty(count, np.int64)
    need_intra = np.zeros(count, np.bool_)
    max_c1 = np.zeros(count)
    max_c2 = np.zeros(count)
    slot = np.empty(n, np.int64)
    mark[:] = -1
    count = 0
    for q in range(nproc):
        for r in range(offs[q], offs[q + 1]):
            j = copy_task[r]
            for k in range(pred_ptr[j], pred_ptr[j + 1]):
                a = pred_arc[k]
                i = src[a]
                if tin[i] <= tin[j] and tin[j] < tout[i]:
                    continue
                if mark[i] != q:
                    mark[i] = q
                    slot[i] = count
                    msg_task[count] = i
                    msg_proc[count] = q
                    msg_first[count] = r
                    count += 1
                s = slot[i]
                if b[j] < b[i] + p[i] + c2[a]:
                    need_intra[s] = True
                if c1[a] > max_c1[s]:
                    max_c1[s] = c1[a]
                if c2[a] > max_c2[s]:
                    max_c2[s] = c2[a]
    return msg_task, msg_proc, msg_first, need_intra, max_c1, max_c2
