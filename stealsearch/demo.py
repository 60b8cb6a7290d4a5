"""``stealsearch demo``: the main job of ``make demo``, a short tour with real results.

Everything printed is computed now and checked.  First what this machine does best: a
UTS tree counted on the lanes of this process (the default with no place flag) against
one thread, checked against the tree's published size.  Then a LocalCluster starts, its
start-up measured and said for what it is, and each problem package's ``demo.py`` tour
runs on it, in the registry's order (:func:`stealsearch.registry.tours`: ours, then
plug-ins by name).
"""
from __future__ import annotations

import os
import time

from stealsearch.engine.deploy.cluster import dask_client
from stealsearch.engine.app.commandline import add_workers_argument, example_epilog

from . import registry

#: the tree of the lanes' section: long enough (~100 M nodes) that the lanes' speed-up is
#: the search's, not its start and end
LANES_TREE = "T1L"


def register(subparsers) -> None:
    p = subparsers.add_parser("demo", help="a short tour: this machine's lanes, then the "
                                           "problems on a LocalCluster",
                              epilog=example_epilog("stealsearch demo --workers 2"))
    add_workers_argument(p, "worker processes of the LocalCluster (default, no N, or 'auto': "
                            "one per usable core)")
    p.add_argument("--lanes-tree", default=LANES_TREE, metavar="TREE",
                   help=f"the UTS tree counted on this machine's lanes, a name of 'stealsearch "
                        f"uts --tree' (default {LANES_TREE}; T1 takes about 1 s of one core)")
    p.add_argument("--force", action="store_true",
                   help="start more worker processes than the machine's cores and memory "
                        "allow (more than 4 per core, or ~300 MB each)")
    p.set_defaults(func=run)


def _load_note(cores: int) -> str:
    """The load average beside the figures, when other programs share the cores."""
    try:
        load = os.getloadavg()[0]
    except OSError:                       # (no load average on this platform)
        return ""
    if load < 0.5:
        return ""
    return (f"; load average {load:.1f} before the tour: other programs share these cores, "
            f"and the times below with them")


def run(args) -> int:
    from stealsearch.engine.app.commandline import check_workers
    from stealsearch.engine.deploy.cores import usable_cores
    from stealsearch.problems.uts.demo import lanes_tour

    check_workers(args)
    from stealsearch.engine.core.errors import InputError
    from stealsearch.problems.uts.problem import PRESETS

    if args.lanes_tree not in PRESETS:
        raise InputError(f"demo: --lanes-tree takes one of {', '.join(sorted(PRESETS))}, "
                         f"not {args.lanes_tree!r}")
    cores = usable_cores()
    if args.workers is None:
        args.workers = cores
    sections = registry.tours()
    t0 = time.perf_counter()
    print(f"stealsearch demo: {cores} usable cores{_load_note(cores)}", flush=True)
    ok = lanes_tour(args.lanes_tree, cores)
    print()
    started = time.perf_counter()
    # the lines come once the cluster runs: a refused --workers prints only its error
    with dask_client(workers=args.workers, force=args.force) as client:
        start = time.perf_counter() - started
        print(f"== A LocalCluster of {args.workers} worker processes, started in {start:.1f} s ==")
        print(f"  its start is paid before the first node, so on one machine the lanes above "
              f"are faster; a cluster pays when it adds cores this machine lacks (--scheduler, "
              f"--cluster-config) to a search many times longer than {start:.1f} s", flush=True)
        for _, tour in sections:
            print()
            ok &= bool(tour(client, args.workers))
    print(f"\ndemo finished in {time.perf_counter() - t0:.1f} s: "
          + ("all results verified" if ok else "SOME RESULTS FAILED VERIFICATION"))
    return 0 if ok else 1
