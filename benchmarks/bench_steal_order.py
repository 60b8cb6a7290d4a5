"""Steal order before/after, same run (issue #21 item 6 / issue #23 item 4): max clique
on G(1000, 0.5) seed 1, the default ``steal_order = "oldest"`` against ``"nearest"``
(a thief takes the top rows of the victim's oldest batch), on 2 lanes in this process
and on 2 Dask worker processes, alternating the two orders, ``--repeats`` each.

    python benchmarks/bench_steal_order.py [--n 1000] [--p 0.5] [--repeats 1]

Prints one JSON line per run (order, place, nodes, search seconds, CPU seconds of this
process, the optimum) and the medians; every optimum is checked against the first
run's and verified by the result's own clique check.  Nodes measure work inflation:
the sequential search's nodes are the baseline.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from stealsearch.engine import solve
from stealsearch.engine.deploy.cluster import dask_client
from stealsearch.problems.clique import CliqueProblem
from stealsearch.problems.clique.generators import gnp


def one(graph, order, **place):
    problem = CliqueProblem(graph)
    problem.steal_order = order
    cpu = time.process_time()
    r = solve(problem, **place)
    assert r.status == "optimal" and r.verified, r.status
    return dict(order=order, place=r.backend, nodes=r.nodes, search=round(r.search_seconds, 3),
                cpu_here=round(time.process_time() - cpu, 3), omega=r.objective)


def main(argv=None):
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--p", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--sequential", action="store_true", help="also the sequential baseline")
    ap.add_argument("--places", nargs="+", default=["lanes", "workers"], choices=["lanes", "workers"],
                    help="2 lanes in this process and/or 2 Dask workers (a thief's steal order "
                         "acts between processes only: lanes share rows by ACQUIRE, newest first)")
    args = ap.parse_args(argv)
    g = gnp(args.n, args.p, seed=1)
    print(json.dumps({"graph": f"G({args.n}, {args.p}) seed 1", "load": os.getloadavg()[0],
                      "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}), flush=True)
    solve(CliqueProblem(gnp(40, 0.5, 1)), backend="sequential")          # warm the kernel
    runs = []
    if args.sequential:
        runs.append(one(g, "oldest", backend="sequential"))
        print(json.dumps(runs[-1]), flush=True)
    with dask_client(workers=2) as client:
        solve(CliqueProblem(gnp(40, 0.5, 1)), backend="dask", client=client, workers=2)
        for _ in range(args.repeats):
            for order in ("oldest", "nearest"):
                places = {"lanes": dict(backend="sequential", threads_per_worker=2),
                          "workers": dict(backend="dask", client=client, workers=2)}
                for place in (places[name] for name in args.places):
                    runs.append(one(g, order, **place))
                    print(json.dumps(runs[-1]), flush=True)
    assert len({r["omega"] for r in runs}) == 1, "the orders disagree on the optimum"
    for place in sorted({r["place"] for r in runs}):
        for order in ("oldest", "nearest"):
            rs = [r for r in runs if r["place"] == place and r["order"] == order]
            if rs:
                print(json.dumps({"median": place, "order": order,
                                  "nodes": statistics.median(r["nodes"] for r in rs),
                                  "search": statistics.median(r["search"] for r in rs)}))
    print(json.dumps({"load_after": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
