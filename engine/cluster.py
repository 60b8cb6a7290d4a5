"""Where the work runs: a local cluster, an existing scheduler, or a config file.

``dask_client()`` is the one door every CLI command and benchmark goes through::

    with dask_client(workers=2) as client:          # LocalCluster, 2 processes
        ...
    with dask_client(scheduler="tcp://127.0.0.1:8786") as client:
        ...
    with dask_client(config="cluster_configs/local.yaml") as client:
        ...

A cluster started here is closed (and its worker processes ended) on exit; a cluster
we merely connected to is left running.  Everything a user can get wrong on the way
(a malformed address, an absurd worker count, an unknown key in a config file, a
scheduler that does not answer or has no workers) raises an
:class:`~stealsearch.engine.errors.InputError` whose message is one line:

>>> check_scheduler_address("127.0.0.1:8786")
'tcp://127.0.0.1:8786'
>>> check_scheduler_address("tcp://headnode")
Traceback (most recent call last):
...
stealsearch.engine.errors.InputError: scheduler address 'tcp://headnode' has no port: expected PROTOCOL://HOST:PORT, e.g. tcp://127.0.0.1:8786
"""
from __future__ import annotations

import contextlib
import inspect
import ipaddress
import logging
import numbers
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from .errors import ClusterUnavailable, InputError, SearchFailed

#: Worker processes of the embedded default cluster (``make demo``).
DEFAULT_WORKERS = 2
#: Seconds to reach a scheduler before giving up (``--connect-timeout``).
DEFAULT_CONNECT_TIMEOUT = 10.0
#: Seconds to wait for the first worker of a scheduler that has none (``--wait-workers``).
DEFAULT_WAIT_WORKERS = 30.0
#: Beyond this many worker processes per core a local cluster is refused without force.
MAX_WORKERS_PER_CORE = 4
#: A worker process (interpreter, numpy, numba, distributed) needs about this much memory.
MIN_MEMORY_PER_WORKER = 300 * 2**20

#: Protocols a scheduler address may name: distributed's comm backends, less
#: ``inproc`` (reachable only from inside the process that created it).
PROTOCOLS = ("tcp", "tls", "ws", "wss", "ucx")

log = logging.getLogger(__name__)

_HOSTNAME = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$")


def _quiet_logs() -> None:
    import distributed  # noqa: F401  (its import configures these loggers: go after it)

    for name in ("distributed", "distributed.worker", "distributed.scheduler",
                 "distributed.nanny", "distributed.core", "distributed.http.proxy",
                 "distributed.utils_perf", "bokeh", "tornado"):
        logging.getLogger(name).setLevel(logging.ERROR)
    # "Failed to reconnect to scheduler ... closing client": we report the same
    # failure ourselves, in one line.
    logging.getLogger("distributed.client").setLevel(logging.CRITICAL)


def _stderr_is_a_terminal() -> bool:
    import sys

    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def _notice(message: str) -> None:
    """A line for the user on stderr (through logging, so an API caller can route it).

    With no logging configured, Python's last-resort handler prints the bare message.
    """
    log.warning(message)


# --------------------------------------------------------------------------- checks

def check_scheduler_address(address) -> str:
    """The normalised ``PROTOCOL://HOST:PORT`` of a scheduler, or InputError.

    Follows distributed's own parsing (``distributed.comm.addressing``): no protocol
    means ``tcp``; the host and port are required (distributed would otherwise fall
    back to a default port and hang on a name such as ``foo``).
    """
    from distributed.comm.addressing import parse_host_port

    if not isinstance(address, str) or not address.strip():
        raise InputError(f"scheduler address must be PROTOCOL://HOST:PORT, got {address!r}")
    if address != address.strip() or any(c.isspace() for c in address):
        raise InputError(f"scheduler address {address!r} contains white space")
    protocol, sep, location = address.partition("://")
    if not sep:
        protocol, location = "tcp", address
    if protocol not in PROTOCOLS:
        raise InputError(f"scheduler address {address!r}: unsupported protocol {protocol!r} "
                         f"(expected one of {', '.join(p + '://' for p in PROTOCOLS)})")
    try:
        host, port = parse_host_port(location)
    except ValueError as exc:
        if "missing port" in str(exc):
            raise InputError(f"scheduler address {address!r} has no port: expected "
                             "PROTOCOL://HOST:PORT, e.g. tcp://127.0.0.1:8786") from None
        raise InputError(f"scheduler address {address!r} is malformed: {exc}") from None
    if not 1 <= port <= 65535:
        raise InputError(f"scheduler address {address!r}: port {port} is not in 1..65535")
    if not _valid_host(host):
        raise InputError(f"scheduler address {address!r}: {host!r} is not a host name or IP address")
    return f"{protocol}://{location}"


def _valid_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return bool(_HOSTNAME.match(host)) and len(host) <= 253


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask, not the machine's total)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def available_memory() -> int:
    import psutil
    return psutil.virtual_memory().available


def check_worker_count(workers, force: bool = False) -> int:
    """Validate the number of worker *processes* of a cluster started on this machine.

    Refused without ``force``: fewer than 1; more than ``MAX_WORKERS_PER_CORE`` per
    usable core; more than the available memory holds at ``MIN_MEMORY_PER_WORKER``
    each.  More than one per core is allowed with a notice: the processes then share
    cores, and a speed-up measured that way means little.
    """
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral):
        raise InputError(f"workers must be a whole number >= 1, got {workers!r}")
    workers = int(workers)
    if workers < 1:
        raise InputError(f"--workers must be >= 1, got {workers}")
    cores = usable_cores()
    if workers > MAX_WORKERS_PER_CORE * cores and not force:
        raise InputError(f"--workers {workers}: more than {MAX_WORKERS_PER_CORE} worker processes "
                         f"per core ({cores} cores here); add --force to start them anyway")
    memory = available_memory()
    if workers * MIN_MEMORY_PER_WORKER > memory and not force:
        raise InputError(f"--workers {workers}: {memory / 2**20:.0f} MB of memory available, less "
                         f"than {MIN_MEMORY_PER_WORKER // 2**20} MB per worker process; "
                         "add --force to start them anyway")
    if workers > cores:
        _notice(f"note: {workers} worker processes on {cores} cores: they share the cores")
    return workers


def _seconds(value, what: str, default: float, env: str | None = None) -> float:
    """A positive number of seconds from a keyword, an environment variable or a default."""
    from dask.utils import parse_timedelta

    source = what
    if value is None and env and os.environ.get(env):
        value, source = os.environ[env], env
    if value is None:
        return default
    try:
        seconds = (float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool)
                   else parse_timedelta(value, "s"))
    except (TypeError, ValueError, KeyError):
        raise InputError(f"{source}: expected a number of seconds, got {value!r}") from None
    if seconds is None or not seconds > 0:
        raise InputError(f"{source} must be > 0 seconds, got {value!r}")
    return float(seconds)


# --------------------------------------------------------------------------- Ctrl-C

def _start_owned(factory: Callable[[], object]):
    """Start a cluster with Ctrl-C kept away from its worker processes
    (:func:`stealsearch.engine.interrupts.start_shielded`, the one mechanism); a Ctrl-C during the
    start closes it again and raises KeyboardInterrupt."""
    from . import interrupts

    return interrupts.start_shielded(factory, _close_quietly)


def _close_quietly(thing, timeout: float = 30.0) -> None:
    """Close a client or cluster; a failure to close must not hide what went before."""
    try:
        try:
            thing.close(timeout=timeout)
        except TypeError:  # a cluster class whose close() takes no timeout
            thing.close()
    except (OSError, RuntimeError, TimeoutError, ValueError) as exc:
        log.debug("closing %r failed: %r", thing, exc)


# --------------------------------------------------------------------------- local

def _keywords(*callables) -> set[str]:
    """The named parameters of ``callables`` (classes: of their ``__init__``)."""
    names: set[str] = set()
    for c in callables:
        for name, p in inspect.signature(c).parameters.items():
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                names.add(name)
    return names


def _check_keys(given, allowed: set[str], where: str) -> None:
    unknown = sorted(set(given) - allowed)
    if unknown:
        raise InputError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(map(repr, unknown))}")


def _local_cluster_keywords() -> set[str]:
    """What ``LocalCluster`` accepts: its own parameters and, through
    ``**worker_kwargs``, the Nanny's and the Worker's (a key none of them takes
    would otherwise surface as 'Nanny failed to start' from a worker process)."""
    from distributed import LocalCluster, Nanny, Worker

    return (_keywords(LocalCluster, Nanny, Worker)
            - {"self", "n_workers", "processes", "scheduler_ip", "scheduler_file"})


def local_cluster(workers: int = DEFAULT_WORKERS, threads_per_worker: int = 1, *,
                  force: bool = False, **kwargs):
    """A ``LocalCluster`` of worker *processes* on 127.0.0.1.

    Private by default: the scheduler, the workers, their nannies and the dashboard
    (a free port, on 127.0.0.1 only) listen on the loopback interface; pass ``host``
    and ``dashboard_address`` (e.g. in a ``kind: local`` config) to open them up.

    One thread per worker: the search loop secedes from it, and the kernel releases
    the GIL, so the worker's event loop keeps answering steals and heartbeats.
    """
    from distributed import LocalCluster

    workers = check_worker_count(workers, force)
    _check_keys(kwargs, _local_cluster_keywords(), "local cluster")
    _quiet_logs()
    # a free port, never clashing with another cluster; ":0" would mean every interface
    kwargs.setdefault("dashboard_address", "127.0.0.1:0")
    kwargs.setdefault("host", "127.0.0.1")
    kwargs.setdefault("silence_logs", logging.ERROR)
    import dask

    # The statistical profiler samples every worker thread's Python stack every 10 ms;
    # it cannot see into a nogil kernel and only competes for the cores.  The config
    # is captured by each Nanny and handed to its worker process.
    with dask.config.set({"distributed.worker.profile.enabled": False}):
        try:
            return _start_owned(lambda: LocalCluster(
                n_workers=workers, threads_per_worker=threads_per_worker, processes=True,
                **kwargs))
        except (ValueError, TypeError, RuntimeError, OSError) as exc:
            # a config's bad value (memory_limit: lots, dashboard_address: x) surfaces
            # here, often wrapped in "Cluster failed to start"; the user needs its line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ClusterUnavailable(f"the local cluster did not start: {first}") from None


# --------------------------------------------------------------------------- configs

#: cluster config kind -> the extra that installs what it needs
EXTRAS = {"ssh": "ssh", "slurm": "jobqueue", "pbs": "jobqueue", "sge": "jobqueue",
          "lsf": "jobqueue", "kubernetes": "kubernetes"}


@dataclass
class ClusterPlan:
    """A cluster config file, read and checked, nothing started yet.

    ``factory(**kwargs)`` builds the cluster (for ``kind: scheduler``, ``address`` is
    set instead and nothing is built); ``scale`` is applied once it is up.
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

    def start(self):
        """Build the cluster (Ctrl-C safe) and ask for its workers."""
        cluster = _start_owned(lambda: self.factory(**self.kwargs))
        if self.scale:
            try:
                cluster.scale(**self.scale)
            except BaseException:
                _close_quietly(cluster)
                raise
        return cluster


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

    from .inputs import read_input_text

    if not Path(path).exists():
        raise InputError(f"cluster config not found: {path}")
    text = read_input_text(path)      # a directory, binary or gzip data: one line
    try:
        spec = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML ({exc.__class__.__name__})") from None
    if not isinstance(spec, dict) or "kind" not in spec:
        raise InputError(f"{path}: expected a mapping with a 'kind' key")
    spec = dict(spec)
    kind = spec.pop("kind")
    where = f"{path} (kind {kind!r})"

    if kind == "local":
        _check_keys(spec, _local_cluster_keywords() | {"workers", "force"}, where)
        spec.setdefault("workers", DEFAULT_WORKERS)
        return ClusterPlan(kind, path, factory=local_cluster, kwargs=spec,
                           expected_workers=spec["workers"])

    if kind == "scheduler":
        _check_keys(spec, {"address"}, where)
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

        _check_keys(spec, _keywords(SSHCluster)
                    | (_keywords(SpecCluster) - {"workers", "scheduler", "worker"}), where)
        if not spec.get("hosts") or not isinstance(spec["hosts"], list):
            raise InputError(f"{path}: kind 'ssh' needs 'hosts', a list "
                             "(the first runs the scheduler)")
        # worker_options go to each host's Nanny (and on to its Worker); SSHCluster
        # itself takes n_workers (processes per host) out of them
        _check_keys(spec.get("worker_options") or {},
                    (_keywords(Nanny, Worker) | {"n_workers"}) - {"self"},
                    f"{where} worker_options")
        _check_keys(spec.get("scheduler_options") or {},
                    _keywords(Scheduler) - {"self"}, f"{where} scheduler_options")
        per_host = (spec.get("worker_options") or {}).get("n_workers", 1)
        return ClusterPlan(kind, path, factory=SSHCluster, kwargs=spec,
                           expected_workers=max(1, len(spec["hosts"]) - 1) * per_host)

    if kind in ("slurm", "pbs", "sge", "lsf"):
        jobqueue = _needs("dask_jobqueue", kind, path)
        from dask_jobqueue.core import Job

        cls = getattr(jobqueue, f"{kind.upper()}Cluster")
        allowed = _keywords(cls, cls.job_cls, Job) | {"jobs"}
        _check_keys(spec, allowed - {"scheduler", "job_cls"}, where)
        jobs = spec.pop("jobs", 1)
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise InputError(f"{path}: 'jobs' must be a whole number >= 1, got {jobs!r}")
        return ClusterPlan(kind, path, factory=cls, kwargs=spec, scale={"jobs": jobs},
                           expected_workers=jobs * int(spec.get("processes") or 1))

    if kind == "kubernetes":
        _needs("dask_kubernetes", kind, path)
        from distributed.deploy import Cluster
        from dask_kubernetes.operator import KubeCluster

        _check_keys(spec, _keywords(KubeCluster, Cluster) - {"self"}, where)
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

    _check_keys(spec, {"address", "require_encryption", *TLS_FILE_KEYS}, where)
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
        raise InputError(f"{path}: the TLS files cannot be used ({_reason(exc)})") from None
    return ClusterPlan("tls", path, address=address, security=security)


def _cluster_from_config(path: str, force: bool = False):
    """(cluster or scheduler address, whether we own it, the plan) for a config file."""
    plan = read_cluster_config(path)
    if plan.address is not None:
        return plan.address, False, plan
    if plan.kind == "local" and force:
        plan.kwargs.setdefault("force", True)
    return plan.start(), True, plan


# --------------------------------------------------------------------------- client

def dashboard_link(client) -> str | None:
    """The link to the dashboard of ``client``'s scheduler, or None if it serves none.

    Asked of the scheduler itself (its ``dashboard`` service port), so it is right for
    a LocalCluster of ours and for a scheduler we only connected to; the host is the
    one we reached the scheduler at.  The search page is ``.../stealsearch`` beside it
    (:mod:`stealsearch.engine.monitor`).
    """
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.utils import format_dashboard_link

    try:
        info = client.sync(client.scheduler.identity, n_workers=0, callback_timeout=10)
    except TypeError:   # an older scheduler: identity() takes no n_workers
        info = client.sync(client.scheduler.identity, callback_timeout=10)
    port = (info.get("services") or {}).get("dashboard")
    if not port:
        return None
    protocol, location = parse_address(client.scheduler.address)
    host = "localhost" if protocol == "inproc" else parse_host_port(location)[0]
    if ":" in host:
        host = f"[{host}]"
    return format_dashboard_link(host, port)


def announce_dashboard(client, file=None) -> str | None:
    """Print ``dashboard: LINK`` once on stderr (``file``); return the link."""
    import sys

    try:
        link = dashboard_link(client)
    except (OSError, TimeoutError, KeyError, ValueError) as exc:
        log.debug("no dashboard link: %r", exc)
        return None
    if link:
        page = link.rsplit("/status", 1)[0].rstrip("/") + "/stealsearch"
        print(f"dashboard: {link}  (searches and sweeps: {page})",
              file=sys.stderr if file is None else file, flush=True)
    return link


def _reason(exc: BaseException) -> str:
    """One line saying what an exception from distributed was about."""
    text = str(exc.args[0]) if len(exc.args) == 1 else str(exc)
    return text.splitlines()[0] if text.strip() else exc.__class__.__name__


def _client_security(address: str, security=None):
    """The Security to reach ``address`` with: the given one, or dask's configuration
    (``distributed.comm.tls.*``).  A tls:// address with no client certificate is
    refused here, in one line, before any connection is tried."""
    from distributed.security import Security

    security = Security() if security is None else security
    if address.startswith(("tls://", "wss://")) and not (
            security.tls_client_cert and security.tls_ca_file):
        raise ClusterUnavailable(
            f"scheduler {address} speaks TLS and no client certificate is configured: "
            "use a 'kind: tls' cluster config (cluster_configs/tls.yaml) or dask's "
            "distributed.comm.tls settings")
    return security


async def _identity(address: str, timeout: float, security=None) -> dict:
    from distributed.comm import connect
    from distributed.core import send_recv

    args = _client_security(address, security).get_connection_args("client")
    comm = await connect(address, timeout=timeout, **args)
    try:
        return await send_recv(comm, op="identity")
    finally:
        await comm.close()


def probe_scheduler(address: str, timeout: float, security=None) -> dict:
    """Ask the scheduler at ``address`` who it is, within ``timeout`` seconds, or raise
    ClusterUnavailable.

    ``Client(address, timeout=...)`` can wait forever on a peer that accepts the
    connection and then never answers (a frozen scheduler, another service on that
    port), and a peer speaking another protocol can make it allocate a buffer the size
    of whatever bytes it reads as a frame length.  One identity call on an event loop
    of our own, under a deadline of our own, tells these apart first.
    """
    import asyncio

    outcome: dict = {}

    def run() -> None:
        try:
            outcome["identity"] = asyncio.run(
                asyncio.wait_for(_identity(address, timeout, security), timeout))
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc

    # a thread of its own: the caller may itself be inside a running event loop
    probe = threading.Thread(target=run, name="stealsearch-probe-scheduler", daemon=True)
    probe.start()
    probe.join(timeout + 5.0)
    exc = outcome.get("error")
    if "identity" in outcome:
        identity = outcome["identity"]
        if isinstance(identity, dict) and identity.get("type") == "Scheduler":
            return identity
        raise ClusterUnavailable(f"{address} answered, but not as a Dask scheduler "
                                 f"(it says it is {identity.get('type') if isinstance(identity, dict) else identity!r})")
    import ssl
    if isinstance(exc, ssl.SSLError):     # (an OSError: before the branch below)
        raise ClusterUnavailable(f"scheduler {address} refused the TLS handshake "
                                 f"({_reason(exc)})") from None
    if probe.is_alive() or isinstance(exc, (OSError, asyncio.TimeoutError)):
        why = "no answer" if exc is None or not str(exc).strip() else _reason(exc)
        if "SSLError" in why or "SSL:" in why:
            raise ClusterUnavailable(f"the TLS handshake with scheduler {address} failed "
                                     f"({why.rsplit('] ', 1)[-1] if 'SSL:' in why else why}); "
                                     "check the CA, certificate and key")
        raise ClusterUnavailable(f"cannot reach scheduler {address} within {timeout:g} s "
                                 f"({why}); see --connect-timeout")
    if isinstance(exc, KeyboardInterrupt):
        raise KeyboardInterrupt
    if isinstance(exc, ClusterUnavailable):
        raise exc
    raise ClusterUnavailable(f"{address} does not speak the Dask protocol "
                             f"({exc.__class__.__name__}); is it a Dask scheduler?")


def _connect(target, address: str, timeout: float, security=None):
    from distributed import Client

    if isinstance(target, str):
        security = _client_security(address, security)
        probe_scheduler(address, timeout, security)
    try:
        if security is not None:
            return Client(target, timeout=timeout, security=security)
        return Client(target, timeout=timeout)
    except (OSError, ImportError) as exc:
        # OSError covers TimeoutError and CommClosedError; ImportError is how the
        # scheduler refuses a client whose versions it cannot serve
        raise ClusterUnavailable(f"cannot reach scheduler {address} within {timeout:g} s "
                                 f"({_reason(exc)}); see --connect-timeout") from None
    except RuntimeError as exc:
        # the scheduler died during the handshake: distributed then reports the pool
        # it closed on its way out ("ConnectionPool is closed"), not the cause
        raise ClusterUnavailable(f"lost the scheduler {address} while connecting "
                                 f"({_reason(exc)})") from None


def _running_workers(client) -> int:
    try:
        info = client.scheduler_info(n_workers=-1)   # all of them (newer distributed)
    except TypeError:
        info = client.scheduler_info()
    workers = info.get("workers", {})
    return sum(1 for w in workers.values() if w.get("status", "running") == "running")


def _wait_for_workers(client, address: str, needed: int, timeout: float,
                      minimum: int | None = None) -> None:
    """Wait up to ``timeout`` s for ``needed`` running workers, telling the user if it is
    not immediate; after that, go on with ``minimum`` (default: all needed) or fail.

    (The search takes the workers present when it starts.)
    """
    minimum = needed if minimum is None else minimum
    try:
        if _running_workers(client) >= needed:
            return
        _notice(f"waiting for {needed} worker{'s' if needed > 1 else ''} at {address} "
                f"(up to {timeout:g} s; see --wait-workers) ...")
        t0 = time.monotonic()
        client.wait_for_workers(needed, timeout=timeout)
    except TimeoutError as exc:
        from distributed.client import WorkerStartTimeoutError
        if isinstance(exc, WorkerStartTimeoutError):
            have = exc.available_workers
            if have >= minimum:
                _notice(f"going on with {have} of {needed} workers at {address}")
                return
            raise ClusterUnavailable(
                f"the scheduler at {address} has {have} of {needed} "
                f"worker{'s' if needed > 1 else ''} after {timeout:g} s; start workers with "
                f"'dask worker {address} --nthreads 1', or see --wait-workers") from None
        raise ClusterUnavailable(f"lost the scheduler {address} while waiting for workers "
                                 f"({_reason(exc)})") from None
    except (OSError, RuntimeError) as exc:
        raise ClusterUnavailable(f"lost the scheduler {address} while waiting for workers "
                                 f"({_reason(exc)})") from None
    log.info("%d workers at %s after %.1f s", needed, address, time.monotonic() - t0)


@contextlib.contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None,
                config: str | None = None, wait: bool = True, *,
                connect_timeout: float | None = None, wait_workers: float | None = None,
                force: bool = False, announce: bool | None = None) -> Iterator["object"]:
    """A ``distributed.Client`` for the requested place; closed on exit.

    workers : worker processes of a LocalCluster started here (default 2); with a
        scheduler or a config, the number of workers to wait for (default 1).
    scheduler : the address of a running scheduler (``tcp://host:8786``, ``host:8786``,
        ``tls://...``, ``ws://...``).
    config : a cluster description (``cluster_configs/*.yaml``).
    connect_timeout : seconds to reach the scheduler (default 10, or the environment
        variable ``STEALSEARCH_CONNECT_TIMEOUT``).
    wait_workers : seconds to wait for workers of a scheduler that has fewer than
        needed (default 30); a notice goes to stderr while waiting.
    force : start a local cluster bigger than the machine (see ``check_worker_count``).
    announce : print the dashboard's link once on stderr when connected (default: when
        stderr is a terminal; the CLI passes False for ``--quiet`` and ``--json``).
    """
    _quiet_logs()
    if scheduler is not None and config is not None:
        raise InputError("give --scheduler or --cluster-config, not both")
    connect_timeout = _seconds(connect_timeout, "--connect-timeout", DEFAULT_CONNECT_TIMEOUT,
                               env="STEALSEARCH_CONNECT_TIMEOUT")
    wait_workers = _seconds(wait_workers, "--wait-workers", DEFAULT_WAIT_WORKERS)
    local = scheduler is None and config is None
    if workers is not None or local:
        # never `workers or DEFAULT`: 0 must be refused, not read as "the default"
        workers = DEFAULT_WORKERS if workers is None else workers
        # (a local count is checked against cores and memory by local_cluster itself)
        if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
            raise InputError(f"--workers must be a whole number >= 1, got {workers!r}")
    if scheduler is not None:
        scheduler = check_scheduler_address(scheduler)

    owned = None
    security = None
    # how many workers to wait for, and the fewest to go on with once the wait is over
    needed, minimum, timeout = (1 if workers is None else workers), 1, wait_workers
    if config is not None:
        target, is_owned, plan = _cluster_from_config(config, force=force)
        owned = target if is_owned else None
        security = plan.security
        if workers is None and plan.expected_workers:
            needed = plan.expected_workers
    elif scheduler is not None:
        target = scheduler
    else:
        owned = target = local_cluster(workers, force=force)
        # LocalCluster has started them all already; this only confirms it
        needed = minimum = workers
        timeout = max(wait_workers, 60.0)
    try:
        address = target if isinstance(target, str) else target.scheduler_address
        client = _connect(target, address, connect_timeout, security)
        try:
            if wait:
                _wait_for_workers(client, address, needed, timeout, minimum)
            if announce if announce is not None else _stderr_is_a_terminal():
                announce_dashboard(client)
            try:
                yield client
            except (OSError, RuntimeError) as exc:
                # the scheduler went away under the caller (distributed then says
                # "ConnectionPool closing" or times out reconnecting, in a long
                # traceback): one line; with the client still connected, a bug of ours
                if getattr(client, "status", "running") == "running":
                    raise
                raise SearchFailed(f"lost the scheduler {address} ({_reason(exc)})") from exc
        finally:
            _close_quietly(client)
    finally:
        if owned is not None:
            _close_quietly(owned)
