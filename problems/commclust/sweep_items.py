"""The ``commclust`` item of parameter sweeps (:mod:`stealsearch.engine.app.sweep`): the best partition
of one example table for one tie-break seed, its grouping coefficient G_c re-computed by
the literal double sums of :func:`~stealsearch.problems.commclust.verify.quality_reference`.

>>> r = commclust(table="cg8", seed=3)
>>> r["n_clusters"], r["best_partition"], r["verified"]
(2, [[0, 1, 2, 3], [4, 5, 6, 7]], True)
"""
from __future__ import annotations

import math
import time

from stealsearch.engine.core.problem import SolutionError


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def commclust(*, table: str | None = None, file: str | None = None, format: str | None = None,
              seed: int = 0, tie_seed: int | None = None, curve: bool = False) -> dict:
    """The best partition of one table: an example ``table`` (``cg8``, ``isN``... drawn
    with ``seed``) or a ``file`` (read as ``format``, from the extension when absent),
    clustered with the tie-break seed ``tie_seed`` (``seed`` when absent).  ``curve``
    adds ``best_index`` and the whole G_c curve (``gc_curve``: one value per partition,
    ``None`` where undefined), what ``commclust sweep`` compares across tie-break seeds."""
    from .algorithms import cluster_table
    from .generators import example_table
    from .io import read_table
    from .model import CommTableError, canonical_partition, validate_table
    from .quality import quality_curve
    from .verify import quality_reference

    if (table is None) == (file is None):
        raise CommTableError("a commclust item needs an example 'table' or a 'file', not both")
    t0 = time.perf_counter()
    raw = example_table(table, seed=seed) if file is None else read_table(file, format)
    t = validate_table(raw, source=table or file)
    tie = seed if tie_seed is None else tie_seed
    dend = cluster_table(t, seed=tie, validated=True)
    quality = quality_curve(t, dend, validated=True)
    best = quality.best_index()
    seconds = time.perf_counter() - t0
    clusters = [list(c) for c in canonical_partition(dend.partition(best))]
    ref = quality_reference(t, clusters)
    gc = float(quality.G_c[best])
    if not _same(gc, ref["G_c"]):
        raise SolutionError(f"G_c {gc} of the best partition, the reference says {ref['G_c']}")
    out = {"n_processes": dend.n, "n_clusters": len(clusters), "G_c": gc,
           "F_G": ref["F_G"], "D_G": ref["D_G"], "best_partition": clusters,
           "verified": True, "algorithm_seconds": seconds}
    if curve:
        out["best_index"] = int(best)
        out["gc_curve"] = [None if math.isnan(g) else float(g) for g in quality.G_c]
    return out


def _warmup() -> None:
    """Load the clustering kernel in this process on the paper's Table 1."""
    from .algorithms import cluster_table
    from .generators import paper_table1

    cluster_table(paper_table1(), seed=0)


commclust.warmup = _warmup


def commclust_curve(*, table: str, seed: int = 0) -> dict:
    """The whole dendrogram of one example table (``cg8`` = the paper's Table 1) and its
    G_c curve: for every partition (N clusters down to 1) the number of clusters, the
    sorted cluster sizes and G_c (NaN for one cluster), and the best partition.  ``seed``
    is the tie-break seed and, for the random examples (``isN``, ``epN``), the table's seed.

    >>> r = commclust_curve(table="cg8")
    >>> r["best_n_clusters"], r["best_sizes"]
    (2, [4, 4])
    """
    from .algorithms import cluster_table
    from .generators import example_table
    from .model import canonical_partition, validate_table
    from .quality import quality_curve

    t = validate_table(example_table(table, seed=seed))
    dend = cluster_table(t, seed=seed, validated=True)
    curve = quality_curve(t, dend, validated=True)
    best = curve.best_index()
    parts = [canonical_partition(dend.partition(i)) for i in range(dend.n)]
    return {"n_processes": dend.n,
            "n_clusters": [int(x) for x in curve.n_clusters],
            "G_c": [None if math.isnan(g) else float(g) for g in curve.G_c],
            "sizes": [sorted((len(c) for c in p), reverse=True) for p in parts],
            "partitions": [[list(map(int, c)) for c in p] for p in parts],
            "best_n_clusters": int(curve.n_clusters[best]),
            "best_sizes": sorted((len(c) for c in parts[best]), reverse=True),
            "best_G_c": float(curve.G_c[best])}


commclust_curve.warmup = _warmup
