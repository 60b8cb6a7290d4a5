"""Benchmark of seed 002 (commclust): clustering + G_c of every partition, N up to 8192.

Run: ``.venv/bin/python -m stealsearch.benchmarks.bench_commclust [--quick]``.
Writes ``benchmarks/results/commclust.md`` and PNGs ``benchmarks/results/commclust_*.png``.

Measured: wall time of :func:`stealsearch.problems.commclust.cluster_table` + :func:`quality_curve`
(the whole dendrogram and F_G/D_G/G_c of all N partitions) on dense random tables (no ties),
CG-like tables (many exact ties) and IS-like tables; median of several runs after a warm-up
call (numba compilation / cache load excluded).  scipy's average linkage on the same random
tables is timed as a reference (C code, no tie rule).  Peak Python-side memory of one run is
taken with tracemalloc.  A tie-break sweep runs as Dask tasks on a LocalCluster of 2 workers.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import tracemalloc
from datetime import datetime, timezone

import numpy as np

from .common import cpu_model as _cpu_model, commit as _commit
from stealsearch.problems.commclust import (cg_like, cluster_table, ep_like, is_like, paper_table1,
                                quality_curve, random_table)
from stealsearch.problems.commclust.render import plot_dendrogram

RESULTS = os.path.join(os.path.dirname(__file__), "results")


def time_pipeline(table, runs: int, seed: int = 0):
    """Median wall and CPU seconds of cluster_table + quality_curve over ``runs`` runs."""
    times, cpus = [], []
    best_m = -1
    for r in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        d = cluster_table(table, seed=seed + r)
        c = quality_curve(table, d)
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        best_m = int(c.n_clusters[c.best_index()])
        del d, c
    return statistics.median(times), times, best_m, statistics.median(cpus)


def time_scipy(table, runs: int) -> float:
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import squareform

    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        e = table + table.T
        np.fill_diagonal(e, 0.0)
        dist = e.max() + 1.0 - e
        np.fill_diagonal(dist, 0.0)
        linkage(squareform(dist, checks=False), method="average")
        times.append(time.perf_counter() - t0)
        del e, dist
    return statistics.median(times)


def peak_memory(table) -> int:
    tracemalloc.start()
    d = cluster_table(table, seed=0)
    quality_curve(table, d)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def plot_gc_grid(path: str) -> list[str]:
    """G_c vs number of clusters for the synthetic tables (the paper's Figures 1-7)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = [("CG-like N=8 (Table 1, Fig. 1)", paper_table1()), ("CG-like N=16 (Fig. 2)", cg_like(16)),
             ("CG-like N=32 (Fig. 3)", cg_like(32)), ("EP-like N=16 (Fig. 4)", ep_like(16, seed=0)),
             ("EP-like N=32 (Fig. 5)", ep_like(32, seed=0)), ("IS-like N=16 (Fig. 6)", is_like(16, seed=0)),
             ("IS-like N=32 (Fig. 7)", is_like(32, seed=0)),
             ("IS-like N=32, diagonal x1.5", is_like(32, seed=0, self_ratio=1.5))]
    fig, axes = plt.subplots(2, 4, figsize=(13, 5.2), dpi=70)
    lines = []
    for ax, (title, t) in zip(axes.flat, cases):
        d = cluster_table(t, seed=0)
        c = quality_curve(t, d)
        m, g = c.n_clusters[::-1], c.G_c[::-1]
        ok = np.isfinite(g)
        ax.plot(m[ok], g[ok], marker="o", markersize=2.5, linewidth=1)
        b = c.best_index()
        ax.plot([c.n_clusters[b]], [c.G_c[b]], "r*", markersize=9)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("clusters", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0, top=1.1 * float(np.nanmax(g[ok])))
        sizes = sorted((len(x) for x in d.partition(b)), reverse=True)
        lines.append(f"| {title} | {c.n_clusters[b]} | {c.G_c[b]:.3g} | {_sizes(sizes)} |")
    axes[0, 0].set_ylabel("$G_c$")
    axes[1, 0].set_ylabel("$G_c$")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return lines


def _sizes(sizes) -> str:
    out = []
    for s in sorted(set(sizes), reverse=True):
        out.append(f"{sizes.count(s)}x{s}")
    return " + ".join(out)


def sweep_figures(seeds: int) -> tuple[list[str], float]:
    from stealsearch.engine.deploy.cluster import dask_client
    from stealsearch.problems.commclust.sweep import run_sweep

    tables = {"CG-like 32": cg_like(32), "CG-like 64": cg_like(64), "EP-like 32": ep_like(32, seed=0),
              "IS-like 32": is_like(32, seed=0), "IS-like 32, exactly uniform": is_like(32, noise=0.0),
              "random 0..3 integers, N=32": np.random.default_rng(0).integers(0, 4, size=(32, 32)),
              "random 256": random_table(256, seed=0)}
    t0 = time.perf_counter()
    with dask_client(workers=2) as client:
        summaries = run_sweep(client, tables, range(seeds))
    wall = time.perf_counter() - t0
    rows = []
    for s in summaries:
        rows.append(f"| {s['table']} | {s['seeds']} | {s['stability']:.2f} | {s['distinct_best_partitions']} "
                    f"| {s['best_n_clusters_counts']} | {s['best_G_c_min']:.4g} .. {s['best_G_c_max']:.4g} "
                    f"| {s['gc_curve_max_spread']:.3g} |")
    return rows, wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only (smoke run)")
    ap.add_argument("--max-n", type=int, default=8192)
    args = ap.parse_args(argv)
    os.makedirs(RESULTS, exist_ok=True)
    started = datetime.now(timezone.utc)
    load = os.getloadavg()[0]
    cluster_table(paper_table1(), seed=0)          # numba compile / cache load
    sizes = [256, 512] if args.quick else [256, 512, 1024, 2048, 4096, 8192]
    sizes = [n for n in sizes if n <= args.max_n]
    perf_rows = []
    for n in sizes:
        runs = 5 if n <= 2048 else (3 if n <= 4096 else 2)
        row = {"n": n}
        for name, make in (("random", lambda: random_table(n, seed=1)), ("cg", lambda: cg_like(n)),
                           ("is", lambda: is_like(n, seed=1))):
            t = np.ascontiguousarray(make(), dtype=np.float64)
            med, times, best_m, cpu = time_pipeline(t, runs)
            row[name] = (med, min(times), max(times), best_m, cpu)
            print(f"N={n} {name}: median {med:.3f} s wall, {cpu:.3f} s CPU over {runs} runs, "
                  f"best {best_m} clusters", flush=True)
            del t
        t = random_table(n, seed=1)
        row["scipy"] = time_scipy(t, 1 if n >= 4096 else 3) if n <= 4096 else None
        if n in (2048, 8192):
            row["mem"] = peak_memory(t)
        del t
        perf_rows.append(row)
    fig_rows = plot_gc_grid(os.path.join(RESULTS, "commclust_gc.png"))
    plot_dendrogram(cluster_table(cg_like(32), seed=0), os.path.join(RESULTS, "commclust_dendrogram_cg32.png"),
                    title="CG-like N = 32: dendrogram (seed 0)")
    sweep_rows, sweep_wall = sweep_figures(8 if args.quick else 32)

    md = ["## commclust (seed 002: Orduña, Arnau, Duato -- characterization of communications)", ""]
    md.append(f"Machine: {platform.machine()}, {_cpu_model()}, {os.cpu_count()} cores, load average "
              f"{load:.2f} at start (shared machine: other benchmarks ran at the same time); "
              f"{started:%Y-%m-%d %H:%M} UTC; commit {_commit()}; Python {sys.version.split()[0]}.")
    md.append("")
    md.append("### Clustering + G_c of every partition")
    md.append("")
    md.append("Wall seconds of `cluster_table` (whole dendrogram, paper's tie rule, O(N^2) "
              "nearest-neighbour chain, one N x N float64 work matrix) + `quality_curve` "
              "(F_G, D_G, G_c of all N partitions); median (min..max) of 5 runs for N <= 2048, "
              "3 for 4096, 2 for 8192, each with another tie-break seed, and the median CPU seconds "
              "of the process (the machine was shared: wall time includes waiting for a core "
              "and for memory bandwidth).  scipy = "
              "`scipy.cluster.hierarchy.linkage(method='average')` on the same random table "
              "(reference, C, no tie rule, no G_c).")
    md.append("")
    md.append("| N | random (no ties) | CG-like (ties) | IS-like | scipy average, random | best #clusters random / CG / IS | peak memory |")
    md.append("|---|---|---|---|---|---|---|")
    for r in perf_rows:
        def cell(k):
            med, lo, hi, _, cpu = r[k]
            return f"{med:.3f} ({lo:.3f}..{hi:.3f}; CPU {cpu:.3f})"
        scipy_cell = f"{r['scipy']:.3f}" if r.get("scipy") is not None else "-"
        mem = f"{r['mem'] / 2**20:.0f} MiB (N^2 x 8 B = {r['n'] ** 2 * 8 / 2**20:.0f} MiB)" if "mem" in r else ""
        md.append(f"| {r['n']} | {cell('random')} | {cell('cg')} | {cell('is')} | {scipy_cell} | "
                  f"{r['random'][3]} / {r['cg'][3]} / {r['is'][3]} | {mem} |")
    n2048 = next((r for r in perf_rows if r["n"] == 2048), None)
    if n2048:
        worst = max(n2048[k][0] for k in ("random", "cg", "is"))
        md.append("")
        md.append(f"Target N = 2048 in under 2 s: slowest table kind median {worst:.3f} s -> "
                  f"{'met' if worst < 2 else 'NOT met'}.")
    md.append("")
    md.append("### G_c per partition on the synthetic tables (paper's Figures 1-7)")
    md.append("")
    md.append("![G_c curves](commclust_gc.png)")
    md.append("")
    md.append("| table | best #clusters | G_c | cluster sizes of the best partition |")
    md.append("|---|---|---|---|")
    md.extend(fig_rows)
    md.append("")
    md.append("![dendrogram CG-32](commclust_dendrogram_cg32.png)")
    md.append("")
    md.append("### Tie-break sweep as Dask tasks")
    md.append("")
    md.append(f"Every (table, seed) pair is one item of the sweep runner (`stealsearch.engine.app.sweep`: an ordinary Dask "
              f"task, the table read from a `.npy` file) on a LocalCluster "
              f"of 2 worker processes; {sweep_wall:.1f} s wall for all tables (cluster start included). "
              "Stability = share of seeds whose best partition equals the most frequent one; spread = "
              "largest difference between two seeds' G_c at the same number of clusters.")
    md.append("")
    md.append("| table | seeds | stability | distinct best partitions | best #clusters: seeds | best G_c range | G_c spread |")
    md.append("|---|---|---|---|---|---|---|")
    md.extend(sweep_rows)
    md.append("")
    path = os.path.join(RESULTS, "commclust.md")
    with open(path, "w") as fh:
        fh.write("\n".join(md))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
