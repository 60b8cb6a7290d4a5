"""One full characterisation run (seed 002, sections 3-4): cluster, score every partition,
pick the best, optionally map it to machine groups; and the tie-break sweep, a grid for the
one sweep runner (:mod:`stealsearch.engine.app.sweep`) with its report (:func:`summarize_sweep`: how stable
the best partition is over the tie-break seeds).
"""
from __future__ import annotations

import math
import time

import numpy as np

from .algorithms import cluster_table
from .mapping import map_clusters_to_groups
from .model import validate_table
from .quality import quality_curve


def _num(x: float):
    """JSON-friendly number: NaN -> None; an infinity stays a float (printed as JSON
    ``null`` by :func:`stealsearch.engine.app.commandline.print_json`, never as a string)."""
    x = float(x)
    if math.isnan(x):
        return None
    return x


def characterize(table, seed: int | None = 0, order=None, groups=None,
                 partition_members_limit: int = 256, validated: bool = False) -> dict:
    """Cluster ``table``, score all partitions, choose the best; a JSON-ready dict.

    ``partitions[k]`` has ``n_clusters``, ``F_G``, ``D_G``, ``G_c`` (``None`` = undefined,
    ``inf`` = no inter-cluster traffic, JSON ``null``) and, when ``N <= partition_members_limit``, its
    ``clusters``; ``merges`` (``[a, b, f]`` with scipy's cluster ids) always describe them all.

    >>> from stealsearch.problems.commclust.generators import paper_table1
    >>> r = characterize(paper_table1(), seed=3)
    >>> r["best"]["n_clusters"], sorted(map(sorted, r["best"]["clusters"]))
    (2, [[0, 1, 2, 3], [4, 5, 6, 7]])
    """
    start = time.perf_counter()
    t = table if validated else validate_table(table)
    dend = cluster_table(t, seed=seed, order=order, validated=True)
    curve = quality_curve(t, dend, validated=True)
    best = curve.best_index()
    elapsed_core = time.perf_counter() - start
    n = dend.n
    parts = []
    with_members = n <= partition_members_limit
    for k in range(n):
        entry = {"index": k, "n_clusters": int(curve.n_clusters[k]), "F_G": _num(curve.F_G[k]),
                 "D_G": _num(curve.D_G[k]), "G_c": _num(curve.G_c[k])}
        if with_members:
            entry["clusters"] = dend.partition(k)
        parts.append(entry)
    best_clusters = dend.partition(best)
    result = {
        "n_processes": n,
        "seed": seed,
        "tie_order": dend.order.tolist(),
        "merges": [[int(a), int(b), float(f)] for (a, b), f in zip(dend.merges, dend.f)],
        "partitions": parts,
        "best": {"index": best, "n_clusters": int(curve.n_clusters[best]),
                 "G_c": _num(curve.G_c[best]), "F_G": _num(curve.F_G[best]),
                 "D_G": _num(curve.D_G[best]), "clusters": best_clusters},
        "ranking": [int(k) for k in curve.ranking()],
        "core_seconds": elapsed_core,
    }
    if groups:
        result["mapping"] = map_clusters_to_groups(t, best_clusters, groups)
    result["wall_seconds"] = time.perf_counter() - start
    result["_dendrogram"] = dend
    result["_curve"] = curve
    return result


def public(result: dict) -> dict:
    """The result without the in-memory objects (for JSON)."""
    return {k: v for k, v in result.items() if not k.startswith("_")}


#: The item kind of this package's sweeps (stealsearch.engine.app.sweep resolves it where an item runs).
KINDS = {"commclust": "stealsearch.problems.commclust.sweep_items:commclust"}

#: the name of the ``commclust sweep`` table: OUT/commclust_sweep.csv
GRID_NAME = "commclust_sweep"


def sweep_grid(tie_seeds, *, files=(), examples=(), example_seed: int = 0, fmt: str | None = None,
               name: str = GRID_NAME) -> dict:
    """The grid (table x tie-break seed) for :mod:`stealsearch.engine.app.sweep`: every item clusters one
    table with one tie-break seed and checks the best partition's G_c against the literal
    double sums (:func:`stealsearch.problems.commclust.sweep_items.commclust` with ``curve``).
    ``files``: table files (paths as the user wrote them); ``examples``: example names,
    drawn with ``example_seed``."""
    seeds = [int(s) for s in tie_seeds]
    blocks = []
    if files:
        inst = {"file": list(files)}
        if fmt is not None:
            inst["format"] = fmt
        blocks.append({"kind": "commclust", "instance": inst,
                       "settings": {"tie_seed": seeds, "curve": True}})
    if examples:
        blocks.append({"kind": "commclust",
                       "instance": {"table": list(examples), "seed": int(example_seed)},
                       "settings": {"tie_seed": seeds, "curve": True}})
    return {"name": name, "items": blocks}


def sweep_runs(outcomes) -> dict:
    """The finished items of a sweep, per table label (the file as written or the example
    name), as the runs :func:`summarize_sweep` reads."""
    out: dict = {}
    for o in outcomes:
        if not o.ok:
            continue
        p, f = o.item.columns, o.figures
        label = p["file"] if "file" in p else p["table"]
        gc = f["G_c"]
        out.setdefault(label, []).append({
            "seed": p["tie_seed"], "best_index": f["best_index"], "n_clusters": f["n_clusters"],
            "G_c": None if isinstance(gc, float) and math.isnan(gc) else gc,
            "best_partition": f["best_partition"], "gc_curve": f["gc_curve"],
            "seconds": f["algorithm_seconds"]})
    return out


def summarize_sweep(label: str, runs: list[dict]) -> dict:
    """Stability of the best partition over the tie-break seeds of one table.

    >>> s = summarize_sweep("t", [{"seed": 0, "n_clusters": 2, "G_c": 3.0,
    ...     "best_partition": [[0], [1]], "gc_curve": [1.0, None], "seconds": 0.1}])
    >>> s["stability"], s["distinct_best_partitions"]
    (1.0, 1)
    """
    counts: dict = {}
    for r in runs:
        key = tuple(tuple(c) for c in r["best_partition"])
        counts.setdefault(key, []).append(r["seed"])
    modal, seeds = max(counts.items(), key=lambda kv: (len(kv[1]), -min(s for s in kv[1])))
    gcs = [r["G_c"] for r in runs if isinstance(r["G_c"], (int, float))]
    curves = [np.array([np.nan if v is None else v for v in r["gc_curve"]])
              for r in runs]
    spread = 0.0
    if len(curves) > 1:
        stack = np.vstack(curves)
        finite = np.isfinite(stack).all(axis=0)
        if finite.any():
            spread = float((stack[:, finite].max(axis=0) - stack[:, finite].min(axis=0)).max())
    m_counts: dict = {}
    for r in runs:
        m_counts[r["n_clusters"]] = m_counts.get(r["n_clusters"], 0) + 1
    return {
        "table": label,
        "seeds": len(runs),
        "distinct_best_partitions": len(counts),
        "stability": len(seeds) / len(runs),
        "modal_best_partition": [list(c) for c in modal],
        "modal_n_clusters": len(modal),
        "modal_seeds": sorted(seeds)[:20],
        "best_n_clusters_counts": {str(k): v for k, v in sorted(m_counts.items())},
        "best_G_c_min": min(gcs) if gcs else None,
        "best_G_c_max": max(gcs) if gcs else None,
        "gc_curve_max_spread": spread,
        "task_seconds_total": float(sum(r["seconds"] for r in runs)),
    }


def run_sweep(client, tables: dict, seeds) -> list[dict]:
    """Every (table, tie-break seed) through the sweep runner (small items as Dask tasks
    on ``client``, here when ``None``); one :func:`summarize_sweep` per table.  The tables
    (label -> array) travel as ``.npy`` files in a temporary folder, read by each item.
    A failing item raises."""
    import tempfile
    from pathlib import Path

    from stealsearch.engine.app.sweep import run_grid

    with tempfile.TemporaryDirectory(prefix="commclust-sweep-") as tmp:
        paths = {}
        for i, (label, table) in enumerate(tables.items()):
            path = str(Path(tmp) / f"table{i}.npy")
            np.save(path, validate_table(table, source=label))
            paths[path] = label
        run = run_grid(sweep_grid(seeds, files=list(paths)), KINDS, client=client)
    if run.failed:
        o = run.failed[0]
        raise RuntimeError(f"commclust sweep item {paths.get(o.item.columns.get('file'))} "
                           f"{o.status}: {o.error}")
    runs = sweep_runs(run.outcomes)
    return [summarize_sweep(paths[path], runs.get(path, [])) for path in paths]
