"""What resilience costs and buys (issue #10): checkpoint overhead, recovery after a kill,
speed-up when a worker joins mid-run.

1. Checkpoint cost: ``RUN_SECONDS`` of search (a time limit) with consistent cuts every
   1, 5, 30 s written to disk, against one epoch and no disk ("none"); overhead = loss of
   nodes/s; size of the checkpoint on disk.  A time limit makes every instance usable,
   also those that run for hours (clique G(1000, 0.5)).
2. Recovery: UTS T1L on 3 workers, one SIGKILLed after ``KILL_AT`` s; extra wall time
   against an undisturbed run, rollbacks, nodes re-done.
3. Joining: ``RUN_SECONDS`` of UTS T1L on 1 worker, on 2, and on 1 with a second added
   after ``JOIN_AT`` s (nodes/s).

``python -m stealsearch.benchmarks.bench_resilience``: a few minutes on 2 cores.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

from stealsearch.engine import solve
from stealsearch.engine.deploy.cluster import dask_client

from .common import machine_header, write_section

RUN_SECONDS = 15.0
KILL_AT = 3.0
JOIN_AT = 3.0


def instances():
    from stealsearch.problems.clique import CliqueProblem
    from stealsearch.problems.clique.generators import gnp
    from stealsearch.problems.uts import UTSProblem

    return [("UTS T1L", UTSProblem.preset("T1L")),
            ("clique G(1000, 0.5)", CliqueProblem(gnp(1000, 0.5, seed=1)))]


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir() if p.is_file())


def rate(r) -> float:
    return r.nodes / r.search_seconds


def checkpoint_cost(client, name, problem, tmp: Path):
    rows = []
    base = None
    for every in (None, 30.0, 5.0, 1.0):
        d = tmp / f"ck-{every}"
        kwargs = {"checkpoint_every": 1e9} if every is None else \
            {"checkpoint_every": every, "checkpoint": str(d)}
        r = solve(problem, client=client, time_limit=RUN_SECONDS, **kwargs)
        size, writes = 0, 0
        if every is not None:
            size, writes = dir_size(d), r.info["checkpoint_writes"]
            shutil.rmtree(d)
        base = rate(r) if every is None else base
        rows.append(f"| {name} | {'none' if every is None else f'{every:g} s'} | "
                    f"{rate(r):,.0f} | "
                    f"{'-' if every is None else f'{100 * (1 - rate(r) / base):.1f}%'} | "
                    f"{'-' if every is None else writes} | "
                    f"{'-' if every is None else f'{size / 1024:.0f} KiB'} |")
    return rows


def recovery(client, name, problem):
    undisturbed = solve(problem, client=client, checkpoint_every=1.0)
    pids = sorted(client.run(os.getpid).values())

    def kill():
        time.sleep(KILL_AT)
        os.kill(pids[-1], signal.SIGKILL)

    t = threading.Thread(target=kill, daemon=True)
    t.start()
    r = solve(problem, client=client, checkpoint_every=1.0)
    t.join()
    return (f"| {name} | {undisturbed.wall_seconds:.2f} | {r.wall_seconds:.2f} | "
            f"{r.wall_seconds - undisturbed.wall_seconds:+.2f} | {r.recoveries} | "
            f"{r.nodes_redone:,} | {r.count:,} |")


def joining(name, problem):
    rates = {}
    for n in (1, 2):
        with dask_client(workers=n) as c:
            solve(problem, client=c, node_limit=1000)             # warm
            rates[n] = rate(solve(problem, client=c, checkpoint_every=0.5,
                                  time_limit=RUN_SECONDS))
    with dask_client(workers=1) as c:
        solve(problem, client=c, node_limit=1000)

        def grow():
            time.sleep(JOIN_AT)
            c.cluster.scale(2)

        t = threading.Thread(target=grow, daemon=True)
        t.start()
        r = solve(problem, client=c, checkpoint_every=0.5, time_limit=RUN_SECONDS)
        t.join()
        joined = sum(1 for w in r.workers if w.nodes > 0)
    return (f"| {name} | {rates[1]:,.0f} | {rates[2]:,.0f} | {rate(r):,.0f} | "
            f"{rate(r) / rates[1]:.2f}x | {joined} |")


def main(argv=None):
    argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0]).parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-resilience-"))
    cost, rec, join = [], [], []
    uts = instances()[0]
    try:
        with dask_client(workers=2) as client:
            for name, problem in instances():
                solve(problem, client=client, node_limit=1000)    # warm the kernels
                cost += checkpoint_cost(client, name, problem, tmp)
        with dask_client(workers=3) as client:
            solve(uts[1], client=client, node_limit=1000)
            rec.append(recovery(client, *uts))
        join.append(joining(*uts))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    lines = [machine_header(), "",
             f"Checkpoint cost on 2 workers: {RUN_SECONDS:g} s of search each (a time limit); "
             "'none' = one epoch, nothing written; the others write every consistent cut to "
             "disk. Overhead = loss of nodes/s against 'none' in the same run of the script "
             "(one run each: on this shared machine differences of ~10% are noise).", "",
             "| instance | cuts every | nodes/s | overhead | writes | size on disk |",
             "|---|---|---|---|---|---|", *cost, "",
             f"Recovery on 3 workers, one SIGKILLed after {KILL_AT:g} s (cuts every 1 s; the "
             "count is exact in both runs).", "",
             "| instance | undisturbed s | with a kill s | extra s | rollbacks | nodes re-done "
             "| count |", "|---|---|---|---|---|---|---|", *rec, "",
             f"A worker joining mid-run: {RUN_SECONDS:g} s of search, cuts every 0.5 s, the "
             f"second worker added (cluster.scale) after {JOIN_AT:g} s; it loads its kernels, "
             "then gets rows at the next cut.", "",
             "| instance | 1 worker nodes/s | 2 workers nodes/s | 1 + 1 joining nodes/s | "
             "speed-up vs 1 | workers with nodes |", "|---|---|---|---|---|---|", *join]
    write_section("benchmarks/results/resilience.md", "Resilience: checkpoints, recovery, joins",
                  lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
