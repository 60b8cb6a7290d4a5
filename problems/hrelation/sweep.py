"""The algorithms of seed 001 as plain functions, and the ``hrel sweep`` grid and report.

``run_algorithm`` is a plain module-level function over plain data (numpy arrays, ints,
strings), so the CLI can ship it to any worker as a Dask task.  A sweep is a grid for the
one sweep runner (:mod:`stealsearch.engine.app.sweep`): P x h x skew x seed x algorithm, one item per
schedule (:func:`stealsearch.problems.hrelation.sweep_items.hrelation` builds the instance, schedules
and verifies it).  :func:`records` turns the runner's outcomes into the rows that
:func:`summarise` and :func:`plot_sweep` (length/h per algorithm against P, one panel per
skew) read.
"""
from __future__ import annotations

import time

import numpy as np

from .algorithms import ALGORITHMS, upper_bound
from .bounds import load_lower_bound
from .verify import verify_schedule


def run_algorithm(m, algorithm: str, verify: bool = True, keep_schedule: bool = False) -> dict:
    """Schedule ``m`` with one algorithm; the record the CLI prints.

    >>> r = run_algorithm([[0, 1, 0], [0, 0, 1], [1, 0, 0]], "direct")
    >>> r["P"], r["h"], r["length"], r["bound"], r["verified"]
    (3, 2, 3.0, 3.0, True)
    """
    m = np.asarray(m, dtype=np.int64)
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}")
    _warm(algorithm)       # the time printed is the algorithm's, not numba's cache loading
    t0 = time.perf_counter()
    schedule = ALGORITHMS[algorithm](m)
    wall = time.perf_counter() - t0
    h = load_lower_bound(m)
    rec = {"P": int(m.shape[0]), "h": h, "algorithm": algorithm, "length": schedule.length,
           "length_over_h": schedule.length / h if h else None,
           "bound": upper_bound(algorithm, m), "lower_bound": h,
           "rounds": schedule.num_rounds, "transfers": int(len(schedule.transfers)),
           "wall_seconds": wall}
    if verify:
        t1 = time.perf_counter()
        v = verify_schedule(schedule, m)
        rec["verified"] = v.ok
        rec["verify_errors"] = v.errors
        rec["verify_seconds"] = time.perf_counter() - t1
    else:
        rec["verified"] = None
    if keep_schedule:
        rec["schedule"] = schedule
    return rec


#: Algorithms already run once in this process (their numba kernels loaded).
_WARM: set = set()


def _warm(algorithm: str) -> None:
    """Run ``algorithm`` once on a 4-processor instance, untimed, the first time this
    process (the CLI's, or a Dask worker's) needs it: a first call loads its kernels
    from numba's cache (many times the time of a small instance's schedule), and that
    belongs to no schedule."""
    if algorithm in _WARM:
        return
    from .generators import random_instance

    ALGORITHMS[algorithm](random_instance(4, 6, seed=0))
    _WARM.add(algorithm)


#: The item kind of this package's sweeps (stealsearch.engine.app.sweep resolves it where an item runs).
KINDS = {"hrelation": "stealsearch.problems.hrelation.sweep_items:hrelation"}

#: the name of the ``hrel sweep`` table: OUT/hrel_sweep.csv
GRID_NAME = "hrel_sweep"


def sweep_grid(Ps, hs, skews, seeds, algorithms, name: str = GRID_NAME) -> dict:
    """The grid P x h x skew x seed x algorithm for :mod:`stealsearch.engine.app.sweep`: every item builds
    its random instance (one empty row when skewed), schedules it with one algorithm and
    verifies the schedule (:mod:`stealsearch.problems.hrelation.sweep_items`).  ``seeds``: the seeds."""
    return {"name": name, "items": [{
        "kind": "hrelation",
        "instance": {"P": [int(P) for P in Ps], "h": [int(h) for h in hs],
                     "skew": [float(s) for s in skews], "seed": [int(s) for s in seeds]},
        "settings": {"algorithm": [str(a) for a in algorithms]}}]}


def records(outcomes) -> list:
    """The finished items of a sweep (:class:`stealsearch.engine.app.sweep.ItemOutcome`) as the records
    :func:`summarise` and :func:`plot_sweep` read: ``h`` is the instance's load (the
    lower bound), ``target_h`` the grid's h."""
    out = []
    for o in outcomes:
        if not o.ok:
            continue
        p, f = o.item.columns, o.figures
        out.append({"P": p["P"], "h": f["load"], "algorithm": p["algorithm"],
                    "length": f["length"], "length_over_h": f["length_over_h"],
                    "bound": f["bound"], "lower_bound": f["load"], "rounds": f["rounds"],
                    "transfers": f["transfers"], "wall_seconds": f["algorithm_seconds"],
                    "verified": f["verified"], "skew": p["skew"], "seed": p["seed"],
                    "target_h": p["h"]})
    return out


def run_sweep(client, Ps, hs, skews, seeds: int, algorithms, out=None) -> list:
    """The grid with seeds 0..seeds-1 through the sweep runner (small items as Dask tasks
    on ``client``, here when ``None``); the verified records.  A failing item raises."""
    from stealsearch.engine.app.sweep import run_grid

    run = run_grid(sweep_grid(Ps, hs, skews, range(seeds), algorithms), KINDS,
                   client=client, out=out)
    if run.failed:
        o = run.failed[0]
        raise RuntimeError(f"h-relation sweep item {o.item.columns} {o.status}: {o.error}")
    return records(run.outcomes)


def summarise(rows: list) -> list:
    """Mean length/h per (algorithm, P, skew)."""
    groups: dict = {}
    for r in rows:
        if r["length_over_h"] is None:
            continue
        groups.setdefault((r["algorithm"], r["P"], r["skew"]), []).append(r["length_over_h"])
    return [{"algorithm": a, "P": P, "skew": s, "mean_length_over_h": float(np.mean(v)),
             "max_length_over_h": float(np.max(v)), "n": len(v)}
            for (a, P, s), v in sorted(groups.items())]


def plot_sweep(rows: list, path: str, title: str = "h-relation schedules (seed 001)") -> None:
    """length/h against P, one line per algorithm, one panel per skew; dashed lines at
    the paper's 3/2 (direct) and 6/5 (forwarding) asymptotes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = summarise(rows)
    skews = sorted({s["skew"] for s in summary})
    algos = [a for a in ALGORITHMS if any(s["algorithm"] == a for s in summary)]
    fig, axes = plt.subplots(1, max(1, len(skews)), figsize=(4.2 * max(1, len(skews)), 3.4),
                             sharey=True, squeeze=False)
    for ax, skew in zip(axes[0], skews):
        for a in algos:
            pts = sorted((s["P"], s["mean_length_over_h"]) for s in summary
                         if s["algorithm"] == a and s["skew"] == skew)
            if pts:
                ax.plot([p for p, _ in pts], [y for _, y in pts], marker="o", ms=3, label=a)
        ax.axhline(1.5, ls="--", lw=0.8, color="grey")
        ax.axhline(1.2, ls=":", lw=0.8, color="grey")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("P")
        ax.set_title(f"skew {skew:g}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("schedule length / h")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
