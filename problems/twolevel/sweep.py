"""Sweeps of 2LVDSOPT over random instances, run as ordinary Dask tasks.

Seed paper 004, section 2.1 ends with the *trivial solution*: put every critical
sequence in one cluster (the algorithm of its reference [6]).  It has the same
makespan; what 2LVDSOPT buys is fewer processors per cluster.  Each sweep task builds
one random instance, runs 2LVDSOPT and the trivial solution, verifies both with the
independent verifier and returns plain figures; :func:`aggregate` tabulates them per
(DAG kind, size).
"""
from __future__ import annotations

import time

import numpy as np


def sweep_one(kind: str, n: int, seed: int, c2_extra: int = 10) -> dict:
    """One sweep point (a plain module-level function: a Dask task).

    ``c2_extra``: c(2) is drawn as c(1) + U{0..c2_extra} before clipping to
    conditions (2)-(3); 0 makes both levels equal (no arc is tight in c(2) only).
    Example::

        >>> row = sweep_one("layered", 50, 0)
        >>> row["verified"], row["makespan"] == row["lower_bound"] == row["trivial_makespan"]
        (True, True)
    """
    from .algorithms import (build_schedule, critical_sequences, earliest_start_dates,
                            sequence_components)
    from .generators import random_instance
    from .verify import verify_schedule

    inst = random_instance(n, seed=seed, kind=kind, c2_extra=(0, int(c2_extra)))
    t0 = time.perf_counter()
    b = earliest_start_dates(inst)
    forest = critical_sequences(inst, b)
    comps = sequence_components(inst, b, forest)
    sched = build_schedule(inst, b, forest, comps)
    wall = time.perf_counter() - t0
    trivial = build_schedule(inst, b, forest, comps, one_cluster=True)
    rep = verify_schedule(inst, sched)
    rep_t = verify_schedule(inst, trivial)
    ppc = sched.processors_per_cluster()
    return {
        "kind": kind, "n": int(n), "seed": int(seed), "c2_extra": int(c2_extra),
        "arcs": inst.m,
        "clusters": sched.n_clusters, "processors": sched.n_processors,
        "max_processors_per_cluster": int(ppc.max()),
        "mean_processors_per_cluster": float(ppc.mean()),
        "copies": sched.n_copies, "duplication_ratio": sched.n_copies / inst.n,
        "messages": sched.n_messages,
        "inter_cluster_messages": int(np.count_nonzero(sched.msg_level == 2)),
        "makespan": rep.makespan, "lower_bound": rep.lower_bound,
        "verified": rep.feasible, "optimal": rep.optimal,
        "trivial_processors_per_cluster": trivial.n_processors,
        "trivial_makespan": rep_t.makespan, "trivial_verified": rep_t.feasible,
        "wall_seconds": wall,
    }


def run_sweep(client, kinds, sizes, seeds, c2_extras=(10,)) -> list[dict]:
    """Map :func:`sweep_one` over kinds x sizes x c2_extras x seeds on ``client``."""
    points = [(k, n, s, x) for k in kinds for n in sizes for x in c2_extras for s in seeds]
    futures = client.map(sweep_one, *zip(*points), pure=False)
    return client.gather(futures)


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
