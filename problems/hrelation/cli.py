"""``stealsearch hrel``: h-relation schedules of seed 001 (Sanders & Solis-Oba).

Usage::

    stealsearch hrel FILE [--algorithm A] [--json] [--out schedule.json]
    stealsearch hrel --random P H [--seed S] [--skew X] [--algorithm A|all] [--json]
    stealsearch hrel sweep [--P 8,16,32] [--h 16,64] [--skews 0,1.5] [--seeds 3]
                           [--algorithms ...] [--plot sweep.png] [--workers N | --scheduler ADDR]

The positional argument is a message file (.csv/.npy/.json) or the word ``sweep``.  A single
instance runs in this process unless ``--workers``/``--scheduler`` is given, in which case it is
submitted as one Dask task; a sweep always runs as Dask tasks (``client.map``) on
``engine.cluster.dask_client``.  Lengths are in packet times; ``bound`` is the paper's upper
bound for the algorithm (null for the baselines), ``lower_bound`` is h.
"""
from __future__ import annotations

import argparse
import sys
import time

from engine.commandline import print_json

from .algorithms import ALGORITHMS
from .model import HRelationInputError, read_messages
from .sweep import parse_list, plot_sweep, run_algorithm, run_sweep, summarise

CHOICES = tuple(ALGORITHMS) + ("all",)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "hrel", help="h-relation schedules with forwarding (seed 001)",
        description="Schedule an h-relation (direct 3/2, forwarding 6/5, regular, weighted, "
                    "baselines) and verify it; or sweep random instances as Dask tasks.")
    p.add_argument("target", nargs="?", metavar="FILE|sweep",
                   help="message matrix (.csv, .npy, .json), or 'sweep'")
    p.add_argument("--random", nargs=2, type=int, metavar=("P", "H"),
                   help="a random instance with P PEs and maximum load H")
    p.add_argument("--seed", type=int, default=0, help="seed of --random (default 0)")
    p.add_argument("--skew", type=float, default=0.0,
                   help="log-normal sigma of --random message lengths (0 = uniform)")
    p.add_argument("--algorithm", default="forwarding", choices=CHOICES,
                   help="which scheduler (default forwarding); 'all' runs every one")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", metavar="FILE", help="write the schedule (JSON); with 'all' the shortest")
    p.add_argument("--no-verify", action="store_true", help="skip the independent verifier")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, metavar="N",
                       help="run on a LocalCluster of N worker processes (sweep default 2)")
    where.add_argument("--scheduler", metavar="ADDR", default=None,
                       help="connect to a running Dask scheduler")
    g = p.add_argument_group("sweep (target 'sweep')")
    g.add_argument("--P", dest="sweep_P", default="8,16,32,64,65", help="PE counts (comma list)")
    g.add_argument("--h", dest="sweep_h", default="16,64", help="maximum loads (comma list)")
    g.add_argument("--skews", default="0,1.5", help="message-length skews (comma list)")
    g.add_argument("--seeds", type=int, default=2, help="random instances per grid point")
    g.add_argument("--algorithms", default="direct,forwarding,regular,weighted,naive,two-phase",
                   help="algorithms to compare (comma list)")
    g.add_argument("--plot", default="hrel_sweep.png", metavar="PNG", help="plot file")
    p.set_defaults(func=run)


def _client(args):
    from engine.cluster import dask_client

    return dask_client(workers=args.workers, scheduler=args.scheduler)


def run(args: argparse.Namespace) -> int:
    if args.target == "sweep":
        return _run_sweep(args)
    if args.random and args.target:
        raise HRelationInputError("give a FILE or --random P H, not both")
    if args.random:
        from .generators import random_instance

        P, H = args.random
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
    if args.workers or args.scheduler:
        with _client(args) as client:
            futures = [client.submit(run_algorithm, m, n, verify, keep, pure=False) for n in names]
            records = client.gather(futures)
    else:
        records = [run_algorithm(m, n, verify, keep) for n in names]
    total = time.perf_counter() - t0
    best = min(records, key=lambda r: r["length"])
    if args.out:
        best["schedule"].write_json(args.out)
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
        print_json(obj)
    else:
        print(f"h-relation {source}: P={best['P']}, h={best['h']}")
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
        if args.out:
            print(f"schedule ({best['algorithm']}) written to {args.out}")
    return 1 if failed else 0


def _run_sweep(args) -> int:
    try:
        Ps = parse_list(args.sweep_P, int, "--P")
        hs = parse_list(args.sweep_h, int, "--h")
        skews = parse_list(args.skews, float, "--skews")
        algos = parse_list(args.algorithms, str, "--algorithms")
    except ValueError as exc:
        raise HRelationInputError(f"hrel sweep: {exc}".splitlines()[0]) from None
    for a in algos:
        if a not in ALGORITHMS:
            raise HRelationInputError(f"hrel sweep: unknown algorithm {a!r} (choose from {', '.join(ALGORITHMS)})")
    if any(P < 2 for P in Ps) or any(h < 1 for h in hs) or args.seeds < 1:
        raise HRelationInputError("hrel sweep: need P >= 2, h >= 1 and --seeds >= 1")
    t0 = time.perf_counter()
    with _client(args) as client:
        rows = run_sweep(client, Ps, hs, skews, args.seeds, algos)
    wall = time.perf_counter() - t0
    plot_sweep(rows, args.plot)
    summary = summarise(rows)
    failed = [r for r in rows if r["verified"] is False]
    if args.json:
        print_json({"tasks": len(rows) // max(1, len(algos)), "records": len(rows),
                    "verified": not failed, "wall_seconds": wall, "plot": args.plot,
                    "summary": summary})
    else:
        print(f"hrel sweep: {len(rows)} schedules ({len(rows) // max(1, len(algos))} Dask tasks) "
              f"in {wall:.1f} s, all verified: {'yes' if not failed else 'NO'}")
        print(f"{'algorithm':<11} {'P':>4} {'skew':>5} {'mean len/h':>10} {'max len/h':>10}")
        for s in summary:
            print(f"{s['algorithm']:<11} {s['P']:>4} {s['skew']:>5g} {s['mean_length_over_h']:>10.4f} "
                  f"{s['max_length_over_h']:>10.4f}")
        print(f"plot written to {args.plot}")
    return 1 if failed else 0
