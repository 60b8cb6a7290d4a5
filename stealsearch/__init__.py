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

from stealsearch import engine as _engine   # cheap: the engine loads its names on use

__all__ = ["__version__", *_engine.__all__, "dask_client"]


def __getattr__(name):
    if name == "dask_client":
        value = import_module("stealsearch.engine.deploy.cluster").dask_client
    elif name in _engine.__all__:
        value = getattr(_engine, name)
    else:
        raise AttributeError(f"module 'stealsearch' has no attribute {name!r}")
    globals()[name] = value          # the next lookup is a plain attribute
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
