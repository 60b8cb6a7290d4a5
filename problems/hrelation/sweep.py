"""Running the algorithms of seed 001 as ordinary Dask tasks, and the sweep plot.

``run_algorithm`` and ``sweep_task`` are plain module-level functions over plain data (numpy
arrays, ints, strings), so ``client.submit``/``client.map`` can ship them to any worker.
A sweep is the grid P x h x skew x seed; every task builds its random instance, runs the
chosen algorithms, verifies each schedule with the independent verifier and returns one row
per algorithm.  ``plot_sweep`` draws length/h per algorithm against P (one panel per skew).
"""
from __future__ import annotations

import itertools
import math
import time

import numpy as np

from .algorithms import ALGORITHMS, upper_bound
from .bounds import load_lower_bound
from .generators import random_instance
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


def sweep_task(P: int, h: int, skew: float, seed: int, algorithms: tuple) -> list:
    """One grid point: a random instance and one verified record per algorithm."""
    m = random_instance(P, h, seed=seed, skew=skew, zero_rows=1 if skew > 0 else 0)
    rows = []
    for name in algorithms:
        rec = run_algorithm(m, name)
        rec.update(skew=skew, seed=seed, target_h=h)
        rec.pop("verify_errors", None)
        rows.append(rec)
    return rows


def sweep_grid(Ps, hs, skews, seeds: int):
    return list(itertools.product(Ps, hs, skews, range(seeds)))


def run_sweep(client, Ps, hs, skews, seeds: int, algorithms) -> list:
    """Submit the grid as Dask tasks (``client.map``) and gather the records."""
    grid = sweep_grid(Ps, hs, skews, seeds)
    algos = tuple(algorithms)
    futures = client.map(sweep_task, [g[0] for g in grid], [g[1] for g in grid],
                         [g[2] for g in grid], [g[3] for g in grid], [algos] * len(grid),
                         pure=False)
    rows = []
    for part in client.gather(futures):
        rows.extend(part)
    return rows


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


def parse_list(text: str, kind=int, what: str = "list") -> list:
    """'8,16,32' -> [8, 16, 32] (raises ValueError with a short message)."""
    out = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.append(kind(part))
        except ValueError:
            raise ValueError(f"{what}: {part!r} is not a valid {kind.__name__}") from None
    if not out:
        raise ValueError(f"empty {what}")
    return out


def nan_to_none(x):
    return None if isinstance(x, float) and math.isnan(x) else x
