"""Parameter sweeps: one runner for every package's grid of runs.

The runner knows no problem.  A *grid* names item kinds (``"clique"``, ``"uts"``...);
the caller passes a *resolver* that turns a kind into a function (a ``"module:function"``
string, imported only where it runs, or a callable).  The runner expands the grid,
skips what an earlier run already finished, runs the rest on a Dask cluster (or in this
process) and appends one row per item to a CSV table.

The three parts: the grid (:mod:`stealsearch.engine.app.sweep_grid`: format, checks,
expansion), the table (:mod:`stealsearch.engine.app.sweep_table`: rows, resume, reading
back) and the runner, here (every public name of the three is importable from here).

Small and big items.  An item is *small* unless its block says ``size: big``; there is
no automatic guess (a first-seconds probe would run the start of every item twice and
make the choice depend on the machine's load).  Small items run as ordinary Dask
tasks, each searching sequentially on one worker, at most one task per worker thread
in flight, results taken with ``distributed.as_completed``.  Big items run after the
small ones, one at a time from this process, as a stealstack search over the workers
(``stealsearch.engine.solve(..., client=client)``).  Polynomial algorithms are small items whose
function ignores the engine.  With ``client=None`` everything runs here, in order, on
the sequential backend.

Resume rule.  Every expanded item has a stable key: a hash of its kind, instance
parameters (files as written in the grid), settings and repeat number; not of its
size, timeout or the grid's name.  A row with status ``ok`` in the table marks its key
done, and a later run skips it; items that failed, timed out or never ran (Ctrl-C,
``limit``) are run again and get a new row; the newest row of a key is its answer.

Limits.  ``timeout`` (seconds) bounds each item: a search is given it as its time limit
and stops there by itself, and its row says ``timeout``; an item that does not stop is
recorded as ``timeout`` after a grace period and left behind (a task keeps its worker
busy until it returns; a cluster the sweep started is closed with it; in this process
an alarm signal interrupts it).  Ctrl-C cancels what is in flight and keeps the table
as it is.  ``time_limit`` (seconds) bounds the whole sweep: no item starts after it,
small items still in flight then are cancelled and not recorded (a later run does them),
and the summary says ``time_limited``.

:func:`run_grid` runs a grid and returns every item's outcome (:func:`read_outcomes`), in a
temporary folder when no ``out`` is given (a package's sweep front end: a grid, this
call, and a report over the outcomes).
"""
from __future__ import annotations

import inspect
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Callable

from ..core.errors import InputError
from ..deploy import interrupts
from ..deploy.tasks import worker_threads
from .provenance import cpu_model, git_commit
from .sweep_grid import (SOLVE_PARAM, Grid, GridError, SweepItem, import_ref,  # noqa: F401
                         item_key, load_grid, parse_axis, policy_from_settings)
from .sweep_table import (STATUS_FAILED, STATUS_OK, STATUS_TIMEOUT, ItemOutcome,  # noqa: F401
                          SweepTable, decode_cell, parse_cell, plain_value, read_outcomes,
                          table_row)

#: the public names of the sweep's three parts, importable from here
__all__ = ["GridError", "Grid", "SweepItem", "load_grid", "item_key", "parse_axis",
           "policy_from_settings", "SweepTable", "ItemOutcome", "parse_cell", "decode_cell",
           "read_outcomes", "STATUS_OK", "STATUS_FAILED", "STATUS_TIMEOUT", "ItemTimeout",
           "run_item", "compile_kinds", "SweepSummary", "run_sweep", "GridRun", "run_grid"]

def _grace(timeout: float) -> float:
    """How long after its timeout a stuck item is abandoned: a search given the timeout
    as its time limit stops by itself within a chunk, so this only catches the others."""
    return 1.0 + 0.25 * timeout


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    msg = text[0] if text else ""
    return f"{exc.__class__.__name__}: {msg}" if msg else exc.__class__.__name__


class ItemTimeout(BaseException):
    """An in-process item ran past its timeout and its grace period."""


def _solve_kwargs(engine: dict, timeout: float | None, client) -> dict:
    limit = engine.get("time_limit")
    if timeout is not None:
        limit = timeout if limit is None else min(limit, timeout)
    kw = {"policy": policy_from_settings(engine), "time_limit": limit,
          "node_limit": engine.get("node_limit"), "progress": False}
    if client is not None and engine.get("backend", "dask") == "dask":
        kw.update(backend="dask", client=client, workers=engine.get("workers"))
    else:
        kw["backend"] = "sequential"
    return kw


#: item functions whose ``warmup`` already ran in this process
_WARMED: set = set()


def _warm_up(fn, ref) -> None:
    """Run ``fn.warmup()`` once per process, so that loading compiled kernels is not
    counted in the seconds of the first item of a kind on each worker."""
    hook = getattr(fn, "warmup", None)
    if hook is None:
        return
    ident = ref if isinstance(ref, str) else f"{fn.__module__}:{fn.__qualname__}"
    if ident not in _WARMED:
        hook()
        _WARMED.add(ident)


def compile_kinds(items, note: Callable[[str], None] | None = None) -> float:
    """Run the ``warmup`` of every item kind in ``items`` once in this process, before
    any of its items starts; returns the seconds it took.

    Why here, in the client: the kernels are numba functions with ``cache=True`` (and
    FastProblem's generated drivers, cached on disk too), so compiling them once here
    leaves them in the on-disk caches, and every worker then *loads* them instead of
    compiling the same code at once -- on a loaded machine, cold compiles on the workers
    made small items run past their timeouts.  ``note`` gets one line per kind compiled
    (the CLI prints it on stderr: a sweep is not silent while this runs)."""
    t0 = time.perf_counter()
    seen = set()
    for item in items:
        ref = item.ref
        if (ref if isinstance(ref, str) else id(ref)) in seen:
            continue
        seen.add(ref if isinstance(ref, str) else id(ref))
        fn = import_ref(ref) if isinstance(ref, str) else ref
        ident = ref if isinstance(ref, str) else f"{fn.__module__}:{fn.__qualname__}"
        if getattr(fn, "warmup", None) is None or ident in _WARMED:
            continue
        if note is not None:
            note(f"compiling the kernels of {item.kind} once (numba caches them for the "
                 "workers; a first run takes a while)...")
        _warm_up(fn, ref)
    return time.perf_counter() - t0


def run_item(ref, params: dict, engine: dict, timeout: float | None = None,
             client=None) -> dict:
    """Run one item and describe it: ``{"status", "error", "figures", "seconds", ...}``.

    A plain module-level function: it is what a Dask task runs (``client=None``: the
    item searches sequentially in the task), and what this process runs for a big item
    (with the client) or in a sequential sweep.  It never raises for a failing item.
    """
    where = "local"
    try:
        from distributed import get_worker
        where = get_worker().address
    except (ImportError, ValueError):
        pass
    t0 = time.perf_counter()
    status, error, figures = STATUS_OK, "", {}
    try:
        fn = import_ref(ref) if isinstance(ref, str) else ref
        _warm_up(fn, ref)
        t0 = time.perf_counter()
        kwargs = dict(params)
        if SOLVE_PARAM in inspect.signature(fn).parameters:
            kwargs[SOLVE_PARAM] = _solve_kwargs(engine, timeout, client)
        out = fn(**kwargs)
        if not isinstance(out, dict):
            raise TypeError(f"the item function returned {type(out).__name__}, not a dict")
        figures = {str(k): plain_value(v) for k, v in out.items()}
    except ItemTimeout:
        status, error = STATUS_TIMEOUT, f"stopped after the timeout of {timeout:g} s"
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - a failing item is a row, not the sweep's end
        status, error = STATUS_FAILED, _one_line(exc)
    seconds = time.perf_counter() - t0
    if status == STATUS_OK and timeout is not None and seconds >= timeout:
        # the search stopped at its time limit = the item's timeout: not an answer
        status, error = STATUS_TIMEOUT, f"ran into the timeout of {timeout:g} s"
    return {"status": status, "error": error, "figures": figures, "seconds": seconds,
            "worker": where, "host": socket.gethostname(), "cpu": cpu_model()}


class _Alarm:
    """SIGALRM as a hard stop for an in-process item (main thread only; else a no-op)."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.armed = False

    def _fire(self, signum, frame):
        raise ItemTimeout()

    def __enter__(self):
        if (self.seconds and hasattr(signal, "setitimer")
                and threading.current_thread() is threading.main_thread()):
            self.old = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True
        return self

    def __exit__(self, *exc):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old)
        return False


@dataclass
class SweepSummary:
    grid: str
    table: str
    parquet: str | None
    total: int               # items in the grid
    done_before: int         # skipped: an earlier run finished them
    ran: int = 0
    ok: int = 0
    failed: int = 0
    timeout: int = 0
    remaining: int = 0       # not run (limit reached or interrupted)
    interrupted: bool = False
    time_limited: bool = False   # the sweep's time_limit stopped it
    seconds: float = 0.0
    failures: list = field(default_factory=list)   # [(key, kind, status, error)] of this run

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}



def _note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _bar(total: int, initial: int, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit="item", file=sys.stderr,
                disable=not enabled, dynamic_ncols=True, mininterval=0.5, leave=True)


def run_sweep(grid: Grid, out_dir: str | os.PathLike, *, client=None, progress: bool | None = None,
              limit: int | None = None, timeout: float | None = None,
              time_limit: float | None = None,
              on_row: Callable[[dict], None] | None = None) -> SweepSummary:
    """Run every item of ``grid`` not yet done in ``OUT/<name>.csv``; see the module doc.

    client : a ``distributed.Client``: small items become its tasks, big items run as
        stealstack searches over its workers; ``None`` runs everything in this process.
    progress : a tqdm bar on stderr (default: when stderr is a terminal).
    limit : run at most this many items now (the rest on a later run).
    timeout : per-item seconds for items whose grid sets none.
    time_limit : seconds for the whole sweep: nothing starts after it; small items in
        flight then are cancelled and left for a later run (``summary.time_limited``).
    on_row : called with every row written (after it is on disk).
    """
    if limit is not None and limit < 0:
        raise InputError(f"limit must be >= 0, got {limit}")
    if timeout is not None and timeout <= 0:
        raise InputError(f"timeout must be > 0 seconds, got {timeout}")
    if time_limit is not None and not time_limit >= 0:
        raise InputError(f"time_limit must be >= 0 seconds, got {time_limit}")
    t_start = time.perf_counter()
    deadline = None if time_limit is None else time.monotonic() + time_limit

    def past_deadline() -> bool:
        if deadline is not None and time.monotonic() >= deadline:
            summary.time_limited = True
            return True
        return False

    with SweepTable(out_dir, grid.name) as table:
        done = table.done_keys()
        todo = [it for it in grid.items if it.key not in done]
        if timeout is not None:
            todo = [it if it.timeout is not None else replace(it, timeout=timeout) for it in todo]
        summary = SweepSummary(grid=grid.name, table=str(table.path), parquet=None,
                               total=len(grid.items), done_before=len(grid.items) - len(todo))
        if limit is not None:
            todo = todo[:limit]
        summary.remaining = len(grid.items) - summary.done_before
        commit = git_commit()
        if progress is None:
            progress = sys.stderr.isatty()
        # the kernels of each kind compiled here, before its items start (see
        # compile_kinds); a kind whose warm-up fails is left to its items' rows
        try:
            compile_kinds(todo, _note if progress else None)
        except Exception as exc:  # noqa: BLE001 - a failing item is a row, not the sweep's end
            if progress:
                _note(f"compiling the kernels failed ({_one_line(exc)}); the items will say why")
        bar = _bar(summary.total, summary.done_before, grid.name, progress)
        watch = _SweepWatch(client, grid.name, summary, len(todo))

        def record(item: SweepItem, outcome: dict) -> None:
            row = table_row(item, outcome, commit)
            table.append(row)
            summary.ran += 1
            summary.remaining -= 1
            st = outcome["status"]
            if st == STATUS_OK:
                summary.ok += 1
            else:
                summary.failed += st == STATUS_FAILED
                summary.timeout += st == STATUS_TIMEOUT
                summary.failures.append((item.key, item.kind, st, outcome["error"]))
            bar.update(1)
            if summary.failed or summary.timeout:
                bar.set_postfix(failed=summary.failed + summary.timeout, refresh=False)
            watch.publish()
            if on_row is not None:
                on_row(row)

        small = [it for it in todo if it.size == "small"] if client is not None else todo
        big = [it for it in todo if it.size == "big"] if client is not None else []
        try:
            # A first Ctrl-C / SIGTERM is recorded (stealsearch.engine.deploy.interrupts), not raised: a search
            # running here stops cleanly, its cut-short row is dropped (so a re-run does
            # it again), and the sweep stops between items.
            with interrupts.handling_interrupts():
                if client is None:
                    for item in small:
                        if past_deadline():
                            break
                        grace = None if item.timeout is None else item.timeout + _grace(item.timeout)
                        try:
                            with _Alarm(grace):
                                outcome = run_item(item.ref, item.params, item.engine, item.timeout)
                        except ItemTimeout:   # the alarm rang just after the item returned
                            outcome = _abandoned(item)
                        interrupts.stop_if_requested()
                        record(item, outcome)
                else:
                    _run_tasks(client, small, record, past_deadline)
                    for item in big:
                        if past_deadline():
                            break
                        outcome = run_item(item.ref, item.params, item.engine, item.timeout,
                                           client=client)
                        interrupts.stop_if_requested()
                        record(item, outcome)
        except KeyboardInterrupt:
            summary.interrupted = True
            raise
        finally:
            bar.close()
            watch.publish(final=True)
            summary.seconds = time.perf_counter() - t_start
            if summary.ran:
                p = table.write_parquet()
                summary.parquet = None if p is None else str(p)
            elif table.parquet_path.exists():
                summary.parquet = str(table.parquet_path)
        return summary


class _SweepWatch:
    """The sweep's progress on the scheduler's /stealsearch page (stealsearch.engine.deploy.monitor):
    at most one publish per ``INTERVAL`` seconds, and the last state at the end."""

    INTERVAL = 0.5

    def __init__(self, client, name: str, summary: SweepSummary, todo: int):
        self.client, self.name, self.summary, self.todo = client, name, summary, todo
        self.sweep_id = f"{name}-{os.urandom(4).hex()}"
        self._last = float("-inf")
        self._slots = worker_threads(client) if client is not None else 0
        self.publish()

    def publish(self, final: bool = False) -> None:
        if self.client is None:
            return
        now = time.monotonic()
        if not final and now - self._last < self.INTERVAL:
            return
        self._last = now
        from ..deploy.monitor import publish_sweep

        s = self.summary
        state = ("interrupted" if s.interrupted else "done") if final else "running"
        publish_sweep(self.client, self.sweep_id, {
            "name": self.name, "total": s.total, "done": s.done_before + s.ran,
            "ok": s.ok, "failed": s.failed, "timeout": s.timeout,
            # in flight: one item per worker thread while enough are left
            "running": 0 if final else max(0, min(self.todo - s.ran, self._slots)),
            "remaining": s.remaining, "done_before": s.done_before, "state": state})


def _abandoned(item: SweepItem) -> dict:
    return {"status": STATUS_TIMEOUT, "figures": {}, "worker": "", "host": "", "cpu": "",
            "seconds": item.timeout + _grace(item.timeout),
            "error": f"abandoned {_grace(item.timeout):g} s after the timeout of "
                     f"{item.timeout:g} s"}


def _run_tasks(client, items: list, record, past_deadline=lambda: False) -> None:
    """Small items as Dask tasks (:func:`stealsearch.engine.deploy.tasks.run_on_cluster`: one per
    worker thread in flight, stuck ones abandoned after their timeout and grace; at the
    sweep's deadline the ones in flight are cancelled, not recorded)."""
    from ..deploy.tasks import run_on_cluster, task_key

    def done(i, status, value):
        item = items[i]
        if status == "ok":
            outcome = value
        elif status == "timeout":
            outcome = _abandoned(item)
        else:                    # a lost worker, a cancelled task (run_item never raises)
            outcome = {"status": STATUS_FAILED, "error": _one_line(value), "figures": {},
                       "seconds": 0.0, "worker": "", "host": "", "cpu": ""}
        record(item, outcome)

    run_on_cluster(client, run_item,
                   [(it.ref, it.params, it.engine, it.timeout) for it in items],
                   on_done=done, stop=past_deadline,
                   task_seconds=[None if it.timeout is None else it.timeout + _grace(it.timeout)
                                 for it in items],
                   key=lambda i: task_key(f"sweep-{items[i].kind}-{items[i].key}"))


@dataclass
class GridRun:
    """What :func:`run_grid` returns: the run's summary and every item's outcome."""

    grid: Grid
    summary: SweepSummary
    outcomes: list

    @property
    def ok(self) -> list:
        return [o for o in self.outcomes if o.ok]

    @property
    def failed(self) -> list:
        """Items whose newest row is not ok (failed or timed out), this run or earlier."""
        return [o for o in self.outcomes if o.status and not o.ok]

    @property
    def not_run(self) -> list:
        return [o for o in self.outcomes if not o.status]


def run_grid(spec, resolver, *, out: str | os.PathLike | None = None, client=None,
             name: str | None = None, progress: bool | None = False, limit: int | None = None,
             timeout: float | None = None, time_limit: float | None = None,
             base_dir: str | os.PathLike | None = None) -> GridRun:
    """Load ``spec`` (a grid dict or YAML path), run it with :func:`run_sweep` and read
    every item's outcome back.  ``out``: the table's folder (a re-run with the same
    ``out`` resumes); ``None``: a temporary folder, removed before returning."""
    grid = load_grid(spec, resolver, name=name, base_dir=base_dir)
    if out is None:
        with tempfile.TemporaryDirectory(prefix="stealsearch-sweep-") as tmp:
            summary = run_sweep(grid, tmp, client=client, progress=progress, limit=limit,
                                timeout=timeout, time_limit=time_limit)
            outcomes = read_outcomes(grid, tmp)
            summary.table, summary.parquet = "", None      # gone with the folder
    else:
        summary = run_sweep(grid, out, client=client, progress=progress, limit=limit,
                            timeout=timeout, time_limit=time_limit)
        outcomes = read_outcomes(grid, out)
    return GridRun(grid=grid, summary=summary, outcomes=outcomes)


