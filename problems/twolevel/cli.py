"""``stealsearch twolevel``: 2LVDSOPT (seed paper 004) on a file, a random DAG, or a sweep.

Usage::

    stealsearch twolevel FILE.json [--json] [--gantt OUT.png] [--schedule-out S.json]
    stealsearch twolevel TASKS.csv --arcs ARCS.csv ...
    stealsearch twolevel --random N [--kind layered|sp|forkjoin] [--seed S] ...
    stealsearch twolevel --table1 ...            # the Table 1 / Fig. 4 reconstruction
    stealsearch twolevel FILE --check SCHEDULE.json   # only verify a given schedule
    stealsearch twolevel sweep [--kinds K,..] [--sizes N,..] [--seeds K] [--c2-extra X,..]
                             [--workers N | --scheduler ADDR] [--json]

The word ``sweep`` in place of FILE selects the sweep (a file literally named
``sweep`` can be given as ``./sweep``).  Every schedule is checked by the independent
verifier; the exit code is 0 when it is feasible and reaches the lower bound, 1 if not.
"""
from __future__ import annotations

import time

from .model import TwoLevelInputError


def _int_list(text: str, what: str) -> list[int]:
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise TwoLevelInputError(f"{what}: expected comma-separated integers, got {text!r}") from None
    if not vals or min(vals) < 1:
        raise TwoLevelInputError(f"{what}: expected positive integers, got {text!r}")
    return vals


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "twolevel", help="2LVDS scheduling (seed 004): 2LVDSOPT, verifier, Gantt chart, sweep",
        description="Schedule a DAG with two-level communication delays on clusters with "
                    "2LVDSOPT (Colin & Nakechbandi) and verify the schedule. FILE is a JSON "
                    "instance or a tasks CSV (with --arcs); the word 'sweep' runs a sweep of "
                    "random instances as Dask tasks.")
    p.add_argument("target", nargs="?", metavar="FILE|sweep",
                   help="instance file (.json, or tasks .csv with --arcs), or 'sweep'")
    p.add_argument("--arcs", metavar="ARCS.csv", help="arcs CSV (from,to,c1,c2) for a tasks CSV")
    p.add_argument("--random", type=int, metavar="N", help="a random DAG of N tasks")
    p.add_argument("--kind", default="layered", choices=("layered", "sp", "forkjoin"),
                   help="shape of the random DAG (default layered)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random DAG (default 0)")
    p.add_argument("--table1", action="store_true",
                   help="the 16-task DAG rebuilt from the paper's Table 1")
    p.add_argument("--one-cluster", action="store_true",
                   help="build the paper's trivial solution (all sequences in one cluster)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--full", action="store_true", help="with --json: include the whole schedule")
    p.add_argument("--gantt", metavar="OUT.png", help="write the Gantt chart (small schedules)")
    p.add_argument("--schedule-out", metavar="OUT.json", help="write the schedule as JSON")
    p.add_argument("--save-instance", metavar="OUT.json", help="write the instance as JSON")
    p.add_argument("--check", metavar="SCHEDULE.json",
                   help="do not schedule: verify this schedule (--schedule-out format) "
                        "against the instance")
    g = p.add_argument_group("sweep (FILE = sweep)")
    g.add_argument("--kinds", default="layered,sp,forkjoin", help="DAG kinds, comma-separated")
    g.add_argument("--sizes", default="100,1000", help="task counts, comma-separated")
    g.add_argument("--seeds", type=int, default=5, metavar="K", help="seeds 0..K-1 per point")
    g.add_argument("--c2-extra", default="10", metavar="X,..",
                   help="c(2) drawn as c(1) + U{0..X} (before clipping to (2)-(3)); "
                        "comma-separated values are swept (default 10)")
    where = g.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, metavar="N",
                       help="LocalCluster of N worker processes (default 2)")
    where.add_argument("--scheduler", metavar="ADDR", default=None,
                       help="a running Dask scheduler, e.g. tcp://127.0.0.1:8786")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.target == "sweep":
        return _run_sweep(args)
    return _run_one(args)


def _load(args):
    from .generators import random_instance, table1_instance
    from .io import read_instance

    given = sum(x is not None and x is not False for x in (args.target, args.random,
                                                          args.table1 or None))
    if given != 1:
        raise TwoLevelInputError("twolevel: give exactly one of FILE, --random N, --table1 "
                                 "(or the word 'sweep')")
    if args.random is not None:
        if args.random < 1:
            raise TwoLevelInputError(f"--random must be >= 1, got {args.random}")
        return random_instance(args.random, seed=args.seed, kind=args.kind)
    if args.table1:
        return table1_instance()
    return read_instance(args.target, args.arcs)


def _run_one(args) -> int:
    import json
    from pathlib import Path

    from engine.commandline import print_json

    from .algorithms import two_level_opt
    from .io import write_json
    from .verify import verify_schedule

    inst = _load(args)
    if args.save_instance:
        write_json(inst, args.save_instance)
    if args.check:
        return _check(inst, args)
    t0 = time.perf_counter()
    sched = two_level_opt(inst, one_cluster=args.one_cluster)
    wall = time.perf_counter() - t0
    t1 = time.perf_counter()
    rep = verify_schedule(inst, sched)
    verify_wall = time.perf_counter() - t1
    if args.gantt:
        from .gantt import gantt_chart
        gantt_chart(sched, args.gantt)
    if args.schedule_out:
        try:
            Path(args.schedule_out).write_text(json.dumps(sched.to_dict()) + "\n")
        except OSError as exc:
            raise TwoLevelInputError(f"cannot write {args.schedule_out}: {exc.strerror}") from None
    out = {"instance": inst.source, **sched.summary(),
           "processors_per_cluster": sched.processors_per_cluster().tolist(),
           "verified": rep.feasible, "at_lower_bound": rep.optimal,
           "verifier_lower_bound": rep.lower_bound, "errors": rep.errors,
           "wall_seconds": wall, "verify_seconds": verify_wall, "timings": sched.timings}
    if args.json:
        if args.full:
            out["schedule"] = sched.to_dict()
        print_json(out)
    else:
        ppc = out["processors_per_cluster"]
        shown = ", ".join(map(str, ppc[:12])) + (", ..." if len(ppc) > 12 else "")
        print(f"instance     {inst.source}: {inst.n} tasks, {inst.m} arcs")
        print(f"makespan     {out['makespan']}  (lower bound {out['lower_bound']})")
        print(f"clusters     {out['clusters']}  processors {out['processors']} "
              f"(per cluster: {shown})")
        print(f"copies       {out['copies']}  ({out['duplicated_tasks']} tasks duplicated, "
              f"ratio {out['duplication_ratio']:.3f})")
        print(f"messages     {out['messages']}  ({out['inter_cluster_messages']} inter-cluster)")
        print(f"verified     {'yes' if rep.feasible else 'NO'}; makespan = lower bound: "
              f"{'yes' if rep.optimal else 'NO'}")
        for e in rep.errors[:5]:
            print(f"  error: {e}")
        print(f"time         {wall:.3f} s (verifier {verify_wall:.3f} s)")
    return 0 if rep.optimal else 1


def _check(inst, args) -> int:
    from engine.commandline import print_json

    from .io import read_schedule
    from .verify import verify_schedule

    sched = read_schedule(inst, args.check)
    t0 = time.perf_counter()
    rep = verify_schedule(inst, sched)
    wall = time.perf_counter() - t0
    out = {"instance": inst.source, "schedule": args.check, **rep.to_dict(),
           "verified": rep.feasible, "copies": int(len(sched.copy_task)),
           "messages": int(len(sched.msg_task)), "wall_seconds": wall}
    if args.json:
        print_json(out)
    else:
        print(f"schedule     {args.check}: {out['copies']} copies, {out['messages']} messages")
        print(f"feasible     {'yes' if rep.feasible else 'NO'} ({rep.n_errors} violations)")
        for e in rep.errors[:10]:
            print(f"  error: {e}")
        print(f"makespan     {rep.makespan:g}  (lower bound {rep.lower_bound:g}; "
              f"{'optimal' if rep.optimal else 'not at the lower bound'})")
    return 0 if rep.feasible else 1


def _run_sweep(args) -> int:
    from engine.commandline import print_json
    from engine.cluster import dask_client

    from .generators import KINDS
    from .sweep import aggregate, format_table, run_sweep, sweep_one

    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    for k in kinds:
        if k not in KINDS:
            raise TwoLevelInputError(f"--kinds: unknown kind {k!r} (choose from {', '.join(KINDS)})")
    sizes = _int_list(args.sizes, "--sizes")
    try:
        extras = [int(x) for x in args.c2_extra.split(",") if x.strip()]
    except ValueError:
        extras = []
    if not extras or min(extras) < 0:
        raise TwoLevelInputError(f"--c2-extra: expected integers >= 0, got {args.c2_extra!r}")
    if args.seeds < 1:
        raise TwoLevelInputError(f"--seeds must be >= 1, got {args.seeds}")
    sweep_one(kinds[0], 20, 0)   # compile the numba kernels once, before the workers start
    t0 = time.perf_counter()
    with dask_client(workers=args.workers, scheduler=args.scheduler) as client:
        rows = run_sweep(client, kinds, sizes, list(range(args.seeds)), extras)
    wall = time.perf_counter() - t0
    agg = aggregate(rows)
    ok = all(a["verified"] == a["runs"] and a["at_lower_bound"] == a["runs"] for a in agg)
    if args.json:
        print_json({"table": agg, "runs": rows, "all_verified_at_lower_bound": ok,
                    "wall_seconds": wall})
    else:
        print(format_table(agg))
        print(f"{len(rows)} instances as Dask tasks in {wall:.2f} s; ppc = processors per "
              "cluster, trivial = the paper's one-cluster solution, dup = copies / tasks")
    return 0 if ok else 1
