"""Real 1- and 2-worker measurements that calibrate and check the scaling model.

For each case: sequential, dask with 1 worker and dask with 2 workers (default
policy), R runs each, every per-worker statistic kept (nodes, chunks, steals, idle
seconds, releases, acquires) so that ``stealsearch.benchmarks.simulate`` can be compared with
more than the speed-up.  Writes ``benchmarks/results/model_calibration.json``.

    python -m stealsearch.benchmarks.calibrate_model                 # T1, T3, cliques; 3 runs
    python -m stealsearch.benchmarks.calibrate_model --cases T1L --runs 1
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import statistics

from stealsearch.engine import StealPolicy, solve
from stealsearch.engine.deploy.cluster import dask_client

from .common import commit, cpu_model

CASES = ("T1", "T3", "G500_0.5", "G1000_0.35", "T1L")


def make_problem(case: str):
    if case.startswith("G"):
        from stealsearch.problems.clique.generators import gnp
        from stealsearch.problems.clique.problem import CliqueProblem
        n, p = case[1:].split("_")
        return CliqueProblem(gnp(int(n), float(p), seed=1), mode="max", bound="colour")
    from stealsearch.problems.uts import UTSProblem
    return UTSProblem.preset(case)


def record(res) -> dict:
    return {"nodes": res.nodes, "count": res.count, "objective": res.objective,
            "search_seconds": res.search_seconds, "wall_seconds": res.wall_seconds,
            "load": os.getloadavg()[0],
            "workers": [dataclasses.asdict(w) for w in res.workers]}


def main(argv=None):
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", default=["T1", "T3", "G500_0.5", "G1000_0.35"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default="benchmarks/results/model_calibration.json")
    args = ap.parse_args(argv)
    try:
        with open(args.out) as f:
            data = json.load(f)
    except (OSError, ValueError):
        data = {}
    data.setdefault("machine", {})
    data["machine"].update({"cpu": cpu_model(), "cores": os.cpu_count(), "commit": commit(),
                            "date": dt.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC")})
    with dask_client(workers=2) as client:
        for case in args.cases:
            problem = make_problem(case)
            solve(problem, backend="sequential", node_limit=10_000)      # warm the kernel
            runs = {"load_at_start": os.getloadavg()[0]}
            for label, kw in (("sequential", {"backend": "sequential"}),
                              ("dask1", {"client": client, "workers": 1}),
                              ("dask2", {"client": client, "workers": 2})):
                rs = [record(solve(problem, policy=StealPolicy(), **kw)) for _ in range(args.runs)]
                runs[label] = rs
                print(case, label, [round(r["search_seconds"], 3) for r in rs],
                      "median", round(statistics.median(r["search_seconds"] for r in rs), 3),
                      "nodes", rs[0]["nodes"], flush=True)
            data[case] = runs
            with open(args.out, "w") as f:
                json.dump(data, f, indent=1)


if __name__ == "__main__":
    main()
