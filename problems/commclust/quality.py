"""Quality of a partition: F_A, F_G, D_A, D_G and the grouping coefficient G_c (seed 002, 3.1).

Let partition ``P`` have clusters ``A_1..A_M`` of sizes ``x_i`` and let ``T`` be the table
(``T[i, j]`` = messages ``i -> j``, diagonal included).  Equations 2 and 5 survive the text
extraction intact; 3 and 6 are garbled and are reconstructed from the prose:

* eq. 2  ``F_A = sum_{k in A} sum_{j in A} T[k, j]``  -- every message between members of ``A``
  (self-messages included), each counted once.
* eq. 3  ``F_G = (sum_i F_Ai / sum_i x_i**2) / (sum_{i,j} T[i, j] / N**2)``  -- the mean
  intra-cluster element of the table (eq. 4: ``sum x_i**2`` intra-cluster elements) divided by
  the mean element.  The numerator and the ``N**2`` denominator are legible in the extraction.
  Properties (tested): ``F_G = 1`` for the one-cluster partition and for every partition of a
  constant table; ``F_G = N * trace(T) / sum(T)`` for singletons (0 with a zero diagonal, which
  is why the paper's EP/LU/MG plots reach ``G_c = 0`` at ``N`` clusters); the expected ``F_G``
  of a random grouping with the same sizes is ``<= 1`` when the diagonal mean does not exceed
  the off-diagonal mean, so ``F_G > 1`` means "more intra-cluster traffic than random grouping".
* eq. 5  ``D_A = sum_{k in A} sum_{j not in A} T[k, j]``  -- messages sent from ``A`` to other
  clusters (so ``sum_i D_Ai`` counts every inter-cluster message once).
* eq. 6  ``D_G = (sum_i D_Ai / sum_i x_i (N - x_i)) / (sum_{i != j} T[i, j] / (N (N - 1)))``
  -- the mean inter-cluster element divided by the mean off-diagonal element.  The
  extraction shows a normalisation "by the average amount of messages" whose exact form is
  lost; the prose says ``D_G`` close to 1 means inter-cluster traffic like that of the
  all-singletons partition, so the normaliser is chosen to make ``D_G = 1`` *exactly* for
  singletons (tested).  (Normalising by ``sum T / N**2`` instead, as in eq. 3, multiplies
  ``D_G`` by a constant of the table: ``G_c``'s ranking and best partition do not change.)
* ``G_c = F_G / D_G``.  Undefined (NaN; JSON ``null``) for the one-cluster partition, where
  ``D_G`` is 0/0; ``+inf`` when a partition has no inter-cluster traffic at all.

On the paper's IS remark (Figures 6-7: "almost a flat line", G_c rising only at N clusters):
with this reconstruction a table that is uniform *including its diagonal* gives ``G_c = 1``
for every partition with >= 2 clusters, N included; a diagonal ``r`` times the off-diagonal
value gives ``G_c = (S + N (r - 1)) / S * N / (r + N - 1)`` (``S = sum x_i**2``), largest at
N singletons but rising gradually as partitions approach N rather than only at N.  No choice
of the normalisers changes that (the N diagonal elements are always among the ``S``
intra-cluster elements), so the paper's IS curve is not reproduced exactly; both facts are
tested.

Along a dendrogram all of this costs O(1) per partition: merging ``A`` and ``B`` adds
``T(A, B) + T(B, A)`` (the merge's exchanged sum) to ``sum F_A`` and ``2 x y`` to
``sum x_i**2`` (:func:`quality_curve`).  :func:`partition_quality` evaluates any partition
from the table directly in O(N^2).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import CommTableError, Dendrogram, validate_table


def _labels_from(partition, n: int, source: str = "partition") -> tuple[np.ndarray, int]:
    """Labels 0..M-1 from a label array or a list of clusters; check it covers 0..n-1 once."""
    if isinstance(partition, np.ndarray) and partition.ndim == 1 and partition.shape[0] == n \
            and partition.dtype.kind in "iu":
        _, lab = np.unique(partition, return_inverse=True)
        return lab.astype(np.int64), int(lab.max()) + 1
    lab = np.full(n, -1, dtype=np.int64)
    m = 0
    for cluster in partition:
        for proc in cluster:
            p = int(proc)
            if not 0 <= p < n:
                raise CommTableError(f"{source}: process {p} out of range 0..{n - 1}")
            if lab[p] >= 0:
                raise CommTableError(f"{source}: process {p} in two clusters")
            lab[p] = m
        m += 1
    missing = np.flatnonzero(lab < 0)
    if missing.size:
        raise CommTableError(f"{source}: process {int(missing[0])} in no cluster")
    return lab, m


def block_sums(table: np.ndarray, labels: np.ndarray, m: int) -> np.ndarray:
    """``B[p, q] = sum of T[i, j]`` over ``i`` in cluster ``p``, ``j`` in cluster ``q`` (O(N^2)).

    >>> block_sums(np.arange(9.).reshape(3, 3), np.array([0, 0, 1]), 2).tolist()
    [[8.0, 7.0], [13.0, 8.0]]
    """
    perm = np.argsort(labels, kind="stable")
    counts = np.bincount(labels, minlength=m)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rows = np.add.reduceat(table[perm], starts, axis=0)
    return np.add.reduceat(rows[:, perm], starts, axis=1)


def cluster_similarity(table, cluster) -> float:
    """Eq. 2: ``F_A``, all messages between members of ``cluster``.

    >>> from stealsearch.problems.commclust.generators import paper_table1
    >>> cluster_similarity(paper_table1(), [0, 1])
    3365.0
    """
    t = np.asarray(table, dtype=np.float64)
    idx = np.asarray(list(cluster), dtype=np.int64)
    return float(t[np.ix_(idx, idx)].sum())


def cluster_dissimilarity(table, cluster) -> float:
    """Eq. 5: ``D_A``, messages sent from members of ``cluster`` to every other process.

    >>> from stealsearch.problems.commclust.generators import paper_table1
    >>> cluster_dissimilarity(paper_table1(), [0, 1])
    2536.0
    """
    t = np.asarray(table, dtype=np.float64)
    idx = np.asarray(list(cluster), dtype=np.int64)
    inside = np.zeros(t.shape[0], dtype=bool)
    inside[idx] = True
    return float(t[np.ix_(idx, ~inside)].sum())


def _scores(intra, sum_sq, total, off_total, n):
    """F_G, D_G, G_c from intra-cluster sum and sum of squared sizes (vectorised)."""
    intra = np.asarray(intra, dtype=np.float64)
    sum_sq = np.asarray(sum_sq, dtype=np.float64)
    mean_all = total / (n * n)
    mean_off = off_total / (n * (n - 1))
    fg = (intra / sum_sq) / mean_all
    inter_elems = n * n - sum_sq
    with np.errstate(divide="ignore", invalid="ignore"):
        dg = np.where(inter_elems > 0, ((total - intra) / inter_elems) / mean_off, np.nan)
        gc = np.where(np.isnan(dg), np.nan,
                      np.where(dg > 0, fg / np.where(dg > 0, dg, 1.0),
                               np.where(fg > 0, np.inf, np.nan)))
    return fg, dg, gc


def partition_quality(table, partition, validated: bool = False) -> dict:
    """F_A, D_A per cluster and F_G, D_G, G_c of one partition (clusters or labels).

    >>> from stealsearch.problems.commclust.generators import paper_table1
    >>> q = partition_quality(paper_table1(), [[0, 1, 2, 3], [4, 5, 6, 7]])
    >>> round(q["F_G"], 4), round(q["D_G"], 4), round(q["G_c"], 3)
    (1.8576, 0.1341, 13.856)
    """
    t = table if validated else validate_table(table)
    n = t.shape[0]
    labels, m = _labels_from(partition, n)
    blocks = block_sums(t, labels, m)
    sizes = np.bincount(labels, minlength=m).astype(np.float64)
    f_a = np.diag(blocks).copy()
    d_a = blocks.sum(axis=1) - f_a
    total = float(t.sum())
    off_total = total - float(np.trace(t))
    fg, dg, gc = _scores(f_a.sum(), float((sizes ** 2).sum()), total, off_total, n)
    return {"n_clusters": m, "F_A": f_a, "D_A": d_a, "sizes": sizes.astype(np.int64),
            "F_G": float(fg), "D_G": float(dg), "G_c": float(gc)}


@dataclass
class QualityCurve:
    """F_G, D_G, G_c for every partition ``k = 0..N-1`` of a dendrogram (``N - k`` clusters)."""

    n_clusters: np.ndarray
    F_G: np.ndarray
    D_G: np.ndarray
    G_c: np.ndarray

    def best_index(self) -> int:
        """Partition with the highest G_c; ties go to the one with fewer clusters; the
        one-cluster partition (G_c undefined) is never chosen."""
        return int(self.ranking()[0])

    def ranking(self) -> np.ndarray:
        """Partition indices sorted by G_c descending (ties: fewer clusters first); undefined
        G_c last."""
        gc = self.G_c
        key = np.where(np.isnan(gc), -np.inf, gc)
        defined = ~np.isnan(gc)
        return np.lexsort((self.n_clusters, -key, ~defined))


def quality_curve(table, dendrogram: Dendrogram, validated: bool = False) -> QualityCurve:
    """Eqs. 2-6 for all ``N`` partitions of ``dendrogram`` in O(N) (after O(N^2) for sums).

    >>> from stealsearch.problems.commclust.generators import paper_table1
    >>> from stealsearch.problems.commclust.algorithms import cluster_table
    >>> t = paper_table1(); c = quality_curve(t, cluster_table(t, seed=0))
    >>> int(c.n_clusters[c.best_index()])
    2
    """
    t = table if validated else validate_table(table)
    n = t.shape[0]
    if dendrogram.n != n:
        raise CommTableError(f"dendrogram has {dendrogram.n} processes, table has {n}")
    total = float(t.sum())
    trace = float(np.trace(t))
    intra = trace + np.concatenate(([0.0], np.cumsum(dendrogram.exchanged)))
    pair_terms = np.empty(n - 1, dtype=np.float64)
    if n > 1:
        # sizes of the two merged clusters: x*y = (s^2 - x^2 - y^2) / 2, from members
        csize = np.ones(2 * n - 1, dtype=np.float64)
        csize[n:] = dendrogram.sizes
        a = dendrogram.merges[:, 0]
        b = dendrogram.merges[:, 1]
        pair_terms = 2.0 * csize[a] * csize[b]
    sum_sq = n + np.concatenate(([0.0], np.cumsum(pair_terms)))
    fg, dg, gc = _scores(intra, sum_sq, total, total - trace, n)
    n_clusters = n - np.arange(n, dtype=np.int64)
    return QualityCurve(n_clusters=n_clusters, F_G=fg, D_G=dg, G_c=gc)
