"""The ``stealsearch`` command: the sub-command table and the one error policy.

Bad input anywhere (an :class:`stealsearch.engine.errors.InputError`, or an argparse error)
prints one line ``stealsearch: error: ...`` on stderr and exits 2, never a traceback;
a search that could not finish exits 1.  A first Ctrl-C or SIGTERM during a search
stops it and prints the result so far (status interrupted, best, bound, nodes), then
exits 130 (SIGINT) or 143 (SIGTERM); a second one exits at once
(:mod:`stealsearch.engine.interrupts`).  ``stealsearch resume DIR`` re-runs the command stored in
a checkpoint from its cut.
"""
from __future__ import annotations

import importlib
import os
import sys
from typing import Sequence

from . import __version__

# The engine is imported inside the functions below, not here: `stealsearch --version`
# answers without it (the engine loads numba and Dask: ~1 s).

#: Sub-command modules, in the order ``--help`` lists them; each has ``register(sub)``.
SUBCOMMAND_MODULES = (
    "stealsearch.demo",
    "stealsearch.problems.uts.cli",
    "stealsearch.problems.clique.cli",
    "stealsearch.problems.liquid.cli",
    "stealsearch.problems.hrelation.cli",
    "stealsearch.problems.commclust.cli",
    "stealsearch.problems.twolevel.cli",
    "stealsearch.sweep",
    "stealsearch.reproduce",
)


def build_parser() -> OneLineParser:
    from stealsearch.engine.commandline import OneLineParser

    parser = OneLineParser(
        prog="stealsearch",
        description="Parallel backtracking search on Dask (stealstack), and the "
                    "scheduling algorithms of the seed papers.")
    parser.add_argument("--version", action="version", version=f"stealsearch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND",
                                parser_class=OneLineParser)
    sub.required = True
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(sub)
    _register_resume(sub)
    return parser


# --- resilience: `stealsearch resume DIR` -------------------------------------------------
#: flags of the stored command that the resume command replaces
_WHERE_FLAGS = {"--workers": 1, "--sequential": 0, "--scheduler": 1, "--cluster-config": 1,
                "--ramp-up": 0, "--grace": 1,
                "--checkpoint": 1, "--time-limit": 1, "--node-limit": 1,
                "--force": 0, "--connect-timeout": 1, "--wait-workers": 1}


def _register_resume(sub) -> None:
    p = sub.add_parser("resume", help="continue a search checkpointed with --checkpoint DIR",
                       description="Continue the search checkpointed in DIR: the stored command "
                                   "is run again from its last consistent cut, on the backend "
                                   "given here (default: this process, moving to a LocalCluster "
                                   "of 2 workers if it lasts, as a new search does).  A "
                                   "checkpoint of a different input is refused.")
    p.add_argument("dir", metavar="DIR", help="the folder a --checkpoint DIR run wrote")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, metavar="N",
                       help="continue on a LocalCluster of N worker processes (2 when no "
                            "other place is given)")
    where.add_argument("--sequential", action="store_true",
                       help="continue in this process (no cluster)")
    where.add_argument("--scheduler", metavar="ADDR", default=None,
                       help="continue on a running Dask scheduler, e.g. tcp://127.0.0.1:8786")
    where.add_argument("--cluster-config", metavar="FILE", default=None,
                       help="continue on a cluster described in cluster_configs/")
    p.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help="stop after S more seconds")
    p.add_argument("--node-limit", type=int, default=None, metavar="N",
                   help="stop after about N more nodes")
    # the new place may need them as a new search does (e.g. --workers 16 on 2 cores)
    from stealsearch.engine.commandline import add_cluster_arguments

    add_cluster_arguments(p)
    # how it reports, as for a new search (replacing the stored command's own)
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    talk = p.add_mutually_exclusive_group()
    talk.add_argument("--progress", action="store_true",
                      help="the live line even when stderr is not a terminal")
    talk.add_argument("--quiet", action="store_true", help="no live line, no notes")
    p.set_defaults(func=_run_resume)


def _strip(argv: list[str]) -> list[str]:
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        name = a.split("=", 1)[0]
        if name in _WHERE_FLAGS:
            i += 1 + (_WHERE_FLAGS[name] if "=" not in a else 0)
            continue
        out.append(a)
        i += 1
    return out


def _run_resume(args) -> int:
    from stealsearch.engine.checkpoint import CheckpointError, read_manifest

    manifest = read_manifest(args.dir)
    argv = (manifest.get("info") or {}).get("argv")
    if not argv or argv[0] == "resume":
        raise CheckpointError(f"checkpoint {args.dir}: written through the Python API (no "
                              "command stored); continue it with stealsearch.resume()")
    new = _strip(list(argv))
    output = [f"--{f}" for f in ("json", "quiet", "progress") if getattr(args, f, False)]
    if output:          # the reporting asked for now replaces the stored command's
        new = [a for a in new if a not in ("--json", "--quiet", "--progress")] + output
    for flag in ("workers", "scheduler", "cluster_config", "time_limit", "node_limit",
                 "connect_timeout", "wait_workers"):
        value = getattr(args, flag)
        if value is not None:
            new += [f"--{flag.replace('_', '-')}", str(value)]
    for flag in ("sequential", "force"):
        if getattr(args, flag):
            new.append(f"--{flag}")
    inner = build_parser().parse_args(new)
    inner.resume_from = args.dir
    inner.stealsearch_argv = list(argv)
    return inner.func(inner)
# --- end resilience ----------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:
        # answered before the parser is built: building it imports every sub-command
        # (numba, Dask), ~1 s for one line
        print(f"stealsearch {__version__}")
        return 0
    from stealsearch.engine import interrupts
    from stealsearch.engine.commandline import one_line_warnings
    from stealsearch.engine.errors import InputError, SearchFailed

    try:
        with one_line_warnings(argv):
            parser = build_parser()
            args = parser.parse_args(argv)
            args.stealsearch_argv = argv
            code = args.func(args)
            sys.stdout.flush()
            sig = interrupts.received_signal()
            if sig is not None:     # the search stopped on Ctrl-C / SIGTERM and printed its result
                return 128 + sig
        return 0 if code is None else int(code)
    except BrokenPipeError:
        # the reader of our output went away (``stealsearch ... | head -1``): stop quietly,
        # and point stdout at /dev/null so the interpreter's final flush does not complain
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141
    except InputError as exc:
        msg = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        if not msg.startswith("stealsearch"):
            msg = f"stealsearch: error: {msg}"
        print(msg, file=sys.stderr)
        return 2
    except SearchFailed as exc:
        print(f"stealsearch: search failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stealsearch: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
