"""A narrow tree at the issue's scale (issue #21 item 3): is every worker busy >= 90% of the
search with the default policy, on 2 lanes and on 2 Dask workers?

    python -m stealsearch.benchmarks.bench_narrow [--rounds 3] [--matched 29] [--p 0.01]
        [--seed 1] [--k 31]

The tree: minimum vertex cover's branching (examples/vertex_cover.py, enumerate mode,
covers of at most ``k`` vertices) on G(62, p) plus ``matched`` disjoint edges
(:func:`examples.vertex_cover.matched_graph`): binary, at most ``k`` deep, so its stack
never holds more than ``k + 1`` <= 32 rows, the default release threshold (checked): the
default policy never releases a row by size, only on demand.  One sequential run gives
the reference count; then per round, interleaved: 2 lanes in this process
(``sequential[2 threads]``) and 2 workers of a LocalCluster started once (``dask[2]``,
kernel loaded on both first).  Per run: nodes and count equal to the sequential run's
(a mismatch fails the run), search seconds, the speed-up over the sequential search,
each worker's busy share from ``WorkerStats`` (busy / (busy + idle); for the 2 lanes of
one process, whose one ``WorkerStats`` sums lane-seconds, each lane's share from the
result's ``info["lane_busy_shares"]``), rows released, rows stolen and steals tried.  Takes about rounds x 2 x the search's seconds on 2 cores
plus one sequential run and a cluster start (~1 min at the defaults on 2 cores).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from stealsearch.engine import solve
from stealsearch.engine.core.policy import StealPolicy


def shares(r) -> list[float]:
    """Per worker (Dask) or per lane (lanes: the transport's ``lane_busy_shares``; the
    result's one WorkerStats sums its lanes' seconds)."""
    if r.info.get("lane_busy_shares"):
        return list(r.info["lane_busy_shares"])
    return [w.busy_seconds / (w.busy_seconds + w.idle_seconds) for w in r.workers]


def main(argv=None) -> int:
    from examples import vertex_cover as vc

    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=62)
    ap.add_argument("--p", type=float, default=0.01)
    ap.add_argument("--matched", type=int, default=29)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--k", type=int, default=31)
    ap.add_argument("--only", choices=["lanes", "workers"], default=None)
    a = ap.parse_args(argv)
    n, edges = vc.matched_graph(a.n, a.p, a.matched, a.seed)
    problem = vc.FastVertexCover(n, edges, k=a.k, mode="enumerate")
    threshold = StealPolicy().release_threshold
    if problem.k + 1 > threshold:
        print(f"k + 1 = {problem.k + 1} rows may pass the default release threshold {threshold}: "
              "not a narrow tree in the issue's sense", file=sys.stderr)
        return 2
    case = f"vertex cover G({a.n}, {a.p:g}) s{a.seed} + {a.matched} matched, k {a.k}"
    solve(vc.FastVertexCover(*vc.random_graph(20, 0.2), k=10), backend="sequential")   # kernel
    loads = [os.getloadavg()[0]]
    ref = solve(problem, backend="sequential")
    print(json.dumps({"case": case, "config": "sequential", "nodes": ref.nodes, "count": ref.count,
                      "search": round(ref.search_seconds, 3), "load": loads[0]}), flush=True)
    from stealsearch.engine.deploy.cluster import dask_client

    rows: dict[str, list] = {"2 lanes": [], "2 workers": []}
    bad = 0
    with dask_client(workers=2) as client:
        solve(vc.FastVertexCover(*vc.random_graph(20, 0.2), k=10), backend="dask",
              client=client, workers=2)                                   # kernels loaded
        for rep in range(a.rounds):
            order = ["2 lanes", "2 workers"] if rep % 2 == 0 else ["2 workers", "2 lanes"]
            for config in order:
                if a.only and not config.endswith(a.only):
                    continue
                if config == "2 lanes":
                    r = solve(problem, backend="sequential", threads_per_worker=2)
                else:
                    r = solve(problem, backend="dask", client=client, workers=2)
                exact = (r.status, r.nodes, r.count) == ("exhausted", ref.nodes, ref.count) \
                    and r.conservation()["holds"]
                bad += not exact
                rec = {"case": case, "config": config, "rep": rep, "exact": exact,
                       "nodes": r.nodes, "search": round(r.search_seconds, 3),
                       "speedup": round(ref.search_seconds / r.search_seconds, 2),
                       "busy_shares": [round(x, 3) for x in shares(r)],
                       "rows_released": sum(w.rows_released for w in r.workers),
                       "rows_stolen": sum(w.rows_stolen for w in r.workers),
                       "steals_tried": sum(w.steals_tried for w in r.workers),
                       "worker_nodes": [w.nodes for w in r.workers],
                       "load": os.getloadavg()[0]}
                rows[config].append(rec)
                print(json.dumps(rec), flush=True)
            loads.append(os.getloadavg()[0])
    print("load average (1 min) per round:", [round(x, 2) for x in loads])
    for config, rs in rows.items():
        if not rs:
            continue
        least = [min(x["busy_shares"]) for x in rs]
        print(f"{config}: least busy share per run {least} (median {statistics.median(least):.3f}), "
              f"search {[x['search'] for x in rs]} s, speed-up median "
              f"{statistics.median(x['speedup'] for x in rs):.2f}")
    if bad:
        print(f"{bad} run(s) inexact", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
