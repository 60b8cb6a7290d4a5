"""The cluster configs (``cluster_configs/*.yaml``): read one and check every key against
the class it goes to, so that a typo is one line naming the key and the file instead of
a failure deep inside a worker process, a batch job or a pod.  Nothing is started here:
:func:`read_cluster_config` gives a :class:`ClusterPlan`, which
:func:`stealsearch.engine.deploy.cluster.dask_client` starts (or connects to).

Kinds: ``local`` (a LocalCluster of worker processes), ``scheduler`` (an existing
scheduler), ``tls`` (an existing scheduler over TLS, with the client's certificate),
``ssh`` (distributed's SSHCluster), ``slurm`` / ``pbs`` / ``sge`` / ``lsf``
(dask-jobqueue) and ``kubernetes`` (dask-kubernetes' operator).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..core.errors import InputError, first_line
from .addresses import check_scheduler_address

#: Worker processes of the embedded default cluster (``make demo``) and of a
#: ``kind: local`` config that names none.
DEFAULT_WORKERS = 2


def parameter_names(*callables) -> set[str]:
    """The named parameters of ``callables`` (classes: of their ``__init__``)."""
    names: set[str] = set()
    for c in callables:
        for name, p in inspect.signature(c).parameters.items():
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                names.add(name)
    return names


def check_keys(given, allowed: set[str], where: str) -> None:
    unknown = sorted(set(given) - allowed)
    if unknown:
        raise InputError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(map(repr, unknown))}")


def local_cluster_keywords() -> set[str]:
    """What ``LocalCluster`` accepts: its own parameters and, through
    ``**worker_kwargs``, the Nanny's and the Worker's (a key none of them takes
    would otherwise surface as 'Nanny failed to start' from a worker process)."""
    from distributed import LocalCluster, Nanny, Worker

    return (parameter_names(LocalCluster, Nanny, Worker)
            - {"self", "n_workers", "processes", "scheduler_ip", "scheduler_file"})


#: cluster config kind -> the extra that installs what it needs
EXTRAS = {"ssh": "ssh", "slurm": "jobqueue", "pbs": "jobqueue", "sge": "jobqueue",
          "lsf": "jobqueue", "kubernetes": "kubernetes"}


@dataclass
class ClusterPlan:
    """A cluster config file, read and checked, nothing started yet.

    ``factory(**kwargs)`` builds the cluster (``kind: local``: None, the engine's own
    :func:`stealsearch.engine.deploy.cluster.local_cluster`; ``kind: scheduler`` and ``tls``:
    ``address`` is set instead and nothing is built); ``scale`` is applied once it is
    up (:func:`stealsearch.engine.deploy.cluster.start_plan`).
    """
    kind: str
    source: str
    factory: Callable | None = None
    kwargs: dict = field(default_factory=dict)
    scale: dict | None = None
    address: str | None = None
    #: worker processes the config asks for (None: unknown, e.g. an existing scheduler)
    expected_workers: int | None = None
    #: a ``distributed.security.Security`` to connect with (``kind: tls``)
    security: object | None = None



#: keys whose value is a count of workers, threads, processes, cores or jobs, wherever
#: they appear in a config: a whole number in 1..MAX_COUNT, checked before anything is
#: built (``cores: sixteen`` gave a dask-jobqueue traceback; ``threads_per_worker: 0``
#: was taken, although --threads-per-worker refuses 0)
COUNT_KEYS = ("workers", "n_workers", "threads_per_worker", "nthreads", "processes", "cores",
              "jobs")
#: the largest count a config may ask for (of workers, of processes, ...)
MAX_COUNT = 4096
#: the most search threads (lanes) one worker may run: --threads-per-worker, a config's
#: threads_per_worker / nthreads (threads beyond a host's cores only slow a search;
#: 100000 of them ran past a minute before the first node)
MAX_THREADS_PER_WORKER = 256


def check_counts(spec: dict, path: str) -> None:
    """One line for a count key (:data:`COUNT_KEYS`) that is not a whole number in
    1..:data:`MAX_COUNT`, at the top level or in ``worker_options``."""
    for where, m in (("", spec), ("worker_options.", spec.get("worker_options"))):
        if not isinstance(m, dict):
            continue
        for key in COUNT_KEYS:
            if key not in m:
                continue
            v = m[key]
            top = MAX_THREADS_PER_WORKER if key in ("threads_per_worker", "nthreads") \
                else MAX_COUNT
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= top:
                raise InputError(f"{path}: '{where}{key}' must be a whole number >= 1 "
                                 f"(at most {top}), got {str(v)[:40]!r}")


def _needs(module: str, kind: str, path: str):
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRAS[kind]
        raise InputError(f"{path}: kind {kind!r} needs {module.split('.')[0]}: "
                         f"pip install 'stealsearch[{extra}]'") from None


def read_cluster_config(path: str) -> ClusterPlan:
    """Read one of ``cluster_configs/*.yaml`` and check every key against the class
    it goes to, so that a typo is one line naming the key and the file instead of a
    failure deep inside a worker process, a batch job or a pod."""
    import yaml

    from ..core.inputs import load_yaml, read_input_text

    if not Path(path).exists():
        raise InputError(f"cluster config not found: {path}")
    text = read_input_text(path)      # a directory, binary or gzip data: one line
    try:
        spec = load_yaml(text, path) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML ({exc.__class__.__name__})") from None
    if not isinstance(spec, dict) or "kind" not in spec:
        raise InputError(f"{path}: expected a mapping with a 'kind' key")
    spec = dict(spec)
    kind = spec.pop("kind")
    check_counts(spec, path)
    where = f"{path} (kind {kind!r})"

    if kind == "local":
        check_keys(spec, local_cluster_keywords() | {"workers", "force"}, where)
        spec.setdefault("workers", DEFAULT_WORKERS)
        return ClusterPlan(kind, path, factory=None, kwargs=spec,
                           expected_workers=spec["workers"])

    if kind == "scheduler":
        check_keys(spec, {"address"}, where)
        if "address" not in spec:
            raise InputError(f"{path}: kind 'scheduler' needs an 'address'")
        try:
            address = check_scheduler_address(spec["address"])
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None
        return ClusterPlan(kind, path, address=address)

    if kind == "tls":
        return _tls_plan(spec, path, where)

    if kind == "ssh":
        _needs("asyncssh", kind, path)
        from distributed import Nanny, Scheduler, SpecCluster, Worker
        from distributed.deploy.ssh import SSHCluster

        check_keys(spec, parameter_names(SSHCluster)
                    | (parameter_names(SpecCluster) - {"workers", "scheduler", "worker"}), where)
        if not spec.get("hosts") or not isinstance(spec["hosts"], list):
            raise InputError(f"{path}: kind 'ssh' needs 'hosts', a list "
                             "(the first runs the scheduler)")
        # worker_options go to each host's Nanny (and on to its Worker); SSHCluster
        # itself takes n_workers (processes per host) out of them
        check_keys(spec.get("worker_options") or {},
                    (parameter_names(Nanny, Worker) | {"n_workers"}) - {"self"},
                    f"{where} worker_options")
        check_keys(spec.get("scheduler_options") or {},
                    parameter_names(Scheduler) - {"self"}, f"{where} scheduler_options")
        per_host = (spec.get("worker_options") or {}).get("n_workers", 1)
        return ClusterPlan(kind, path, factory=SSHCluster, kwargs=spec,
                           expected_workers=max(1, len(spec["hosts"]) - 1) * per_host)

    if kind in ("slurm", "pbs", "sge", "lsf"):
        jobqueue = _needs("dask_jobqueue", kind, path)
        from dask_jobqueue.core import Job

        cls = getattr(jobqueue, f"{kind.upper()}Cluster")
        allowed = parameter_names(cls, cls.job_cls, Job) | {"jobs"}
        check_keys(spec, allowed - {"scheduler", "job_cls"}, where)
        jobs = spec.pop("jobs", 1)
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise InputError(f"{path}: 'jobs' must be a whole number >= 1, got {jobs!r}")
        return ClusterPlan(kind, path, factory=cls, kwargs=spec, scale={"jobs": jobs},
                           expected_workers=jobs * int(spec.get("processes") or 1))

    if kind == "kubernetes":
        _needs("dask_kubernetes", kind, path)
        from distributed.deploy import Cluster
        from dask_kubernetes.operator import KubeCluster

        check_keys(spec, parameter_names(KubeCluster, Cluster) - {"self"}, where)
        return ClusterPlan(kind, path, factory=KubeCluster, kwargs=spec,
                           expected_workers=spec.get("n_workers"))

    raise InputError(f"{path}: unknown cluster kind {kind!r} "
                     "(expected local, scheduler, tls, ssh, slurm, pbs, sge, lsf or kubernetes)")


#: the client's side of distributed.security.Security that ``kind: tls`` takes
TLS_FILE_KEYS = ("tls_ca_file", "tls_client_cert", "tls_client_key")


def _tls_plan(spec: dict, path: str, where: str) -> ClusterPlan:
    """``kind: tls``: an existing scheduler at ``tls://HOST:PORT`` and the client's
    certificate, key and CA (distributed.security.Security fields; a relative path is
    relative to the config file)."""
    from distributed.security import Security

    check_keys(spec, {"address", "require_encryption", *TLS_FILE_KEYS}, where)
    missing = [k for k in ("address", *TLS_FILE_KEYS) if not spec.get(k)]
    if missing:
        raise InputError(f"{path}: kind 'tls' needs {', '.join(missing)}")
    try:
        address = check_scheduler_address(spec["address"])
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    if not address.startswith(("tls://", "wss://")):
        raise InputError(f"{path}: kind 'tls' needs a tls:// (or wss://) address, got {address!r}")
    files = {}
    for key in TLS_FILE_KEYS:
        f = Path(str(spec[key])).expanduser()
        if not f.is_absolute():
            f = Path(path).resolve().parent / f
        if not f.is_file():
            raise InputError(f"{path}: {key} {str(spec[key])!r}: no such file")
        files[key] = str(f)
    require = spec.get("require_encryption", True)
    if not isinstance(require, bool):
        raise InputError(f"{path}: require_encryption must be true or false, got {require!r}")
    try:
        security = Security(require_encryption=require, **files)
        security.get_connection_args("client")      # reads the files now: one line if bad
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: the TLS files cannot be used ({first_line(exc)})") from None
    return ClusterPlan("tls", path, address=address, security=security)


