"""Agglomerative clustering of processes with the similarity ``f`` (seed 002, section 3, eq. 1).

Paper: start from ``N`` singleton clusters; at every step merge the two clusters ``A``, ``B``
(sizes ``x``, ``y``) with the largest

    f(A, B) = sum_{a in A} sum_{b in B} T_ab / (x * y)                       (eq. 1)

where ``T_ab`` is the amount *exchanged* between ``a`` and ``b`` (``T[a, b] + T[b, a]``, see
:func:`stealsearch.problems.commclust.model.exchanged_table`).  That is average linkage on the similarity
``E = T + T^T``.  Ties (Table 1 has six pairs at 2533) are broken as the paper says: the
processes are sorted in a random order, and among the pairs with the highest ``f`` the one
containing the first node of that order is merged.

Tie rule, made precise (the paper's sentence leaves it to the reader):
    ``order`` is a random permutation of the processes (``numpy.random.default_rng(seed)``);
    a cluster's *key* is the smallest position in ``order`` of its members; among pairs with
    the same ``f`` the pair whose smaller key is smallest wins, then the one whose larger key is
    smallest.  For Table 1 with ``order = [0, 2, 4, 6, 1, 5, 3, 7]`` this reproduces the
    paper's Table 2 merge for merge.

Algorithm: pairs are totally ordered by ``(f descending, smaller key, larger key)``.  Average
linkage is *reducible* (``f(A u B, C)`` lies between ``f(A, C)`` and ``f(B, C)``) and the merged
cluster inherits the smaller key, so the order stays reducible with ties included; hence the
nearest-neighbour-chain algorithm finds exactly the merges of the paper's greedy procedure, in
O(N^2) time and O(N^2) memory (one ``N x N`` float64 matrix of exchanged sums), and sorting
them by that order gives the greedy sequence.  Sums ``W(A, B)`` are kept instead of averages:
for integer tables (message counts below 2**53) they are exact, and ``f = W / (x y)`` is a
correctly rounded division, so equal ``f`` values are detected exactly and the tie rule is
applied exactly.  For real-valued tables ties are judged on the computed doubles.

The independent check of all this is :func:`stealsearch.problems.commclust.verify.greedy_reference`, the
paper's procedure written out literally (O(N^4)).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .model import CommTableError, Dendrogram, exchanged_table, validate_table


@njit(cache=True, nogil=True)
def _sync_row(w, r, log_keep, log_gone, since, upto):
    """Apply the merges ``since..upto-1`` of the log to row ``r`` of ``w``."""
    row = w[r]
    for m in range(since, upto):
        k = log_keep[m]
        row[k] = row[k] + row[log_gone[m]]


@njit(cache=True, nogil=True)
def _nn_chain(w, key):
    """Nearest-neighbour chain over the sums matrix ``w`` (modified in place).

    Returns per merge: kept slot, removed slot, W, f, key of kept, key of removed.

    Only rows are ever read or written (no strided column writes): a merge writes the new
    cluster's row and appends ``(keep, gone)`` to a log; any other row applies the logged
    merges it has not seen (``row[keep] += row[gone]``, in order) just before it is scanned.
    The active clusters are kept sorted by slot, so a scan walks its row in memory order.
    """
    n = w.shape[0]
    size = np.ones(n, dtype=np.float64)
    ckey = key.copy()
    active = np.arange(n)
    n_active = n
    synced = np.zeros(n, dtype=np.int64)
    chain = np.empty(n, dtype=np.int64)
    top = 0
    out_slot = np.empty((n - 1, 2), dtype=np.int64)
    out_w = np.empty(n - 1, dtype=np.float64)
    out_f = np.empty(n - 1, dtype=np.float64)
    out_key = np.empty((n - 1, 2), dtype=np.int64)
    log_keep = out_slot[:, 0]
    log_gone = out_slot[:, 1]
    n_merged = 0
    while n_active > 1:
        if top == 0:
            chain[0] = active[0]
            top = 1
        a = chain[top - 1]
        if synced[a] < n_merged:
            _sync_row(w, a, log_keep, log_gone, synced[a], n_merged)
            synced[a] = n_merged
        sa = size[a]
        ka = ckey[a]
        row = w[a]
        best = -1
        best_f = -1.0
        best_lo = 0
        best_hi = 0
        for t in range(n_active):
            c = active[t]
            if c == a:
                continue
            fc = row[c] / (sa * size[c])
            if fc < best_f:
                continue
            kc = ckey[c]
            lo = min(ka, kc)
            hi = max(ka, kc)
            if fc > best_f or lo < best_lo or (lo == best_lo and hi < best_hi):
                best = c
                best_f = fc
                best_lo = lo
                best_hi = hi
        if top >= 2 and chain[top - 2] == best:
            top -= 2
            b = best
            # the kept slot holds the cluster with the smaller key
            if ckey[a] < ckey[b]:
                keep, gone = a, b
            else:
                keep, gone = b, a
            for r in (keep, gone):
                if synced[r] < n_merged:
                    _sync_row(w, r, log_keep, log_gone, synced[r], n_merged)
                    synced[r] = n_merged
            out_w[n_merged] = w[a, b]
            out_f[n_merged] = best_f
            out_key[n_merged, 0] = ckey[keep]
            out_key[n_merged, 1] = ckey[gone]
            log_keep[n_merged] = keep
            log_gone[n_merged] = gone
            n_merged += 1
            # remove `gone` from the (sorted) active list, build the row of `keep`
            rk = w[keep]
            rg = w[gone]
            j = 0
            for t in range(n_active):
                c = active[t]
                if c == gone:
                    continue
                active[j] = c
                j += 1
                rk[c] = rk[c] + rg[c]
            n_active = j
            synced[keep] = n_merged
            size[keep] += size[gone]
        else:
            chain[top] = best
            top += 1
    return out_slot, out_w, out_f, out_key


def tie_order(n: int, seed: int | None = None, order=None) -> np.ndarray:
    """The random sorting of the processes used to break ties.

    ``order`` (a permutation of ``0..n-1``) wins over ``seed``; ``seed=None`` means
    ``order = 0, 1, ..., n-1`` (deterministic, documented default for library calls).

    >>> tie_order(4, order=[2, 0, 1, 3]).tolist()
    [2, 0, 1, 3]
    >>> sorted(tie_order(5, seed=7).tolist())
    [0, 1, 2, 3, 4]
    """
    if order is not None:
        perm = np.asarray(order, dtype=np.int64)
        if perm.shape != (n,) or not np.array_equal(np.sort(perm), np.arange(n)):
            raise CommTableError(f"tie order must be a permutation of 0..{n - 1}")
        return perm
    if seed is None:
        return np.arange(n, dtype=np.int64)
    if int(seed) < 0:
        raise CommTableError(f"seed must be >= 0, got {seed}")
    return np.random.default_rng(int(seed)).permutation(n).astype(np.int64)


def cluster_table(table, seed: int | None = None, order=None, validated: bool = False) -> Dendrogram:
    """Cluster the processes of a communication table; return the whole dendrogram.

    ``seed`` picks the random tie-break order (``order`` gives it explicitly).

    >>> from stealsearch.problems.commclust.generators import paper_table1
    >>> d = cluster_table(paper_table1(), order=[0, 2, 4, 6, 1, 5, 3, 7])
    >>> d.partition(1), d.partition(6)
    ([[0, 2], [4], [6], [1], [5], [3], [7]], [[0, 2, 1, 3], [4, 6, 5, 7]])
    """
    t = table if validated else validate_table(table)
    n = t.shape[0]
    perm = tie_order(n, seed, order)
    key = np.empty(n, dtype=np.int64)
    key[perm] = np.arange(n, dtype=np.int64)
    w = exchanged_table(t)
    slots, wsum, fval, keys = _nn_chain(w, key)
    del w
    merges, sizes, seq = _greedy_sequence(n, slots, fval, keys)
    return Dendrogram(n=n, merges=merges, f=fval[seq].copy(), exchanged=wsum[seq].copy(),
                      sizes=sizes, order=perm, seed=seed)


def _greedy_sequence(n, slots, fval, keys):
    """Order the NN-chain merges as the greedy procedure does them and number the clusters.

    The greedy order is ``(f descending, smaller key, larger key)``.  With exact arithmetic
    it never puts a merge before the merges that built its two clusters; a heap over the
    merges whose inputs exist keeps that true even when rounding of real-valued tables makes
    a parent merge look (by one ulp) better than its child.
    """
    import heapq

    m = n - 1
    lo = np.minimum(keys[:, 0], keys[:, 1]).tolist()
    hi = np.maximum(keys[:, 0], keys[:, 1]).tolist()
    fl = fval.tolist()
    last_writer = [-1] * n          # NN-chain merge that last wrote each slot
    waiting = [0] * m
    children: list[list[int]] = [[] for _ in range(m)]
    for k in range(m):
        for s in (int(slots[k, 0]), int(slots[k, 1])):
            dep = last_writer[s]
            if dep >= 0:
                waiting[k] += 1
                children[dep].append(k)
        last_writer[int(slots[k, 0])] = k
    heap = [(-fl[k], lo[k], hi[k], k) for k in range(m) if waiting[k] == 0]
    heapq.heapify(heap)
    slot_id = list(range(n))
    merges = np.empty((m, 2), dtype=np.int64)
    sizes = np.empty(m, dtype=np.int64)
    csize = [1] * n + [0] * m
    seq = np.empty(m, dtype=np.int64)
    step = 0
    while heap:
        _, _, _, k = heapq.heappop(heap)
        keep, gone = int(slots[k, 0]), int(slots[k, 1])
        a, b = slot_id[keep], slot_id[gone]
        merges[step] = (a, b)
        csize[n + step] = csize[a] + csize[b]
        sizes[step] = csize[n + step]
        slot_id[keep] = n + step
        seq[step] = k
        step += 1
        for child in children[k]:
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(heap, (-fl[child], lo[child], hi[child], child))
    assert step == m, "internal error: merge dependencies do not form a tree"
    return merges, sizes, seq
