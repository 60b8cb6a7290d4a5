"""``stealsearch commclust`` -- seed 002's characterization of communications.

Usage::

    stealsearch commclust FILE | --example cg8  [--format csv|npy|trace] [--seed S]
                          [--groups 4,4] [--json] [--plot GC.png] [--dendrogram-plot D.png]
                          [--dendrogram]
    stealsearch commclust sweep FILE... | --example NAME...  [--seeds K] [--first-seed S]
                          [--workers N | --scheduler ADDR] [--json]

The first positional may be the word ``sweep`` (a file literally named ``sweep`` must be
given as ``./sweep``).  Single runs happen in this process (a polynomial algorithm: no
cluster needed); ``sweep`` runs every (table, tie-break seed) pair as an ordinary Dask task
through :func:`engine.cluster.dask_client` and reports how stable the best partition is.

``--json`` (single run): ``partitions`` (``index`` k = merges done, ``n_clusters``, ``F_G``,
``D_G``, ``G_c`` and, for N <= 256, ``clusters``), ``merges`` (scipy ids + f), ``best``,
``ranking`` (partition indices by G_c), ``tie_order``, ``mapping`` (with ``--groups``),
``wall_seconds``.  ``G_c`` is ``null`` where undefined (one cluster) and ``"inf"`` for a
partition with no inter-cluster traffic.  ``--json`` (sweep): per table ``stability``,
``distinct_best_partitions``, ``modal_best_partition``, ``best_n_clusters_counts``,
``gc_curve_max_spread``; plus ``tasks``, ``workers``, ``wall_seconds``.
"""
from __future__ import annotations

import argparse
import os
import time


from .model import CommTableError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "commclust",
        help="characterize communications between processes (seed 002): clustering, G_c",
        description="Cluster the processes of a communication table (eq. 1, average linkage on "
                    "T+T^T with the paper's seeded random tie-break), score every partition "
                    "with F_G, D_G and G_c = F_G/D_G, report the best one. "
                    "'commclust sweep ...' runs many tie-break seeds as Dask tasks.")
    p.add_argument("sources", nargs="*", metavar="FILE",
                   help="table file (.csv, .npy, .trace); or 'sweep' followed by files")
    p.add_argument("--example", action="append", default=[], metavar="NAME",
                   help="built-in table: cg8 (= the paper's Table 1), cgN, isN, epN, randomN")
    p.add_argument("--example-seed", type=int, default=0, metavar="S",
                   help="seed of the generated isN/epN/randomN examples (default 0)")
    p.add_argument("--format", choices=("csv", "npy", "trace"), default=None,
                   help="input format (default: from the extension; unknown -> csv)")
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="tie-break seed: random order of the processes (default 0)")
    p.add_argument("--groups", default=None, metavar="SIZES",
                   help="machine groups to map the best partition to, e.g. 4,4 or 2x8")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", default=None, metavar="PNG", help="write G_c vs clusters plot")
    p.add_argument("--dendrogram-plot", default=None, metavar="PNG",
                   help="write the dendrogram drawing (scipy)")
    p.add_argument("--dendrogram", action="store_true",
                   help="print every partition (Table 2 style); default only when N <= 32")
    p.add_argument("--seeds", type=int, default=16, metavar="K",
                   help="sweep: number of tie-break seeds (default 16)")
    p.add_argument("--first-seed", type=int, default=0, metavar="S",
                   help="sweep: seeds S..S+K-1 (default 0)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, metavar="N",
                       help="sweep: LocalCluster of N worker processes (default 2)")
    where.add_argument("--scheduler", default=None, metavar="ADDR",
                       help="sweep: address of a running Dask scheduler")
    p.set_defaults(func=run)


def _load_sources(args, allow_many: bool) -> dict:
    from .generators import example_table
    from .io import read_table

    tables: dict = {}
    for path in args.sources:
        label = path
        while label in tables:
            label += "'"
        tables[label] = read_table(path, args.format)
    for name in args.example:
        tables[name] = example_table(name, seed=args.example_seed)
    if not tables:
        raise CommTableError("give a table FILE or --example NAME (e.g. --example cg8)")
    if not allow_many and len(tables) > 1:
        raise CommTableError("give one table (FILE or --example); several tables: use 'commclust sweep'")
    return tables


def run(args: argparse.Namespace) -> int:
    if args.sources and args.sources[0] == "sweep":
        args.sources = args.sources[1:]
        return _run_sweep(args)
    return _run_single(args)


def _run_single(args) -> int:
    from engine.commandline import print_json

    from .analysis import characterize, public
    from .mapping import parse_groups
    from .model import validate_table
    from .render import dendrogram_text, format_gc, plot_dendrogram, plot_gc

    start = time.perf_counter()
    [(label, table)] = _load_sources(args, allow_many=False).items()
    if args.seed < 0:
        raise CommTableError(f"--seed must be >= 0, got {args.seed}")
    groups = parse_groups(args.groups) if args.groups else None
    t = validate_table(table, source=label)
    result = characterize(t, seed=args.seed, groups=groups, validated=True)
    dend, curve = result["_dendrogram"], result["_curve"]
    best = result["best"]["index"]
    for path in (args.plot, args.dendrogram_plot):
        if path and os.path.dirname(os.path.abspath(path)) and not os.path.isdir(
                os.path.dirname(os.path.abspath(path))):
            raise CommTableError(f"cannot write {path}: no such directory")
    if args.plot:
        plot_gc(curve, args.plot, title=f"{label}: G_c per partition (N = {dend.n})", best=best)
    if args.dendrogram_plot:
        plot_dendrogram(dend, args.dendrogram_plot, title=f"{label}: dendrogram (seed {args.seed})")
    out = public(result)
    out["table"] = label
    out["wall_seconds"] = time.perf_counter() - start
    if args.json:
        print_json(out)
        return 0
    n = dend.n
    print(f"commclust: {label}: {n} processes, tie-break seed {args.seed}")
    if args.dendrogram or n <= 32:
        print(dendrogram_text(dend, curve))
    print(f"best partition: {result['best']['n_clusters']} clusters (partition {best}), "
          f"G_c = {format_gc(curve.G_c[best])}, F_G = {format_gc(curve.F_G[best])}, "
          f"D_G = {format_gc(curve.D_G[best])}")
    body = " ".join("(" + ",".join(map(str, c)) + ")" for c in result["best"]["clusters"])
    print("  " + (body if len(body) < 2000 else body[:2000] + " ..."))
    top = result["ranking"][:10]
    print("ranking: " + ", ".join(f"{n - k} clusters {format_gc(curve.G_c[k])}" for k in top)
          + (" ..." if n > 10 else ""))
    if groups:
        mp = result["mapping"]
        b, a = mp["before"], mp["after"]
        print(f"mapping to groups {','.join(map(str, groups))}: inter-group traffic "
              f"{b['inter_group']:.6g} ({100 * b['inter_fraction']:.1f}%) in rank order -> "
              f"{a['inter_group']:.6g} ({100 * a['inter_fraction']:.1f}%) mapped")
        print(f"  placement (group per process): {mp['placement']}")
    for path in (args.plot, args.dendrogram_plot):
        if path:
            print(f"wrote {path}")
    print(f"wall {out['wall_seconds']:.3f} s (clustering + quality {result['core_seconds']:.3f} s)")
    return 0


def _run_sweep(args) -> int:
    from engine.commandline import print_json
    from engine.cluster import dask_client

    from .analysis import run_sweep

    if args.seeds < 1:
        raise CommTableError(f"--seeds must be >= 1, got {args.seeds}")
    if args.first_seed < 0:
        raise CommTableError(f"--first-seed must be >= 0, got {args.first_seed}")
    if args.plot or args.dendrogram_plot or args.groups:
        raise CommTableError("--plot, --dendrogram-plot and --groups apply to single runs, not sweep")
    tables = _load_sources(args, allow_many=True)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    start = time.perf_counter()
    with dask_client(workers=args.workers, scheduler=args.scheduler) as client:
        n_workers = len(client.scheduler_info().get("workers", {}))
        summaries = run_sweep(client, tables, seeds)
    wall = time.perf_counter() - start
    if args.json:
        print_json({"sweep": summaries, "seeds": seeds, "workers": n_workers,
                    "tasks": len(seeds) * len(tables), "wall_seconds": wall})
        return 0
    print(f"commclust sweep: {len(tables)} table(s) x {len(seeds)} seeds = "
          f"{len(seeds) * len(tables)} Dask tasks on {n_workers} workers")
    for s in summaries:
        part = " ".join("(" + ",".join(map(str, c)) + ")" for c in s["modal_best_partition"])
        if len(part) > 300:
            part = part[:300] + " ..."
        print(f"{s['table']}: best partition stable for {s['stability']:.0%} of seeds "
              f"({s['distinct_best_partitions']} distinct); modal: {s['modal_n_clusters']} clusters "
              f"{part}")
        print(f"  best n_clusters per seed: {s['best_n_clusters_counts']}; best G_c in "
              f"[{s['best_G_c_min']}, {s['best_G_c_max']}]; G_c curves differ by at most "
              f"{s['gc_curve_max_spread']:.4g}")
    print(f"wall {wall:.3f} s")
    return 0
