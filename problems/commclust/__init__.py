"""Seed 002: characterization of communications between processes (Orduña, Arnau, Duato).

A table of communication ``T`` (``T[i, j]`` = messages/bytes from process ``i`` to ``j``) is
clustered agglomeratively with the similarity ``f`` of eq. 1 (average linkage on
``T + T^T``, ties broken by a seeded random order of the processes as in section 3); every
partition of the dendrogram is scored by ``F_G`` (eq. 3), ``D_G`` (eq. 6) and the grouping
coefficient ``G_c = F_G / D_G`` (section 3.1); the best partition can be mapped to machine
groups.  Modules:

* :mod:`.model` -- validation, :class:`Dendrogram`, :class:`CommTableError`
* :mod:`.io` -- CSV / ``.npy`` / trace readers and writers
* :mod:`.algorithms` -- :func:`cluster_table` (O(N^2) nearest-neighbour chain, numba)
* :mod:`.quality` -- eqs. 2-6, :func:`quality_curve`, :func:`partition_quality`
* :mod:`.mapping` -- :func:`map_clusters_to_groups`
* :mod:`.generators` -- Table 1, CG-, IS-, EP-like and random tables
* :mod:`.verify` -- independent literal implementations (exact arithmetic)
* :mod:`.sweep` -- :func:`characterize` (one run), the tie-break sweep's grid and report
* :mod:`.render` -- Table 2 style text, G_c and dendrogram PNGs
* :mod:`.cli` -- ``stealsearch commclust``
"""
from .algorithms import cluster_table, tie_order
from .generators import cg_like, ep_like, example_table, is_like, paper_table1, random_table
from .io import parse_trace, read_table, write_table_csv, write_trace
from .mapping import map_clusters_to_groups, parse_groups
from .model import CommTableError, Dendrogram, canonical_partition, exchanged_table, validate_table
from .quality import QualityCurve, partition_quality, quality_curve
from .sweep import characterize, run_sweep

__all__ = [
    "CommTableError", "Dendrogram", "QualityCurve", "canonical_partition",
    "cg_like", "characterize", "cluster_table", "ep_like", "example_table", "exchanged_table",
    "is_like", "map_clusters_to_groups", "paper_table1", "parse_groups", "parse_trace",
    "partition_quality", "quality_curve", "random_table", "read_table", "run_sweep",
    "tie_order", "validate_table", "write_table_csv", "write_trace",
]
