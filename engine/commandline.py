"""The engine's face on the command line: the flags and helpers every command shares.

The ``stealsearch`` application (:mod:`stealsearch.cli`) and every problem package's
``cli.py`` use these; the engine itself imports nothing from either.

* :class:`OneLineParser`: argparse whose usage errors are one line and exit code 2;
* :func:`add_backend_arguments` / :func:`policy_from_args` / :func:`solve_from_args`:
  where a search runs (``--workers``, ``--sequential``, ``--scheduler``,
  ``--cluster-config``), its limits and its :class:`~engine.policy.StealPolicy`;
* :func:`print_json`: one JSON object on stdout (numpy values converted).

A problem package contributes its sub-command through ``problems/<name>/cli.py``::

    def register(subparsers) -> None:
        p = subparsers.add_parser("uts", help="...")
        add_backend_arguments(p)          # --workers/--sequential/--scheduler/...
        p.set_defaults(func=run)          # run(args) -> int exit code
"""
from __future__ import annotations

import argparse
import json
import sys

from .errors import InputError
from .result import json_default


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise InputError(f"{self.prog}: error: {message}")


def add_backend_arguments(parser: argparse.ArgumentParser, policy: bool = True) -> None:
    """The flags every engine-backed command shares."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, metavar="N",
                       help="run on a LocalCluster of N worker processes (default 2)")
    where.add_argument("--sequential", action="store_true",
                       help="run the sequential backend in this process")
    where.add_argument("--scheduler", metavar="ADDR", default=None,
                       help="connect to a running Dask scheduler, e.g. tcp://127.0.0.1:8786")
    where.add_argument("--cluster-config", metavar="FILE", default=None,
                       help="a cluster description from cluster_configs/")
    parser.add_argument("--time-limit", type=float, default=None, metavar="S",
                        help="stop after S seconds with status 'interrupted'")
    parser.add_argument("--node-limit", type=int, default=None, metavar="N",
                        help="stop after about N expanded nodes with status 'interrupted'")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--progress", action="store_true",
                        help="show live progress on stderr (default: on for a terminal)")
    # --- resilience: checkpoints (engine.epochs, engine.checkpoint) -------------------
    add_checkpoint_arguments(parser)
    # --- end resilience ----------------------------------------------------------------
    if policy:
        g = parser.add_argument_group("steal policy (see engine.policy.StealPolicy)")
        g.add_argument("--steal-k", type=int, default=None, metavar="K",
                       help="rows per release / steal batch")
        g.add_argument("--release-threshold", type=int, default=None, metavar="T",
                       help="release when the local portion holds more than T rows")
        g.add_argument("--acquire", type=int, default=None, metavar="A",
                       help="rows taken back from the own shared portion at a time")
        g.add_argument("--victims", default=None,
                       choices=("ring", "random", "permutation", "richest"),
                       help="victim order when looking for work")
        g.add_argument("--steal-half", action="store_true", default=None,
                       help="steal half of the victim's shared rows instead of k")
        g.add_argument("--polling", type=int, default=None, metavar="P",
                       help="victims polled per FINDWORK round")
        g.add_argument("--budget", type=int, default=None, metavar="B",
                       help="node expansions of the first kernel call")
        g.add_argument("--chunk-seconds", type=float, default=None, metavar="S",
                       help="adapt the budget so a kernel call lasts ~S seconds (default 0.005)")
        g.add_argument("--fixed-budget", action="store_true",
                       help="keep --budget fixed (no adaptation)")
        g.add_argument("--no-stealing", action="store_true",
                       help="disable stealing (each worker keeps its initial share)")


# --- resilience: checkpoints and resume (owner: the resilience work, issue #10) ----------
def add_checkpoint_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("checkpoints (continue with: stealsearch resume DIR)")
    g.add_argument("--checkpoint", metavar="DIR", default=None,
                   help="write every consistent cut of the search into DIR (atomically)")
    g.add_argument("--checkpoint-every", type=float, default=None, metavar="S",
                   help="seconds between consistent cuts (default 5): also the most work a "
                        "lost worker costs, per worker")


def checkpoint_kwargs(args: argparse.Namespace) -> dict:
    """solve()'s checkpoint keywords from the flags; the manifest keeps the command line
    so that ``stealsearch resume DIR`` can rebuild the problem from the same inputs."""
    every = getattr(args, "checkpoint_every", None)
    if every is not None and not every > 0:
        raise InputError(f"--checkpoint-every must be > 0 seconds, got {every}")
    out = {"checkpoint_every": every}
    if getattr(args, "checkpoint", None) is not None:
        out["checkpoint"] = args.checkpoint
    argv = getattr(args, "stealsearch_argv", None)
    if argv is not None:
        out["checkpoint_info"] = {"argv": list(argv)}
    return out
# --- end resilience ---------------------------------------------------------------------


def policy_from_args(args: argparse.Namespace):
    """A StealPolicy built from the policy flags (defaults where a flag is absent)."""
    from .policy import StealPolicy

    fields = {
        "k": getattr(args, "steal_k", None),
        "release_threshold": getattr(args, "release_threshold", None),
        "acquire": getattr(args, "acquire", None),
        "victims": getattr(args, "victims", None),
        "steal_half": getattr(args, "steal_half", None),
        "polling": getattr(args, "polling", None),
        "budget": getattr(args, "budget", None),
        "chunk_seconds": getattr(args, "chunk_seconds", None),
    }
    kwargs = {k: v for k, v in fields.items() if v is not None}
    if getattr(args, "fixed_budget", False):
        kwargs["chunk_seconds"] = None
    if getattr(args, "no_stealing", False):
        kwargs["stealing"] = False
    try:
        return StealPolicy(**kwargs)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def solve_from_args(problem, args: argparse.Namespace):
    """Run ``engine.solve`` with the backend the flags name."""
    from .solve import solve

    kwargs = dict(time_limit=args.time_limit, node_limit=args.node_limit,
                  policy=policy_from_args(args),
                  progress=args.progress or (sys.stderr.isatty() and not args.json))
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be >= 1, got {args.workers}")
    # --- resilience: checkpoint / resume; a first Ctrl-C or SIGTERM returns the result
    # so far (status interrupted), which the caller prints; stealsearch.cli then exits
    # with 128 + the signal number (engine.interrupts)
    kwargs.update(checkpoint_kwargs(args))
    if not args.sequential:
        import logging

        import distributed  # noqa: F401  (its logging set-up first, then ours)

        # the command reports a lost scheduler itself, in one line (exit 1)
        logging.getLogger("distributed.client").setLevel(logging.CRITICAL)
    resume_from = getattr(args, "resume_from", None)
    if resume_from is not None:
        from .solve import resume

        kwargs.setdefault("checkpoint", resume_from)
        if args.sequential:
            return resume(resume_from, problem, backend="sequential", **kwargs)
        return resume(resume_from, problem, backend="dask", workers=args.workers,
                      scheduler=args.scheduler, cluster_config=args.cluster_config, **kwargs)
    # --- end resilience
    if args.sequential:
        return solve(problem, backend="sequential", **kwargs)
    return solve(problem, backend="dask", workers=args.workers, scheduler=args.scheduler,
                 cluster_config=args.cluster_config, **kwargs)


def print_json(obj) -> None:
    print(json.dumps(obj, indent=2, default=json_default))
