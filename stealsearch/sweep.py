"""``stealsearch sweep GRID.yaml``: run a parameter sweep (:mod:`stealsearch.engine.app.sweep`).

::

    stealsearch sweep benchmarks/grids/clique_gnp.yaml --out results/ --workers 2

The grid format is the docstring of :mod:`stealsearch.engine.app.sweep_grid`.  Its item
kinds are those of the registered problems (:func:`stealsearch.registry.item_kinds`: a
name -> ``"module:function"``, imported when the grid is read).  With ``--out DIR`` the table
``DIR/<grid name>.csv`` grows row by row; run the same command again to finish what an
earlier run did not (rows with status ``ok`` are kept and skipped).  Without ``--out``
nothing is written where the user works (the table lives in a temporary folder for the
run, as in the packages' sweep commands) and the summary is all that remains.
``--time-limit S`` bounds the whole sweep: nothing starts after S seconds, items in
flight are left for a later run, and the summary says so.  Exit code 0 when every item run now succeeded,
1 when some failed or timed out (their rows say why), 2 for a bad grid or flag, 130 on
Ctrl-C (the table keeps every finished row).
"""
from __future__ import annotations

import contextlib
import sys
import tempfile

from stealsearch.engine.app.commandline import (add_backend_arguments, cluster_options,
                                                example_epilog, non_negative_float, print_json)
from stealsearch.engine.core.errors import InputError

from . import registry

#: failures listed in the text summary (all are in the table)
SHOW_FAILURES = 10


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep", help="run a parameter sweep from a grid file (resumable, one CSV row per item)",
        description="Run the items of a grid file (its format: `python -m pydoc "
                    "stealsearch.engine.app.sweep_grid`) and append one row per item to "
                    "OUT/<name>.csv; a re-run skips the items already done.  Item kinds: "
                    + ", ".join(registry.item_kinds()) + ".",
        epilog=example_epilog("stealsearch sweep benchmarks/grids/hrelation_small.yaml "
                              "--sequential"))
    p.add_argument("grid", metavar="GRID.yaml", help="the grid file")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="folder of the result table, kept: the same command then resumes "
                        "(none kept when absent)")
    p.add_argument("--limit", type=int, default=None, metavar="K",
                   help="run at most K items now (a later run does the rest)")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="per-item limit in seconds for items whose grid sets none")
    p.add_argument("--time-limit", type=non_negative_float, default=None, metavar="S",
                   help="stop the whole sweep after S seconds: nothing starts later, the "
                        "items in flight are left for a later run (no limit when absent)")
    add_backend_arguments(p, policy=False, limits=False)
    p.set_defaults(func=run)


def sweep_status(summary) -> str:
    """The one status vocabulary (stealsearch/schemas/README.md): ``complete`` when every
    item of the grid has a row, else ``interrupted`` (a limit, a time limit, Ctrl-C)."""
    return "complete" if summary.remaining == 0 and not summary.interrupted else "interrupted"


def run(args) -> int:
    from stealsearch.engine.app.sweep import load_grid, run_sweep

    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be >= 1, got {args.workers}")
    if args.limit is not None and args.limit < 0:
        raise InputError(f"--limit must be >= 0, got {args.limit}")
    if args.timeout is not None and args.timeout <= 0:
        raise InputError(f"--timeout must be > 0 seconds, got {args.timeout}")
    grid = load_grid(args.grid, registry.item_kinds())    # a bad grid fails here, before any cluster
    progress = False if args.quiet else (True if args.progress else None)
    if progress is None and args.json:
        progress = False
    written = []
    limits = dict(limit=args.limit, timeout=args.timeout, time_limit=args.time_limit,
                  on_row=written.append, progress=progress)
    with contextlib.ExitStack() as stack:
        # no --out: the table lives in a temporary folder for this run only
        out = args.out or stack.enter_context(
            tempfile.TemporaryDirectory(prefix="stealsearch-sweep-"))
        try:
            if args.sequential:
                summary = run_sweep(grid, out, client=None, **limits)
            else:
                from stealsearch.engine.deploy.cluster import dask_client

                with dask_client(workers=args.workers, scheduler=args.scheduler,
                                 config=args.cluster_config, **cluster_options(args)) as client:
                    summary = run_sweep(grid, out, client=client, **limits)
        except KeyboardInterrupt:
            print(f"stealsearch sweep: interrupted after {len(written)} new rows; "
                  + ("the table keeps them, run the same command again to resume" if args.out
                     else "none kept (give --out DIR to keep a table that a re-run resumes)"),
                  file=sys.stderr)
            raise
    if not args.out:
        summary.table, summary.parquet = None, None          # gone with the folder
    if args.json:
        out = {"status": sweep_status(summary), **summary.as_dict()}
        if not args.out:     # no table is kept: the rows of this run are the results
            out["rows"] = written
        out["failures"] = [{"key": k, "kind": kind, "status": st, "error": e}
                           for k, kind, st, e in summary.failures]
        print_json(out)
    else:
        print(f"sweep {summary.grid}: {summary.total} items, {summary.done_before} done before, "
              f"ran {summary.ran}: {summary.ok} ok, {summary.failed} failed, "
              f"{summary.timeout} timed out ({summary.seconds:.1f} s)"
              + ("; stopped by --time-limit" if summary.time_limited else "")
              + (f"; {summary.remaining} left for a later run" if summary.remaining and args.out
                 else f"; {summary.remaining} not run" if summary.remaining else ""))
        if summary.table:
            print(f"  table    {summary.table}")
        if summary.parquet:
            print(f"  parquet  {summary.parquet}")
        for key, kind, status, err in summary.failures[:SHOW_FAILURES]:
            print(f"  {status:<8} {kind} {key}: {err}")
        if len(summary.failures) > SHOW_FAILURES:
            print(f"  ... and {len(summary.failures) - SHOW_FAILURES} more (see the table)")
    return 0 if not summary.failures else 1
