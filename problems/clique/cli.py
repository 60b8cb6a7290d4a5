"""``stealsearch clique | design | factorize`` (seed 003 §1.2, §2.1, §4.3).

::

    stealsearch clique FILE|--gnp N P [--seed S] [--mode max|decide|count|count-maximal]
                       [--k K] [--bound auto|colour|recolour|infra|maxsat|greedy|sampling|size]
                       [--order degeneracy|degree|colour-sort] [--heuristic greedy|none]
                       [--workers N | --sequential | --scheduler ADDR] [--time-limit S] [--json]
    stealsearch design T V K          # a t-(v,k,1) design as a clique of size b
    stealsearch factorize GRAPH K     # a k-factorization as a clique in the k-factor graph

FILE is DIMACS (``.clq``/``.col``) or a whitespace edge list.  GRAPH is a file or
one of ``cube``, ``petersen``, ``Kn``, ``Kn,m``.  The JSON object (``--json``) is the
engine's SearchResult plus ``solution`` as the graph's labels, ``count`` (count
modes), ``n_workers`` and, for design/factorize, the decoded structure.
"""
from __future__ import annotations


from engine.commandline import add_backend_arguments, print_json, solve_from_args

from .model import CliqueInputError
from .problem import BOUNDS, HEURISTICS, MODES, ORDERS, CliqueProblem


def register(subparsers) -> None:
    p = subparsers.add_parser("clique", help="maximum clique / k-clique / clique counting (seed 003)",
                              description="Maximum clique and friends on the stealstack engine.")
    p.add_argument("file", nargs="?", metavar="FILE", help="DIMACS .clq file or edge list")
    p.add_argument("--gnp", nargs=2, metavar=("N", "P"), default=None,
                   help="use the random graph G(N, P) instead of a file")
    p.add_argument("--seed", type=int, default=1, help="seed of --gnp (default 1)")
    p.add_argument("--format", choices=("dimacs", "edgelist"), default=None,
                   help="file format (default: from the suffix / first line)")
    p.add_argument("--mode", choices=MODES, default="max")
    p.add_argument("--k", type=int, default=None, help="clique size to find (--mode decide)")
    p.add_argument("--bound", choices=BOUNDS + ("color",), default="auto",
                   help="auto (default: maxsat at density >= 0.7, else colour), colour "
                        "(MCS/BBMC-style), recolour (+ Re-NUMBER), infra (+ infra-chromatic), "
                        "maxsat (MaxSAT reasoning over colour classes), or the seed's greedy, "
                        "sampling, size")
    p.add_argument("--order", choices=ORDERS, default="degeneracy",
                   help="initial vertex order of the MCS-family bounds (default degeneracy)")
    p.add_argument("--heuristic", choices=HEURISTICS, default=None,
                   help="initial clique before the search (max mode; default greedy for the "
                        "MCS-family bounds, none for the seed's)")
    add_backend_arguments(p)
    p.set_defaults(func=run_clique)

    d = subparsers.add_parser("design", help="find a t-(v,k,1) design as a maximum clique (seed §1.2)")
    d.add_argument("t", type=int)
    d.add_argument("v", type=int)
    d.add_argument("k", type=int)
    d.add_argument("--bound", choices=BOUNDS + ("color",), default="colour")
    d.add_argument("--mode", choices=("decide", "max"), default="decide",
                   help="decide: stop at a clique of size b (default); max: maximum clique")
    add_backend_arguments(d)
    d.set_defaults(func=run_design)

    f = subparsers.add_parser("factorize", help="find a k-factorization of a graph as a clique (seed §1.2)")
    f.add_argument("graph", metavar="GRAPH", help="a graph file, or cube, petersen, Kn, Kn,m")
    f.add_argument("k", type=int, help="degree of the factors")
    f.add_argument("--bound", choices=BOUNDS + ("color",), default="colour")
    add_backend_arguments(f)
    f.set_defaults(func=run_factorize)


def _load_graph(args):
    from .generators import gnp
    from .io import read_graph

    if args.gnp is not None:
        if args.file:
            raise CliqueInputError("give FILE or --gnp N P, not both")
        n_text, p_text = args.gnp
        try:
            n = int(n_text)
            prob = float(p_text)
        except ValueError:
            raise CliqueInputError(f"--gnp expects an integer N and a probability P, "
                                   f"got {n_text!r} {p_text!r}") from None
        return gnp(n, prob, seed=args.seed)
    if not args.file:
        raise CliqueInputError("clique: give a graph FILE or --gnp N P")
    return read_graph(args.file, fmt=args.format)


def _report(result, extra: dict, args) -> None:
    if args.json:
        d = result.as_dict()
        d["n_workers"] = len(result.workers)
        d.update(extra)
        print_json(d)
        return
    print(result)
    for key, value in extra.items():
        if value is not None:
            print(f"  {key:<14} {value}")


def run_clique(args) -> int:
    graph = _load_graph(args)
    problem = CliqueProblem(graph, mode=args.mode, k=args.k, bound=args.bound, order=args.order,
                            heuristic=args.heuristic)
    result = solve_from_args(problem, args)
    extra = {"graph": graph.name, "n": graph.n, "m": graph.m}
    if args.mode not in ("count", "count-maximal"):
        extra["solution"] = result.solution
        extra["clique_size"] = None if result.solution is None else len(result.solution)
    _report(result, extra, args)
    return 0


def run_design(args) -> int:
    from .generators import decode_design, design_blocks_needed, design_graph

    t, v, k = args.t, args.v, args.k
    graph = design_graph(t, v, k)
    b = design_blocks_needed(t, v, k)
    extra: dict = {"blocks_needed": b, "vertices": graph.n}
    if b is None:
        extra["design"] = None
        extra["reason"] = f"C({v},{t})/C({k},{t}) is not an integer: no {t}-({v},{k},1) design"
        if args.json:
            print_json({"status": "none", **extra})
        else:
            print(f"design {t}-({v},{k},1): none ({extra['reason']})")
        return 0
    mode = "decide" if args.mode == "decide" else "max"
    problem = CliqueProblem(graph, mode=mode, k=b if mode == "decide" else None, bound=args.bound)
    result = solve_from_args(problem, args)
    found = result.solution is not None and len(result.solution) >= b
    extra["design"] = decode_design(result.solution, t, v) if found else None
    _report(result, extra, args)
    return 0


def run_factorize(args) -> int:
    from pathlib import Path

    from .generators import decode_factorization, factor_graph, factors_needed, named_graph
    from .io import read_graph

    graph = read_graph(args.graph) if Path(args.graph).exists() else named_graph(args.graph)
    fg, _ = factor_graph(graph, args.k)
    need = factors_needed(graph, args.k)
    extra: dict = {"graph": graph.name, "k_factors": fg.n, "factors_needed": need}
    if need is None or fg.n == 0:
        extra["factorization"] = None
        msg = ("2|E|/(|V| k) is not an integer" if need is None else f"the graph has no {args.k}-factor")
        if args.json:
            print_json({"status": "none", **extra, "reason": msg})
        else:
            print(f"{args.k}-factorization of {graph.name}: none ({msg})")
        return 0
    problem = CliqueProblem(fg, mode="decide", k=need, bound=args.bound)
    result = solve_from_args(problem, args)
    found = result.solution is not None
    extra["factorization"] = decode_factorization(graph, result.solution, args.k) if found else None
    _report(result, extra, args)
    return 0
