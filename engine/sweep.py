"""Parameter sweeps: one runner for every package's grid of runs.

The runner knows no problem.  A *grid* names item kinds (``"clique"``, ``"uts"``...);
the caller passes a *resolver* that turns a kind into a function (a ``"module:function"``
string, imported only where it runs, or a callable).  The runner expands the grid,
skips what an earlier run already finished, runs the rest on a Dask cluster (or in this
process) and appends one row per item to a CSV table.

Grid format (YAML, or the same structure as a Python dict)::

    name: clique_gnp            # table name: OUT/clique_gnp.csv (default: the file's stem)
    repeats: 1                  # default runs of every item (each is a row with its own key)
    timeout: 60                 # default per-item limit in seconds (none if absent)
    items:                      # blocks; every list value expands (Cartesian product)
      - kind: clique
        instance: {generator: gnp, n: [40, 60], p: [0.3, 0.5], seed: [1, 2]}
        settings: {bound: [colour, size]}     # 2 x 2 x 2 x 2 = 16 items
      - kind: clique
        instance: {file: "../../tests/clique/data/*.clq"}   # files: paths or globs
        size: big               # one stealstack search over all workers
        settings: {k: 4, steal_half: false, workers: [1, 2]}

``instance`` holds what defines the instance (generator parameters, or ``file``: a
path or glob, or a list of them, relative to the grid file's folder; every match is
one instance).  ``settings`` holds the engine's settings and the kind's own options:
``backend`` (``dask`` or ``sequential``, big items only), ``workers`` (big items: use
that many of the cluster's workers), ``time_limit`` and ``node_limit`` (the search's
own limits: a stopped search is a normal result with status ``interrupted``), the
fields of :class:`~stealsearch.engine.policy.StealPolicy` by name (``k``, ``release_threshold``,
``acquire``, ``victims``, ``steal_half``, ``budget``...), and anything else, which goes
to the item function (e.g. the clique ``bound``).  A value that is itself a list is
written as a list of lists (``allocation: [[4, 4, 0, 0, 0, 0, 0, 0]]``).  A name may
appear in ``instance`` or in ``settings``, not in both.  A block may set its own
``repeats`` and ``timeout``.

Item functions take the parameters as keyword arguments and, if they search, a
``solve_kwargs`` keyword (a dict for :func:`stealsearch.engine.solve`: backend, policy, limits, and
for big items the client and worker count); they return a flat dict of plain values
and raise when a result fails its verification.  A function may carry a ``warmup``
attribute (a callable without arguments, e.g. a tiny instance of the kind): it runs once
per process before the first item of the kind, outside that item's seconds, so that
loading compiled kernels is not counted as search time.  Unknown, missing or wrongly typed
parameters (checked against the function's signature and its int/float/str/bool
annotations), an unknown kind, an empty list or a malformed file are rejected before
anything runs, with one line (:class:`~stealsearch.engine.errors.InputError`).

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

The table.  ``OUT/<name>.csv``: one row per finished item, written with one ``write``
and an ``fsync``, so an interrupted sweep leaves whole rows (a torn last line, after a
crash, is cut off at the next start); one sweep at a time writes a table (a lock on
``OUT/.<name>.lock``).  Columns: key, kind, repeat, size, status
(``ok``, ``failed``, ``timeout``), error (one line), the parameters, the item's
figures, seconds, where it ran (worker, host, CPU model), date (UTC) and the git
commit of this checkout (``unknown`` outside one; ``-dirty`` with local changes).  When
a later item brings new columns the table is rewritten once with the wider header (a
new file renamed over the old).  A parameter named like a runner column (twolevel's DAG
``kind``) is stored as ``param_<name>``, a figure named like any other column as
``result_<name>``.  ``OUT/<name>.parquet`` is written at the end when pyarrow is
importable.

Limits.  ``timeout`` (seconds) bounds each item: a search is given it as its time limit
and stops there by itself, and its row says ``timeout``; an item that does not stop is
recorded as ``timeout`` after a grace period and left behind (a task keeps its worker
busy until it returns; a cluster the sweep started is closed with it; in this process
an alarm signal interrupts it).  Ctrl-C cancels what is in flight and keeps the table
as it is.  ``time_limit`` (seconds) bounds the whole sweep: no item starts after it,
small items still in flight then are cancelled and not recorded (a later run does them),
and the summary says ``time_limited``.

Reading a sweep back.  :func:`read_outcomes` gives, for every item of a grid, its newest
row as an :class:`ItemOutcome` (status, error, its figures decoded to values: numbers,
booleans, lists), or status ``""`` for an item that never ran; :func:`run_grid` runs a
grid and returns those outcomes, in a temporary folder when no ``out`` is given (a
package's sweep front end: a grid, this call, and a report over the outcomes).
:func:`parse_axis` reads a comma-separated command-line value (``--P 8,16,32``) as a
grid axis.
"""
from __future__ import annotations

import csv
import glob as globmod
import hashlib
import importlib
import inspect
import io
import itertools
import json
import math
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import types
import typing
from collections import deque
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

from . import interrupts
from .errors import InputError
from .policy import StealPolicy

GRID_KEYS = ("name", "description", "repeats", "timeout", "items")
BLOCK_KEYS = ("kind", "instance", "settings", "size", "repeats", "timeout")
SIZES = ("small", "big")
POLICY_FIELDS = tuple(f.name for f in fields(StealPolicy))
ENGINE_KEYS = ("backend", "workers", "time_limit", "node_limit") + POLICY_FIELDS
#: the keyword an item function declares to receive the engine's solve() arguments
SOLVE_PARAM = "solve_kwargs"

STATUS_OK, STATUS_FAILED, STATUS_TIMEOUT = "ok", "failed", "timeout"
LEAD_COLUMNS = ("key", "kind", "repeat", "size", "status", "error")
TAIL_COLUMNS = ("seconds", "worker", "host", "cpu", "date", "commit")


def _grace(timeout: float) -> float:
    """How long after its timeout a stuck item is abandoned: a search given the timeout
    as its time limit stops by itself within a chunk, so this only catches the others."""
    return 1.0 + 0.25 * timeout


class GridError(InputError):
    """A grid that cannot be run: malformed, unknown kind or key, wrong type."""


# --------------------------------------------------------------------------- the grid
@dataclass(frozen=True)
class SweepItem:
    """One expanded grid point: what runs, and the row columns that describe it."""

    key: str
    kind: str
    ref: Any                 # "module:function" or a callable
    params: dict             # keyword arguments of the item function (files resolved)
    engine: dict             # engine settings (backend, workers, limits, policy fields)
    columns: dict            # parameters as the grid wrote them (instance, then settings)
    repeat: int = 0
    size: str = "small"
    timeout: float | None = None


@dataclass
class Grid:
    name: str
    items: list
    source: str | None = None
    duplicates: int = 0      # grid points written twice (run once)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_scalar(where: str, value) -> None:
    if isinstance(value, (dict, set, tuple)) or (
            value is not None and not isinstance(value, (str, int, float, bool, list))):
        raise GridError(f"{where}: expected a value or a list of values, got {_short(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise GridError(f"{where}: {value} is not a finite number")


def _choices(where: str, value) -> list:
    """A mapping value -> the list of values it expands to (a list expands)."""
    if isinstance(value, list):
        if not value:
            raise GridError(f"{where}: empty list (nothing to run)")
        for v in value:
            if isinstance(v, list):
                for x in v:
                    _check_scalar(where, x)
            else:
                _check_scalar(where, v)
        return list(value)
    _check_scalar(where, value)
    return [value]


def _expand_files(where: str, patterns: list, base: Path) -> list:
    """Paths or globs (relative to ``base``) -> [(as written, absolute path)] in order."""
    out = []
    for pat in patterns:
        if not isinstance(pat, str) or not pat:
            raise GridError(f"{where}: a file is a path string, got {_short(pat)}")
        full = pat if os.path.isabs(pat) else str(base / pat)
        if any(c in pat for c in "*?["):
            hits = sorted(globmod.glob(full))
            if not hits:
                raise GridError(f"{where}: no file matches {pat!r}")
            for h in hits:
                rel = os.path.relpath(h, base) if not os.path.isabs(pat) else h
                out.append((rel, os.path.abspath(h)))
        else:
            if not os.path.isfile(full):
                raise GridError(f"{where}: file not found: {pat!r}")
            out.append((pat, os.path.abspath(full)))
    return out


def _positive(where: str, value, integer: bool):
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if not ok or isinstance(value, bool) or value <= 0:
        kind = "a positive integer" if integer else "a positive number of seconds"
        raise GridError(f"{where}: expected {kind}, got {_short(value)}")
    return value


def item_key(kind: str, columns: dict, repeat: int) -> str:
    """The stable key of an item: a hash of what defines its result."""
    text = json.dumps({"kind": kind, "params": columns, "repeat": repeat},
                      sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _import_ref(ref: str):
    module, _, name = ref.partition(":")
    fn = getattr(importlib.import_module(module), name)
    return fn


def _load_function(kind: str, ref):
    if callable(ref):
        return ref
    if not isinstance(ref, str) or ":" not in ref:
        raise GridError(f"kind {kind!r}: the resolver gave {ref!r}, not 'module:function'")
    try:
        return _import_ref(ref)
    except (ImportError, AttributeError) as exc:
        raise GridError(f"kind {kind!r}: cannot import {ref} ({exc})") from None


def _resolve(resolver, kind: str):
    if isinstance(resolver, Mapping):
        if kind not in resolver:
            raise GridError(f"unknown item kind {kind!r}; known: {', '.join(sorted(resolver))}")
        return resolver[kind]
    try:
        return resolver(kind)
    except KeyError:
        raise GridError(f"unknown item kind {kind!r}") from None


def _hint_accepts(hint, value) -> bool:
    """Does ``value`` fit a simple annotation (int, float, str, bool, unions of them)?
    Anything else is the item function's own business."""
    if hint is inspect.Parameter.empty or hint is Any:
        return True
    args = typing.get_args(hint)
    if args and typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_hint_accepts(a, value) for a in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if typing.get_origin(hint) is list or hint is list:
        return isinstance(value, list)
    return True


def _check_signature(kind: str, fn, params: dict) -> None:
    """Unknown, missing or wrongly typed parameters -> one line, before anything runs."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - unresolvable annotations: skip the type check
        hints = {}
    accepted = {n: p for n, p in sig.parameters.items()
                if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and n != SOLVE_PARAM}
    var_kw = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    for name, value in params.items():
        if name not in accepted:
            if var_kw:
                continue
            raise GridError(f"kind {kind!r}: unknown parameter {name!r}; expected one of "
                            f"{', '.join(accepted) or '(none)'}")
        if not _hint_accepts(hints.get(name, inspect.Parameter.empty), value):
            want = getattr(hints[name], "__name__", None) or str(hints[name])
            raise GridError(f"kind {kind!r}: parameter {name!r} should be {want}, "
                            f"got {_short(value)}")
    for name, p in accepted.items():
        if p.default is p.empty and name not in params:
            raise GridError(f"kind {kind!r}: parameter {name!r} is required")


def _check_engine(where: str, engine: dict, size: str) -> None:
    backend = engine.get("backend")
    if backend is not None and backend not in ("dask", "sequential"):
        raise GridError(f"{where}: backend must be 'dask' or 'sequential', got {_short(backend)}")
    if size == "small" and (backend == "dask" or "workers" in engine):
        raise GridError(f"{where}: backend dask and workers need 'size: big' "
                        "(a small item searches sequentially inside one task)")
    if "workers" in engine:
        _positive(f"{where}: workers", engine["workers"], integer=True)
    if engine.get("time_limit") is not None:
        _positive(f"{where}: time_limit", engine["time_limit"], integer=False)
    if engine.get("node_limit") is not None:
        _positive(f"{where}: node_limit", engine["node_limit"], integer=True)
    try:
        policy_from_settings(engine)
    except (TypeError, ValueError) as exc:
        raise GridError(f"{where}: {exc}") from None


def policy_from_settings(engine: dict) -> StealPolicy:
    """The StealPolicy that an item's engine settings name (defaults elsewhere)."""
    return StealPolicy(**{k: v for k, v in engine.items() if k in POLICY_FIELDS})


def load_grid(source, resolver, *, name: str | None = None,
              base_dir: str | os.PathLike | None = None) -> Grid:
    """Read and expand a grid: a YAML file path, or a dict of the same structure.

    ``resolver`` maps a kind to ``"module:function"`` or a callable: a mapping, or a
    function raising KeyError (or InputError) for an unknown kind.  File patterns are
    relative to the grid file's folder (``base_dir`` or the working folder for a dict).
    """
    where = "grid"
    if isinstance(source, (str, os.PathLike)):
        import yaml

        path = Path(source)
        where = str(source)
        if not path.is_file():
            raise GridError(f"grid file not found: {source}")
        try:
            spec = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            at = f" at line {mark.line + 1}" if mark is not None else ""
            raise GridError(f"{source}: not valid YAML{at} "
                            f"({getattr(exc, 'problem', None) or exc.__class__.__name__})") from None
        except UnicodeDecodeError:
            raise GridError(f"{source}: not a text file") from None
        base = Path(base_dir) if base_dir is not None else path.resolve().parent
        default_name = path.stem
    else:
        spec = source
        base = Path(base_dir) if base_dir is not None else Path.cwd()
        default_name = "sweep"
    if not isinstance(spec, dict):
        raise GridError(f"{where}: expected a mapping with an 'items' list")
    for k in spec:
        if k not in GRID_KEYS:
            raise GridError(f"{where}: unknown key {k!r}; expected {', '.join(GRID_KEYS)}")
    gname = name or spec.get("name") or default_name
    if not isinstance(gname, str) or not gname or any(c in gname for c in "/\\\0") \
            or gname.startswith("."):
        raise GridError(f"{where}: name must be a plain file name, got {_short(gname)}")
    repeats = _positive(f"{where}: repeats", spec.get("repeats", 1), integer=True)
    timeout = spec.get("timeout")
    if timeout is not None:
        timeout = _positive(f"{where}: timeout", timeout, integer=False)
    blocks = spec.get("items")
    if not isinstance(blocks, list) or not blocks:
        raise GridError(f"{where}: 'items' must be a non-empty list of blocks")

    items, seen, dups = [], set(), 0
    functions: dict = {}
    for b, block in enumerate(blocks):
        bw = f"{where}: items[{b}]"
        if not isinstance(block, dict):
            raise GridError(f"{bw}: expected a mapping with a 'kind', got {_short(block)}")
        for k in block:
            if k not in BLOCK_KEYS:
                raise GridError(f"{bw}: unknown key {k!r}; expected {', '.join(BLOCK_KEYS)}")
        kind = block.get("kind")
        if not isinstance(kind, str) or not kind:
            raise GridError(f"{bw}: 'kind' must be a name, got {_short(kind)}")
        if kind not in functions:
            ref = _resolve(resolver, kind)
            functions[kind] = (ref, _load_function(kind, ref))
        ref, fn = functions[kind]
        size = block.get("size", "small")
        if size not in SIZES:
            raise GridError(f"{bw}: size must be small or big, got {_short(size)}")
        b_repeats = _positive(f"{bw}: repeats", block.get("repeats", repeats), integer=True)
        b_timeout = block.get("timeout", timeout)
        if b_timeout is not None:
            b_timeout = _positive(f"{bw}: timeout", b_timeout, integer=False)
        instance = block.get("instance", {}) or {}
        settings = block.get("settings", {}) or {}
        for label, m in (("instance", instance), ("settings", settings)):
            if not isinstance(m, dict):
                raise GridError(f"{bw}: '{label}' must be a mapping, got {_short(m)}")
            for k in m:
                if not isinstance(k, str):
                    raise GridError(f"{bw}: {label} key {_short(k)} is not a name")
        both = set(instance) & set(settings)
        if both:
            raise GridError(f"{bw}: {sorted(both)[0]!r} is in both instance and settings")
        axes = []     # (name, [(column value, call value)], is_engine)
        for k, v in instance.items():
            if k == "file":
                pats = v if isinstance(v, list) else [v]
                if not pats:
                    raise GridError(f"{bw}: instance.file: empty list (nothing to run)")
                axes.append((k, _expand_files(f"{bw}: instance.file", pats, base), False))
            else:
                axes.append((k, [(c, c) for c in _choices(f"{bw}: instance.{k}", v)], False))
        for k, v in settings.items():
            axes.append((k, [(c, c) for c in _choices(f"{bw}: settings.{k}", v)],
                         k in ENGINE_KEYS))
        for combo in itertools.product(*[a[1] for a in axes]) if axes else [()]:
            columns = {a[0]: c[0] for a, c in zip(axes, combo)}
            params = {a[0]: c[1] for a, c in zip(axes, combo) if not a[2]}
            engine = {a[0]: c[1] for a, c in zip(axes, combo) if a[2]}
            _check_engine(bw, engine, size)
            _check_signature(kind, fn, params)
            for r in range(b_repeats):
                key = item_key(kind, columns, r)
                if key in seen:
                    dups += 1
                    continue
                seen.add(key)
                items.append(SweepItem(key=key, kind=kind, ref=ref, params=params,
                                       engine=engine, columns=columns, repeat=r, size=size,
                                       timeout=b_timeout))
    return Grid(name=gname, items=items, source=None if isinstance(source, dict) else where,
                duplicates=dups)


# ------------------------------------------------------------------ running one item
def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    msg = text[0] if text else ""
    return f"{exc.__class__.__name__}: {msg}" if msg else exc.__class__.__name__


_CPU = None


def cpu_model() -> str:
    global _CPU
    if _CPU is None:
        model = ""
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.lower().startswith("model name"):
                        model = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
        _CPU = model or platform.processor() or platform.machine() or "unknown"
    return _CPU


def _plain(value):
    """A figure -> a CSV-friendly plain value (numpy scalars unwrapped, lists as JSON)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        return _plain(value.item())
    try:
        return json.dumps(value, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))
    except (TypeError, ValueError):
        return str(value)


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
        fn = _import_ref(ref) if isinstance(ref, str) else ref
        _warm_up(fn, ref)
        t0 = time.perf_counter()
        kwargs = dict(params)
        if SOLVE_PARAM in inspect.signature(fn).parameters:
            kwargs[SOLVE_PARAM] = _solve_kwargs(engine, timeout, client)
        out = fn(**kwargs)
        if not isinstance(out, dict):
            raise TypeError(f"the item function returned {type(out).__name__}, not a dict")
        figures = {str(k): _plain(v) for k, v in out.items()}
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


# ------------------------------------------------------------------------ the table
def git_commit(path: str | os.PathLike | None = None) -> str:
    """The checkout's commit (``-dirty`` with uncommitted changes), or ``unknown``."""
    here = str(path or Path(__file__).resolve().parent)
    try:
        head = subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10)
        return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _cell(value) -> str:
    if value is None:
        return ""
    return str(value)


def parse_cell(text: str):
    """A CSV cell back to a value: '' -> None, numbers, True/False, else the text."""
    if text == "":
        return None
    if text in ("True", "False"):
        return text == "True"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


class SweepTable:
    """``OUT/<name>.csv``: read what is there, append rows durably, widen when needed."""

    def __init__(self, out_dir: str | os.PathLike, name: str):
        self.dir = Path(out_dir)
        if self.dir.exists() and not self.dir.is_dir():
            raise InputError(f"--out {out_dir}: exists and is not a folder")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / f"{name}.csv"
        self.parquet_path = self.dir / f"{name}.parquet"
        self.columns: list = []
        self.rows: list = []
        self._lock = self._take_lock(self.dir / f".{name}.lock", self.path)
        try:
            if self.path.exists():
                self._read()
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _take_lock(path: Path, table: Path):
        """One writer per table: a second sweep on the same table stops at once
        (an advisory lock, released by the OS whatever ends this process)."""
        try:
            import fcntl
        except ImportError:          # not POSIX: no lock
            return None
        f = open(path, "a")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            raise InputError(f"another sweep is writing {table}; "
                             "wait for it or choose another --out folder") from None
        return f

    def close(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def __enter__(self) -> "SweepTable":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def _read(self) -> None:
        raw = self.path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            # a torn last row (a crash mid-write): cut it off, keep the whole rows
            raw = raw[:raw.rfind(b"\n") + 1]
            with open(self.path, "r+b") as f:
                f.truncate(len(raw))
        try:
            reader = csv.DictReader(io.StringIO(raw.decode()))
            header = reader.fieldnames or []
            rows = list(reader)
        except (UnicodeDecodeError, csv.Error):
            header, rows = [], []
        if raw and not {"key", "status"} <= set(header):
            raise InputError(f"{self.path} exists and is not a sweep table; "
                             "choose another --out folder")
        self.columns = list(header)
        self.rows = rows

    def done_keys(self) -> set:
        return {r["key"] for r in self.rows if r.get("status") == STATUS_OK}

    def _write_all(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.columns, extrasaction="ignore")
            w.writeheader()
            for r in self.rows:
                w.writerow({k: r.get(k, "") for k in self.columns})
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def append(self, row: dict) -> None:
        """One row, durably: a single write + fsync (whole rows only, whatever stops us)."""
        row = {k: _cell(v) for k, v in row.items()}
        new = [k for k in row if k not in self.columns]
        self.rows.append(row)
        if new or not self.path.exists():
            tail = [c for c in self.columns if c in TAIL_COLUMNS]
            body = [c for c in self.columns if c not in TAIL_COLUMNS]
            self.columns = body + [c for c in new if c not in TAIL_COLUMNS] + \
                [c for c in TAIL_COLUMNS if c in tail or c in new]
            self._write_all()
            return
        buf = io.StringIO()
        csv.DictWriter(buf, fieldnames=self.columns, extrasaction="ignore",
                       lineterminator="\n").writerow({k: row.get(k, "") for k in self.columns})
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, buf.getvalue().encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def write_parquet(self) -> Path | None:
        """The whole table as Parquet (typed columns) when pyarrow is importable."""
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            return None
        data = {}
        for c in self.columns:
            vals = [parse_cell(r.get(c, "") or "") for r in self.rows]
            present = [v for v in vals if v is not None]
            if present and all(isinstance(v, bool) for v in present):
                pass
            elif present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
                pass
            elif present and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                 for v in present):
                vals = [None if v is None else float(v) for v in vals]
            else:
                vals = [None if v is None else (r.get(c) or "") for v, r in zip(vals, self.rows)]
            data[c] = vals
        tmp = self.parquet_path.with_name(self.parquet_path.name + ".tmp")
        pq.write_table(pa.table(data), tmp)
        os.replace(tmp, self.parquet_path)
        return self.parquet_path


# ------------------------------------------------------------------------ the runner
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


def _row(item: SweepItem, outcome: dict, commit: str) -> dict:
    row = {"key": item.key, "kind": item.kind, "repeat": item.repeat, "size": item.size,
           "status": outcome["status"], "error": outcome["error"]}
    for k, v in item.columns.items():
        # a parameter named like a runner column (twolevel's DAG ``kind``) is renamed
        row[k if k not in LEAD_COLUMNS and k not in TAIL_COLUMNS else f"param_{k}"] = _plain(v)
    for k, v in outcome["figures"].items():
        name = k if k not in row and k not in TAIL_COLUMNS else f"result_{k}"
        row[name] = v
    row["seconds"] = round(outcome["seconds"], 6)
    for k in ("worker", "host", "cpu"):
        row[k] = outcome[k]
    row["date"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    row["commit"] = commit
    return row


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
        bar = _bar(summary.total, summary.done_before, grid.name, progress)
        watch = _SweepWatch(client, grid.name, summary, len(todo))

        def record(item: SweepItem, outcome: dict) -> None:
            row = _row(item, outcome, commit)
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
            # A first Ctrl-C / SIGTERM is recorded (stealsearch.engine.interrupts), not raised: a search
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
    """The sweep's progress on the scheduler's /stealsearch page (stealsearch.engine.monitor):
    at most one publish per ``INTERVAL`` seconds, and the last state at the end."""

    INTERVAL = 0.5

    def __init__(self, client, name: str, summary: SweepSummary, todo: int):
        self.client, self.name, self.summary, self.todo = client, name, summary, todo
        self.sweep_id = f"{name}-{os.urandom(4).hex()}"
        self._last = float("-inf")
        self._slots = self._count_slots() if client is not None else 0
        self.publish()

    def publish(self, final: bool = False) -> None:
        if self.client is None:
            return
        now = time.monotonic()
        if not final and now - self._last < self.INTERVAL:
            return
        self._last = now
        from .monitor import publish_sweep

        s = self.summary
        state = ("interrupted" if s.interrupted else "done") if final else "running"
        publish_sweep(self.client, self.sweep_id, {
            "name": self.name, "total": s.total, "done": s.done_before + s.ran,
            "ok": s.ok, "failed": s.failed, "timeout": s.timeout,
            # in flight: one item per worker thread while enough are left
            "running": 0 if final else max(0, min(self.todo - s.ran, self._slots)),
            "remaining": s.remaining, "done_before": s.done_before, "state": state})

    def _count_slots(self) -> int:
        try:
            return max(1, sum(self.client.nthreads().values()))
        except Exception:  # noqa: BLE001 - only a figure on a page
            return 1


def _abandoned(item: SweepItem) -> dict:
    return {"status": STATUS_TIMEOUT, "figures": {}, "worker": "", "host": "", "cpu": "",
            "seconds": item.timeout + _grace(item.timeout),
            "error": f"abandoned {_grace(item.timeout):g} s after the timeout of "
                     f"{item.timeout:g} s"}


def _run_tasks(client, items: list, record, past_deadline=lambda: False) -> None:
    """Small items as Dask tasks, one per worker thread in flight (so a task's clock
    starts when it starts), gathered with ``as_completed``; stuck ones abandoned; at the
    sweep's deadline the ones in flight are cancelled (the ``finally``), not recorded."""
    from distributed import as_completed

    if not items:
        return
    pending = deque(items)
    try:
        slots = max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001 - an unanswered query: one at a time still works
        slots = 1
    inflight: dict = {}      # future key -> (future, item, deadline)
    ac = as_completed()
    try:
        while pending or inflight:
            interrupts.stop_if_requested()
            if past_deadline():
                return
            while pending and len(inflight) < slots:
                item = pending.popleft()
                fut = client.submit(run_item, item.ref, item.params, item.engine, item.timeout,
                                    pure=False, key=f"sweep-{item.kind}-{item.key}-{os.urandom(3).hex()}")
                deadline = None if item.timeout is None else \
                    time.monotonic() + item.timeout + _grace(item.timeout)
                inflight[fut.key] = (fut, item, deadline)
                ac.add(fut)
            batch = ac.next_batch(block=False)
            for fut in batch:
                if fut.key not in inflight:
                    continue        # abandoned after its deadline; its late answer is dropped
                _, item, _ = inflight.pop(fut.key)
                try:
                    outcome = fut.result(timeout=60)
                except Exception as exc:  # noqa: BLE001 - a lost worker, a cancelled task
                    outcome = {"status": STATUS_FAILED, "error": _one_line(exc), "figures": {},
                               "seconds": 0.0, "worker": "", "host": "", "cpu": ""}
                record(item, outcome)
            now = time.monotonic()
            for k in [k for k, (_, _, d) in inflight.items() if d is not None and now > d]:
                fut, item, _ = inflight.pop(k)
                fut.cancel()
                record(item, _abandoned(item))
            if not batch:
                time.sleep(0.02)
    finally:
        for fut, _, _ in inflight.values():
            fut.cancel()


# --------------------------------------------------------------- reading a sweep back
@dataclass
class ItemOutcome:
    """One grid item's newest row: ``status`` ok / failed / timeout, or ``""`` when the
    item never ran (a time limit, ``limit``, Ctrl-C); ``figures`` are what the item
    function returned, decoded from the table's cells."""

    item: SweepItem
    status: str = ""
    error: str = ""
    figures: dict = field(default_factory=dict)
    seconds: float | None = None
    worker: str = ""

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK

    def record(self) -> dict:
        """The item's parameters (as the grid gave them) and its figures in one dict."""
        return {**self.item.columns, **self.figures}


def decode_cell(text: str):
    """A table cell back to the value the item returned: :func:`parse_cell`, and a list
    or mapping (stored as JSON) decoded."""
    value = parse_cell(text)
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            pass
    return value


def read_outcomes(grid: Grid, out_dir: str | os.PathLike) -> list:
    """Every item of ``grid`` with its newest row in ``OUT/<name>.csv`` (the order of the
    grid; status ``""`` for an item without a row).  Rows of other grids written into the
    same table are ignored."""
    path = Path(out_dir) / f"{grid.name}.csv"
    newest: dict = {}
    if path.exists():
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row.get("key"):
                    newest[row["key"]] = row
    runner = set(LEAD_COLUMNS) | set(TAIL_COLUMNS)
    out = []
    for item in grid.items:
        row = newest.get(item.key)
        if row is None:
            out.append(ItemOutcome(item))
            continue
        reserved = runner | set(item.columns)
        params = set(item.columns) | {f"param_{k}" for k in item.columns if k in runner}
        figures = {}
        for col, text in row.items():
            if col is None or col in runner or col in params:
                continue
            name = col[len("result_"):] if col.startswith("result_") and \
                col[len("result_"):] in reserved else col
            figures[name] = decode_cell(text or "")
        out.append(ItemOutcome(item, status=row.get("status", ""), error=row.get("error", ""),
                               figures=figures, seconds=parse_cell(row.get("seconds") or ""),
                               worker=row.get("worker") or ""))
    return out


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


def parse_axis(text: str, kind: type = int, flag: str = "value", *,
               error: type[InputError] = GridError) -> list:
    """A comma-separated command-line value as a grid axis: ``"8,16,32"`` -> [8, 16, 32]
    (blanks ignored; duplicates kept once, in order).  A bad or empty list raises
    ``error`` with one line naming ``flag``.

    >>> parse_axis("8, 16,8", int, "--P")
    [8, 16]
    >>> parse_axis("0,1.5", float, "--skews")
    [0.0, 1.5]
    """
    out = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            value = kind(part)
        except ValueError:
            raise error(f"{flag}: {part[:30]!r} is not a valid {kind.__name__}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise error(f"{flag}: {part[:30]!r} is not a finite number")
        if value not in out:
            out.append(value)
    if not out:
        raise error(f"{flag}: empty list")
    return out
