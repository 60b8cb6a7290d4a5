"""The limit at P cores (issue #21 item 5): processes, lanes and hybrids against the
machine's real ceiling, per P in 1, 2, 4, 8, 16 up to the usable cores.

    python -m stealsearch.benchmarks.bench_scaling [--seconds 5] [--trees T1XL T3XXL] [--clique]
        [--clique-graph 1000 0.5 1] [--clique-budget SECONDS]

Per tree and P (UTS runs are time-limited: a rate, nodes per search second):

* **ceiling**: P independent sequential searches at once, each in its own process (the
  aggregate rate of P cores busy with no parallel search at all: it captures turbo,
  shared caches and memory bandwidth); efficiency = a configuration's rate / this;
* **processes**: a LocalCluster of P worker processes, one lane each (``dask[P]``);
* **lanes**: P threads in this process, no Dask (``sequential[P threads]``, the no-flag
  default);
* **hybrid**: P/t worker processes of t lanes each, for t = 2, 4 (t < P; at P = 2 the
  one hybrid is 1 process of 2 lanes).

``--clique``: max clique on G(1000, 0.5) seed 1 (``--clique-graph N P SEED``) run to
optimality by the sequential search and by each configuration (speed-up = sequential
seconds / seconds; nodes give work inflation); pmc with P threads when
``$STEALSEARCH_PEERS/pmc/pmc`` exists (a missing peer is skipped with its reason).  The
UTS C reference is not built in the peers directory yet: skipped with that reason.

How long ``--clique`` takes: with S the sequential search's seconds, about S (the
baseline) + S x (3/2 + 3/4 + 4/8 + 4/16) for P = 2, 4, 8, 16 (each configuration ~S/P),
plus a cluster start and close per process configuration (10 of them up to 16): about
4 S + 40 s at 16 cores (S = 105 s on the lent 16-core Xeon: ~7.5 min, more than a device
command's 10 minutes once the UTS part runs before it: give ``--trees`` with no tree, or
a ``--clique-budget``); at P <= 2, about 2.5 S + 10 s.
The largest P runs first (after the baseline), so a run cut short has the fastest
configurations; ``--clique-budget SECONDS`` bounds the whole clique part: a
configuration whose estimate (S/P x 1.5 + the start) does not fit in what is left is
emitted as skipped, with its estimate, and every run gets at most what is left as its
time limit (one that reaches it is emitted as interrupted, not as a speed-up).

Every run's count is checked: a time-limited UTS run is ``interrupted`` with nodes > 0
and conserved rows; a complete clique run's optimum is the sequential one, verified.
Writes JSON lines to stdout (and ``--out FILE``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from stealsearch.engine import solve
from stealsearch.engine.deploy.cores import usable_cores

#: the UTS sample trees of the issue (UTS 2.1's sample_trees.sh): T1XL 1.64 G nodes
#: (geometric), T3XXL 2.79 G nodes (binomial)
TREES = {"T1XL": "-t 1 -a 3 -d 15 -b 4 -r 29",
         "T3XXL": "-t 0 -b 2000 -q 0.499995 -m 2 -r 316",
         "T1L": "-t 1 -a 3 -d 13 -b 4 -r 29", "T3L": "-t 0 -b 2000 -q 0.200014 -m 5 -r 7"}

ONE_SEQUENTIAL = """
import json, sys
from stealsearch.engine import solve
from stealsearch.problems.uts import UTSParams, UTSProblem
solve(UTSProblem.preset("default"), backend="sequential")     # the kernel loaded
r = solve(UTSProblem(UTSParams.parse(sys.argv[1])), backend="sequential",
          time_limit=float(sys.argv[2]))
print(json.dumps({"nodes": r.nodes, "search": r.search_seconds}))
"""


def uts(tree: str):
    from stealsearch.problems.uts import UTSParams, UTSProblem

    return UTSProblem(UTSParams.parse(TREES[tree]))


def ceiling(tree: str, p: int, seconds: float) -> dict:
    """P sequential searches at once, one process each: their summed rates."""
    procs = [subprocess.Popen([sys.executable, "-c", ONE_SEQUENTIAL, TREES[tree], str(seconds)],
                              stdout=subprocess.PIPE, text=True) for _ in range(p)]
    try:
        outs = [json.loads(proc.communicate(timeout=seconds + 300)[0]) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return {"rate": sum(o["nodes"] / o["search"] for o in outs),
            "nodes": sum(o["nodes"] for o in outs)}


def rate_of(r) -> dict:
    assert r.status == "interrupted" and r.nodes > 0 and r.conservation()["holds"], r.status
    return {"rate": r.nodes / r.search_seconds, "nodes": r.nodes,
            "search": round(r.search_seconds, 3), "wall": round(r.wall_seconds, 3)}


def configurations(p: int):
    """(name, threads per worker, workers or None for lanes here) per P."""
    yield "lanes", p, None
    yield "processes", 1, p
    for t in (2, 4):
        if t < p or (p == 2 and t == 2):
            yield f"hybrid {p // t}x{t}", t, p // t


def run_uts(tree: str, ps: list[int], seconds: float, emit) -> None:
    from stealsearch.engine.deploy.cluster import dask_client

    problem = uts(tree)
    solve(uts("T1L"), backend="sequential", time_limit=0.2)                # kernel loaded
    for p in ps:
        top = ceiling(tree, p, seconds)
        emit({"case": tree, "P": p, "config": "ceiling", **top})
        for name, threads, workers in configurations(p):
            if workers is None:
                rec = rate_of(solve(problem, backend="sequential", threads_per_worker=threads,
                                    time_limit=seconds))
            else:
                with dask_client(workers=workers) as client:
                    solve(uts("T1L"), backend="dask", client=client, time_limit=0.2)
                    rec = rate_of(solve(problem, backend="dask", client=client,
                                        threads_per_worker=threads, time_limit=seconds))
            emit({"case": tree, "P": p, "config": name, **rec,
                  "of_ceiling": round(rec["rate"] / top["rate"], 3)})


#: seconds a LocalCluster's start and close add to a process configuration (estimate)
CLUSTER_SECONDS = 6.0


def run_clique(ps: list[int], emit, limit: float, graph=(1000, 0.5, 1),
               budget: float | None = None) -> None:
    """The clique part (see the module docstring): the baseline, then P from the largest
    down, each configuration within what is left of ``budget`` seconds (if given)."""
    from stealsearch.engine.deploy.cluster import dask_client
    from stealsearch.problems.clique import CliqueProblem
    from stealsearch.problems.clique.generators import gnp

    n, density, seed = int(graph[0]), float(graph[1]), int(graph[2])
    case = f"G({n},{density:g}) s{seed}"
    g = gnp(n, density, seed=seed)
    start = time.monotonic()

    def left() -> float:
        return limit if budget is None else min(limit, budget - (time.monotonic() - start))

    solve(CliqueProblem(gnp(40, 0.5, 1)), backend="sequential")
    base = solve(CliqueProblem(g), backend="sequential", time_limit=max(1e-3, left()))
    if base.status != "optimal":
        emit({"case": case, "P": 1, "config": "sequential", "status": base.status,
              "nodes": base.nodes, "search": round(base.search_seconds, 3),
              "skipped": "the sequential baseline did not finish within the time given: "
                         "no speed-up can be computed"})
        return
    assert base.verified
    emit({"case": case, "P": 1, "config": "sequential", "nodes": base.nodes,
          "search": round(base.search_seconds, 3), "omega": base.objective})
    for p in sorted((q for q in ps if q > 1), reverse=True):
        for name, threads, workers in configurations(p):
            estimate = 1.5 * base.search_seconds / p + (CLUSTER_SECONDS if workers else 0.0)
            if left() < estimate:
                emit({"case": case, "P": p, "config": name, "estimate": round(estimate, 1),
                      "skipped": f"{left():.0f} s left of the budget, estimate {estimate:.0f} s"})
                continue
            if workers is None:
                r = solve(CliqueProblem(g), backend="sequential", threads_per_worker=threads,
                          time_limit=max(1e-3, left()))
            else:
                with dask_client(workers=workers) as client:
                    solve(CliqueProblem(gnp(40, 0.5, 1)), backend="dask", client=client)
                    r = solve(CliqueProblem(g), backend="dask", client=client,
                              threads_per_worker=threads, time_limit=max(1e-3, left()))
            rec = {"case": case, "P": p, "config": name, "status": r.status, "nodes": r.nodes,
                   "search": round(r.search_seconds, 3), "wall": round(r.wall_seconds, 3)}
            if r.status == "optimal":
                assert r.objective == base.objective and r.verified, (r.objective, r.verified)
                rec.update(speedup=round(base.search_seconds / r.search_seconds, 2),
                           work_inflation=round(r.nodes / base.nodes, 3))
            emit(rec)
    emit({"case": case, "config": "pmc", "skipped": pmc_reason()})


def pmc_reason() -> str:
    peers = os.environ.get("STEALSEARCH_PEERS")
    if not peers or not os.path.exists(os.path.join(peers, "pmc", "pmc")):
        return "pmc not found ($STEALSEARCH_PEERS/pmc/pmc)"
    return "pmc found but not run by this script yet (benchmarks/bench_peers.py runs the peers)"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="time limit of each UTS run")
    ap.add_argument("--trees", nargs="*", default=["T1XL", "T3XXL"], choices=sorted(TREES),
                    help="UTS trees (none: the clique part only)")
    ap.add_argument("--p", nargs="+", type=int, default=None,
                    help="core counts (default 1, 2, 4, 8, 16 up to the usable cores)")
    ap.add_argument("--clique", action="store_true",
                    help="also max clique to optimality: about 4 x the sequential seconds + "
                         "40 s at 16 cores (G(1000, 0.5): ~7.5 min on a 16-core Xeon); see "
                         "the module docstring")
    ap.add_argument("--clique-graph", nargs=3, default=["1000", "0.5", "1"],
                    metavar=("N", "P", "SEED"), help="the clique part's G(N, P) and seed")
    ap.add_argument("--clique-limit", type=float, default=600.0,
                    help="time limit of each clique run")
    ap.add_argument("--clique-budget", type=float, default=None,
                    help="seconds for the whole clique part: configurations that do not fit "
                         "are emitted as skipped (largest P first)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    cores = usable_cores()
    ps = args.p or [p for p in (1, 2, 4, 8, 16) if p <= cores]
    out = open(args.out, "a") if args.out else None

    def emit(rec):
        line = json.dumps(rec)
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    emit({"usable_cores": cores, "load": os.getloadavg()[0], "P": ps,
          "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
          "uts_c": "skipped: the UTS C reference is not built in the peers directory"})
    for tree in args.trees:
        run_uts(tree, ps, args.seconds, emit)
    if args.clique:
        run_clique(ps, emit, args.clique_limit, graph=args.clique_graph,
                   budget=args.clique_budget)
    emit({"load_after": os.getloadavg()[0]})
    if out:
        out.close()


if __name__ == "__main__":
    main()
