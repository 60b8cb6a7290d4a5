"""``stealsearch demo``: the main job of ``make demo``, a short tour with real results.

Everything printed is computed now: UTS T1 counted sequentially and on a LocalCluster
of 2 worker processes (checked against the published size), then one small run of
each problem package.
"""
from __future__ import annotations

import importlib
import time

from engine.cluster import DEFAULT_WORKERS, dask_client
from engine.solve import solve

#: (package, function name) of the tour's later sections, in order.
SECTIONS = (
    ("problems.clique.demo", "tour"),
    ("problems.liquid.demo", "tour"),
    ("problems.hrelation.demo", "tour"),
    ("problems.commclust.demo", "tour"),
    ("problems.twolevel.demo", "tour"),
)


def register(subparsers) -> None:
    p = subparsers.add_parser("demo", help="a short tour on a LocalCluster of 2 workers")
    p.add_argument("--workers", type=int, default=DEFAULT_WORKERS, metavar="N")
    p.add_argument("--tree", default="T1", help="UTS tree for the engine section (default T1)")
    p.set_defaults(func=run)


def uts_section(client, workers: int, tree: str) -> bool:
    from problems.uts import PRESETS, UTSProblem

    problem = UTSProblem.preset(tree)
    published = PRESETS[problem.label][1]
    print(f"== UTS {problem.label}: the stealstack engine on an unbalanced tree ==")
    seq = solve(problem, backend="sequential")
    par = solve(problem, client=client, workers=workers)
    ok = True
    for r in (seq, par):
        match = r.count == published[0]
        ok &= match
        per_worker = r.nodes_per_second / max(1, len(r.workers))
        print(f"  {r.backend:<11} {r.count:>11,} nodes  {r.search_seconds:6.2f} s  "
              f"{r.nodes_per_second / 1e6:5.2f} M nodes/s ({per_worker / 1e6:.2f} M per worker)"
              f"  {'= published' if match else '!= published ' + str(published[0])}")
    print(f"  speed-up on {workers} workers: {seq.search_seconds / par.search_seconds:.2f}x "
          f"(search time; wall incl. start-up {seq.wall_seconds / par.wall_seconds:.2f}x)")
    steals = sum(w.steals_succeeded for w in par.workers)
    print(f"  per-worker nodes {[w.nodes for w in par.workers]}, std dev "
          f"{par.node_balance_stddev:,.0f}, {steals} steals, rows conserved: "
          f"{par.conservation()['holds']}")
    return ok


def run(args) -> int:
    t0 = time.perf_counter()
    print(f"stealsearch demo: starting a LocalCluster of {args.workers} worker processes")
    ok = True
    with dask_client(workers=args.workers) as client:
        ok &= uts_section(client, args.workers, args.tree)
        for module, fn in SECTIONS:
            section = getattr(importlib.import_module(module), fn)
            print()
            ok &= bool(section(client, args.workers))
    print(f"\ndemo finished in {time.perf_counter() - t0:.1f} s: "
          + ("all results verified" if ok else "SOME RESULTS FAILED VERIFICATION"))
    return 0 if ok else 1
