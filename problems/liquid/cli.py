"""``stealsearch liquid ...``: liquid schedules of collective data exchanges (seed 000).

Sub-commands (a sub-parser each)::

    stealsearch liquid example              # the 25-transfer traffic of Fig. 1
    stealsearch liquid alloc 4 4 4 4 4 4 4 4  # Swiss-T1 all-to-all over an allocation
    stealsearch liquid traffic FILE         # a traffic file (JSON/YAML, see topology.load_traffic)
    stealsearch liquid teams FILE|example [--full]   # count teams / full teams
    stealsearch liquid t1-study [--out DIR] [--workers N | --sequential | --scheduler ADDR]
                                            # one sweep item per class (stealsearch.engine.app.sweep);
                                            # --out DIR keeps the table: a re-run resumes

The search commands take the engine's backend flags (``--sequential``, ``--workers``,
``--scheduler``, limits, steal policy) and ``--json``: the engine result in the one schema
(``stealsearch/schemas/result.schema.json``) with the liquid keys beside it
(``liquid_status``: liquid / optimal, not liquid / not liquid / unknown; ``length``,
``schedule``, ``duration``, ``liquid_throughput``, round robin, ``colouring``: the
colouring search's own result when one ran).  ``--plain-tree`` switches off
the anchor symmetry breaking (the paper's tree as such).  If no liquid schedule
exists the optimal schedule is searched by colouring (``--no-colouring`` skips it).
"""
from __future__ import annotations

import argparse
import contextlib
import json

from stealsearch.engine.app.commandline import example_epilog
from stealsearch.engine.app.commandline import (add_backend_arguments, check_workers, client_from_args,
                                cluster_options, finite_json,
                                policy_from_args, print_json, result_json, show_progress)
from stealsearch.engine.core.inputs import check_output_path, write_output_text
from stealsearch.engine.core.result import json_default

from .model import LiquidInputError


def register(subparsers) -> None:
    p = subparsers.add_parser("liquid", help="liquid schedules of collective data exchanges (Gabrielyan, Hersch)",
                              description=__doc__.split("\n\n")[0],
                              epilog=example_epilog("stealsearch liquid example",
                                                    "stealsearch liquid teams example --full"))
    sub = p.add_subparsers(dest="liquid_command", metavar="WHAT", parser_class=type(p))
    sub.required = True

    ex = sub.add_parser("example", help="the 25-transfer traffic of Fig. 1",
                        epilog=example_epilog("stealsearch liquid example --json"))
    _search_flags(ex)
    ex.set_defaults(func=run_example)

    al = sub.add_parser("alloc", help="Swiss-T1 all-to-all over an allocation A1..A8",
                        epilog=example_epilog("stealsearch liquid alloc 1 1 1 0 0 0 0 0"))
    al.add_argument("allocation", nargs=8, metavar="A", help="nodes in front of switch i (0..4)")
    _search_flags(al)
    al.set_defaults(func=run_alloc)

    tr = sub.add_parser("traffic", help="a traffic file (JSON or YAML)",
                        epilog=example_epilog(
                            "stealsearch liquid traffic problems/liquid/examples/ring4_alltoall.yaml"))
    tr.add_argument("file", help="a traffic file: JSON or YAML (its forms: python -m pydoc "
                                        "stealsearch.problems.liquid.topology.load_traffic)")
    _search_flags(tr)
    tr.set_defaults(func=run_traffic)

    te = sub.add_parser("teams", help="count the teams (or full teams) of a traffic",
                        epilog=example_epilog(
                            "stealsearch liquid teams example --full",
                            "stealsearch liquid teams problems/liquid/examples/fig1.yaml"))
    te.add_argument("file", help="a traffic file, or the word 'example' (Fig. 1)")
    te.add_argument("--full", action="store_true",
                    help="count the full teams too (teams that hold every bottleneck)")
    add_backend_arguments(te)
    te.set_defaults(func=run_teams)

    st = sub.add_parser("t1-study", help="the Swiss-T1 study: 363 sub-topologies, Figs. 5 and 6/9",
                        epilog=example_epilog("stealsearch liquid t1-study --limit 5 --sequential"))
    st.add_argument("--out", default=None, metavar="DIR",
                    help="write JSON, CSV and PNG plots into this directory, with the sweep's "
                         "table t1_study_runs.csv: a re-run resumes (none when absent)")
    add_backend_arguments(st, policy=False, what="the study")
    st.add_argument("--every", action="store_true",
                    help="every one of the 390,624 non-empty allocations, not one per class (hours)")
    st.add_argument("--limit", type=int, default=None, metavar="K", help="only the first K items")
    st.set_defaults(func=run_study_cmd)


def _search_flags(p: argparse.ArgumentParser) -> None:
    add_backend_arguments(p)
    p.add_argument("--plain-tree", action="store_true",
                   help="no anchor symmetry breaking (the paper's tree exactly)")
    p.add_argument("--no-colouring", action="store_true",
                   help="do not search the optimal schedule when no liquid schedule exists")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="write the result (the --json object, schedule included) to FILE")


@contextlib.contextmanager
def _backend(args):
    """solve() keyword arguments for the flags; one cluster for every search of the command
    (none: with no place flag each search ramps up by itself, stealsearch.engine.transports.rampup)."""
    from stealsearch.engine.app.commandline import announce_compiles, backend_from_args

    announce_compiles(args)             # the search kernels compile on a first run
    check_workers(args)
    kwargs = dict(time_limit=args.time_limit, node_limit=args.node_limit,
                  policy=policy_from_args(args), progress=show_progress(args))
    backend = backend_from_args(args)
    if backend in ("sequential", "auto"):
        yield dict(kwargs, backend=backend,
                   **({"grace": args.grace} if backend == "auto" else {}))
        return
    from stealsearch.engine.deploy.cluster import dask_client

    with dask_client(workers=args.workers, scheduler=args.scheduler,
                     config=args.cluster_config, **cluster_options(args)) as client:
        yield dict(kwargs, backend=backend, client=client,
                   **({"grace": args.grace} if backend == "rampup" else {}))


def _schedule_and_report(traffic, args) -> int:
    from .problem import schedule_traffic

    if args.out:
        check_output_path(args.out, LiquidInputError)      # before the search, not after
    with _backend(args) as kw:
        r = schedule_traffic(traffic, colour_if_not_liquid=not args.no_colouring,
                             anchor=not args.plain_tree, **kw)
    labels = traffic.labels()
    # the liquid search's engine result at the top (the one schema), liquid keys beside it
    out = dict(r["search"])
    out["n_workers"] = len(out.get("workers") or [])
    renamed = {"status": "liquid_status", "nodes": "total_nodes",
               "wall_seconds": "total_wall_seconds", "search_seconds": None}
    for k, v in r.items():
        if k in ("search", "name"):
            continue
        key = renamed.get(k, k)
        if key is not None:
            out[key] = v
    out["traffic"] = traffic.name
    out["transfer_labels"] = labels
    if args.out:
        write_output_text(args.out, json.dumps(finite_json(out), indent=2, default=json_default,
                                               allow_nan=False) + "\n", LiquidInputError)
    if args.json:
        print_json(out)
        return 0
    lt = r["liquid_throughput"]
    print(f"traffic {traffic.name}: {traffic.size} transfers over {len(traffic.links)} links")
    print(f"  duration Λ        {r['duration']}   bottlenecks {', '.join(r['bottlenecks'][:12])}"
          + (" ..." if len(r["bottlenecks"]) > 12 else ""))
    if lt is not None:
        print(f"  liquid throughput {lt:.2f} MB/s  (#X/Λ = {traffic.size}/{r['duration']} × "
              f"{traffic.link_throughput:g} MB/s)")
    if r["round_robin_steps"] is not None:
        print(f"  round robin       {r['round_robin_steps']} steps, "
              f"{r['round_robin_throughput']:.2f} MB/s")
    print(f"  status            {r['status']}" + (f", {r['length']} steps" if r.get("length") else ""))
    print(f"  search            {r.get('nodes', 0):,} nodes, {r['wall_seconds']:.3f} s")
    if r.get("schedule") and traffic.size <= 200:
        for s, step in enumerate(r["schedule"]):
            print(f"  step {s + 1:>3}: " + " ".join(labels[t] for t in step))
    return 0


def run_example(args) -> int:
    from .topology import fig1_traffic

    return _schedule_and_report(fig1_traffic(), args)


def run_alloc(args) -> int:
    from .topology import swiss_t1

    try:
        alloc = [int(a) for a in args.allocation]
    except ValueError:
        raise LiquidInputError(f"allocation must be 8 integers 0..4, got {' '.join(args.allocation)}") from None
    t1 = swiss_t1()
    alloc = t1.check_allocation(alloc)
    if sum(alloc) == 0:
        raise LiquidInputError("allocation: no node allocated, the traffic is empty")
    return _schedule_and_report(t1.all_to_all(alloc), args)


def run_traffic(args) -> int:
    from .topology import load_traffic

    x = load_traffic(args.file)
    if x.size == 0:
        raise LiquidInputError(f"{args.file}: the traffic has no transfer")
    return _schedule_and_report(x, args)


def run_teams(args) -> int:
    from stealsearch.engine.app.commandline import solve_from_args

    from .problem import TeamCountProblem
    from .topology import fig1_traffic, load_traffic

    x = fig1_traffic() if args.file == "example" else load_traffic(args.file)
    if x.size == 0:
        raise LiquidInputError(f"{args.file}: the traffic has no transfer")
    # --full counts both: the full teams (the result) and all teams (beside it)
    res = solve_from_args(TeamCountProblem(x, full=args.full), args)
    teams = solve_from_args(TeamCountProblem(x, full=False), args) if args.full else res
    what = "full teams" if args.full else "teams"
    partial = " (interrupted: a lower count)"
    if args.json:
        print_json(result_json(res, traffic=x.name, transfers=x.size, duration=x.duration(),
                               bottlenecks=x.bottlenecks(), what=what, teams=teams.count,
                               teams_status=teams.status,
                               full_teams=res.count if args.full else None))
        return 0
    print(f"traffic {x.name}: {x.size} transfers, Λ = {x.duration()}, bottlenecks {', '.join(x.bottlenecks())}")
    if args.full:
        print(f"  {res.count:,} full teams" + (partial if res.status == "interrupted" else "")
              + f" ({teams.count:,} teams" + (partial if teams.status == "interrupted" else "") + ")")
    else:
        print(f"  {res.count:,} teams" + (partial if res.status == "interrupted" else ""))
    nodes = res.nodes + (teams.nodes if teams is not res else 0)
    wall = res.wall_seconds + (teams.wall_seconds if teams is not res else 0)
    print(f"  nodes {nodes:,}, {wall:.3f} s on {res.backend}")
    return 0


def run_study_cmd(args) -> int:
    from .sweep import NODE_LIMIT, run_study

    from stealsearch.engine.core.inputs import check_output_dir

    limit = args.node_limit if args.node_limit is not None else NODE_LIMIT
    if limit < 1:
        raise LiquidInputError(f"--node-limit must be >= 1, got {limit}")
    if args.limit is not None and args.limit < 1:
        raise LiquidInputError(f"--limit must be >= 1, got {args.limit}")
    if args.out:
        check_output_dir(args.out, LiquidInputError)
    with client_from_args(args) as client:
        result = run_study(client, node_limit=limit, every=args.every, limit=args.limit,
                           out=args.out, time_limit=args.time_limit,
                           progress=show_progress(args))
    s = result["summary"]
    if args.json:
        status = "interrupted" if s.get("interrupted") else "complete"
        print_json({"status": status, **result} if args.limit
                   else {"status": status, "summary": s, "rows": result["rows"]})
        return 1 if s["failed"] else 0
    print(f"Swiss-T1 study: {s['classes']} classes of equal (nodes, liquid throughput), "
          f"{s['items']} of {s['items_planned']} searched"
          + (" (interrupted by --time-limit)" if s["interrupted"] else ""))
    if not s["items"]:
        if args.time_limit is not None and s["interrupted"]:
            print(f"  no allocation finished within --time-limit {args.time_limit:g} s")
        for f in s["failed"]:
            print(f"  {f['status']}: allocation {f['allocation']}: {f['error']}")
        return 1 if s["failed"] else 0
    print(f"  liquid schedule found {s['liquid_found']}, not liquid {s['not_liquid']}, unknown {s['unknown']}")
    print(f"  search seconds: median {s['search_seconds_median']:.4f}, 97th pct "
          f"{s['search_seconds_p97']:.4f}, max {s['search_seconds_max']:.4f}; "
          f"{s['under_0_1_s']} under 0.1 s")
    print(f"  liquid / round robin: min {s['liquid_over_round_robin_min']:.2f}, median "
          f"{s['liquid_over_round_robin_median']:.2f}, max {s['liquid_over_round_robin_max']:.2f}")
    for f in s["failed"]:
        print(f"  {f['status']}: allocation {f['allocation']}: {f['error']}")
    print(f"  wall {s['wall_seconds']:.1f} s" + (f"; files in {args.out}" if args.out else "")
          + (f"; {s['items_done_before']} done before (resumed)" if s["items_done_before"] else ""))
    return 1 if s["failed"] else 0
