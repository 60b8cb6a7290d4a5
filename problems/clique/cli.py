"""``stealsearch clique | design | factorize`` (seed 003 §1.2, §2.1, §4.3).

::

    stealsearch clique FILE|--gnp N P [--seed S] [--mode max|decide|count|count-maximal]
                       [--k K] [--bound auto|colour|recolour|infra|maxsat|incmaxsat|filtsat|greedy|
                                sampling|size]
                       [--order degeneracy|degree|colour-sort|iset|maxiset] [--heuristic amts|greedy|none]
                       [--workers N | --sequential | --scheduler ADDR] [--time-limit S] [--json]
                       [--prove PREFIX]
    stealsearch design T V K          # a t-(v,k,1) design as a clique of size b
    stealsearch factorize GRAPH K     # a k-factorization as a clique in the k-factor graph

FILE is DIMACS (``.clq``/``.col``) or a whitespace edge list, either may be gzipped
(``.clq.gz``).  GRAPH is a file or one of ``cube``, ``petersen``, ``Kn``, ``Kn,m``.
The JSON object (``--json``) is the engine result in the one schema
(``stealsearch/schemas/result.schema.json``: status, mode, objective, bound, count,
nodes, ..., ``solution`` as the graph's labels) with ``graph``, ``n``, ``m``,
``clique_size`` and, for design/factorize, the decoded structure beside it.

Every reported clique is checked by :func:`stealsearch.problems.clique.verify.check_clique`, which
reads only the graph: a clique of the reported size always, and maximal too when the
status is ``optimal``.  An interrupted search reports its incumbent as found (it need
not be maximal) with the proven bound.  ``--prove PREFIX`` (on any backend: one stack,
lanes, Dask workers, the ramp-up) also writes the model ``PREFIX.opb`` and a VeriPB proof
``PREFIX.pbp`` that no larger clique exists (:mod:`stealsearch.problems.clique.proof`);
``stealsearch check-proof PREFIX`` checks it, and ``stealsearch resume DIR --prove
PREFIX`` continues the proof of a search checkpointed with ``--checkpoint DIR``.
"""
from __future__ import annotations

import os
from pathlib import Path


from stealsearch.engine.app.commandline import (add_backend_arguments, announce_compiles,
                                                example_epilog, print_json, result_json,
                                                seed_int, solve_from_args)
from stealsearch.engine.core.problem import SolutionError

from .model import CliqueInputError
from .problem import BOUNDS, HEURISTICS, MODES, ORDERS, CliqueProblem
from .small import SMALL_COUNT_VERTICES, SMALL_MAX_VERTICES, SMALL_MAXIMAL_VERTICES

TIERS = ("auto", "compiled", "python")


def register(subparsers) -> None:
    p = subparsers.add_parser("clique", help="maximum clique / k-clique / clique counting (Thimm, Kreher, Merkey)",
                              description="Maximum clique and friends on the stealstack engine.",
                              epilog=example_epilog(
                                  "stealsearch clique keller4",
                                  "stealsearch clique --gnp 30 0.5 --mode count-maximal --json"))
    p.add_argument("file", nargs="?", metavar="FILE",
                   help="DIMACS .clq file or edge list, or the name of a graph that ships with "
                        "the package: " + ", ".join(packaged_graphs()))
    p.add_argument("--gnp", nargs=2, metavar=("N", "P"), default=None,
                   help="use the random graph G(N, P) instead of a file")
    p.add_argument("--seed", type=seed_int, default=0,
                   help="instance seed of --gnp")
    p.add_argument("--format", choices=("dimacs", "edgelist"), default=None,
                   help="file format (from the suffix / first line when absent)")
    p.add_argument("--mode", choices=MODES, default="max",
                   help="max: a maximum clique; decide: a clique of size >= --k; count: all "
                        "cliques; count-maximal: maximal cliques")
    p.add_argument("--k", type=int, default=None, help="clique size to find (--mode decide only)")
    p.add_argument("--bound", choices=BOUNDS + ("color",), default="auto",
                   help="auto (incmaxsat or maxsat at density >= 0.7 or a first clique of "
                        ">= 30, else colour), colour (MCS/BBMC-style), recolour (+ Re-NUMBER), "
                        "infra (+ infra-chromatic), maxsat (MaxSAT reasoning over colour "
                        "classes), incmaxsat (MoMC's reasoning), filtsat (incmaxsat + CliSAT's "
                        "SAT filtering), or the seed's greedy, sampling, size")
    p.add_argument("--order", choices=ORDERS, default="degeneracy",
                   help="initial vertex order of the MCS-family bounds")
    p.add_argument("--heuristic", choices=HEURISTICS, default=None,
                   help="initial clique before the search (max mode; when absent: amts -- "
                        "greedy, then the AMTS tabu search -- for the MCS-family bounds, none "
                        "for the seed's)")
    add_backend_arguments(p)
    _add_tier_argument(p)
    p.add_argument("--out", default=None, metavar="FILE",
                   help="write the result (the --json object, the clique included) to FILE")
    p.add_argument("--prove", default=None, metavar="PREFIX",
                   help="write the model PREFIX.opb and a proof PREFIX.pbp of the answer "
                        "(--mode max or decide; in this process: no place flag, or "
                        "--sequential); check it with "
                        "'stealsearch check-proof PREFIX' or 'veripb PREFIX.opb PREFIX.pbp'")
    p.set_defaults(func=run_clique)

    d = subparsers.add_parser("design", help="find a t-(v,k,1) design as a maximum clique (seed §1.2)",
                              epilog=example_epilog("stealsearch design 2 7 3"))
    d.add_argument("t", type=int, help="every t-subset of the points lies in one block")
    d.add_argument("v", type=int, help="number of points")
    d.add_argument("k", type=int, help="points per block")
    d.add_argument("--bound", choices=BOUNDS + ("color",), default="colour",
                   help="the clique kernel's bound")
    d.add_argument("--mode", choices=("decide", "max"), default="decide",
                   help="decide: stop at a clique of size b; max: maximum clique")
    add_backend_arguments(d)
    _add_tier_argument(d)
    d.set_defaults(func=run_design)

    f = subparsers.add_parser("factorize", help="find a k-factorization of a graph as a clique (seed §1.2)",
                              epilog=example_epilog("stealsearch factorize K6 1",
                                                    "stealsearch factorize petersen 1"))
    f.add_argument("graph", metavar="GRAPH", help="a graph file, or cube, petersen, Kn, Kn,m")
    f.add_argument("k", type=int, help="degree of the factors")
    f.add_argument("--bound", choices=BOUNDS + ("color",), default="colour",
                   help="the clique kernel's bound")
    add_backend_arguments(f)
    _add_tier_argument(f)
    f.set_defaults(func=run_factorize)


def _add_tier_argument(parser) -> None:
    parser.add_argument(
        "--tier", choices=TIERS, default="auto",
        help=f"auto: a small graph (max or decide up to {SMALL_MAX_VERTICES} vertices, count "
             f"up to {SMALL_COUNT_VERTICES}, count-maximal up to {SMALL_MAXIMAL_VERTICES}) "
             "with the colour bound, the default order and heuristic and no place flag is "
             "solved here in plain Python, compiling nothing; any other by the compiled "
             "kernels.  compiled: always the kernels.  python: plain Python at any size "
             "(slow beyond a few dozen vertices)")


def clique_problem(graph, args, mode: str, k=None, bound: str = "auto",
                   order: str = "degeneracy", heuristic=None):
    """The problem that answers ``mode`` on ``graph`` under ``args``' flags: the plain
    Python tier (:class:`.small.SmallCliqueProblem`) where ``--tier`` picks it, else
    :class:`.problem.CliqueProblem` (the compiled kernels).  Both answer the same
    question and both are checked by the same verifier."""
    from stealsearch.engine.app.commandline import backend_from_args

    from .small import SmallCliqueProblem, small_enough

    tier = getattr(args, "tier", "auto")
    fits = (bound in ("auto", "colour", "color") and order == "degeneracy"
            and heuristic is None and getattr(args, "prove", None) is None)
    if tier == "python" and not fits:
        raise CliqueInputError("--tier python searches with the colour bound, the default "
                               "order and heuristic and logs no proof: drop --bound, --order, "
                               "--heuristic or --prove, or use --tier compiled")
    if tier == "auto":
        plain = (fits and small_enough(graph.n, mode) and backend_from_args(args) == "auto"
                 and getattr(args, "node_limit", None) is None
                 and getattr(args, "checkpoint", None) is None
                 and getattr(args, "resume_from", None) is None
                 and getattr(args, "threads_per_worker", None) is None)
        tier = "python" if plain else "compiled"
    if tier == "python":
        return SmallCliqueProblem(graph, mode=mode, k=k)
    return CliqueProblem(graph, mode=mode, k=k, bound=bound, order=order, heuristic=heuristic)


def _tier_line(result) -> str:
    """Which tier ran, for the readable answer (the same as ``info["tier"]``)."""
    if result.info.get("tier") == "python":
        return "  tier           python (a small graph: plain Python, no compiled kernels)"
    return "  tier           compiled (numba kernels)"


def _solve(problem, args, proof=None):
    """solve_from_args, a small graph's plain Python search in this process (one stack,
    no cluster: it ends in milliseconds), and the tier in the result's ``info``."""
    from .small import SmallCliqueProblem

    here = isinstance(problem, SmallCliqueProblem)
    result = solve_from_args(problem, args, proof=proof, here=here)
    result.info.setdefault("tier", "python" if here else "compiled")
    return result


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
        if not (1 <= n <= 100_000) or not (0.0 <= prob <= 1.0):
            raise CliqueInputError(f"--gnp needs 1 <= N <= 100000 and 0 <= P <= 1, got {n_text} {p_text}")
        return gnp(n, prob, seed=args.seed)
    if not args.file:
        raise CliqueInputError("clique: give a graph FILE or --gnp N P")
    if args.seed:
        raise CliqueInputError("--seed applies to --gnp, not to a graph FILE")
    # a name of a packaged graph, unless a file of that name is here
    if not os.path.exists(args.file) and args.file in packaged_graphs():
        return read_graph(packaged_graphs()[args.file], fmt=args.format)
    return read_graph(args.file, fmt=args.format)


def packaged_graphs() -> dict:
    """The graphs that ship with the package (``data/NAME.clq.gz``), by name: a user's
    first search needs no file of their own."""
    data = Path(__file__).resolve().parent / "data"
    return {p.name[:-len(".clq.gz")]: p for p in sorted(data.glob("*.clq.gz"))}


def _report(result, extra: dict, args, lines: list[str] = ()) -> None:
    """``--json``: the one result schema with ``extra`` beside it; otherwise the result
    table, then ``lines`` (the problem's own readable answer)."""
    if args.json:
        print_json(result_json(result, **extra))
        return
    print(result)
    for line in lines:
        print(line)


def _check_optimal_is_maximal(graph, result) -> None:
    """A maximum clique is maximal: checked for 'optimal' results by the independent verifier."""
    from .verify import check_clique

    if result.status == "optimal" and result.solution is not None:
        try:
            check_clique(graph, result.solution, size=result.objective, maximal=True)
        except SolutionError as exc:   # a kernel bug, never bad input
            raise SolutionError(f"an 'optimal' clique failed the check: {exc}") from None


def run_clique(args) -> int:
    announce_compiles(args)         # the set-up of a CliqueProblem compiles kernels
    if args.k is not None and args.mode != "decide":
        raise CliqueInputError("--k applies to --mode decide only")
    if args.out:
        from stealsearch.engine.core.inputs import check_output_path

        check_output_path(args.out, CliqueInputError)          # before the search
    if args.prove is not None:
        from stealsearch.engine.core.proof import check_prefix

        check_prefix(args.prove)                               # before the search
    graph = _load_graph(args)
    problem = clique_problem(graph, args, args.mode, k=args.k, bound=args.bound, order=args.order,
                             heuristic=args.heuristic)
    result = _solve(problem, args, proof=args.prove)
    _check_optimal_is_maximal(graph, result)
    extra = {"graph": graph.name, "n": graph.n, "m": graph.m}
    lines = [f"  graph          {graph.name}: {graph.n:,} vertices, {graph.m:,} edges",
             _tier_line(result)]
    if args.prove is not None:
        extra["proof"] = proof = result.info.get("proof", {})
        lines.append("  proof          " + _proof_line(proof))
    if args.mode not in ("count", "count-maximal"):
        size = None if result.solution is None else len(result.solution)
        extra["clique_size"] = size
        if result.solution is not None:
            what = {"optimal": "a maximum clique", "found": f"a clique of size >= {args.k}",
                    "interrupted": "the best clique found (search interrupted)"}.get(
                        result.status, "clique")
            lines.append(f"  solution       {' '.join(map(str, result.solution))}  "
                         f"({what}, {size} vertices)")
    if args.out:
        import json

        from stealsearch.engine.app.commandline import finite_json
        from stealsearch.engine.core.inputs import write_output_text
        from stealsearch.engine.core.result import json_default

        write_output_text(args.out, json.dumps(finite_json(result_json(result, **extra)),
                                               indent=2, default=json_default,
                                               allow_nan=False) + "\n", CliqueInputError)
    _report(result, extra, args, lines)
    return 0


def _proof_line(info: dict) -> str:
    """What ``--prove`` wrote, in one line."""
    if not info.get("written"):
        return f"none written: {info.get('reason', 'no proof logged')}"
    text = (f"{info['opb']} and {info['pbp']} ({info['pbp_bytes']:,} bytes, "
            f"{info['records']:,} nodes, bound {info['bound']})")
    note = info.get("note")
    return text + (f"; {note}" if note else "")


def run_design(args) -> int:
    from .generators import decode_design, design_blocks_needed, design_graph

    announce_compiles(args)
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
    problem = clique_problem(graph, args, mode, k=b if mode == "decide" else None,
                             bound=args.bound)
    result = _solve(problem, args)
    found = result.solution is not None and len(result.solution) >= b
    design = decode_design(result.solution, t, v) if found else None
    extra["design"] = design
    lines = [f"  {t}-({v},{k},1) design: {b} blocks needed, {graph.n} candidate blocks"]
    if design is None:
        lines.append("  no design found" + (" (search interrupted)" if result.status == "interrupted"
                                             else ""))
    else:
        ok = "checked: every t-subset in exactly one block" if design["is_design"] else \
            f"NOT a design: {design['t_subsets_not_covered_once']} t-subsets not covered once"
        lines.append(f"  {len(design['blocks'])} blocks over points 0..{v - 1} ({ok}):")
        lines += ["    " + " ".join(map(str, blk)) for blk in design["blocks"]]
    _report(result, extra, args, lines)
    return 0 if design is None or design["is_design"] else 1


def run_factorize(args) -> int:
    from pathlib import Path

    from .generators import decode_factorization, factor_graph, factors_needed, named_graph
    from .io import read_graph

    announce_compiles(args)
    graph = read_graph(args.graph) if Path(args.graph).exists() else named_graph(args.graph)
    if args.k < 1:
        raise CliqueInputError(f"factorize: K must be >= 1, got {args.k}")
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
    problem = clique_problem(fg, args, "decide", k=need, bound=args.bound)
    result = _solve(problem, args)
    found = result.solution is not None
    fact = decode_factorization(graph, result.solution, args.k) if found else None
    extra["factorization"] = fact
    lines = [f"  {args.k}-factorization of {graph.name}: {need} factors needed, "
             f"{fg.n} {args.k}-factors to choose from"]
    if fact is None:
        lines.append("  none found" + (" (search interrupted)" if result.status == "interrupted"
                                        else ""))
    else:
        ok = ("checked: the factors partition the edges, each spanning and "
              f"{args.k}-regular" if fact["is_factorization"] else "NOT a factorization")
        lines.append(f"  {len(fact['factors'])} factors ({ok}):")
        for i, f in enumerate(fact["factors"], start=1):
            lines.append(f"    factor {i}: " + " ".join(f"{a}-{b}" for a, b in f))
    _report(result, extra, args, lines)
    return 0 if fact is None or fact["is_factorization"] else 1
