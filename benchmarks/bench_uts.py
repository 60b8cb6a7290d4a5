"""UTS benchmark: sequential vs the stealstack on Dask, in one run.

For each tree: R repetitions of sequential, dask with 1 worker, dask with each
requested worker count with stealing, and the largest count without stealing.
Reports medians of search time (the search proper, start-up excluded) and wall time,
nodes/s per worker, speed-ups as ratios against the sequential median of the same
run, and per-worker node balance (std dev, as seed 003 Tables 4.4-4.5).

    python -m stealsearch.benchmarks.bench_uts                    # T1, T3, T1L; 1 and 2 workers
    python -m stealsearch.benchmarks.bench_uts --trees T1 T3 T1L T3L   # `make bench-full`: + T3L (111 M nodes)
    python -m stealsearch.benchmarks.bench_uts --trees T1 T3 T1L --workers 1 2 4 8 16 --runs 3
"""
from __future__ import annotations

import argparse
import statistics

from stealsearch.engine import StealPolicy, solve
from stealsearch.engine.deploy.cluster import dask_client
from stealsearch.problems.uts import PRESETS, UTSProblem

from .common import machine_header, write_section


def run_config(problem, runs, **kw):
    if PRESETS[problem.label][1][0] > 50_000_000:
        runs = ARGS.long_runs
    results = [solve(problem, **kw) for _ in range(runs)]
    expected = PRESETS[problem.label][1][0]
    for r in results:
        assert r.count == expected, (r.count, expected)
        assert r.conservation()["holds"]
    return results


def med(results, attr):
    return statistics.median(getattr(r, attr) for r in results)


def main(argv=None):
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--trees", nargs="+", default=["T1", "T3", "T1L"])
    ap.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--long-runs", type=int, default=3,
                    help="runs for the ~10^8-node trees (T1L, T3L)")
    ap.add_argument("--out", default="benchmarks/results/uts.md")
    args = ap.parse_args(argv)
    global ARGS
    ARGS = args

    rows = []
    with dask_client(workers=max(args.workers)) as client:
        for tree in args.trees:
            problem = UTSProblem.preset(tree)
            solve(problem, backend="sequential", node_limit=10_000)    # warm the kernel
            seq = run_config(problem, args.runs, backend="sequential")
            t_seq, w_seq = med(seq, "search_seconds"), med(seq, "wall_seconds")
            rows.append((tree, "sequential", 1, seq, t_seq, w_seq))
            configs = [(n, True) for n in args.workers] + [(max(args.workers), False)]
            for n, stealing in configs:
                res = run_config(problem, args.runs, client=client, workers=n,
                                 policy=StealPolicy(stealing=stealing))
                label = "dask" if stealing else "dask, no stealing"
                rows.append((tree, label, n, res, t_seq, w_seq))
                print(f"{tree} {label} {n}: {med(res, 'search_seconds'):.3f} s", flush=True)

    lines = [machine_header(), "",
             f"Median of {args.runs} runs per line ({args.long_runs} for T1L/T3L). *search* = the search proper (first worker "
             "starts to last worker stops); *wall* adds dealing, set-up and result gathering on "
             "an already running cluster (cluster start-up, ~1-3 s, is excluded). Speed-ups are "
             "sequential median / this median, from the same run.", "",
             "| tree | backend | workers | nodes | search s | wall s | M nodes/s per worker "
             "| speed-up (search) | speed-up (wall) | node std dev | steals |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for tree, label, n, res, t_seq, w_seq in rows:
        t, w = med(res, "search_seconds"), med(res, "wall_seconds")
        nodes = res[0].nodes
        std = statistics.median(r.node_balance_stddev for r in res)
        steals = statistics.median(sum(x.steals_succeeded for x in r.workers) for r in res)
        lines.append(f"| {tree} | {label} | {n} | {nodes:,} | {t:.3f} | {w:.3f} | "
                     f"{nodes / t / n / 1e6:.2f} | {speedup_text(t_seq, t, n)} | "
                     f"{speedup_text(w_seq, w, n)} | "
                     f"{std:,.0f} | {steals:.0f} |")
    write_section(args.out, "UTS (engine issue)", lines)
    print("\n".join(lines))


from stealsearch.engine.app.timing import speedup_text  # noqa: E402  (a speed-up above n is flagged)


if __name__ == "__main__":
    main()
