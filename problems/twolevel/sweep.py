"""Sweeps of 2LVDSOPT over random instances: a grid for the one sweep runner
(:mod:`stealsearch.engine.app.sweep`) and the report over its table.

Seed paper 004, section 2.1 ends with the *trivial solution*: put every critical
sequence in one cluster (the algorithm of its reference [6]).  It has the same
makespan; what 2LVDSOPT buys is fewer processors per cluster.  Each sweep item builds
one random instance, runs 2LVDSOPT and the trivial solution, verifies both with the
independent verifier and returns plain figures
(:func:`stealsearch.problems.twolevel.sweep_items.twolevel`); :func:`aggregate` tabulates them per
(DAG kind, size).
"""
from __future__ import annotations

import numpy as np


#: The item kind of this package's sweeps (stealsearch.engine.app.sweep resolves it where an item runs).
KINDS = {"twolevel": "stealsearch.problems.twolevel.sweep_items:twolevel"}

#: the name of the ``twolevel sweep`` table: OUT/twolevel_sweep.csv
GRID_NAME = "twolevel_sweep"


def sweep_grid(kinds, sizes, seeds, c2_extras=(10,), name: str = GRID_NAME) -> dict:
    """The grid kind x n x c2_extra x seed for :mod:`stealsearch.engine.app.sweep`: every item builds one
    random DAG, schedules it with 2LVDSOPT and with the trivial solution, and verifies
    both (:func:`stealsearch.problems.twolevel.sweep_items.twolevel` with ``trivial``)."""
    return {"name": name, "items": [{
        "kind": "twolevel",
        "instance": {"kind": [str(k) for k in kinds], "n": [int(n) for n in sizes],
                     "c2_extra": [int(x) for x in c2_extras], "seed": [int(s) for s in seeds]},
        "settings": {"trivial": True}}]}


def records(outcomes) -> list[dict]:
    """The finished items of a sweep (:class:`stealsearch.engine.app.sweep.ItemOutcome`) as the rows
    :func:`aggregate` reads (an item that finished is verified and at the lower bound:
    the item raises otherwise)."""
    out = []
    for o in outcomes:
        if not o.ok:
            continue
        p, f = o.item.columns, o.figures
        out.append({"kind": p["kind"], "n": p["n"], "seed": p["seed"], "c2_extra": p["c2_extra"],
                    **{k: f[k] for k in (
                        "arcs", "clusters", "processors", "max_processors_per_cluster",
                        "mean_processors_per_cluster", "copies", "duplication_ratio",
                        "messages", "inter_cluster_messages", "makespan", "lower_bound",
                        "verified", "trivial_processors_per_cluster", "trivial_makespan",
                        "trivial_verified")},
                    "optimal": f["makespan"] == f["lower_bound"],
                    "wall_seconds": f["algorithm_seconds"]})
    return out


def run_sweep(client, kinds, sizes, seeds, c2_extras=(10,), out=None) -> list[dict]:
    """The grid through the sweep runner (small items as Dask tasks on ``client``, here
    when ``None``); the rows of :func:`records`.  A failing item raises."""
    from stealsearch.engine.app.sweep import run_grid

    run = run_grid(sweep_grid(kinds, sizes, seeds, c2_extras), KINDS, client=client, out=out)
    if run.failed:
        o = run.failed[0]
        raise RuntimeError(f"twolevel sweep item {o.item.columns} {o.status}: {o.error}")
    return records(run.outcomes)


def aggregate(rows: list[dict]) -> list[dict]:
    """One line per (kind, n, c2_extra): means over seeds, and how many runs verified /
    reached the lower bound."""
    out = []
    keys = sorted({(r["kind"], r["n"], r["c2_extra"]) for r in rows})
    for kind, n, extra in keys:
        rs = [r for r in rows if (r["kind"], r["n"], r["c2_extra"]) == (kind, n, extra)]
        mean = lambda f: float(np.mean([r[f] for r in rs]))  # noqa: E731
        out.append({
            "kind": kind, "n": n, "c2_extra": extra, "runs": len(rs),
            "clusters": mean("clusters"),
            "procs_per_cluster_max": mean("max_processors_per_cluster"),
            "procs_per_cluster_mean": mean("mean_processors_per_cluster"),
            "trivial_procs_per_cluster": mean("trivial_processors_per_cluster"),
            "duplication_ratio": mean("duplication_ratio"),
            "inter_cluster_share": float(np.sum([r["inter_cluster_messages"] for r in rs])
                                         / max(1, np.sum([r["messages"] for r in rs]))),
            "makespan": mean("makespan"),
            "trivial_makespan": mean("trivial_makespan"),
            "verified": sum(r["verified"] and r["trivial_verified"] for r in rs),
            "at_lower_bound": sum(r["optimal"] for r in rs),
            "wall_seconds": mean("wall_seconds"),
        })
    return out


def format_table(agg: list[dict]) -> str:
    """Plain-text table of :func:`aggregate` output."""
    head = ("kind", "n", "c2+", "runs", "clusters", "ppc max", "ppc mean", "trivial ppc", "dup",
            "inter%", "Cmax", "trivial Cmax", "verified", "=LB", "ms")
    lines = [head]
    for a in agg:
        lines.append((a["kind"], str(a["n"]), str(a["c2_extra"]), str(a["runs"]),
                      f"{a['clusters']:.1f}",
                      f"{a['procs_per_cluster_max']:.1f}", f"{a['procs_per_cluster_mean']:.1f}",
                      f"{a['trivial_procs_per_cluster']:.1f}", f"{a['duplication_ratio']:.2f}",
                      f"{100 * a['inter_cluster_share']:.1f}", f"{a['makespan']:.1f}",
                      f"{a['trivial_makespan']:.1f}", f"{a['verified']}/{a['runs']}",
                      f"{a['at_lower_bound']}/{a['runs']}", f"{1000 * a['wall_seconds']:.1f}"))
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in lines)
