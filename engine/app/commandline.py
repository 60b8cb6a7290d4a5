"""The engine's face on the command line: the flags and helpers every command shares.

The ``stealsearch`` application (:mod:`stealsearch.cli`) and every problem package's
``cli.py`` use these; the engine itself imports nothing from either.

* :class:`OneLineParser`: argparse whose usage errors are one line and exit code 2;
* :func:`add_backend_arguments` / :func:`policy_from_args` / :func:`solve_from_args`:
  where a search runs (``--workers``, ``--sequential``, ``--scheduler``,
  ``--cluster-config``; none of them: a ramp-up, :mod:`stealsearch.engine.transports.rampup`), its limits and
  its :class:`~stealsearch.engine.core.policy.StealPolicy`;
* :func:`print_json`: one JSON object on stdout (numpy values converted, NaN and
  infinity written as ``null``, never as strings);
* :func:`result_json`: an engine :class:`~stealsearch.engine.core.result.SearchResult` in the one documented
  schema (``stealsearch/schemas/result.schema.json``) with problem-specific keys beside it;
* :func:`client_from_args`: the Dask client (or ``None`` for ``--sequential``) of the
  commands that run plain Dask tasks (sweeps, polynomial algorithms);
* argparse types shared by every command (:func:`seed_int`, :func:`positive_int`,
  :func:`non_negative_float`) and :class:`DefaultsHelpFormatter` (every option's help
  shows its default).

A problem package contributes its sub-command through ``problems/<name>/cli.py``::

    def register(subparsers) -> None:
        p = subparsers.add_parser("uts", help="...")
        add_backend_arguments(p)          # --workers/--sequential/--scheduler/...
        p.set_defaults(func=run)          # run(args) -> int exit code
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys

from ..core.errors import InputError, InputWarning
from ..core.result import json_default

#: Flags whose value is a file the command writes: checked before any work starts.
PLOT_SUFFIXES = (".png", ".pdf", ".svg", ".jpg", ".jpeg", ".eps", ".ps", ".tif", ".tiff", ".webp")


class DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default, unless the default is ``None`` or
    ``False`` (a flag that is off; an option whose absence the help text explains)."""

    def _get_help_string(self, action):
        help_text = action.help or ""
        if ("%(default)" in help_text or action.default is None or action.default is False
                or action.default == argparse.SUPPRESS):
            return help_text
        if action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            return help_text + " (default: %(default)s)"
        return help_text

    def _fill_text(self, text, width, indent):
        # an example epilog (:func:`example_epilog`) is shown as written: one command a line
        if text.startswith(EXAMPLE_HEADING):
            return "".join(indent + line + "\n" for line in text.splitlines())
        return super()._fill_text(text, width, indent)


#: how every command's ``--help`` epilog starts: the commands after it run as written
#: from a clone of the repository
EXAMPLE_HEADING = "example:"


def example_epilog(*commands: str) -> str:
    """A ``--help`` epilog: ``example:`` and one command a line, shown as written.

    >>> print(example_epilog("stealsearch clique --gnp 30 0.5"))
    example:
      stealsearch clique --gnp 30 0.5
    """
    return "\n".join([EXAMPLE_HEADING] + [f"  {c}" for c in commands])


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2, ``--help`` shows every
    option's default, and an option is only ever its full name: argparse's prefix
    matching (``--sched`` for ``--scheduler``) is off, so a stored command (``stealsearch
    resume``) means exactly what its words say, and a new option never changes what an
    old command line meant."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # noqa: D401 - argparse API
        raise InputError(f"{self.prog}: error: {message}")


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text[:30]!r}") from None


def seed_int(text: str) -> int:
    """``--seed S``: the seed of a generated instance, an integer in 0 .. 2**63-1."""
    value = _integer(text)
    if not 0 <= value < 2 ** 63:
        raise argparse.ArgumentTypeError(f"a seed must be an integer in 0..2^63-1, got {text[:30]}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text[:30]}")
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0 (checked when the command line is read: with the
    ramp-up a search may end before its cluster, and so the option, is ever used)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text[:30]!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds > 0, got {text[:30]}")
    return value


def non_negative_float(text: str) -> float:
    """A finite float >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text[:30]!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text[:30]}")
    return value


def check_plot_path(path, error: type[InputError] = InputError):
    """A figure output path: a suffix matplotlib writes, in a writable directory."""
    from pathlib import Path

    from ..core.inputs import check_output_path

    if path is None:
        return None
    if Path(str(path)).suffix.lower() not in PLOT_SUFFIXES:
        raise error(f"cannot write the figure {path}: give a file name ending in "
                    + ", ".join(PLOT_SUFFIXES[:4]) + ", ...")
    return check_output_path(path, error)


def add_backend_arguments(parser: argparse.ArgumentParser, policy: bool = True,
                          node_limit: bool = True, what: str = "the search",
                          limits: bool = True) -> None:
    """The flags every command that runs on the cluster shares: where it runs, its time
    limit, how it reports; ``node_limit`` and the steal ``policy`` flags for engine searches
    (``limits=False``: no ``--time-limit``/``--node-limit``, for commands whose runs set
    their own, e.g. a sweep's items)."""
    where = parser.add_mutually_exclusive_group()
    if policy:      # an engine search: with no place flag it runs here (stealsearch.engine.solve)
        workers_help = ("run on a LocalCluster of N worker processes (no N, or 'auto': one per "
                        "usable core), searching in this process while it starts (see "
                        "--no-ramp-up).  With no place flag (--workers, --sequential, "
                        "--scheduler, --cluster-config) the search runs in this process on "
                        "every usable core, no cluster (a problem in plain Python: it moves "
                        "to a LocalCluster of one process per core if it lasts)")
    else:
        workers_help = ("run on a LocalCluster of N worker processes (no N, or 'auto', or no "
                        "other place given: one per usable core)")
    add_workers_argument(where, workers_help)
    where.add_argument("--sequential", action="store_true",
                       help=f"run {what} in this process only, one thread (no cluster)")
    where.add_argument("--scheduler", metavar="ADDR", default=None,
                       help="connect to a running Dask scheduler, e.g. tcp://127.0.0.1:8786")
    where.add_argument("--cluster-config", metavar="FILE", default=None,
                       help="a cluster description file (YAML; the ready ones ship in "
                            "stealsearch.cluster_configs)")
    add_cluster_arguments(parser)
    if limits:
        parser.add_argument("--time-limit", type=positive_seconds, default=None, metavar="S",
                            help=f"stop {what} after S seconds (a number > 0) with status "
                                 "'interrupted' (no limit when absent)")
    if limits and node_limit:
        parser.add_argument("--node-limit", type=int, default=None, metavar="N",
                            help="stop after about N expanded nodes with status 'interrupted' "
                                 "(no limit when absent)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    talk = parser.add_mutually_exclusive_group()
    talk.add_argument("--progress", action="store_true",
                      help="show live progress on stderr (on by default for a terminal)")
    talk.add_argument("--quiet", action="store_true",
                      help="print only the result: no progress, no warnings")
    if policy:      # an engine search: it can be checkpointed (stealsearch.engine.core.epochs, stealsearch.engine.core.checkpoint)
        add_checkpoint_arguments(parser)
    if policy:
        add_rampup_arguments(parser)
    if policy:
        parser.add_argument("--threads-per-worker", type=threads_count, default=None, metavar="T",
                            help="search threads in each Dask worker, sharing its shared "
                                 "portion; with --sequential, T threads in this process, no "
                                 "Dask (default 1: on a cluster, processes and threads tie)")
    if policy:
        from ..core.policy import (FEW_PROCESSES, MULTI_PROCESS, MULTI_PROCESS_WORKERS,
                                   VICTIM_ORDERS, StealPolicy)

        d = StealPolicy()
        g = parser.add_argument_group("steal policy (see stealsearch.engine.core.policy.StealPolicy)")
        g.add_argument("--steal-k", type=int, default=d.k, metavar="K",
                       help="rows per release / steal batch")
        g.add_argument("--release-threshold", type=int, default=d.release_threshold, metavar="T",
                       help="release when the local portion holds more than T rows")
        g.add_argument("--acquire", type=int, default=d.acquire, metavar="A",
                       help="rows taken back from the own shared portion at a time")
        few, many = FEW_PROCESSES, MULTI_PROCESS
        g.add_argument("--victims", default=d.victims,
                       choices=VICTIM_ORDERS,
                       help=f"victim order when looking for work (default: {few['victims']} "
                            f"with one or two workers, {many['victims']} with "
                            f"{MULTI_PROCESS_WORKERS} or more)")
        g.add_argument("--steal-half", action=argparse.BooleanOptionalAction,
                       default=d.steal_half,
                       help="steal half of the victim's shared rows (--no-steal-half: "
                            "steal --steal-k rows)")
        g.add_argument("--polling", type=int, default=d.polling, metavar="P",
                       help="victims polled per FINDWORK round (0: all)")
        g.add_argument("--budget", type=int, default=d.budget, metavar="B",
                       help="node expansions of the first kernel call")
        g.add_argument("--chunk-seconds", type=float, default=None, metavar="S",
                       help=f"adapt the budget so a kernel call lasts ~S seconds (default: "
                            f"{few['chunk_seconds']:g} with one or two workers, "
                            f"{many['chunk_seconds']:g} with {MULTI_PROCESS_WORKERS} or more)")
        g.add_argument("--fixed-budget", action="store_true",
                       help="keep --budget fixed (no adaptation)")
        g.add_argument("--no-stealing", action="store_true",
                       help="disable stealing (each worker keeps its initial share)")


def workers_value(text: str):
    """``--workers``' value: an integer (checked >= 1 by :func:`check_workers`, so that
    0 is one clear line) or ``auto``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number or 'auto', "
                                         f"got {text[:30]!r}") from None


class _WorkersAction(argparse.Action):
    """``--workers`` alone or ``--workers auto``: the usable cores
    (:func:`stealsearch.engine.deploy.cores.usable_cores`), as an int like any other count."""

    def __call__(self, parser, namespace, values, option_string=None):
        if values is None or values == "auto":
            from ..deploy.cores import usable_cores
            values = usable_cores()
        setattr(namespace, self.dest, values)


def add_workers_argument(parser, help_text: str) -> None:
    """``--workers [N|auto]`` (every command that can start a LocalCluster)."""
    parser.add_argument("--workers", type=workers_value, nargs="?", const="auto", default=None,
                        action=_WorkersAction, metavar="N", help=help_text)


def add_rampup_arguments(parser: argparse.ArgumentParser) -> None:
    """``--ramp-up`` and ``--grace``: start in this process, move to the cluster if the
    search lasts (stealsearch.engine.transports.rampup); the default when no place flag is given."""
    from ..transports.rampup import DEFAULT_GRACE

    g = parser.add_argument_group("ramp-up (see stealsearch.engine.transports.rampup)")
    g.add_argument("--ramp-up", action=argparse.BooleanOptionalAction, default=None,
                   help="start the search in this process and hand it to the cluster once "
                        "that is ready: the default with --workers (the cluster we start); "
                        "--ramp-up with --scheduler/--cluster-config, or with no place flag "
                        "(onto a LocalCluster of one process per usable core); --no-ramp-up: "
                        "on the cluster from the first node")
    g.add_argument("--grace", type=non_negative_float, default=None, metavar="S",
                   help=f"seconds the search runs in this process before a cluster is started "
                        f"at all, when ramping up (default {DEFAULT_GRACE:g}; 0 with --workers): "
                        "a search that ends sooner starts no worker process")


# --- reaching a cluster (stealsearch.engine.deploy.cluster) ------------------------------------------------

def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """How to reach a cluster: ``--connect-timeout``, ``--wait-workers``, ``--force``.

    Any command that takes ``--workers``/``--scheduler`` can add these and hand
    :func:`cluster_options` to :func:`stealsearch.engine.deploy.cluster.dask_client`.
    """
    from ..deploy.cluster import (DEFAULT_CONNECT_TIMEOUT, DEFAULT_START_TIMEOUT,
                                  DEFAULT_WAIT_WORKERS, MAX_WORKERS_PER_CORE)

    g = parser.add_argument_group("cluster connection (see stealsearch.engine.deploy.cluster)")
    g.add_argument("--connect-timeout", type=positive_seconds, default=None, metavar="S",
                   help=f"give up reaching the scheduler after S seconds (default "
                        f"{DEFAULT_CONNECT_TIMEOUT:g}, or $STEALSEARCH_CONNECT_TIMEOUT)")
    g.add_argument("--wait-workers", type=positive_seconds, default=None, metavar="S",
                   help=f"wait up to S seconds for a scheduler's first worker (default "
                        f"{DEFAULT_WAIT_WORKERS:g}), or for the worker processes of a "
                        f"LocalCluster to start (default {DEFAULT_START_TIMEOUT:g}; one "
                        "still starting then is ended, the run goes on with the others)")
    g.add_argument("--force", action="store_true",
                   help=f"start more than {MAX_WORKERS_PER_CORE} worker processes per core, "
                        "or more than the free memory holds")


def cluster_options(args: argparse.Namespace) -> dict:
    """The keywords of :func:`stealsearch.engine.deploy.cluster.dask_client` that the cluster flags set."""
    return {"connect_timeout": getattr(args, "connect_timeout", None),
            "wait_workers": getattr(args, "wait_workers", None),
            "force": bool(getattr(args, "force", False))}


# --- checkpoints and resume ----------------------------------------------------------------
def add_checkpoint_arguments(parser: argparse.ArgumentParser) -> None:
    from ..core.epochs import DEFAULT_CHECKPOINT_EVERY

    g = parser.add_argument_group("checkpoints (continue with: stealsearch resume DIR)")
    g.add_argument("--checkpoint", metavar="DIR", default=None,
                   help="write every consistent cut of the search into DIR (atomically)")
    g.add_argument("--checkpoint-every", type=float, default=None, metavar="S",
                   help=f"seconds between consistent cuts (default "
                        f"{DEFAULT_CHECKPOINT_EVERY:g}): also the most work a lost worker "
                        "costs, per worker")
    g.add_argument("--checkpoint-required", action="store_true",
                   help=checkpoint_required_help())


def checkpoint_required_help() -> str:
    """``--checkpoint-required``'s help (a new search's and ``stealsearch resume``'s)."""
    return ("a checkpoint that cannot be written (a full disk) stops the search with its "
            "result so far (status interrupted, exit code 1); without it, one warning "
            "and the search goes on without checkpoints")


def checkpoint_kwargs(args: argparse.Namespace) -> dict:
    """solve()'s checkpoint keywords from the flags; the manifest keeps the command line
    so that ``stealsearch resume DIR`` can rebuild the problem from the same inputs."""
    every = getattr(args, "checkpoint_every", None)
    if every is not None and not every > 0:
        raise InputError(f"--checkpoint-every must be > 0 seconds, got {every}")
    out = {"checkpoint_every": every}
    if getattr(args, "checkpoint", None) is not None:
        out["checkpoint"] = args.checkpoint
    if getattr(args, "checkpoint_required", False):
        if out.get("checkpoint") is None and getattr(args, "resume_from", None) is None:
            raise InputError("--checkpoint-required asks for a checkpoint: give --checkpoint DIR")
        out["checkpoint_required"] = True
    argv = getattr(args, "stealsearch_argv", None)
    if argv is not None:
        out["checkpoint_info"] = {"argv": list(argv)}
    return out
# --- end resilience ---------------------------------------------------------------------


def policy_from_args(args: argparse.Namespace):
    """A StealPolicy built from the policy flags (defaults where a flag is absent)."""
    from ..core.policy import StealPolicy

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


def show_progress(args: argparse.Namespace) -> bool:
    """Live progress: asked for, or on a terminal unless ``--json`` or ``--quiet``."""
    if getattr(args, "quiet", False):
        return False
    return bool(getattr(args, "progress", False)
                or (sys.stderr.isatty() and not getattr(args, "json", False)))


def check_workers(args: argparse.Namespace) -> None:
    """``--workers`` must be >= 1 (0 does not silently mean the default); ``auto`` (a
    caller that built the namespace itself) becomes the usable cores."""
    workers = getattr(args, "workers", None)
    if workers == "auto":
        from ..deploy.cores import usable_cores
        args.workers = workers = usable_cores()
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be >= 1, got {workers}")


def backend_from_args(args: argparse.Namespace) -> str:
    """The ``stealsearch.engine.solve`` backend the flags name: ``sequential``
    (``--sequential``); ``rampup`` (``--ramp-up``); ``dask`` (a place flag with
    ``--no-ramp-up``); otherwise ``auto``, which :func:`stealsearch.engine.solve.choose_backend`
    resolves: lanes on every usable core here with no place flag, a ramp-up with
    ``--workers``, Dask on a scheduler or a cluster config."""
    placed = any(getattr(args, k, None) is not None
                 for k in ("workers", "scheduler", "cluster_config"))
    elsewhere = any(getattr(args, k, None) is not None for k in ("scheduler", "cluster_config"))
    ramp = getattr(args, "ramp_up", None)
    sequential = bool(getattr(args, "sequential", False))
    if ramp and sequential:
        raise InputError("--ramp-up moves a search to a cluster: not with --sequential")
    if sequential:
        backend = "sequential"
    elif ramp:
        backend = "rampup"
    elif ramp is False and placed:
        backend = "dask"
    else:
        backend = "auto"
    if getattr(args, "grace", None) is not None and (
            backend in ("sequential", "dask") or (backend == "auto" and elsewhere)):
        raise InputError("--grace applies to a ramp-up: with no place flag, with --workers, "
                         "or with --ramp-up")
    return backend


def announce_compiles(args: argparse.Namespace) -> None:
    """From now on, the process's first kernel compilation prints one line on stderr
    (none with ``--quiet``), and the command's compile seconds count in its reported wall
    time (:mod:`stealsearch.engine.app.compile_notice`).  A command calls it before the
    first kernel it may compile (a problem's constructor may compile its set-up kernels);
    the first call marks where the command's compile seconds start (``args.compile_mark``)."""
    from .compile_notice import announce, compile_seconds

    announce(quiet=bool(getattr(args, "quiet", False)))
    if getattr(args, "compile_mark", None) is None:
        args.compile_mark = compile_seconds()


def solve_from_args(problem, args: argparse.Namespace, proof=None, here: bool = False):
    """Run ``stealsearch.engine.solve`` with the backend the flags name (:func:`backend_from_args`);
    ``proof``: a file name prefix of the proof the search logs (``solve(..., proof=)``);
    ``here``: with no place flag, one stack in this process (a search that ends in
    milliseconds, e.g. a small instance in plain Python, needs no lanes and no cluster)."""
    from ..solve import solve
    from .compile_notice import compile_seconds

    announce_compiles(args)
    check_workers(args)
    backend = backend_from_args(args)
    if here and backend == "auto":
        backend = "sequential"
    kwargs = dict(time_limit=args.time_limit, node_limit=getattr(args, "node_limit", None),
                  policy=policy_from_args(args), progress=show_progress(args))
    # --- resilience: checkpoint / resume; a first Ctrl-C or SIGTERM returns the result
    # so far (status interrupted), which the caller prints; stealsearch.cli then exits
    # with 128 + the signal number (stealsearch.engine.deploy.interrupts)
    kwargs.update(checkpoint_kwargs(args))
    if backend in ("dask", "rampup"):
        import logging

        import distributed  # noqa: F401  (its logging set-up first, then ours)

        # the command reports a lost scheduler itself, in one line (exit 1); ("auto"
        # imports distributed only when it starts or reaches a cluster, in the background
        # while the search runs: stealsearch.engine.deploy.cluster quiets it then)
        logging.getLogger("distributed.client").setLevel(logging.CRITICAL)
    if backend in ("auto", "rampup"):
        kwargs["grace"] = getattr(args, "grace", None)
    if getattr(args, "threads_per_worker", None) is not None:
        kwargs["threads_per_worker"] = args.threads_per_worker
    where = {} if backend == "sequential" else dict(
        workers=args.workers, scheduler=args.scheduler, cluster_config=args.cluster_config,
        **cluster_options(args))
    if proof is not None:
        kwargs["proof"] = proof
    resume_from = getattr(args, "resume_from", None)
    if resume_from is not None:
        from ..solve import resume

        kwargs.setdefault("checkpoint", resume_from)
        before = compile_seconds()
        return _checked(args, _with_compiles(
            resume(resume_from, problem, backend=backend, **where, **kwargs), args, before))
    # --- end resilience
    if backend == "sequential" and getattr(problem, "stack_class", None) is None:
        from .timing import warm_up

        warm_up(problem)        # the printed search time excludes loading the kernel
    before = compile_seconds()
    return _checked(args, _with_compiles(solve(problem, backend=backend, **where, **kwargs),
                                         args, before))


def _with_compiles(result, args: argparse.Namespace, before: float):
    """``result`` with the command's kernel compilations counted (those since
    ``args.compile_mark``, :func:`announce_compiles`): the seconds compiled before the
    search's clock started (``before``: a problem's set-up, the warm-up) added to its
    wall time, and all of them in ``info["compile_seconds"]`` (those during the search
    are in its wall time already)."""
    from .compile_notice import compile_seconds

    mark = args.compile_mark
    total = compile_seconds() - mark
    if total > 0:
        result.wall_seconds += before - mark
        result.info["compile_seconds"] = round(total, 3)
    return result


def _checked(args: argparse.Namespace, result):
    """``result``; a checkpoint that was required and could not be written sets the
    command's exit status (``args.exit_status``, read by :mod:`stealsearch.cli`) to 1:
    the result is still printed, and the run still failed what it was asked."""
    if getattr(args, "checkpoint_required", False) and result.info.get("checkpoint_error"):
        args.exit_status = 1
    return result


@contextlib.contextmanager
def one_line_warnings(argv=None):
    """Show each :class:`~stealsearch.engine.core.errors.InputWarning` (and any other warning a reader
    raises on purpose) as one ``stealsearch: warning: ...`` line on stderr; none with
    ``--quiet``."""
    import warnings

    quiet = argv is not None and "--quiet" in argv

    def show(message, category, filename, lineno, file=None, line=None):
        if not quiet:
            text = str(message).splitlines()[0] if str(message) else category.__name__
            try:
                print(f"stealsearch: warning: {text}", file=sys.stderr)
            except (OSError, ValueError):   # a closed terminal: the warning ends, not the run
                pass

    with warnings.catch_warnings():
        warnings.simplefilter("always", InputWarning)
        old, warnings.showwarning = warnings.showwarning, show
        try:
            yield
        finally:
            warnings.showwarning = old


@contextlib.contextmanager
def client_from_args(args: argparse.Namespace):
    """The Dask client the backend flags name, closed on exit; ``None`` for ``--sequential``
    (the caller then runs its tasks in this process)."""
    check_workers(args)
    announce_compiles(args)
    if getattr(args, "sequential", False):
        yield None
        return
    from ..deploy.cluster import dask_client

    with dask_client(workers=args.workers, scheduler=args.scheduler,
                     config=getattr(args, "cluster_config", None),
                     **cluster_options(args)) as client:
        yield client


def run_tasks(client, fn, argument_lists, time_limit: float | None = None,
              progress: bool = False, desc: str = "tasks"):
    """Run ``fn(*args)`` for every tuple of ``argument_lists``: as Dask tasks on ``client``
    (:func:`stealsearch.engine.deploy.tasks.run_on_cluster`), or one after another in this
    process when ``client`` is ``None``.  A task's exception is raised here.

    Returns ``(results, interrupted)``: ``results[i]`` is ``None`` for a task the time
    limit stopped (not started, or cancelled on Dask).  ``progress`` shows a bar of
    finished tasks on stderr.
    """
    import time

    from tqdm import tqdm

    deadline = None if time_limit is None else time.monotonic() + time_limit
    items = [tuple(a) for a in argument_lists]
    results: list = [None] * len(items)
    bar = tqdm(total=len(items), unit="task", desc=desc, file=sys.stderr, leave=False,
               disable=not progress, mininterval=0.5)

    def past_deadline() -> bool:
        return deadline is not None and time.monotonic() >= deadline

    def done(i, status, value):
        if status != "ok":
            raise value          # the task's own exception (no task here has a time)
        results[i] = value
        bar.update(1)

    try:
        if client is None:
            for i, a in enumerate(items):
                if past_deadline():
                    return results, True
                done(i, "ok", fn(*a))
            return results, False
        from ..deploy.tasks import run_on_cluster

        left = run_on_cluster(client, fn, items, on_done=done, stop=past_deadline)
        return results, bool(left)
    finally:
        bar.close()


def result_json(result, **extra) -> dict:
    """An engine SearchResult as the one documented JSON object: the result's own keys
    (``status``, ``mode``, ``objective``, ``bound``, ``count``, ``nodes``,
    ``search_seconds``, ``wall_seconds``, ``backend``, ``workers`` [one object per
    worker], ``solution``, ``verified``, ``policy``, ...) with the problem-specific
    ``extra`` keys beside them.  An extra key never replaces an engine key."""
    d = result.as_dict()
    clash = sorted(set(extra) & set(d) - {"solution"})
    if clash:
        raise ValueError(f"problem keys {clash} would hide engine result keys")
    d.update(extra)
    d["n_workers"] = len(result.workers)
    return d


def finite_json(obj):
    """``obj`` with every NaN or infinite float replaced by ``None`` (JSON ``null``)."""
    import numpy as np

    if isinstance(obj, dict):
        return {k: finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_json(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return finite_json(obj.tolist())
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    return obj


def print_json(obj) -> None:
    """One JSON object on stdout; NaN and infinity become ``null`` (strict JSON)."""
    text = json.dumps(finite_json(obj), indent=2, default=json_default, allow_nan=False)
    print(text)


def threads_count(text: str) -> int:
    """``--threads-per-worker``: a whole number in 1..MAX_THREADS_PER_WORKER (a bound,
    so that a typo cannot start a hundred thousand threads; cluster_config.py holds it)."""
    from ..deploy.cluster_config import MAX_THREADS_PER_WORKER

    value = positive_int(text)
    if value > MAX_THREADS_PER_WORKER:
        raise argparse.ArgumentTypeError(f"at most {MAX_THREADS_PER_WORKER} threads per worker, "
                                         f"got {text[:30]}")
    return value


class _FileOrSubcommand(argparse._SubParsersAction):
    """Sub-commands beside an optional positional FILE (see :func:`add_file_or_subcommands`):
    a first word that names a sub-command runs it; any other is the FILE, and the words
    after it are the parent's."""

    class _AnyWord:
        """The choices argparse checks a first word against: the sub-commands, and any
        other word (a FILE)."""

        def __init__(self, names: dict):
            self.names = names

        def __contains__(self, word) -> bool:
            return True

        def __iter__(self):
            return iter(self.names)

        def items(self):
            return self.names.items()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.choices = self._AnyWord(self._name_parser_map)

    def __call__(self, parser, namespace, values, option_string=None):
        if values[0] in self._name_parser_map:
            return super().__call__(parser, namespace, values, option_string)
        setattr(namespace, self.file_dest, values[0])
        rest, extras = values[1:], []
        if rest:
            _, extras = parser.parse_known_args(rest, namespace)
        if extras:
            vars(namespace).setdefault(argparse._UNRECOGNIZED_ARGS_ATTR, []).extend(extras)


def add_file_or_subcommands(parser: argparse.ArgumentParser, dest: str, metavar: str,
                            help: str):
    """``cmd FILE [flags]`` and ``cmd SUB [its flags]`` (e.g. ``hrel sweep``) on one parser:
    returns the sub-parsers action (``.add_parser(...)``); ``args.<dest>`` is the FILE, or
    None.  ``cmd SUB --help`` prints the sub-command's help; a file named like a
    sub-command is given as ``./sweep``."""
    parser.register("action", "file_or_subcommand", _FileOrSubcommand)
    subs = parser.add_subparsers(action="file_or_subcommand", dest=argparse.SUPPRESS,
                                 metavar=metavar, help=help,
                                 parser_class=type(parser), required=False)
    subs.file_dest = dest
    parser.set_defaults(**{dest: None})
    return subs
