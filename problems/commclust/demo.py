"""The commclust section of ``stealsearch demo``: Table 1 of seed 002 on the cluster."""
from __future__ import annotations

from .sweep import run_sweep
from .algorithms import cluster_table
from .generators import cg_like, paper_table1
from .quality import quality_curve
from .verify import check_dendrogram


def tour(client, workers: int) -> bool:
    print("== Communication clustering (Orduña, Arnau, Duato): the paper's CG table, 8 processes ==")
    table = paper_table1()
    dend = cluster_table(table, seed=0)
    curve = quality_curve(table, dend)
    best = curve.best_index()
    problems = check_dendrogram(table, dend)
    got = sorted(sorted(int(v) for v in c) for c in dend.partition(best))
    print(f"  best partition {got} with G_c = {curve.G_c[best]:.3f} "
          f"at {int(curve.n_clusters[best])} clusters; dendrogram verified: {not problems}")
    sweep = run_sweep(client, {"cg8": table, "cg32": cg_like(32)}, range(8))
    for s in sweep:
        print(f"  {s['table']}: {s['seeds']} tie-break seeds as Dask tasks -> best partition "
              f"stable in {s['stability']:.0%} ({s['modal_n_clusters']} clusters)")
    return not problems and got == [[0, 1, 2, 3], [4, 5, 6, 7]]
