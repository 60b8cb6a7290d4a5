"""stealsearch: a parallel backtracking search engine on Dask (the stealstack protocol).

>>> import stealsearch
>>> from stealsearch.problems.uts import UTSProblem
>>> stealsearch.solve(UTSProblem.preset("default"), backend="sequential").count
1732

The namespace, one per distribution (``pip install stealsearch`` puts nothing else at the
top of site-packages):

* ``stealsearch`` -- the public API below, re-exported from the engine;
* ``stealsearch.engine`` -- the generic engine (the repository's ``engine/``);
* ``stealsearch.problems.<name>`` -- the plug-in problems and polynomial algorithms
  (``problems/``: ``clique``, ``liquid``, ``uts``, ``hrelation``, ``commclust``, ``twolevel``),
  found, like another package's, through the entry-point group ``stealsearch.problems``
  (:mod:`stealsearch.registry`);
* ``stealsearch.benchmarks`` and ``stealsearch.cluster_configs`` -- the benchmark scripts
  and grids, the ready cluster descriptions (``benchmarks/``, ``cluster_configs/``);
* ``stealsearch.cli``, ``.demo``, ``.sweep``, ``.reproduce``, ``.registry`` -- the command
  line and its registry of problems.

Layers: ``stealsearch.engine`` imports no problem and no application module; the
problems import the engine only; the application imports both (tests/test_layers.py).

The API names are loaded on first use, so that ``import stealsearch`` (and
``stealsearch --version``) does not load numba or Dask.
"""
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version as _version

try:
    __version__ = _version("stealsearch")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

#: public name -> the engine module that defines it
_API = {
    "solve": "solve", "resume": "solve",
    "StealPolicy": "core.policy",
    "Problem": "core.problem", "Mode": "core.problem", "check_problem": "core.problem",
    "ContractError": "core.problem", "InvalidProblem": "core.problem", "SolutionError": "core.problem",
    # the raw tier's kernel contract: statuses, counter slots, modes (engine/core/problem.py)
    "BUDGET": "core.problem", "EMPTY": "core.problem", "GROW": "core.problem", "IMPROVED": "core.problem",
    "NODES": "core.problem", "SOLUTIONS": "core.problem", "N_ENGINE_COUNTERS": "core.problem",
    "OPTIMISE": "core.problem", "DECIDE": "core.problem", "ENUMERATE": "core.problem",
    "PythonProblem": "core.reference",
    "FastProblem": "core.fast", "RowLayout": "core.layout", "Bits": "core.layout", "NOT_A_SOLUTION": "core.fast",
    "SearchResult": "core.result", "WorkerStats": "core.result",
    "InputError": "core.errors", "SearchFailed": "core.errors",
    "dask_client": "deploy.cluster",
}

__all__ = ["__version__", *_API]


def __getattr__(name):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'stealsearch' has no attribute {name!r}")
    value = getattr(import_module(f"stealsearch.engine.{module}"), name)
    globals()[name] = value          # the next lookup is a plain attribute
    return value


def __dir__():
    return sorted(set(globals()) | set(_API))
