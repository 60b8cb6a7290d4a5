"""UTS in ``stealsearch demo``: the engine's exact oracle.  :func:`lanes_tour` shows what
one machine does best -- lanes, threads of one process, against one thread -- before any
cluster starts; :func:`tour` counts a tree on the tour's cluster."""
from __future__ import annotations

import time

from stealsearch.engine.solve import solve
from stealsearch.engine.app.timing import speedup_text, warm_up

from .problem import PRESETS, UTSProblem

#: nodes of the one-thread run that measures a thread's rate: long enough for a steady
#: rate (UTS nodes all cost one SHA-1), short beside the lanes' whole tree
ONE_THREAD_NODES = 10_000_000


def lanes_tour(tree: str, cores: int) -> bool:
    """Count ``tree`` on the lanes of this process (what a search runs on with no place
    flag) and compare their rate with one thread's, measured on the tree's first
    :data:`ONE_THREAD_NODES` nodes (the whole tree when it is smaller)."""
    problem = UTSProblem.preset(tree)
    published = PRESETS[problem.label][1][0]
    print(f"== This machine: UTS {problem.label} ({published:,} nodes), one thread against "
          f"the lanes ==")
    warm_up(problem)                        # no clock below includes loading the kernel
    # the CPU time each run got says how many cores it had: on a shared machine, fewer
    # than the machine has
    one, one_cores = _with_cores(lambda: solve(problem, backend="sequential",
                                               node_limit=min(ONE_THREAD_NODES, published)))
    lanes, lanes_cores = _with_cores(lambda: solve(problem))   # no place flag: the lanes
    match = lanes.count == published
    one_rate = one.nodes / max(one.search_seconds, 1e-9)
    lanes_rate = lanes.nodes / max(lanes.search_seconds, 1e-9)
    width = max(len("1 thread"), len(lanes.backend))
    print(f"  {'1 thread':<{width}} {one.nodes:>13,} nodes  {one.search_seconds:6.2f} s  "
          f"{one_rate / 1e6:6.2f} M nodes/s  (CPU: {one_cores:.2f} cores)")
    print(f"  {lanes.backend:<{width}} {lanes.count:>13,} nodes  {lanes.search_seconds:6.2f} s  "
          f"{lanes_rate / 1e6:6.2f} M nodes/s  (CPU: {lanes_cores:.2f} cores)  "
          f"{'= published' if match else '!= published ' + format(published, ',')}")
    per_cpu = (lanes_rate / max(lanes_cores, 1e-9)) / (one_rate / max(one_cores, 1e-9))
    print(f"  the lanes, threads of this process (the default): "
          f"{speedup_text(1 / one_rate, 1 / lanes_rate, cores)} one thread's rate on {cores} "
          f"cores ({per_cpu:.2f}x per core of CPU each had), with nothing to start (wall "
          f"{lanes.wall_seconds:.2f} s)")
    return match


def _with_cores(run):
    """``run()``'s result and the cores' worth of CPU time this process had meanwhile
    (its CPU seconds, every thread's, over the wall seconds)."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = run()
    return result, (time.process_time() - cpu) / max(time.perf_counter() - wall, 1e-9)


def tour(client, workers: int, tree: str = "T1") -> bool:
    problem = UTSProblem.preset(tree)
    published = PRESETS[problem.label][1][0]
    print(f"== UTS {problem.label} on the cluster: the stealstack between worker processes ==")
    warm_up(problem, client, workers)       # no clock below includes loading a kernel
    par = solve(problem, client=client, workers=workers)
    match = par.count == published
    print(f"  {par.backend:<11} {par.count:>11,} nodes  {par.search_seconds:6.2f} s of search  "
          f"{'= published' if match else '!= published ' + format(published, ',')}")
    steals = sum(w.steals_succeeded for w in par.workers)
    print(f"  per-worker nodes {[w.nodes for w in par.workers]}, std dev "
          f"{par.node_balance_stddev:,.0f}, {steals} steals, rows conserved: "
          f"{par.conservation()['holds']}")
    return match and par.conservation()["holds"]
