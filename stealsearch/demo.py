"""``stealsearch demo``: the main job of ``make demo``, a short tour with real results.

Everything printed is computed now: UTS T1 counted sequentially and on a LocalCluster
of one worker process per usable core (checked against the published size), then one
small run of each problem package.  The sections are the problems' ``demo.py`` tours, in
the registry's order (:func:`stealsearch.registry.tours`: ours, then plug-ins by name).
"""
from __future__ import annotations

import time

from stealsearch.engine.deploy.cluster import dask_client
from stealsearch.engine.app.commandline import add_workers_argument

from . import registry


def register(subparsers) -> None:
    p = subparsers.add_parser("demo", help="a short tour on a LocalCluster of one worker "
                                           "process per usable core")
    add_workers_argument(p, "worker processes of the LocalCluster (default, no N, or 'auto': "
                            "one per usable core)")
    p.add_argument("--force", action="store_true",
                   help="start more worker processes than the machine's cores and memory "
                        "allow (more than 4 per core, or ~300 MB each)")
    p.set_defaults(func=run)


def run(args) -> int:
    from stealsearch.engine.app.commandline import check_workers

    check_workers(args)
    if args.workers is None:
        from stealsearch.engine.deploy.cores import usable_cores
        args.workers = usable_cores()
    sections = registry.tours()
    t0 = time.perf_counter()
    ok = True
    # the line comes once the cluster runs: a refused --workers prints only its error
    with dask_client(workers=args.workers, force=args.force) as client:
        print(f"stealsearch demo: a LocalCluster of {args.workers} worker processes "
              f"(started in {time.perf_counter() - t0:.1f} s)", flush=True)
        for i, (_, tour) in enumerate(sections):
            if i:
                print()
            ok &= bool(tour(client, args.workers))
    print(f"\ndemo finished in {time.perf_counter() - t0:.1f} s: "
          + ("all results verified" if ok else "SOME RESULTS FAILED VERIFICATION"))
    return 0 if ok else 1
