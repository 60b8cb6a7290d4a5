"""``solve()``: the one entry point, pybnb-style; ``resume()`` continues a checkpoint.

>>> from problems.uts import UTSProblem
>>> result = solve(UTSProblem.preset("default"), backend="sequential")
>>> result.count
1732
"""
from __future__ import annotations

import contextlib

from .errors import InputError
from .policy import StealPolicy
from .problem import Problem, check_problem
from .result import SearchResult

BACKENDS = ("sequential", "dask")


def solve(problem: Problem, backend: str = "dask", *, workers: int | None = None,
          scheduler: str | None = None, cluster_config: str | None = None,
          client=None, policy: StealPolicy | None = None,
          time_limit: float | None = None, node_limit: int | None = None,
          progress: bool = False, checkpoint: str | None = None,
          checkpoint_every: float | None = None, checkpoint_info: dict | None = None,
          connect_timeout: float | None = None, wait_workers: float | None = None,
          force: bool = False) -> SearchResult:
    """Search ``problem`` to completion (or until a limit) and return a SearchResult.

    backend : "sequential" (this process) or "dask" (the stealstack over Dask workers).
    workers / scheduler / cluster_config / client : where the dask backend runs; with
        none of them, a LocalCluster of 2 worker processes is started and closed.
        ``workers`` with a scheduler or client: use at most that many of its workers.
    policy : the StealPolicy (batch sizes, victim order, budget per kernel call).
    time_limit, node_limit : stop early with status "interrupted"; the result keeps the
        best solution found and, in optimise mode, a proven bound.  So does a first
        Ctrl-C / SIGTERM (engine.interrupts).
    checkpoint : a directory: every consistent cut is written there (engine.checkpoint),
        and ``resume(checkpoint)`` continues the search later, anywhere.
    checkpoint_every : seconds between consistent cuts (default 5): the work a lost
        worker costs at most, per worker.
    checkpoint_info : extra JSON stored in the manifest (the CLI stores its command).
    connect_timeout, wait_workers, force : how a cluster is reached or started; see
        :func:`engine.cluster.dask_client`.
    """
    check_problem(problem, policy)
    return _run(problem, backend, workers=workers, scheduler=scheduler,
                cluster_config=cluster_config, client=client, policy=policy,
                time_limit=time_limit, node_limit=node_limit, progress=progress,
                checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                checkpoint_info=checkpoint_info, cut=None, connect_timeout=connect_timeout,
                wait_workers=wait_workers, force=force)


def resume(directory: str, problem: Problem | None = None, backend: str = "dask", **kwargs) -> SearchResult:
    """Continue the search checkpointed in ``directory`` to the result an uninterrupted
    run gives (on any backend and worker count).  ``problem``: the same instance rebuilt
    from its inputs (checked against the checkpoint's hash); by default the pickled copy
    stored in the checkpoint.  Other keywords as :func:`solve`; the checkpoint keeps
    being written into ``directory`` unless ``checkpoint=`` says otherwise."""
    from .checkpoint import load_problem, read_cut, read_manifest
    from .stack import make_stack

    manifest = read_manifest(directory)
    if problem is None:
        problem = load_problem(directory)
    check_problem(problem, kwargs.get("policy"))
    cut, manifest = read_cut(directory, problem, make_stack(problem).codec)
    kwargs.setdefault("checkpoint", directory)
    kwargs.setdefault("checkpoint_info", manifest.get("info"))
    return _run(problem, backend, cut=cut, **kwargs)


def _run(problem, backend, *, workers=None, scheduler=None, cluster_config=None, client=None,
         policy=None, time_limit=None, node_limit=None, progress=False, checkpoint=None,
         checkpoint_every=None, checkpoint_info=None, cut=None, connect_timeout=None,
         wait_workers=None, force=False) -> SearchResult:
    from . import interrupts

    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    if time_limit is not None and time_limit <= 0:
        raise InputError(f"time limit must be > 0 seconds, got {time_limit}")
    if node_limit is not None and node_limit < 1:
        raise InputError(f"node limit must be >= 1, got {node_limit}")
    if checkpoint_every is not None and not checkpoint_every > 0:
        raise InputError(f"checkpoint interval must be > 0 seconds, got {checkpoint_every}")
    if policy is not None and not isinstance(policy, StealPolicy):
        raise InputError(f"policy must be an engine.StealPolicy, got {type(policy).__name__}")
    policy = policy or StealPolicy()
    common = dict(policy=policy, time_limit=time_limit, node_limit=node_limit,
                  progress=progress, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                  checkpoint_info=checkpoint_info, cut=cut)
    with interrupts.handling_interrupts():
        if backend == "sequential":
            from .sequential import run_sequential
            return run_sequential(problem, **common)
        from .dask_backend import run_dask
        if client is not None:
            return run_dask(problem, client, workers=workers, **common)
        from .cluster import dask_client
        with contextlib.ExitStack() as stack:
            with interrupts.children_ignore_sigint():
                c = stack.enter_context(dask_client(workers=workers, scheduler=scheduler,
                                                    config=cluster_config,
                                                    connect_timeout=connect_timeout,
                                                    wait_workers=wait_workers, force=force))
            # a LocalCluster we started has exactly ``workers``; on a scheduler, use at
            # most ``workers`` of its workers
            return run_dask(problem, c, workers=workers if (scheduler or cluster_config) else None,
                            **common)
