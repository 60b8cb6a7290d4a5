"""``stealsearch twolevel``: 2LVDSOPT (seed paper 004) on a file, a random DAG, or a sweep.

Usage::

    stealsearch twolevel FILE.json [--json [--full]] [--plot GANTT.png] [--out S.json]
    stealsearch twolevel TASKS.csv --arcs ARCS.csv ...
    stealsearch twolevel --random N [--kind layered|sp|forkjoin] [--seed S] ...
    stealsearch twolevel --table1 ...            # the Table 1 / Fig. 4 reconstruction
    stealsearch twolevel FILE --check SCHEDULE.json   # only verify a given schedule
    stealsearch twolevel sweep [--kinds K,..] [--sizes N,..] [--seeds K] [--c2-extra X,..]
                             [--workers N | --sequential | --scheduler ADDR | --cluster-config FILE]
                             [--time-limit S] [--json] [--out DIR]

Output files only when asked: ``--out`` (the schedule, JSON; ``--schedule-out`` is the
old name), ``--plot`` (the Gantt chart; old name ``--gantt``), ``--save-instance``; each
path is checked before any work starts.

The word ``sweep`` in place of FILE selects the sweep (a file literally named
``sweep`` can be given as ``./sweep``): a grid for the one sweep runner
(:mod:`stealsearch.engine.app.sweep`), one item per random DAG; a failing item is reported and the others
finish; with ``--out DIR`` the table ``DIR/twolevel_sweep.csv`` keeps every finished item
and the same command resumes.  Every schedule is checked by the independent
verifier; the exit code is 0 when it is feasible and reaches the lower bound, 1 if not.
"""
from __future__ import annotations

import time

from stealsearch.engine.app.commandline import announce_compiles, example_epilog
from stealsearch.engine.app.commandline import (add_backend_arguments, show_progress, check_plot_path, client_from_args,
                                positive_int, print_json, seed_int,
                                add_file_or_subcommands)
from stealsearch.engine.core.inputs import check_output_dir, check_output_path

from .model import TwoLevelInputError

#: The largest random DAG (``--random N``, a sweep's ``--sizes``): the generation of a
#: much larger one would run for minutes with no way to stop it.
MAX_TASKS = 10 ** 7


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "twolevel", help="2LVDS scheduling (Colin, Nakechbandi): 2LVDSOPT, verifier, Gantt chart, sweep",
        description="Schedule a DAG with two-level communication delays on clusters with "
                    "2LVDSOPT (Colin & Nakechbandi) and verify the schedule. FILE is a JSON "
                    "instance or a tasks CSV (with --arcs); the word 'sweep' runs a sweep of "
                    "random instances as Dask tasks.",
        epilog=example_epilog("stealsearch twolevel --table1",
                              "stealsearch twolevel --random 200 --kind sp --json"))
    subs = add_file_or_subcommands(p, "target", "FILE|sweep",
                                   "instance file (.json, or tasks .csv with --arcs; a file "
                                   "named 'sweep': ./sweep), or the sub-command 'sweep' (its "
                                   "own --help)")
    p.add_argument("--arcs", metavar="ARCS.csv", help="arcs CSV (from,to,c1,c2) for a tasks CSV")
    p.add_argument("--random", type=int, metavar="N", help="a random DAG of N tasks")
    p.add_argument("--kind", default="layered", choices=("layered", "sp", "forkjoin"),
                   help="shape of the random DAG")
    p.add_argument("--seed", type=seed_int, default=0, help="instance seed of --random")
    p.add_argument("--table1", action="store_true",
                   help="the 16-task DAG rebuilt from the paper's Table 1")
    p.add_argument("--one-cluster", action="store_true",
                   help="build the paper's trivial solution (all sequences in one cluster)")
    p.add_argument("--full", action="store_true", help="with --json: include the whole schedule")
    p.add_argument("--plot", "--gantt", dest="plot", metavar="OUT.png",
                   help="write the Gantt chart here (small schedules)")
    p.add_argument("--out", "--schedule-out", dest="out", metavar="OUT.json",
                   help="write the schedule as JSON here")
    p.add_argument("--save-instance", metavar="OUT.json", help="write the instance as JSON here")
    p.add_argument("--check", metavar="SCHEDULE.json",
                   help="do not schedule: verify this schedule (--schedule-out format) "
                        "against the instance")
    add_backend_arguments(p, policy=False, node_limit=False, what="the scheduler")
    p.set_defaults(func=run)

    g = subs.add_parser(
        "sweep", help="sweep random DAGs (kinds, sizes, seeds, c(2)) as Dask tasks",
        description="Schedule random DAGs of every kind and size named with 2LVDSOPT, "
                    "through the sweep runner (one item per DAG, as Dask tasks), verify each "
                    "schedule and report one table row per (kind, size).",
        epilog=example_epilog("stealsearch twolevel sweep --kinds sp --sizes 100 --seeds 2 "
                              "--sequential"))
    g.add_argument("--seed", type=seed_int, default=0, help="the first instance seed S")
    g.add_argument("--out", metavar="DIR",
                   help="the folder of the sweep's table (a re-run resumes; none when absent)")
    g.add_argument("--kinds", default="layered,sp,forkjoin", help="DAG kinds, comma-separated")
    g.add_argument("--sizes", default="100,1000", help="task counts, comma-separated")
    g.add_argument("--seeds", type=positive_int, default=5, metavar="K",
                   help="random instances per point (seeds S..S+K-1 with S = --seed)")
    g.add_argument("--c2-extra", default="10", metavar="X,..",
                   help="c(2) drawn as c(1) + U{0..X} (before clipping to (2)-(3)); "
                        "comma-separated values are swept")
    add_backend_arguments(g, policy=False, node_limit=False, what="the sweep")
    g.set_defaults(func=run, target="sweep")


def run(args) -> int:
    announce_compiles(args)             # 2LVDSOPT's numba core compiles on a first run
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
        if not 1 <= args.random <= MAX_TASKS:
            raise TwoLevelInputError(f"--random must be in 1..{MAX_TASKS:,} tasks (as a "
                                     f"sweep's --sizes), got {args.random}")
        return random_instance(args.random, seed=args.seed, kind=args.kind)
    if args.table1:
        return table1_instance()
    return read_instance(args.target, args.arcs)


def _run_one(args) -> int:
    import json

    from stealsearch.engine.core.inputs import write_output_text

    from .algorithms import two_level_opt
    from .io import instance_to_dict
    from .verify import verify_schedule

    if args.workers or args.scheduler or args.cluster_config or args.time_limit is not None:
        raise TwoLevelInputError("one DAG is scheduled in this process (a polynomial "
                                 "algorithm); --workers, --scheduler, --cluster-config and "
                                 "--time-limit apply to 'twolevel sweep'")
    if args.full and not args.json:
        raise TwoLevelInputError("--full adds the schedule to the --json output: give --json "
                                 "(or --out FILE to save the schedule)")
    if args.seed and args.random is None:
        raise TwoLevelInputError("--seed applies to --random N (and sweeps) only")
    check_plot_path(args.plot, TwoLevelInputError)
    for path in (args.out, args.save_instance):
        if path:
            check_output_path(path, TwoLevelInputError)
    if args.check and (args.out or args.plot):
        raise TwoLevelInputError("--check only verifies: --out and --plot do not apply")
    inst = _load(args)
    if args.save_instance:
        write_output_text(args.save_instance, json.dumps(instance_to_dict(inst), indent=1) + "\n",
                          TwoLevelInputError)
    _warm()                # the times printed exclude loading the kernels
    if args.check:
        return _check(inst, args)
    t0 = time.perf_counter()
    sched = two_level_opt(inst, one_cluster=args.one_cluster)
    wall = time.perf_counter() - t0
    t1 = time.perf_counter()
    rep = verify_schedule(inst, sched)
    verify_wall = time.perf_counter() - t1
    if args.plot:
        from .gantt import gantt_chart
        gantt_chart(sched, args.plot)
    if args.out:
        write_output_text(args.out, json.dumps(sched.to_dict()) + "\n", TwoLevelInputError)
    out = {"instance": inst.source, **sched.summary(),
           "processors_per_cluster": sched.processors_per_cluster().tolist(),
           "verified": rep.feasible, "at_lower_bound": rep.optimal,
           "verifier_lower_bound": rep.lower_bound, "errors": rep.errors,
           "wall_seconds": wall, "verify_seconds": verify_wall, "timings": sched.timings}
    out = {"status": "complete", **out}
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


def _warm() -> None:
    """2LVDSOPT and the verifier once on a 12-task DAG, untimed: a first call loads their
    numba kernels (many times the time of a small DAG's schedule), which belongs to no
    schedule."""
    from .algorithms import two_level_opt
    from .generators import random_instance
    from .verify import verify_schedule

    inst = random_instance(12, seed=0)
    verify_schedule(inst, two_level_opt(inst))


def _check(inst, args) -> int:
    from .io import read_schedule
    from .verify import verify_schedule

    sched = read_schedule(inst, args.check)
    t0 = time.perf_counter()
    rep = verify_schedule(inst, sched)
    wall = time.perf_counter() - t0
    out = {"instance": inst.source, "schedule": args.check, **rep.to_dict(),
           "verified": rep.feasible, "copies": int(len(sched.copy_task)),
           "messages": int(len(sched.msg_task)), "wall_seconds": wall}
    out = {"status": "complete", **out}
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
    from stealsearch.engine.app.sweep import GridError, parse_axis, run_grid

    from .generators import KINDS as DAG_KINDS
    from .sweep import KINDS, aggregate, format_table, records, sweep_grid
    from .sweep_items import twolevel

    for flag, value in (("--plot", args.plot), ("--check", args.check),
                        ("--full", args.full), ("--save-instance", args.save_instance),
                        ("--random", args.random is not None), ("--table1", args.table1),
                        ("--arcs", args.arcs)):
        if value:
            raise TwoLevelInputError(f"twolevel sweep: {flag} does not apply (one DAG only)")
    try:
        kinds = parse_axis(args.kinds, str, "--kinds")
        sizes = parse_axis(args.sizes, int, "--sizes")
        extras = parse_axis(args.c2_extra, int, "--c2-extra")
    except GridError as exc:
        raise TwoLevelInputError(f"twolevel sweep: {exc}") from None
    for k in kinds:
        if k not in DAG_KINDS:
            raise TwoLevelInputError(f"--kinds: unknown kind {k!r} (choose from {', '.join(DAG_KINDS)})")
    if min(sizes) < 1:
        raise TwoLevelInputError(f"--sizes: expected positive integers, got {args.sizes!r}")
    if min(extras) < 0:
        raise TwoLevelInputError(f"--c2-extra: expected integers >= 0, got {args.c2_extra!r}")
    if max(sizes) > MAX_TASKS:
        raise TwoLevelInputError(f"--sizes: at most 10^7 tasks per DAG, got {max(sizes)}")
    if args.out:
        check_output_dir(args.out, TwoLevelInputError)
    twolevel.warmup()   # compile the numba kernels once here, before the workers load them
    if args.seeds > 10_000:          # each seed is sweep items, made before any runs
        raise TwoLevelInputError(f"--seeds: at most 10000, got {args.seeds}")
    seeds = range(args.seed, args.seed + args.seeds)
    spec = sweep_grid(kinds, sizes, seeds, extras)
    t0 = time.perf_counter()
    with client_from_args(args) as client:
        run = run_grid(spec, KINDS, out=args.out, client=client, progress=show_progress(args),
                       time_limit=args.time_limit)
    rows = records(run.outcomes)
    wall = time.perf_counter() - t0
    agg = aggregate(rows)
    failed = [{**o.item.columns, "status": o.status, "error": o.error} for o in run.failed]
    ok = not failed and all(a["verified"] == a["runs"] and a["at_lower_bound"] == a["runs"]
                            for a in agg)
    table = run.summary.table or None
    if args.json:
        print_json({"status": "interrupted" if run.not_run else "complete",
                    "table": agg, "runs": rows, "runs_planned": len(run.outcomes),
                    "runs_done_before": run.summary.done_before, "failed": failed,
                    "all_verified_at_lower_bound": ok, "wall_seconds": wall,
                    "sweep_table": table})
    else:
        print(format_table(agg))
        where = "in this process" if args.sequential else "as Dask tasks"
        print(f"{len(rows)} of {len(run.outcomes)} instances {where} in {wall:.2f} s"
              + (" (interrupted by --time-limit)" if run.not_run else "")
              + (f"; {run.summary.done_before} done before" if run.summary.done_before else "")
              + "; ppc = processors per cluster, trivial = the paper's one-cluster solution, "
              "dup = copies / tasks")
        for f in failed:
            print(f"{f['status']}: {f['kind']} n={f['n']} seed={f['seed']} "
                  f"c2-extra={f['c2_extra']}: {f['error']}")
        if table:
            print(f"table {table} (run the same command again to resume)")
    return 0 if ok else 1
