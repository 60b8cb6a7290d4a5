"""Benchmark of stealsearch.problems.hrelation (seed 001, Sanders & Solis-Oba, "How helpers hasten h-relations").

Run: ``.venv/bin/python -m stealsearch.benchmarks.bench_hrelation [--quick]``

Writes ``benchmarks/results/hrelation.md`` and ``benchmarks/results/hrelation_sweep.png``:

1. length/h of every algorithm on random instances, P in {8, 16, 32, 64, 65}, several h,
   uniform and skewed message lengths (the grid runs as Dask tasks, ``sweep.run_sweep``);
2. the §3.3 three-cycle family where every direct schedule needs 3/2 h: forwarding against
   direct (the paper's factor up to 5/4) and against the §3.3 lower bound;
3. speed: ``weighted`` on P = 64, h = 10^4 and ``regular`` on the P = 1024 all-to-all (median
   of several runs, wall and CPU seconds; the CPU time is the better figure on a loaded machine).
Every schedule in the report passed the independent verifier.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from stealsearch.engine.deploy.cluster import dask_client
from stealsearch.problems.hrelation import (ALGORITHMS, all_to_all, load_lower_bound, random_instance,
                                regular, three_cycle_family, three_cycle_lower_bound,
                                verify_schedule, weighted)
from stealsearch.problems.hrelation.sweep import plot_sweep, run_sweep, summarise

from .common import commit, cpu_model  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> str:
    load = os.getloadavg()[0]
    return (f"{platform.machine()}, {cpu_model()}, {os.cpu_count()} cores, load average "
            f"{load:.2f} at start; {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; "
            f"commit {commit()}")


def timed(fn, runs: int):
    walls, cpus, out = [], [], None
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), out


def plot_family(fam_rows, path) -> None:
    """length/h on the three-cycle family (h = 100) against P, with the §3.3 lower bound."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = sorted((P, lb / h, res) for P, h, lb, res in fam_rows if h == 100)
    fig, ax = plt.subplots(figsize=(5.2, 3.3))
    for a, style in (("direct", "s-"), ("naive", "x--"), ("forwarding", "o-"), ("weighted", ".:")):
        for parity, label in ((0, "even P"), (1, "odd P")):
            xs = [P for P, _, _ in pts if P % 2 == parity]
            ys = [res[a] / 100 for P, _, res in pts if P % 2 == parity]
            ax.plot(xs, ys, style, ms=4, label=f"{a} ({label})")
    for parity in (0, 1):
        xs = [P for P, _, _ in pts if P % 2 == parity]
        ax.plot(xs, [lb for P, lb, _ in pts if P % 2 == parity], "k-", lw=0.8,
                label="lower bound (§3.3)" if parity == 0 else None)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("P (= 3k PEs in triangles)")
    ax.set_ylabel("schedule length / h")
    ax.set_title("three-cycle family, h = 100", fontsize=9)
    ax.legend(fontsize=6, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller grid (smoke test)")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    header = machine()
    lines = ["## h-relations (seed 001: Sanders & Solis-Oba)", "", f"Machine: {header}.", ""]

    # 1. random grid as Dask tasks -------------------------------------------------------
    Ps = [8, 16, 32, 64, 65]
    hs = [16, 64] if args.quick else [16, 64, 256]
    skews = [0.0, 1.5]
    seeds = 1 if args.quick else 3
    algos = list(ALGORITHMS)
    t0 = time.perf_counter()
    with dask_client(workers=args.workers) as client:
        rows = run_sweep(client, Ps, hs, skews, seeds, algos)
    sweep_wall = time.perf_counter() - t0
    assert all(r["verified"] for r in rows), "a schedule failed verification"
    png = RESULTS / "hrelation_sweep.png"
    plot_sweep(rows, str(png), title="length / h on random instances (mean over h and seeds)")
    summ = summarise(rows)
    lines += ["### length / h on random instances",
              "",
              f"{len(rows)} schedules ({len(rows) // len(algos)} Dask tasks on {args.workers} workers, "
              f"{sweep_wall:.1f} s), h in {hs}, {seeds} seed(s) per point; skew 0 = uniform lengths, "
              "skew 1.5 = log-normal lengths with one silent PE.  Mean (max) of length/h; every "
              "schedule verified.",
              ""]
    head = "| skew | P | " + " | ".join(algos) + " |"
    lines += [head, "|" + "---|" * (len(algos) + 2)]
    for skew in skews:
        for P in Ps:
            cells = []
            for a in algos:
                s = next(x for x in summ if x["algorithm"] == a and x["P"] == P and x["skew"] == skew)
                cells.append(f"{s['mean_length_over_h']:.3f} ({s['max_length_over_h']:.3f})")
            lines.append(f"| {skew:g} | {P} | " + " | ".join(cells) + " |")
    lines += ["", "On random instances the greedy direct exchange (``naive``, pre-emptive, heaviest pairs "
              "first) already reaches the trivial bound h, and the paper's schedules stay well inside "
              "their guarantees (3/2 and 6/5 + O(1/h)); the guarantees matter on odd-cycle structure "
              "(next section), where every direct schedule, naive included, needs 3/2 h.  ``two-phase`` "
              "forwards almost every packet and pays about 2h, more with skew.", "",
              f"![length/h]({png.name})", ""]
    # per-h table for forwarding vs direct (the +O(1) terms shrink with h)
    lines += ["length/h of direct / forwarding / weighted by h (mean over P, skew, seeds):", "",
              "| h | direct | forwarding | weighted | bound direct 3ceil(h/2)/h | bound forwarding (even P) |",
              "|---|---|---|---|---|---|"]
    for h in hs:
        vals = {a: np.mean([r["length_over_h"] for r in rows if r["algorithm"] == a and r["target_h"] == h
                            and r["length_over_h"] is not None]) for a in ("direct", "forwarding", "weighted")}
        lines.append(f"| {h} | {vals['direct']:.3f} | {vals['forwarding']:.3f} | {vals['weighted']:.3f} | "
                     f"{3 * -(-h // 2) / h:.3f} | {12 / 5 * -(-h // 2) / h:.3f} |")
    lines.append("")

    # 2. the 3-cycle family ---------------------------------------------------------------
    lines += ["### The §3.3 three-cycle family (every direct schedule needs 3/2 h)", "",
              "| P | h | lower bound | direct | naive | forwarding | weighted | direct / forwarding |",
              "|---|---|---|---|---|---|---|---|"]
    fam = [(6, 10), (6, 100), (12, 100), (24, 100), (48, 100), (66, 100), (9, 100), (15, 100), (33, 100), (63, 100)]
    fam_rows = []
    for P, h in fam:
        m = three_cycle_family(P // 3, h)
        res = {}
        for a in ("direct", "naive", "forwarding", "weighted"):
            s = ALGORITHMS[a](m)
            assert verify_schedule(s, m).ok
            res[a] = s.length
        lb = three_cycle_lower_bound(P, h)
        fam_rows.append((P, h, lb, res))
        lines.append(f"| {P} | {h} | {lb:.2f} | {res['direct']:.1f} | {res['naive']:.1f} | "
                     f"{res['forwarding']:.1f} | {res['weighted']:.1f} | {res['direct'] / res['forwarding']:.3f} |")
    fam_png = RESULTS / "hrelation_three_cycles.png"
    plot_family(fam_rows, fam_png)
    lines += ["", "Direct schedules cannot beat 3h/2 here (one transfer per triangle at a time); "
              "forwarding reaches the lower bound 6h/5 for even P, a factor 5/4 faster.  For odd P the "
              "gap to the lower bound is the 2/P term of Theorem 3.1 (flushes of the matching M).", "",
              f"![three-cycle family]({fam_png.name})", ""]

    # 3. speed ----------------------------------------------------------------------------
    runs = 3 if args.quick else 5
    lines += ["### Speed (median of %d runs; CPU seconds are the better figure on a loaded machine)" % runs, "",
              "| case | schedule wall s | schedule CPU s | rounds | transfers | length/h | verify wall s |",
              "|---|---|---|---|---|---|---|"]
    weighted(np.array([[0, 1], [1, 0]]))  # load the compiled kernels once
    cases = [("weighted, P=64, h=10^4, uniform", random_instance(64, 10**4, seed=1), weighted),
             ("weighted, P=64, h=10^4, skew 2", random_instance(64, 10**4, seed=1, skew=2.0), weighted),
             ("weighted, P=64, m_ij up to 10^6 (h=6.3e7)", all_to_all(64, 1) * 10**6 -
              np.eye(64, dtype=np.int64) * 0, weighted),
             ("regular, P=1024 all-to-all", all_to_all(1024, 1), regular)]
    for name, m, fn in cases:
        wall, cpu, s = timed(lambda: fn(m), runs)
        vw, _, v = timed(lambda: verify_schedule(s, m), 1)
        assert v.ok, name
        lines.append(f"| {name} | {wall:.3f} | {cpu:.3f} | {s.num_rounds} | {len(s.transfers)} | "
                     f"{s.length / load_lower_bound(m):.4f} | {vw:.2f} |")
    lines.append("")
    text = "\n".join(lines)
    (RESULTS / "hrelation.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
