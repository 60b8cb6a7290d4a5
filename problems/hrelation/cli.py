"""``stealsearch hrel``: h-relation schedules of seed 001 (Sanders & Solis-Oba).

Usage::

    stealsearch hrel FILE [--algorithm A] [--json] [--out schedule.json]
    stealsearch hrel --random P H [--seed S] [--skew X] [--algorithm A|all] [--json]
    stealsearch hrel sweep [--P 8,16,32] [--h 16,64] [--skews 0,1.5] [--seeds 3]
                           [--algorithms ...] [--plot sweep.png] [--out DIR]
    (backend flags: --workers N | --sequential | --scheduler ADDR | --cluster-config FILE,
     --time-limit S, --json, --progress, --quiet)

The positional argument is a message file (.csv/.npy/.json, optionally .gz) or the word
``sweep``.  A single instance runs in this process unless a place is named (``--workers``,
``--scheduler``, ``--cluster-config``): then every algorithm is one Dask task (the JSON's
``backend``: ``sequential`` or ``dask[N]``).  A sweep is a
grid for the one sweep runner (:mod:`stealsearch.engine.app.sweep`): one item per (P, h, skew, seed,
algorithm), run as Dask tasks on a LocalCluster of 2 workers by default, in this process
with ``--sequential``; ``--time-limit`` stops it and reports the finished part as
'interrupted'; a failing item is reported and the others finish; with ``--out DIR`` the
table ``DIR/hrel_sweep.csv`` keeps every finished item and the same command resumes.
No file is written unless asked (``--out``, ``--plot``).  Lengths are in packet times;
``bound`` is the paper's upper bound for the algorithm (null for the baselines),
``lower_bound`` is h.
"""
from __future__ import annotations

import argparse
import sys
import time

from stealsearch.engine.app.commandline import announce_compiles, example_epilog
from stealsearch.engine.app.commandline import (add_backend_arguments, show_progress, check_plot_path, client_from_args,
                                non_negative_float, positive_int, print_json, run_tasks, add_file_or_subcommands,
                                seed_int)
from stealsearch.engine.core.inputs import check_output_dir, check_output_path

from .algorithms import ALGORITHMS
from .model import HRelationInputError, read_messages
from .sweep import run_algorithm

CHOICES = tuple(ALGORITHMS) + ("all",)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "hrel", help="h-relation schedules with forwarding (Sanders, Solis-Oba)",
        description="Schedule an h-relation (direct 3/2, forwarding 6/5, regular, weighted, "
                    "baselines) and verify it; or sweep random instances as Dask tasks.",
        epilog=example_epilog("stealsearch hrel --random 8 16 --algorithm all",
                              "stealsearch hrel --random 9 20 --skew 1.5 --json"))
    subs = add_file_or_subcommands(p, "target", "FILE|sweep",
                                   "message matrix (.csv, .npy, .json; a file named 'sweep': "
                                   "./sweep), or the sub-command 'sweep' (its own --help)")
    p.add_argument("--random", nargs=2, type=int, metavar=("P", "H"),
                   help="a random instance with P PEs and maximum load H")
    p.add_argument("--seed", type=seed_int, default=0, help="instance seed of --random")
    p.add_argument("--skew", type=non_negative_float, default=0.0,
                   help="log-normal sigma of --random message lengths (0 = uniform)")
    p.add_argument("--algorithm", default="forwarding", choices=CHOICES,
                   help="which scheduler; 'all' runs every one")
    p.add_argument("--out", metavar="FILE",
                   help="write the schedule (JSON); with 'all' the shortest")
    p.add_argument("--no-verify", action="store_true", help="skip the independent verifier")
    add_backend_arguments(p, policy=False, node_limit=False, what="the algorithms")
    p.set_defaults(func=run)

    g = subs.add_parser(
        "sweep", help="sweep random instances (P, h, skew, seeds) as Dask tasks",
        description="Schedule random h-relations over a grid of P, h, skews and seeds with "
                    "every algorithm named, through the sweep runner (one item per instance, "
                    "as Dask tasks), and report length/h per algorithm.",
        epilog=example_epilog("stealsearch hrel sweep --P 8,9 --h 16 --skews 0 --seeds 1 "
                              "--sequential"))
    g.add_argument("--P", dest="sweep_P", default="8,16,32,64,65", help="PE counts (comma list)")
    g.add_argument("--h", dest="sweep_h", default="16,64", help="maximum loads (comma list)")
    g.add_argument("--skews", default="0,1.5", help="message-length skews (comma list)")
    g.add_argument("--seed", type=seed_int, default=0, help="the first instance seed S")
    g.add_argument("--seeds", type=positive_int, default=2,
                   help="random instances per grid point (seeds S..S+K-1)")
    g.add_argument("--algorithms", default="direct,forwarding,regular,weighted,naive,two-phase",
                   help="algorithms to compare (comma list)")
    g.add_argument("--plot", default=None, metavar="PNG",
                   help="write the sweep's figure here (none when absent)")
    g.add_argument("--out", metavar="DIR",
                   help="the folder of the sweep's table (a re-run resumes; none when absent)")
    g.add_argument("--no-verify", action="store_true", help="skip the independent verifier")
    add_backend_arguments(g, policy=False, node_limit=False, what="the sweep")
    g.set_defaults(func=run, target="sweep")


def _place_named(args) -> bool:
    return bool(args.workers or args.scheduler or args.cluster_config)


def run(args: argparse.Namespace) -> int:
    announce_compiles(args)             # the algorithms' numba cores compile on a first run
    if args.target == "sweep":
        return _run_sweep(args)
    if args.random and args.target:
        raise HRelationInputError("give a FILE or --random P H, not both")
    if not args.random and (args.seed or args.skew):
        raise HRelationInputError("--seed and --skew apply to --random P H (and sweeps) only")
    if args.out:
        check_output_path(args.out, HRelationInputError)
    if args.random:
        from .generators import random_instance

        P, H = args.random
        if not (1 <= P <= 4096 and 1 <= H <= 10 ** 9):
            raise HRelationInputError(f"--random needs 1 <= P <= 4096 and 1 <= H <= 10^9, got {P} {H}")
        m = random_instance(P, H, seed=args.seed, skew=args.skew)
        source = f"random P={P} H={H} seed={args.seed} skew={args.skew:g}"
    elif args.target:
        m = read_messages(args.target).messages
        source = args.target
    else:
        raise HRelationInputError("hrel: give a message FILE, --random P H, or 'sweep'")
    names = list(ALGORITHMS) if args.algorithm == "all" else [args.algorithm]
    verify = not args.no_verify
    keep = bool(args.out)
    t0 = time.perf_counter()
    backend = "sequential"
    if _place_named(args):
        with client_from_args(args) as client:
            backend = f"dask[{len(client.scheduler_info()['workers'])}]"
            records, interrupted = run_tasks(client, run_algorithm,
                                             [(m, n, verify, keep) for n in names],
                                             args.time_limit,
                                         progress=show_progress(args))
    else:
        records, interrupted = run_tasks(None, run_algorithm,
                                         [(m, n, verify, keep) for n in names], args.time_limit,
                                         progress=show_progress(args))
    total = time.perf_counter() - t0
    skipped = [n for n, r in zip(names, records) if r is None]
    records = [r for r in records if r is not None]
    if not records:
        raise HRelationInputError(f"--time-limit {args.time_limit:g} s: no algorithm finished")
    best = min(records, key=lambda r: r["length"])
    if args.out:
        try:
            best["schedule"].write_json(args.out)
        except OSError as exc:
            raise HRelationInputError(f"cannot write {args.out}: {exc.strerror}") from None
    for r in records:
        r.pop("schedule", None)
    failed = [r for r in records if r["verified"] is False]
    if args.json:
        if len(records) == 1:
            obj = dict(records[0], source=source)
        else:
            obj = {"P": best["P"], "h": best["h"], "algorithm": "all", "source": source,
                   "length": best["length"], "best_algorithm": best["algorithm"],
                   "bound": best["bound"], "lower_bound": best["lower_bound"],
                   "verified": all(r["verified"] is not False for r in records) if verify else None,
                   "wall_seconds": total, "results": records}
        obj["status"] = "interrupted" if interrupted else "complete"
        obj["not_run"] = skipped
        obj["backend"] = backend          # where the algorithms ran: this process, or Dask tasks
        print_json(obj)
    else:
        print(f"h-relation {source}: P={best['P']}, h={best['h']}"
              + ("" if backend == "sequential" else f"; each algorithm a Dask task on {backend}"))
        print(f"{'algorithm':<11} {'length':>10} {'length/h':>9} {'bound':>10} {'rounds':>7} "
              f"{'verified':>8} {'seconds':>8}")
        for r in records:
            bound = "-" if r["bound"] is None else f"{r['bound']:.2f}"
            ratio = "-" if r["length_over_h"] is None else f"{r['length_over_h']:.4f}"
            ver = {True: "yes", False: "NO", None: "skipped"}[r["verified"]]
            print(f"{r['algorithm']:<11} {r['length']:>10.2f} {ratio:>9} {bound:>10} "
                  f"{r['rounds']:>7} {ver:>8} {r['wall_seconds']:>8.3f}")
        for r in failed:
            print(f"verification of {r['algorithm']} failed: {'; '.join(r['verify_errors'])}",
                  file=sys.stderr)
        note = naive_note(records)
        if note:
            print(note)
        if skipped:
            print(f"interrupted by --time-limit: not run: {', '.join(skipped)}")
        if args.out:
            print(f"schedule ({best['algorithm']}) written to {args.out}")
    return 1 if failed else 0


#: the algorithms of seed 001, each with a bound that holds on every instance
PAPER_ALGORITHMS = ("direct", "forwarding", "regular", "weighted")


def naive_note(records) -> str | None:
    """One line when the ``naive`` baseline is shorter than every algorithm of the paper
    that ran: why it can be (it has no bound, theirs hold on every instance); else None.

    >>> naive_note([{"algorithm": "naive", "length": 16.0}, {"algorithm": "direct", "length": 19.0}])[:40]
    'note: naive is shortest here because a g'
    """
    lengths = {r["algorithm"]: r["length"] for r in records}
    paper = [lengths[a] for a in PAPER_ALGORITHMS if a in lengths]
    if "naive" not in lengths or not paper or lengths["naive"] >= min(paper):
        return None
    return ("note: naive is shortest here because a greedy direct exchange often reaches the "
            "lower bound h on random messages; it has no bound, and on odd cycles of messages "
            "it needs 3/2 h where forwarding needs 6/5 h (Sanders & Solis-Oba; e.g. two "
            "3-cycles, h = 10: naive 15, forwarding 12)")


def _run_sweep(args) -> int:
    from stealsearch.engine.app.sweep import GridError, parse_axis, run_grid

    from .sweep import KINDS, plot_sweep, records, summarise, sweep_grid

    try:
        Ps = parse_axis(args.sweep_P, int, "--P")
        hs = parse_axis(args.sweep_h, int, "--h")
        skews = parse_axis(args.skews, float, "--skews")
        algos = parse_axis(args.algorithms, str, "--algorithms")
    except GridError as exc:
        raise HRelationInputError(f"hrel sweep: {exc}") from None
    for a in algos:
        if a not in ALGORITHMS:
            raise HRelationInputError(f"hrel sweep: unknown algorithm {a!r} (choose from {', '.join(ALGORITHMS)})")
    if any(P < 2 or P > 4096 for P in Ps) or any(h < 1 or h > 10 ** 9 for h in hs):
        raise HRelationInputError("hrel sweep: need 2 <= P <= 4096 and 1 <= h <= 10^9")
    if any(not (0 <= s <= 20) for s in skews):
        raise HRelationInputError("hrel sweep: --skews must lie in 0..20")
    if args.target and args.random:
        raise HRelationInputError("hrel sweep draws its own instances: --random does not apply")
    if args.out:
        check_output_dir(args.out, HRelationInputError)
    check_plot_path(args.plot, HRelationInputError)
    t0 = time.perf_counter()
    if args.seeds > 10_000:          # each seed is sweep items, made before any runs
        raise HRelationInputError(f"hrel sweep: --seeds at most 10000, got {args.seeds}")
    seeds = range(args.seed, args.seed + args.seeds)
    spec = sweep_grid(Ps, hs, skews, seeds, algos)
    with client_from_args(args) as client:
        run = run_grid(spec, KINDS, out=args.out, client=client, progress=show_progress(args),
                       time_limit=args.time_limit)
    rows = records(run.outcomes)
    wall = time.perf_counter() - t0
    if args.plot and rows:
        plot_sweep(rows, args.plot)
    summary = summarise(rows)
    failed = run.failed
    # a grid point (an instance) is done when every algorithm's item finished
    points: dict = {}
    for o in run.outcomes:
        c = o.item.columns
        points.setdefault((c["P"], c["h"], c["skew"], c["seed"]), []).append(o.ok)
    done = sum(all(v) for v in points.values())
    interrupted = bool(run.not_run)
    table = run.summary.table or None
    if args.json:
        print_json({"status": "interrupted" if interrupted else "complete",
                    "tasks": done, "tasks_planned": len(points), "records": len(rows),
                    "items": len(run.outcomes), "items_done_before": run.summary.done_before,
                    "verified": not failed, "failed": [_failure(o) for o in failed],
                    "wall_seconds": wall, "plot": args.plot, "table": table,
                    "summary": summary})
    else:
        where = "in this process" if args.sequential else "as Dask tasks"
        print(f"hrel sweep: {len(rows)} schedules ({done} of {len(points)} grid points {where}) "
              f"in {wall:.1f} s, all verified: {'yes' if not failed else 'NO'}"
              + ("; interrupted by --time-limit" if interrupted else "")
              + (f"; {run.summary.done_before} done before" if run.summary.done_before else ""))
        print(f"{'algorithm':<11} {'P':>4} {'skew':>5} {'mean len/h':>10} {'max len/h':>10}")
        for s in summary:
            print(f"{s['algorithm']:<11} {s['P']:>4} {s['skew']:>5g} {s['mean_length_over_h']:>10.4f} "
                  f"{s['max_length_over_h']:>10.4f}")
        for o in failed:
            f = _failure(o)
            print(f"{f['status']}: P={f['P']} h={f['h']} skew={f['skew']:g} seed={f['seed']} "
                  f"{f['algorithm']}: {f['error']}")
        if args.plot:
            print(f"plot written to {args.plot}")
        if table:
            print(f"table {table} (run the same command again to resume)")
    return 1 if failed else 0


def _failure(outcome) -> dict:
    return {**outcome.item.columns, "status": outcome.status, "error": outcome.error}
