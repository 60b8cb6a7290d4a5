"""``solve()``: the one entry point, pybnb-style.

>>> from problems.uts import UTSProblem
>>> result = solve(UTSProblem.preset("default"), backend="sequential")
>>> result.count
1732
"""
from __future__ import annotations

from .errors import InputError
from .policy import StealPolicy
from .problem import Problem, check_problem
from .result import SearchResult

BACKENDS = ("sequential", "dask")


def solve(problem: Problem, backend: str = "dask", *, workers: int | None = None,
          scheduler: str | None = None, cluster_config: str | None = None,
          client=None, policy: StealPolicy | None = None,
          time_limit: float | None = None, node_limit: int | None = None,
          progress: bool = False, connect_timeout: float | None = None,
          wait_workers: float | None = None, force: bool = False) -> SearchResult:
    """Search ``problem`` to completion (or until a limit) and return a SearchResult.

    backend : "sequential" (this process) or "dask" (the stealstack over Dask workers).
    workers / scheduler / cluster_config / client : where the dask backend runs; with
        none of them, a LocalCluster of 2 worker processes is started and closed.
    policy : the StealPolicy (batch sizes, victim order, budget per kernel call).
    time_limit, node_limit : stop early with status "interrupted"; the result keeps the
        best solution found and, in optimise mode, a proven bound.
    connect_timeout, wait_workers, force : how a cluster is reached or started; see
        :func:`engine.cluster.dask_client`.
    """
    check_problem(problem, policy)
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    if time_limit is not None and time_limit <= 0:
        raise InputError(f"time limit must be > 0 seconds, got {time_limit}")
    if node_limit is not None and node_limit < 1:
        raise InputError(f"node limit must be >= 1, got {node_limit}")
    policy = policy or StealPolicy()
    if backend == "sequential":
        from .sequential import run_sequential
        return run_sequential(problem, policy=policy, time_limit=time_limit,
                              node_limit=node_limit, progress=progress)
    from .dask_backend import run_dask
    if client is not None:
        return run_dask(problem, client, workers=workers, policy=policy, time_limit=time_limit,
                        node_limit=node_limit, progress=progress)
    from .cluster import dask_client
    with dask_client(workers=workers, scheduler=scheduler, config=cluster_config,
                     connect_timeout=connect_timeout, wait_workers=wait_workers,
                     force=force) as c:
        return run_dask(problem, c, policy=policy, time_limit=time_limit,
                        node_limit=node_limit, progress=progress)
