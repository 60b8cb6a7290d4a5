"""Text and PNG output for seed 002: the dendrogram as the paper's Table 2, the G_c curve as its
Figures 1-7, and a drawn dendrogram (scipy.cluster.hierarchy.dendrogram).

Text format (Table 2 style)::

    Partition 0:  (0) (2) (4) ...                      8 clusters  G_c = 0.556
    Partition 1:  (0,2) (4) (6) (1) (5) (3) (7)        7 clusters  G_c = 1.236

Clusters are listed by the position of their first node in the random tie-break order, members
in merge order, as Table 2 lists them.  The drawn dendrogram's height is ``f_1 - f`` (``f_1`` is
the first merge's eq. 1 value) so that the drawing grows upwards as ``f`` falls.
"""
from __future__ import annotations

import math

import numpy as np

from .model import Dendrogram
from .quality import QualityCurve


def format_gc(value: float) -> str:
    if math.isnan(value):
        return "undefined"
    if math.isinf(value):
        return "inf"
    return f"{value:.4g}"


def dendrogram_text(dendrogram: Dendrogram, curve: QualityCurve | None = None,
                    partitions=None) -> str:
    """The dendrogram as lines ``Partition k: (..) (..)`` (all ``N`` partitions by default).

    >>> from stealsearch.problems.commclust.generators import paper_table1
    >>> from stealsearch.problems.commclust.algorithms import cluster_table
    >>> d = cluster_table(paper_table1(), order=[0, 2, 4, 6, 1, 5, 3, 7])
    >>> print(dendrogram_text(d, partitions=[1, 6]))
    Partition 1: (0,2) (4) (6) (1) (5) (3) (7)
    Partition 6: (0,2,1,3) (4,6,5,7)
    """
    ks = range(dendrogram.n) if partitions is None else partitions
    lines = []
    bodies = {}
    for k in ks:
        bodies[k] = " ".join("(" + ",".join(str(p) for p in c) + ")" for c in dendrogram.partition(k))
    width = max((len(b) for b in bodies.values()), default=0)
    for k in ks:
        line = f"Partition {k}: {bodies[k]}"
        if curve is not None:
            line = f"{line:<{width + 16}}  {dendrogram.n - k:>4} clusters  G_c = {format_gc(curve.G_c[k])}"
        lines.append(line.rstrip())
    return "\n".join(lines)


def plot_gc(curve: QualityCurve, path: str, title: str = "", best: int | None = None) -> None:
    """G_c against the number of clusters (the paper's Figures 1-7), written as a PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = curve.n_clusters[::-1]
    gc = curve.G_c[::-1]
    finite = np.isfinite(gc)
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=90)
    ax.plot(m[finite], gc[finite], marker="o", markersize=3, linewidth=1.2)
    if best is not None and np.isfinite(curve.G_c[best]):
        ax.plot([curve.n_clusters[best]], [curve.G_c[best]], marker="*", markersize=12,
                color="tab:red", linestyle="none", label=f"best: {curve.n_clusters[best]} clusters")
        ax.legend(loc="best", fontsize=8)
    if finite.any():
        ax.set_ylim(bottom=0, top=1.1 * float(np.max(gc[finite])))
    ax.set_xlabel("number of clusters")
    ax.set_ylabel("grouping coefficient $G_c$")
    ax.set_title(title or "Grouping coefficient per partition", fontsize=10)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_dendrogram(dendrogram: Dendrogram, path: str, title: str = "") -> None:
    """Draw the dendrogram with scipy (leaves labelled by process) as a PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy.cluster.hierarchy import dendrogram as scipy_dendrogram

    z = dendrogram.linkage_matrix()
    n = dendrogram.n
    width = max(5.0, min(12.0, 3 + 0.12 * n))
    fig, ax = plt.subplots(figsize=(width, 3.8), dpi=90)
    scipy_dendrogram(z, ax=ax, no_labels=n > 128, leaf_font_size=8 if n <= 32 else 5,
                     color_threshold=0)
    ax.set_ylabel("$f_1 - f$ (eq. 1)")
    ax.set_xlabel("process")
    # a long title (a file's path) wrapped to the figure's width, never clipped
    import textwrap

    ax.set_title("\n".join(textwrap.wrap(title or "Dendrogram", width=int(width * 11))),
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
