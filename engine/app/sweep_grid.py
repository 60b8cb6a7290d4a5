"""A sweep's grid: reading, checking and expanding it into items (before anything runs).

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
fields of :class:`~stealsearch.engine.core.policy.StealPolicy` by name (``k``, ``release_threshold``,
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
anything runs, with one line (:class:`~stealsearch.engine.core.errors.InputError`).

Item keys.  Every expanded item has a stable key: a hash of its kind, instance
parameters (files as written in the grid), settings and repeat number; not of its
size, timeout or the grid's name (:func:`item_key`; the table marks the keys that are
done: :mod:`stealsearch.engine.app.sweep_table`).

:func:`parse_axis` reads a comma-separated command-line value (``--P 8,16,32``) as a
grid axis.
"""
from __future__ import annotations

import glob as globmod
import hashlib
import importlib
import inspect
import itertools
import json
import math
import os
import types
import typing
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from ..core.errors import InputError
from ..core.policy import StealPolicy

GRID_KEYS = ("name", "description", "repeats", "timeout", "items")
BLOCK_KEYS = ("kind", "instance", "settings", "size", "repeats", "timeout")
SIZES = ("small", "big")
POLICY_FIELDS = tuple(f.name for f in fields(StealPolicy))
ENGINE_KEYS = ("backend", "workers", "time_limit", "node_limit") + POLICY_FIELDS
#: the keyword an item function declares to receive the engine's solve() arguments
SOLVE_PARAM = "solve_kwargs"

class GridError(InputError):
    """A grid that cannot be run: malformed, unknown kind or key, wrong type."""


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


def import_ref(ref: str):
    """The function a ``"module:function"`` string names."""
    module, _, name = ref.partition(":")
    fn = getattr(importlib.import_module(module), name)
    return fn


def _load_function(kind: str, ref):
    if callable(ref):
        return ref
    if not isinstance(ref, str) or ":" not in ref:
        raise GridError(f"kind {kind!r}: the resolver gave {ref!r}, not 'module:function'")
    try:
        return import_ref(ref)
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


#: bounds checked before anything is expanded: items of a whole grid,
#: repeats of one item, the grid file's size (YAML aliases: inputs.load_yaml)
MAX_GRID_ITEMS = 100_000
MAX_REPEATS = 10_000
MAX_GRID_BYTES = 16 << 20


def _bounded_repeats(where: str, value) -> int:
    value = _positive(where, value, integer=True)
    if value > MAX_REPEATS:
        raise GridError(f"{where}: at most {MAX_REPEATS:,}, got {_short(value)}")
    return value


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

        from ..core.inputs import load_yaml, read_input_bytes

        path = Path(source)
        where = str(source)
        if not path.exists():
            raise GridError(f"grid file not found: {source}")
        data = read_input_bytes(path, GridError)
        if len(data) > MAX_GRID_BYTES:
            raise GridError(f"{source}: {len(data) >> 20} MiB is more than a grid file's "
                            f"{MAX_GRID_BYTES >> 20} MiB")
        try:
            spec = load_yaml(data.decode("utf-8-sig"), where, GridError)
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
    repeats = _bounded_repeats(f"{where}: repeats", spec.get("repeats", 1))
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
        b_repeats = _bounded_repeats(f"{bw}: repeats", block.get("repeats", repeats))
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
        n_block = b_repeats * math.prod(len(a[1]) for a in axes)
        if len(items) + n_block > MAX_GRID_ITEMS:
            raise GridError(f"{bw}: the grid expands to {len(items) + n_block:,} items "
                            f"(more than {MAX_GRID_ITEMS:,}); split it into several grids")
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
