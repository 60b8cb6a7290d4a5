"""The fast tier: per-node numba functions, and a chunk driver the engine generates.

A user subclasses :class:`FastProblem`, describes a node row with a :class:`RowLayout`
and writes **module-level** functions of a node row (plain Python in numba's subset, or
already ``@njit``):

==================================  ==================================================
``expand(row, out, data) -> n``     write the children of ``row`` into ``out[0]`` ..
                                    ``out[n - 1]`` (``out`` has ``max_children`` rows of
                                    ``row_width`` words) and return ``n``.  They are
                                    pushed in that order: ``out[n - 1]`` is explored
                                    first.  ``row`` is read-only.
``bound(row, data) -> int``         (optional; optimise / decide) an upper bound on the
                                    objective at and below ``row``; a row whose bound is
                                    ``<= incumbent`` is not expanded.
``objective(row, data) -> int``     (optional; optimise / decide) the row's value as a
                                    solution, or :data:`NOT_A_SOLUTION`.
``is_solution(row, data) -> bool``  (optional; enumerate) whether the row is counted.
==================================  ==================================================

``data`` is the tuple :meth:`FastProblem.data` returns (numpy arrays, read-only by
convention).  The class names the functions (``expand = expand``) and gives ``root()``
(one row, or a 2-D array of rows) and ``decode_row(row)``.

The engine generates the chunk driver, in the raw tier's signature (see
:mod:`stealsearch.engine.core.problem`): pop a row, count it, prune it against the incumbent (bound),
count it as a solution (enumerate), expand it onto the stack, and return ``IMPROVED``
(with the row copied into the solution buffer) after expanding a row whose objective
beats the incumbent; ``GROW`` before a pop that might not fit; ``BUDGET`` / ``EMPTY``
otherwise; counters flushed once, at the one exit.  These are exactly the rules of
the reference tier (:class:`stealsearch.engine.core.reference.ReferenceStack`), so the two tiers visit
the same tree.  The solution buffer is the improving row; ``decode_row`` reads it.

No allocation
-------------
The driver is compiled without numba's reference counting (``_nrt=False``): with it,
every array handed to a function costs atomic operations per node, many times the cost
of a cheap node.  So per-node functions must not allocate: no
``np.zeros``, no slice assignment such as ``out[0, :] = row`` (use :func:`copy_row`);
scratch arrays come from :meth:`FastProblem.data`.  A function that does allocate
still works: the engine warns once and uses the same driver with reference counting.
The popped row is copied into a scratch row (the stack's last) before ``expand``, so
``expand`` may write ``out[0]`` over the parent's slot; for a layout of fixed width
the copy is unrolled.

How the driver is cached
------------------------
A driver made by a factory (a closure over the user's functions) would be compiled
again in every process.  Instead the driver's *source* is generated, written to a file
in the cache directory (``$STEALSEARCH_CACHE``, default ``~/.cache/stealsearch``)
whose name is a hash of the template, the flags and the user's source file, and
imported; its ``@njit(nogil=True, cache=True)`` then works as for any module: a
fresh process, and every Dask worker, loads the compiled driver from numba's on-disk
cache.  The file is rewritten only when its content would change, so numba's cache
(keyed on the file's time stamp) stays valid.  numba links the user's functions
*into* the cached driver, so the hash covers the user's source file: editing it makes
a new driver.  Helpers the user's functions call from *other* files are not tracked
(numba's own rule for ``cache=True`` callers); clear the cache directory after
editing those.  User functions defined in the script being run (``__main__``) are
imported by the generated module from the script's file (the script's
``if __name__ == "__main__":`` block does not run again).

The row layout (:func:`RowLayout`, :class:`Bits`) and the helpers per-node functions
use on rows (``has_bit``, ``set_bit``, ``clear_bit``, ``copy_row``) are
:mod:`stealsearch.engine.core.layout`, importable from here too.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import re
import sys
import types
import warnings
from pathlib import Path

import numpy as np
from numba import njit

from .layout import Bits, RowLayout, clear_bit, copy_row, has_bit, set_bit  # noqa: F401
from .problem import (BUDGET, EMPTY, ENUMERATE, GROW, IMPROVED, NODES, SOLUTIONS,
                      ContractError, Problem)

#: what ``objective`` returns for a row that is not a solution (below every incumbent)
NOT_A_SOLUTION = np.iinfo(np.int64).min

ROLES = ("expand", "bound", "objective", "is_solution")


# -- the problem class ----------------------------------------------------------------------
class FastProblem(Problem):
    """Base class of a fast-tier problem; see the module docstring.

    Class attributes: ``layout`` (a :func:`RowLayout`), ``expand`` and optionally
    ``bound``, ``objective``, ``is_solution`` (module-level functions), ``max_children``.
    Set ``self.row_width`` in ``__init__`` when the layout's last field is sized per
    instance.  Methods: ``root()``, ``data()``, ``decode_row(row)``, ``verify``.
    """

    name = "fast-problem"
    layout = None
    expand = None
    bound = None
    objective = None
    is_solution = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)    # Problem parses a mode string
        for role in ROLES:                     # plain attributes, not methods
            f = cls.__dict__.get(role)
            if f is not None and not isinstance(f, staticmethod):
                setattr(cls, role, staticmethod(f))
        layout = cls.__dict__.get("layout")
        if layout is not None and getattr(layout, "_variable", 0) is None:
            cls.row_width = layout.width()
        if cls.__dict__.get("expand") is not None:
            try:
                cls._fast_spec = _make_spec(cls)
                cls._fast_error = None
            except ContractError as exc:       # surfaced by check_problem / kernel
                cls._fast_spec, cls._fast_error = None, str(exc)

    # -- what the user writes ---------------------------------------------------------
    def root(self) -> np.ndarray:
        """The root row (1-D) or rows (2-D)."""
        raise NotImplementedError(f"{type(self).__name__} must define root()")

    def data(self) -> tuple:
        """The arrays the per-node functions get as ``data``."""
        return ()

    def decode_row(self, row: np.ndarray):
        """The user's solution from the improving row (default: the layout's fields)."""
        return self.layout.decode(row) if self.layout is not None else row.tolist()

    # -- the engine's side ---------------------------------------------------------------
    def counts_solutions(self) -> bool:
        """Whether the generated driver can count a row in enumerate mode: it names an
        ``is_solution`` or an ``objective`` (:func:`stealsearch.engine.core.problem.check_problem`)."""
        cls = type(self)
        if getattr(cls, "_fast_spec", None) is None:
            return True                 # not a driver at all: its kernel says what is wrong
        return cls.is_solution is not None or cls.objective is not None

    @property
    def kernel(self):
        cls = type(self)
        fast, counted, marker = generated_driver(cls)
        if cls.__dict__.get("_fast_needs_nrt") is None:
            cls._fast_needs_nrt = _needs_nrt(self, fast, marker)
        return counted if cls._fast_needs_nrt else fast

    @property
    def solution_size(self) -> int:
        return int(self.row_width)

    def root_frontier(self) -> np.ndarray:
        rows = np.asarray(self.root(), dtype=np.int64)
        return rows.reshape(-1, int(self.row_width))

    def kernel_data(self) -> tuple:
        return (np.int64(self.max_children), tuple(self.data()))

    def row_bounds(self, rows) -> np.ndarray:
        if type(self).bound is None:
            return super().row_bounds(rows)
        b, data = type(self).bound, tuple(self.data())
        return np.array([int(b(np.ascontiguousarray(r), data)) for r in rows], dtype=np.int64)

    def decode(self, solution, value):
        return self.decode_row(np.array(solution[:int(self.row_width)]))


# -- generating the driver ---------------------------------------------------------------------
def _make_spec(cls) -> dict:
    """Where each user function lives: (module, file, qualname, already jitted)."""
    spec = {}
    for role in ROLES:
        f = inspect.getattr_static(cls, role, None)
        f = f.__func__ if isinstance(f, staticmethod) else f
        if f is None:
            continue
        py = getattr(f, "py_func", f)
        if not inspect.isfunction(py):
            raise ContractError(f"{cls.__name__}.{role} must be a function, got {f!r}")
        if "<locals>" in py.__qualname__ or "." in py.__qualname__:
            raise ContractError(f"{cls.__name__}.{role}: {py.__qualname__} must be defined at "
                                "module level (Dask workers import it by name)")
        module = sys.modules.get(py.__module__)
        path = getattr(module, "__file__", None)
        if path is None:
            raise ContractError(f"{cls.__name__}.{role}: module {py.__module__!r} has no file "
                                "to import the function from")
        spec[role] = (py.__module__, os.path.abspath(path), py.__name__, f is not py)
    if "expand" not in spec:
        raise ContractError(f"{cls.__name__} must name an expand(row, out, data) function")
    return spec


_TEMPLATE = '''\
# Generated by engine.fast; do not edit (a new file is made when the sources change).
# user sources: {sources}
import numpy as np
from numba import njit
from stealsearch.engine.core.fast import inline_with_helpers, load_user_module

{imports}

'''

_DRIVER = '''@njit(nogil=True, cache=True{nrt})
def {name}(stack, top, budget, mode, incumbent, counters, solution, maxc, data):
    capacity = stack.shape[0]
    width = stack.shape[1]
{check_width}
    cur = stack[capacity - 1]            # scratch: the popped row, read by the user's functions
    optimising = mode != {ENUMERATE}
    done = 0
    found = 0
    status = {BUDGET}
    value = 0
    while done < budget:
        if top == 0:
            break
        if top + maxc >= capacity:       # children and the scratch row must fit
            status = {GROW}
            break
        top -= 1
{copy}
        done += 1
        if optimising:
{prune}
            pass
        else:
{count}
            pass
        n = expand(cur, stack[top:top + maxc], data)
        if n < 0 or n > maxc:
            raise ValueError("expand returned more children than max_children (or < 0)")
        top += n
        if optimising:
{improve}
            pass
    counters[{NODES}] += done
    counters[{SOLUTIONS}] += found
    if status == {BUDGET} and top == 0:
        status = {EMPTY}
    return top, status, value

'''

_PRUNE = '''\
            if bound(cur, data) <= incumbent:
                continue'''
_IMPROVE = '''\
            v = {value}
            if v > incumbent:
                for j in range(width):
                    solution[j] = cur[j]
                status = {IMPROVED}
                value = v
                break'''
_COUNT = '''\
            if {test}:
                found += 1'''


def cache_dir() -> Path:
    d = os.environ.get("STEALSEARCH_CACHE") or os.path.join(Path.home(), ".cache", "stealsearch")
    return Path(d) / "fast"


def load_user_module(name: str, path: str):
    """The module that defines a problem's functions, in this process: by name when it
    is importable (or is the running script), else loaded from its file."""
    main = sys.modules.get("__main__")
    if name == "__main__" or name == "__mp_main__":
        if os.path.abspath(getattr(main, "__file__", "") or "") == path:
            return main
    else:
        try:
            return importlib.import_module(name)
        except ImportError:
            pass
    alias = "_stealsearch_user_" + hashlib.sha1(path.encode()).hexdigest()[:12]
    if alias in sys.modules:
        return sys.modules[alias]
    if not os.path.exists(path):
        raise ContractError(f"cannot import {name!r} here: {path} does not exist on this "
                            "machine (put the problem in an installed module)")
    spec = importlib.util.spec_from_file_location(alias, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[alias] = module
    spec.loader.exec_module(module)
    return module


def inline_with_helpers(fn, _done: dict | None = None):
    """``fn`` (a user's per-node function, plain or ``@njit``) ready to be inlined into the
    generated driver: ``njit(inline="always")`` of its Python function, bound to a copy
    of its module's globals in which every *plain* Python function it calls by name (a
    helper, at any depth, from any module) is made the same way.  So a helper needs no
    decorator: numba compiles it into the driver with the function that calls it.
    Helpers already compiled (``@njit``), modules and other values are left as they are;
    what numba cannot compile fails in :func:`_needs_nrt` with one ContractError line."""
    py = getattr(fn, "py_func", fn)
    done = {} if _done is None else _done
    if id(py) in done:
        return done[id(py)]
    names = set()
    todo = [py.__code__]
    while todo:                          # names used by the function and its inner code
        code = todo.pop()
        names.update(code.co_names)
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    helpers = {n: v for n, v in py.__globals__.items()
               if n in names and inspect.isfunction(v) and v is not py}
    if helpers:
        env = dict(py.__globals__)
        done[id(py)] = None              # a helper that calls back here: left as it is
        env.update({n: inline_with_helpers(v, done) or v for n, v in helpers.items()})
        clone = types.FunctionType(py.__code__, env, py.__name__, py.__defaults__,
                                   py.__closure__)
        clone.__qualname__, clone.__module__ = py.__qualname__, py.__module__
        py = clone
    done[id(getattr(fn, "py_func", fn))] = jitted = njit(inline="always")(py)
    return jitted


def _compile_error(cls, exc) -> str:
    """numba's report of a per-node function (or helper) it cannot compile, as one line
    naming the function, where, why, and the fix."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    reason = next((ln for ln in lines if not ln.startswith(("Failed in", "File ", "During",
                                                             "^", "<source", "def "))),
                  lines[0] if lines else type(exc).__name__)
    where = re.search(r'File "([^"]+)", line (\d+):\s*\n\s*(?:@.*\n\s*)*def (\w+)', text) \
        or re.search(r'File "([^"]+)", line (\d+)', text)
    what, at = "its per-node functions", ""
    if where:
        at = f" ({os.path.basename(where.group(1))}:{where.group(2)})"
        if where.lastindex == 3:
            what = where.group(3)
    return (f"{cls.__name__}: numba cannot compile {what}{at}: {reason}; per-node functions "
            "and every helper they call must stay in numba's subset of Python (numbers, "
            "numpy arrays; no Python objects): rewrite it so, or compute the value in data()")


def driver_source(spec: dict, width: int | None = None) -> str:
    """The generated driver's module source for ``spec`` (see :func:`_make_spec`); with a
    fixed row ``width``, the copy of the popped row is unrolled (a loop over a run-time
    width costs as much as a whole cheap node)."""
    modules = sorted({(m, p) for m, p, _, _ in spec.values()})
    imports, sources = [], []
    for i, (m, p) in enumerate(modules):
        imports.append(f"_m{i} = load_user_module({m!r}, {p!r})")
        sources.append(f"{m} sha256={hashlib.sha256(Path(p).read_bytes()).hexdigest()[:16]}")
    for role, (m, p, fname, jitted) in sorted(spec.items()):
        ref = f"_m{modules.index((m, p))}.{fname}"
        # inlined into the driver at numba IR level (their code is cached with it), and
        # so is every helper they call
        imports.append(f"{role} = inline_with_helpers({ref})")
    consts = dict(BUDGET=BUDGET, EMPTY=EMPTY, GROW=GROW, IMPROVED=IMPROVED, NODES=NODES,
                  SOLUTIONS=SOLUTIONS, ENUMERATE=ENUMERATE)
    if "objective" in spec:
        value = "objective(cur, data)"
    elif "is_solution" in spec:
        value = f"1 if is_solution(cur, data) else {NOT_A_SOLUTION}"
    else:
        value = None
    if "is_solution" in spec:
        test = "is_solution(cur, data)"
    elif "objective" in spec:
        test = f"objective(cur, data) != {NOT_A_SOLUTION}"
    else:
        test = None
    if width is None:
        copy = "        for j in range(width):\n            cur[j] = stack[top, j]"
        check = ""
    else:
        copy = "\n".join(f"        cur[{j}] = stack[top, {j}]" for j in range(width))
        check = (f"    if width != {width}:\n"
                 f"        raise ValueError(\"this driver was generated for rows of width {width}\")")
    parts = dict(
        copy=copy, check_width=check, sources="; ".join(sources), imports="\n".join(imports),
        prune=_PRUNE if "bound" in spec else "",
        count=_COUNT.format(test=test) if test else "",
        improve=_IMPROVE.format(value=value, **consts) if value else "",
        **consts)
    head = _TEMPLATE.format(**parts)
    # two Python functions, not two wrappers of one: numba keys its cache on the function
    return (head + _DRIVER.format(name="driver", nrt=", _nrt=False", **parts) + "\n\n"
            + "# the same with reference counting, for per-node functions that allocate\n"
            + _DRIVER.format(name="driver_counted", nrt="", **parts))


_DRIVERS: dict = {}


def _needs_nrt(problem, fast, marker: Path) -> bool:
    """Compile the allocation-free driver for ``problem`` (a zero-budget call); if a
    per-node function allocates, warn and say so (the counted driver is used).  The
    verdict is kept next to the driver (``marker``), so other processes skip the
    failing compilation."""
    from numba.core.errors import NumbaError

    if not marker.exists():
        width, maxc = int(problem.row_width), int(problem.max_children)
        try:
            fast(np.zeros((maxc + 2, width), dtype=np.int64), 0, 0, int(problem.mode.value), 0,
                 np.zeros(problem.n_counters(), dtype=np.int64), np.zeros(width, dtype=np.int64),
                 *problem.kernel_data())
            return False
        except NumbaError as exc:
            if "NRT required" not in str(exc):
                raise ContractError(_compile_error(type(problem), exc)) from None
        marker.write_text("a per-node function allocates: the counted driver is used\n")
    warnings.warn(f"{type(problem).__name__}: a per-node function allocates (an np.empty, an "
                  "array slice assignment such as out[0, :] = row...), so its driver counts "
                  "references on every node, ~10-30x slower; use stealsearch.engine.core.fast.copy_row and "
                  "scratch arrays from data()", RuntimeWarning, stacklevel=3)
    return True


def generated_driver(cls):
    """The two compiled chunk drivers of a FastProblem class, ``(allocation-free,
    reference-counted, path of the "needs reference counting" marker)`` (generated,
    written and imported once per process; compiled once per machine)."""
    spec = cls.__dict__.get("_fast_spec") or getattr(cls, "_fast_spec", None)
    if spec is None:
        raise ContractError(getattr(cls, "_fast_error", None)
                            or f"{cls.__name__} must name an expand(row, out, data) function")
    layout = getattr(cls, "layout", None)
    fixed = layout.width() if layout is not None and layout._variable is None else None
    source = driver_source(spec, fixed)
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    d = cache_dir()
    if digest in _DRIVERS:
        return _DRIVERS[digest]
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"driver_{digest}.py"
    if not path.exists() or path.read_text() != source:
        tmp = d / f".{digest}.{os.getpid()}.tmp"
        tmp.write_text(source)
        os.replace(tmp, path)           # atomic: a concurrent reader sees old or new
    modspec = importlib.util.spec_from_file_location(f"_stealsearch_driver_{digest}", path)
    module = importlib.util.module_from_spec(modspec)
    sys.modules[modspec.name] = module
    modspec.loader.exec_module(module)
    _DRIVERS[digest] = (module.driver, module.driver_counted, d / f"driver_{digest}.needs_nrt")
    return _DRIVERS[digest]
