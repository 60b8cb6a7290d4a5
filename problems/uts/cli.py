"""``stealsearch uts``: count a UTS tree on any backend."""
from __future__ import annotations

from dataclasses import asdict

from stealsearch.engine.app.commandline import example_epilog
from stealsearch.engine.app.commandline import add_backend_arguments, print_json, result_json, solve_from_args

from .problem import PRESETS, UTSParams, UTSProblem


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "uts", help="count the nodes of an Unbalanced Tree Search tree (engine oracle)",
        description="Count a UTS tree (UTS 2.1 definition; published trees: "
                    + ", ".join(PRESETS) + ").",
        epilog=example_epilog("stealsearch uts", "stealsearch uts --options '-t 1 -a 3 -d 8 -b 4 -r 19' --json"))
    src = p.add_mutually_exclusive_group()
    src.add_argument("--tree", default=None, metavar="NAME",
                     help="a published tree: " + ", ".join(PRESETS) + " (default: 'default')")
    src.add_argument("--options", default=None, metavar="'-t 1 -a 3 ...'",
                     help="UTS command-line options for any other tree")
    add_backend_arguments(p)
    p.set_defaults(func=run)


def run(args) -> int:
    if args.options:
        problem = UTSProblem(UTSParams.parse(args.options), label="custom")
        expected = None
    else:
        problem = UTSProblem.preset(args.tree or "default")
        expected = PRESETS[problem.label][1]
    result = solve_from_args(problem, args)
    depth, leaves = result.counters["depth"], result.counters["leaves"]
    matches = None
    if expected is not None and result.status == "exhausted":
        matches = all(e is None or e == got for e, got in
                      zip(expected, (result.count, depth, leaves)))
    if args.json:
        print_json(result_json(
            result, tree=problem.label, params=asdict(problem.params), depth=depth,
            leaves=leaves, published=None if expected is None else
            dict(zip(("nodes", "depth", "leaves"), expected)), matches_published=matches))
    else:
        print(result)
        if expected is not None:
            print(f"  published      {expected[0]:,} nodes"
                  + (f", depth {expected[1]}, {expected[2]:,} leaves" if expected[1] else "")
                  + ("" if matches is None else ("  -> match" if matches else "  -> MISMATCH")))
    return 0 if matches is not False else 1
