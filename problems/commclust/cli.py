"""``stealsearch commclust`` -- seed 002's characterization of communications.

Usage::

    stealsearch commclust FILE | --example cg8  [--format csv|npy|trace] [--tie-seed S]
                          [--groups 4,4] [--json] [--plot GC.png] [--dendrogram-plot D.png]
                          [--dendrogram]
    stealsearch commclust sweep FILE... | --example NAME...  [--tie-seeds K] [--first-tie-seed S]
                          [--workers N | --sequential | --scheduler ADDR | --cluster-config FILE]
                          [--time-limit S] [--json] [--out DIR]

``--seed`` is the instance seed of the generated examples (isN, epN, randomN), as
everywhere; the paper's random tie-break has its own ``--tie-seed``.

The first positional may be the word ``sweep`` (a file literally named ``sweep`` must be
given as ``./sweep``).  Single runs happen in this process (a polynomial algorithm: no
cluster needed); ``sweep`` runs every (table, tie-break seed) pair through the one sweep
runner (:mod:`stealsearch.engine.app.sweep`: small items as ordinary Dask tasks) and reports how stable the
best partition is; a failing item is reported and the others finish; with ``--out DIR`` the
table ``DIR/commclust_sweep.csv`` keeps every finished item and the same command resumes.

``--json`` (single run): ``partitions`` (``index`` k = merges done, ``n_clusters``, ``F_G``,
``D_G``, ``G_c`` and, for N <= 256, ``clusters``), ``merges`` (scipy ids + f), ``best``,
``ranking`` (partition indices by G_c), ``tie_order``, ``mapping`` (with ``--groups``),
``wall_seconds``.  ``G_c`` is ``null`` where undefined (one cluster) or infinite (no
inter-cluster traffic: ``D_G`` = 0); JSON never holds NaN or Infinity.  ``--json`` (sweep): per table ``stability``,
``distinct_best_partitions``, ``modal_best_partition``, ``best_n_clusters_counts``,
``gc_curve_max_spread``; plus ``tasks``, ``workers``, ``wall_seconds``, ``failed``
(items that failed, with their error), ``table`` (the sweep table with ``--out``).
"""
from __future__ import annotations

import argparse
import time

from stealsearch.engine.app.commandline import announce_compiles, example_epilog
from stealsearch.engine.app.commandline import (add_backend_arguments, show_progress, check_plot_path, client_from_args,
                                positive_int, print_json, seed_int,
                                add_file_or_subcommands)

from .model import CommTableError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "commclust",
        help="characterize communications between processes (Orduña, Arnau, Duato): clustering, G_c",
        description="Cluster the processes of a communication table (eq. 1, average linkage on "
                    "T+T^T with the paper's seeded random tie-break), score every partition "
                    "with F_G, D_G and G_c = F_G/D_G, report the best one. "
                    "'commclust sweep ...' runs many tie-break seeds as Dask tasks.",
        epilog=example_epilog("stealsearch commclust --example cg8",
                              "stealsearch commclust --example is16 --groups 2x8 --json"))
    subs = add_file_or_subcommands(p, "sweep_target", "FILE|sweep",
                                   "table file (.csv, .npy, .trace; a file named 'sweep': "
                                   "./sweep), or the sub-command 'sweep' (its own --help)")
    _table_arguments(p)
    p.add_argument("--tie-seed", type=seed_int, default=0, metavar="S",
                   help="tie-break seed: random order of the processes")
    p.add_argument("--groups", default=None, metavar="SIZES",
                   help="machine groups to map the best partition to, e.g. 4,4 or 2x8")
    p.add_argument("--plot", default=None, metavar="PNG",
                   help="write the G_c vs clusters figure here (none when absent)")
    p.add_argument("--dendrogram-plot", default=None, metavar="PNG",
                   help="write the dendrogram figure (scipy) here (none when absent)")
    p.add_argument("--dendrogram", action="store_true",
                   help="print every partition (Table 2 style); default only when N <= 32")
    add_backend_arguments(p, policy=False, node_limit=False, what="the sweep")
    p.set_defaults(func=run, sources=[])

    g = subs.add_parser(
        "sweep", help="the best partition's stability over tie-break seeds, as Dask tasks",
        description="Cluster every table named once per tie-break seed (S..S+K-1) through "
                    "the sweep runner (one item per table and seed, as Dask tasks) and report "
                    "how often the best partition changes.",
        epilog=example_epilog("stealsearch commclust sweep --example cg8 --tie-seeds 4 "
                              "--sequential"))
    g.add_argument("sources", nargs="*", metavar="FILE", help="table files (.csv, .npy, .trace)")
    _table_arguments(g)
    g.add_argument("--tie-seeds", type=positive_int, default=16, metavar="K",
                   help="number of tie-break seeds")
    g.add_argument("--first-tie-seed", type=seed_int, default=0, metavar="S",
                   help="tie-break seeds S..S+K-1")
    g.add_argument("--out", default=None, metavar="DIR",
                   help="the folder of the sweep's table (a re-run resumes; none when absent)")
    add_backend_arguments(g, policy=False, node_limit=False, what="the sweep")
    g.set_defaults(func=run, sweep_target="sweep")


def _table_arguments(p) -> None:
    """The flags that name the tables (a single run's and a sweep's)."""
    p.add_argument("--example", action="append", default=[], metavar="NAME",
                   help="built-in table: cg8 (= the paper's Table 1), cgN, isN, epN, randomN")
    p.add_argument("--seed", "--example-seed", dest="seed", type=seed_int, default=0,
                   metavar="S", help="instance seed of the generated isN/epN/randomN examples")
    p.add_argument("--format", choices=("csv", "npy", "trace"), default=None,
                   help="input format (from the extension when absent; unknown -> csv)")


def _load_sources(args, allow_many: bool) -> dict:
    from .generators import example_table
    from .io import read_table

    tables: dict = {}
    if args.seed and not any(not name.startswith("cg") for name in args.example):
        raise CommTableError("--seed applies to the generated examples (isN, epN, randomN); "
                             "the tie-break seed is --tie-seed")
    for path in args.sources:
        label = path
        while label in tables:
            label += "'"
        tables[label] = read_table(path, args.format)
    for name in args.example:
        tables[name] = example_table(name, seed=args.seed)
    if not tables:
        raise CommTableError("give a table FILE or --example NAME (e.g. --example cg8)")
    if not allow_many and len(tables) > 1:
        raise CommTableError("give one table (FILE or --example); several tables: use 'commclust sweep'")
    return tables


def run(args: argparse.Namespace) -> int:
    announce_compiles(args)             # the clustering's kernels compile on a first run
    if args.sweep_target == "sweep":
        return _run_sweep(args)
    if args.sweep_target is not None:          # the single run's FILE
        args.sources = [args.sweep_target]
    return _run_single(args)


def _warm() -> None:
    """The whole analysis once on the paper's Table 1, untimed: a first call loads the
    clustering and quality kernels from numba's cache (many times the clustering of a
    small table), which belongs to no result."""
    from .sweep import characterize
    from .generators import paper_table1
    from .model import validate_table

    characterize(validate_table(paper_table1(), source="warm-up"), seed=0, validated=True)


def _run_single(args) -> int:
    from .sweep import characterize, public
    from .mapping import parse_groups
    from .model import validate_table
    from .render import dendrogram_text, format_gc, plot_dendrogram, plot_gc

    if args.workers or args.scheduler or args.cluster_config or args.time_limit is not None:
        raise CommTableError("a single table runs in this process (a polynomial algorithm); "
                             "--workers, --scheduler, --cluster-config and --time-limit apply "
                             "to 'commclust sweep'")
    for path in (args.plot, args.dendrogram_plot):
        check_plot_path(path, CommTableError)
    [(label, table)] = _load_sources(args, allow_many=False).items()
    groups = parse_groups(args.groups) if args.groups else None
    _warm()                # the times printed exclude loading the kernels
    start = time.perf_counter()
    t = validate_table(table, source=label)
    result = characterize(t, seed=args.tie_seed, groups=groups, validated=True)
    dend, curve = result["_dendrogram"], result["_curve"]
    best = result["best"]["index"]
    if args.plot:
        plot_gc(curve, args.plot, title=f"{label}: G_c per partition (N = {dend.n})", best=best)
    if args.dendrogram_plot:
        plot_dendrogram(dend, args.dendrogram_plot, title=f"{label}: dendrogram (tie-break seed {args.tie_seed})")
    out = {"status": "complete", **public(result)}
    out["table"] = label
    out["wall_seconds"] = time.perf_counter() - start
    if args.json:
        print_json(out)
        return 0
    n = dend.n
    print(f"commclust: {label}: {n} processes, tie-break seed {args.tie_seed}")
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
    from stealsearch.engine.core.inputs import check_output_dir
    from stealsearch.engine.app.sweep import run_grid

    from .sweep import KINDS, summarize_sweep, sweep_grid, sweep_runs

    if args.plot or args.dendrogram_plot or args.groups or args.dendrogram:
        raise CommTableError("--plot, --dendrogram-plot, --dendrogram and --groups apply to "
                             "single runs, not sweep")
    if args.tie_seed:
        raise CommTableError("commclust sweep: give --tie-seeds K and --first-tie-seed S, "
                             "not --tie-seed")
    # every table read and validated here first: a bad one is one line before any work
    # (the items read them again where they run)
    labels = list(_load_sources(args, allow_many=True))
    if args.out:
        check_output_dir(args.out, CommTableError)
    if args.tie_seeds > 10_000:      # each seed is a sweep item, made before any runs
        raise CommTableError(f"--tie-seeds: at most 10000, got {args.tie_seeds}")
    seeds = list(range(args.first_tie_seed, args.first_tie_seed + args.tie_seeds))
    files = list(dict.fromkeys(args.sources))
    spec = sweep_grid(seeds, files=files, examples=list(dict.fromkeys(args.example)),
                      example_seed=args.seed, fmt=args.format)
    start = time.perf_counter()
    with client_from_args(args) as client:
        n_workers = 1 if client is None else len(client.nthreads())
        run = run_grid(spec, KINDS, out=args.out, client=client,
                       progress=show_progress(args), time_limit=args.time_limit)
    runs = sweep_runs(run.outcomes)
    summaries = [summarize_sweep(label, runs[label]) for label in dict.fromkeys(labels)
                 if runs.get(label)]
    wall = time.perf_counter() - start
    done = len(run.ok)
    failed = [{**o.item.columns, "status": o.status, "error": o.error} for o in run.failed]
    table = run.summary.table or None
    if args.json:
        print_json({"status": "interrupted" if run.not_run else "complete",
                    "sweep": summaries, "seeds": seeds, "workers": n_workers,
                    "tasks": done, "tasks_planned": len(run.outcomes),
                    "tasks_done_before": run.summary.done_before, "failed": failed,
                    "table": table, "wall_seconds": wall})
        return 1 if failed else 0
    where = "in this process" if client is None else f"Dask tasks on {n_workers} workers"
    print(f"commclust sweep: {len(files) + len(set(args.example))} table(s) x {len(seeds)} "
          f"tie-break seeds = {len(run.outcomes)} tasks ({done} done) {where}"
          + ("; interrupted by --time-limit" if run.not_run else "")
          + (f"; {run.summary.done_before} done before" if run.summary.done_before else ""))
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
    for f in failed:
        print(f"{f['status']}: {f.get('file', f.get('table'))} tie-break seed {f['tie_seed']}: "
              f"{f['error']}")
    if table:
        print(f"table {table} (run the same command again to resume)")
    print(f"wall {wall:.3f} s")
    return 1 if failed else 0
