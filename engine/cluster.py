"""Where the work runs: a local cluster, an existing scheduler, or a config file.

``dask_client()`` is the one door every CLI command and benchmark goes through::

    with dask_client(workers=2) as client:          # LocalCluster, 2 processes
        ...
    with dask_client(scheduler="tcp://127.0.0.1:8786") as client:
        ...
    with dask_client(config="cluster_configs/local.yaml") as client:
        ...

A LocalCluster started here is closed (and its worker processes ended) on exit; a
cluster we merely connected to is left running.
"""
from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path
from typing import Iterator

from .errors import InputError

#: Worker processes of the embedded default cluster (``make demo``).
DEFAULT_WORKERS = 2


def _quiet_logs() -> None:
    for name in ("distributed", "distributed.worker", "distributed.scheduler",
                 "distributed.nanny", "distributed.core", "distributed.http.proxy",
                 "distributed.utils_perf", "bokeh", "tornado"):
        logging.getLogger(name).setLevel(logging.ERROR)


def local_cluster(workers: int = DEFAULT_WORKERS, threads_per_worker: int = 1, **kwargs):
    """A ``LocalCluster`` of worker *processes* on 127.0.0.1 with no dashboard.

    One thread per worker: the search loop secedes from it, and the kernel releases
    the GIL, so the worker's event loop keeps answering steals and heartbeats.
    """
    from distributed import LocalCluster

    if workers < 1:
        raise InputError(f"--workers must be >= 1, got {workers}")
    _quiet_logs()
    kwargs.setdefault("dashboard_address", ":0")  # a free port: never clash with another cluster
    kwargs.setdefault("host", "127.0.0.1")
    kwargs.setdefault("silence_logs", logging.ERROR)
    import dask

    # The statistical profiler samples every worker thread's Python stack every 10 ms;
    # it cannot see into a nogil kernel and only competes for the cores.  The config
    # is captured by each Nanny and handed to its worker process.
    with dask.config.set({"distributed.worker.profile.enabled": False}):
        return LocalCluster(n_workers=workers, threads_per_worker=threads_per_worker,
                            processes=True, **kwargs)


def _cluster_from_config(path: str):
    """Build a cluster object from one of ``cluster_configs/*.yaml``."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise InputError(f"cluster config not found: {path}")
    try:
        spec = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML ({exc.__class__.__name__})") from None
    if not isinstance(spec, dict) or "kind" not in spec:
        raise InputError(f"{path}: expected a mapping with a 'kind' key")
    kind = spec.pop("kind")
    if kind == "local":
        return local_cluster(**spec), True
    if kind == "scheduler":
        if "address" not in spec:
            raise InputError(f"{path}: kind 'scheduler' needs an 'address'")
        return spec["address"], False
    if kind == "ssh":
        from distributed.deploy.ssh import SSHCluster
        return SSHCluster(**spec), True
    if kind in ("slurm", "pbs", "sge", "lsf"):
        try:
            import dask_jobqueue
        except ImportError:
            raise InputError(f"{path}: kind {kind!r} needs dask-jobqueue "
                             "(pip install dask-jobqueue)") from None
        cls = getattr(dask_jobqueue, f"{kind.upper()}Cluster")
        jobs = spec.pop("jobs", 1)
        cluster = cls(**spec)
        cluster.scale(jobs=jobs)
        return cluster, True
    if kind == "kubernetes":
        try:
            from dask_kubernetes.operator import KubeCluster
        except ImportError:
            raise InputError(f"{path}: kind 'kubernetes' needs dask-kubernetes") from None
        return KubeCluster(**spec), True
    raise InputError(f"{path}: unknown cluster kind {kind!r}")


@contextlib.contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None,
                config: str | None = None, wait: bool = True) -> Iterator["object"]:
    """A ``distributed.Client`` for the requested place; closed on exit."""
    from distributed import Client

    _quiet_logs()
    owned = None
    if scheduler and config:
        raise InputError("give --scheduler or --cluster-config, not both")
    if config:
        target, is_owned = _cluster_from_config(config)
        owned = target if is_owned else None
    elif scheduler:
        target = scheduler
    else:
        owned = target = local_cluster(workers or DEFAULT_WORKERS)
    try:
        try:
            client = Client(target, timeout=os.environ.get("STEALSEARCH_CONNECT_TIMEOUT", "20s"))
        except OSError as exc:
            raise InputError(f"cannot reach scheduler {target}: {exc}") from None
        try:
            if wait and owned is None and workers:
                client.wait_for_workers(workers, timeout=60)
            yield client
        finally:
            client.close()
    finally:
        if owned is not None:
            owned.close()
