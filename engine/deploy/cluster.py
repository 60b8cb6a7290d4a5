"""Where the work runs: a local cluster, an existing scheduler, or a config file.

``dask_client()`` is the one door every CLI command and benchmark goes through::

    with dask_client() as client:                   # LocalCluster, one process per usable core
        ...
    with dask_client(workers=4) as client:          # LocalCluster, 4 processes
        ...
    with dask_client(scheduler="tcp://127.0.0.1:8786") as client:
        ...
    with dask_client(config="cluster_configs/local.yaml") as client:
        ...

A cluster started here is closed (and its worker processes ended) on exit; a cluster
we merely connected to is left running.  Everything a user can get wrong on the way
(a malformed address, an absurd worker count, an unknown key in a config file, a
scheduler that does not answer or has no workers) raises an
:class:`~stealsearch.engine.core.errors.InputError` whose message is one line
(the address: :mod:`stealsearch.engine.deploy.addresses`; a config file:
:mod:`stealsearch.engine.deploy.cluster_config`).
"""
from __future__ import annotations

import contextlib
import logging
import numbers
import os
import threading
import time
from typing import Callable, Iterator

from ..core.errors import ClusterUnavailable, InputError, SearchFailed, first_line
from .addresses import check_scheduler_address
from .cluster_config import (DEFAULT_WORKERS, ClusterPlan, check_keys,  # noqa: F401
                             local_cluster_keywords, read_cluster_config)
from .cores import usable_cores  # noqa: F401  (the one answer; re-exported here)
from .quiet_logs import quiet_distributed_logs

#: Seconds to reach a scheduler before giving up (``--connect-timeout``).
DEFAULT_CONNECT_TIMEOUT = 10.0
#: Seconds to wait for the first worker of a scheduler that has none (``--wait-workers``).
DEFAULT_WAIT_WORKERS = 30.0
#: Seconds the worker processes of a LocalCluster we start may take to come up
#: (``--wait-workers`` sets it too): one still starting then is stalled (stopped, swapped
#: out, hung in an import) and is ended like one that died while it started.
DEFAULT_START_TIMEOUT = 60.0
#: Seconds a start may take to settle once its stalled worker processes were ended.
STALLED_END_GRACE = 10.0
#: Beyond this many worker processes per core a local cluster is refused without force.
MAX_WORKERS_PER_CORE = 4
#: A worker process (interpreter, numpy, numba, distributed) needs about this much memory.
MIN_MEMORY_PER_WORKER = 300 * 2**20

log = logging.getLogger(__name__)


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

def default_workers() -> int:
    """Worker processes of a LocalCluster started with no count: one per usable core
    (:func:`stealsearch.engine.deploy.cores.usable_cores`: affinity and cgroup quota).
    (``DEFAULT_WORKERS``, imported above, is only a ``kind: local`` config's default.)"""
    return usable_cores()


def parse_workers(value) -> int | None:
    """A worker count as the API takes it: a whole number >= 1, ``"auto"`` (the usable
    cores), or None (not given).  Anything else (``"2"`` included: the command line
    parses its own) is one InputError line."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() == "auto":
        return usable_cores()
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InputError(f"workers must be a whole number >= 1 or 'auto', got {value!r}")
    return int(value)


def available_memory() -> int:
    import psutil
    return psutil.virtual_memory().available


def check_worker_count(workers, force: bool = False, notice: bool = True) -> int:
    """Validate the number of worker *processes* of a cluster started on this machine.

    Refused without ``force``: fewer than 1; more than ``MAX_WORKERS_PER_CORE`` per
    usable core; more than the available memory holds at ``MIN_MEMORY_PER_WORKER``
    each.  More than one per core is allowed with a notice (``notice``): the processes
    then share cores, and a speed-up measured that way means little.
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
    if workers > cores and notice:
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

def start_owned(factory: Callable[[], object], timeout: float | None = None):
    """Start a cluster with Ctrl-C kept away from its worker processes
    (:func:`stealsearch.engine.deploy.interrupts.start_shielded`, the one mechanism); a
    Ctrl-C during the start ends it and raises KeyboardInterrupt.  ``timeout``: seconds
    the whole start may take (a TimeoutError; default: start_shielded's)."""
    from . import interrupts

    if timeout is None:
        return interrupts.start_shielded(factory, close_quietly)
    return interrupts.start_shielded(factory, close_quietly, timeout=timeout)


def close_quietly(thing, timeout: float = 30.0) -> None:
    """Close a client or cluster; a failure to close must not hide what went before."""
    try:
        try:
            thing.close(timeout=timeout)
        except TypeError:  # a cluster class whose close() takes no timeout
            thing.close()
    except (OSError, RuntimeError, TimeoutError, ValueError) as exc:
        log.debug("closing %r failed: %r", thing, exc)


# --------------------------------------------------------------------------- local

def local_cluster(workers: int | None = None, threads_per_worker: int = 1, *,
                  force: bool = False, start_timeout: float = DEFAULT_START_TIMEOUT,
                  **kwargs):
    """A ``LocalCluster`` of worker *processes* on 127.0.0.1 (``workers``: one per usable
    core when None).

    A worker process not up within ``start_timeout`` seconds is ended and the cluster
    goes on with the others (one note line); none up is :class:`SearchFailed` (the start
    failed; not the user's input), as is a start that does not end in time at all.

    Private by default: the scheduler, the workers, their nannies and the dashboard
    (a free port, on 127.0.0.1 only) listen on the loopback interface; pass ``host``
    and ``dashboard_address`` (e.g. in a ``kind: local`` config) to open them up.

    One thread per worker: the search loop secedes from it, and the kernel releases
    the GIL, so the worker's event loop keeps answering steals and heartbeats.
    """
    from distributed import LocalCluster

    workers = check_worker_count(default_workers() if workers is None else workers, force)
    check_keys(kwargs, local_cluster_keywords(), "local cluster")
    quiet_distributed_logs()
    # a free port, never clashing with another cluster; ":0" would mean every interface
    kwargs.setdefault("dashboard_address", "127.0.0.1:0")
    kwargs.setdefault("host", "127.0.0.1")
    kwargs.setdefault("silence_logs", logging.ERROR)
    import dask

    # The statistical profiler samples every worker thread's Python stack every 10 ms;
    # it cannot see into a nogil kernel and only competes for the cores.  The config
    # is captured by each Nanny and handed to its worker process.  So is the preload
    # that quiets stray connections from a worker's first moment: with the ramp-up the
    # plugin (which also installs it) arrives only at the hand-over, and an HTTP GET to
    # a worker's port before that logged a ~25-line MemoryError traceback.
    preload = list(dask.config.get("distributed.worker.preload", None) or [])
    preload.append(WORKER_PRELOAD)
    with dask.config.set({"distributed.worker.profile.enabled": False,
                          "distributed.worker.preload": preload}):
        preload_forkserver()
        try:
            return start_owned(lambda: _start_local(LocalCluster, workers, threads_per_worker,
                                                    kwargs, start_timeout),
                               timeout=2 * start_timeout + STALLED_END_GRACE)
        except SearchFailed:
            raise
        except TimeoutError as exc:     # (the whole start, its scheduler included)
            raise SearchFailed(f"the local cluster did not start: {first_line(exc)}") from None
        except (ValueError, TypeError, RuntimeError, OSError) as exc:
            # a config's bad value (memory_limit: lots, dashboard_address: x) surfaces
            # here, often wrapped in "Cluster failed to start"; the user needs its line
            raise ClusterUnavailable(f"the local cluster did not start: {first_line(exc)}") from None


#: the module every worker process of a LocalCluster we start preloads (its dask_setup)
WORKER_PRELOAD = "stealsearch.engine.deploy.quiet_logs"

#: What the forkserver of our local clusters imports once, so that each worker process
#: it forks starts with it instead of importing it again: the modules every worker of
#: ours imports before its first task (the stealstack plugin arrives pickled).
FORKSERVER_PRELOAD = ("distributed", "numpy", "numba", WORKER_PRELOAD,
                      "stealsearch.engine.transports.dask.plugin")


def preload_forkserver() -> None:
    """Name :data:`FORKSERVER_PRELOAD` as the forkserver's preload list when dask's
    ``distributed.worker.multiprocessing-method`` is ``forkserver`` (the user's dask
    configuration; the default, ``spawn``, starts each worker process from nothing).
    distributed sets its own list once per process, at its first call of
    ``get_mp_context``: ours replaces it after that call.  Without effect once this
    process's forkserver runs.  multiprocessing skips a preload module that fails to
    import, so a broken import costs only the worker that imports it again."""
    import dask

    if dask.config.get("distributed.worker.multiprocessing-method") != "forkserver":
        return
    from distributed.utils import get_mp_context

    get_mp_context().set_forkserver_preload(list(FORKSERVER_PRELOAD))


def _start_local(cls, workers: int, threads_per_worker: int, kwargs: dict,
                 start_timeout: float = DEFAULT_START_TIMEOUT):
    """Start a LocalCluster of ``workers`` processes; a worker process that dies while
    the cluster starts, or is not up within ``start_timeout`` seconds (stalled: ended
    by PID, so it is one that died), does not end it: the cluster goes on with the
    workers that came up, and one note line says so.  None came up: SearchFailed (a
    bad keyword's own error, the same for every worker, is raised as it is).

    ``LocalCluster(n_workers=N)`` closes the whole cluster when one Nanny fails to start
    ("Nanny failed to start": a worker process killed, out of memory, a crash in its
    imports), and waits for a stalled one for ever.  So the scheduler starts first with
    no worker, and the workers are then added the way LocalCluster adds its own
    (``new_worker_spec``, then ``_correct_state``, which raises the first failure once
    every other worker is up), under the start timeout (:func:`_start_workers`).
    """
    cluster = cls(n_workers=0, threads_per_worker=threads_per_worker, processes=True, **kwargs)
    try:
        for _ in range(workers):
            cluster.worker_spec.update(cluster.new_worker_spec())
        stalled, failure = cluster.sync(_start_workers, cluster, start_timeout)
        if not stalled and failure is None:
            return cluster
        from .interrupts import start_cancelled

        if start_cancelled():       # its workers were ended on purpose: nothing to go on with
            raise StartCancelled("the cluster's start was cancelled")
        why = (f"{stalled} still starting after {start_timeout:g} s, ended" if stalled
               else first_line(failure))
        from distributed.core import Status

        up = [n for n, w in cluster.workers.items() if w.status == Status.running]
        lost = [n for n in list(cluster.worker_spec) if n not in up]
        if not up:
            if not stalled and not isinstance(failure, RuntimeError):
                raise failure           # a keyword's bad value, the same for every worker
            raise SearchFailed(f"none of the {workers} worker processes of the local cluster "
                               f"started ({why.rstrip('.')})")
        for name in lost:
            cluster.worker_spec.pop(name, None)
            nanny = cluster.workers.pop(name, None)
            if nanny is not None:
                try:
                    cluster.sync(nanny.close, callback_timeout=10)
                except Exception as exc:   # it failed already; closing is only tidying
                    log.debug("closing a failed nanny: %r", exc)
        _notice(f"note: {len(lost)} of {workers} worker processes did not start "
                f"({why.rstrip('.')}); "
                f"going on with {len(up)}")
        return cluster
    except BaseException:
        close_quietly(cluster)
        raise


async def _start_workers(cluster, timeout: float) -> tuple[int, BaseException | None]:
    """Start the cluster's worker processes (``_correct_state``) within ``timeout``
    seconds: ``(stalled, failure)``, the number of worker processes still starting then
    (each ended by SIGKILL: its nanny's start then fails as for a process that died,
    and the rest of the start goes on) and the start's first failure (None: all up)."""
    import asyncio

    task = asyncio.ensure_future(cluster._correct_state())
    done, _ = await asyncio.wait({task}, timeout=timeout)
    stalled = 0
    if not done:
        stalled = _end_starting_workers(cluster)
        done, _ = await asyncio.wait({task}, timeout=STALLED_END_GRACE)
        if not done:
            raise TimeoutError(f"the worker processes did not start within {timeout:g} s")
    try:
        task.result()
    except Exception as exc:       # one worker (or more) did not start
        return stalled, exc
    return stalled, None


def _end_starting_workers(cluster) -> int:
    """SIGKILL the worker process of every nanny of ``cluster`` still starting; how many.
    (The nannies a start creates are known to the cluster before they are up only as
    ``_created``, as distributed keeps them.)"""
    import signal

    from distributed.core import Status

    ended = 0
    for nanny in list(getattr(cluster, "_created", ())):
        if nanny.status in (Status.running, Status.closing, Status.closed, Status.failed):
            continue
        pid = getattr(nanny, "pid", None)
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
                ended += 1
            except OSError:
                pass
    return ended


def start_plan(plan: ClusterPlan):
    """Build the cluster a config describes (Ctrl-C safe) and ask for its workers."""
    factory = local_cluster if plan.kind == "local" else plan.factory
    cluster = start_owned(lambda: factory(**plan.kwargs))
    if plan.scale:
        try:
            cluster.scale(**plan.scale)
        except BaseException:
            close_quietly(cluster)
            raise
    return cluster


def _cluster_from_config(path: str, force: bool = False,
                         start_timeout: float = DEFAULT_START_TIMEOUT):
    """(cluster or scheduler address, whether we own it, the plan) for a config file."""
    plan = read_cluster_config(path)
    if plan.address is not None:
        return plan.address, False, plan
    if plan.kind == "local":
        plan.kwargs.setdefault("start_timeout", start_timeout)
        if force:
            plan.kwargs.setdefault("force", True)
    return start_plan(plan), True, plan


# --------------------------------------------------------------------------- client

def dashboard_link(client) -> str | None:
    """The link to the dashboard of ``client``'s scheduler, or None if it serves none.

    Asked of the scheduler itself (its ``dashboard`` service port), so it is right for
    a LocalCluster of ours and for a scheduler we only connected to; the host is the
    one we reached the scheduler at.  The search page is ``.../stealsearch`` beside it
    (:mod:`stealsearch.engine.deploy.monitor`).
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
        from ..core.progress import write_above

        page = link.rsplit("/status", 1)[0].rstrip("/") + "/stealsearch"
        # a line of its own above the live line (a ramp-up's cluster comes up while the
        # line is drawn)
        write_above(f"dashboard: {link}  (searches and sweeps: {page})",
                    file=sys.stderr if file is None else file)
    return link


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
                                 f"({first_line(exc)})") from None
    if probe.is_alive() or isinstance(exc, (OSError, asyncio.TimeoutError)):
        why = "no answer" if exc is None or not str(exc).strip() else first_line(exc)
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
                                 f"({first_line(exc)}); see --connect-timeout") from None
    except RuntimeError as exc:
        # the scheduler died during the handshake: distributed then reports the pool
        # it closed on its way out ("ConnectionPool is closed"), not the cause
        raise ClusterUnavailable(f"lost the scheduler {address} while connecting "
                                 f"({first_line(exc)})") from None


def _running_workers(client) -> int:
    try:
        info = client.scheduler_info(n_workers=-1)   # all of them (newer distributed)
    except TypeError:
        info = client.scheduler_info()
    workers = info.get("workers", {})
    return sum(1 for w in workers.values() if w.get("status", "running") == "running")


#: seconds between two looks at ``cancelled`` while waiting for workers
CANCEL_POLL = 0.2


class StartCancelled(ClusterUnavailable):
    """A start was cancelled (its ``cancelled`` event set) while it waited for workers:
    the ramp-up's search ended first and the start is being abandoned."""


def _wait_for_workers(client, address: str, needed: int, timeout: float,
                      minimum: int | None = None,
                      cancelled: threading.Event | None = None) -> None:
    """Wait up to ``timeout`` s for ``needed`` running workers, telling the user if it is
    not immediate; after that, go on with ``minimum`` (default: all needed) or fail.
    ``cancelled`` set (before or during the wait) ends it with :class:`StartCancelled`,
    silently: the ramp-up abandons a start whose search ended by killing its worker
    processes, and a wait for workers that can no longer come would otherwise last the
    whole ``timeout``, with a "waiting for N workers" line that means nothing to the
    user.

    (The search takes the workers present when it starts.)
    """
    minimum = needed if minimum is None else minimum
    try:
        if _running_workers(client) >= needed:
            return
        if cancelled is not None and cancelled.is_set():
            raise StartCancelled("the cluster's start was cancelled")
        _notice(f"waiting for {needed} worker{'s' if needed > 1 else ''} at {address} "
                f"(up to {timeout:g} s; see --wait-workers) ...")
        t0 = time.monotonic()
        _wait_or_cancel(client, needed, timeout, cancelled)
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
                                 f"({first_line(exc)})") from None
    except (OSError, RuntimeError) as exc:
        raise ClusterUnavailable(f"lost the scheduler {address} while waiting for workers "
                                 f"({first_line(exc)})") from None
    log.info("%d workers at %s after %.1f s", needed, address, time.monotonic() - t0)


def _wait_or_cancel(client, needed: int, timeout: float,
                    cancelled: threading.Event | None) -> None:
    """``client.wait_for_workers(needed, timeout)``; with a ``cancelled`` event, in slices
    of :data:`CANCEL_POLL` seconds, looking at it between them.  The last slice's timeout
    error (with the workers it found) is the one raised."""
    step = timeout if cancelled is None else CANCEL_POLL
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            client.wait_for_workers(needed, timeout=max(0.01, min(step, left)))
            return
        except TimeoutError:
            if cancelled is not None and cancelled.is_set():
                raise StartCancelled("the cluster's start was cancelled") from None
            if left <= step:
                raise


@contextlib.contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None,
                config: str | None = None, wait: bool = True, *,
                connect_timeout: float | None = None, wait_workers: float | None = None,
                force: bool = False, announce: bool | None = None,
                cancelled: threading.Event | None = None) -> Iterator["object"]:
    """A ``distributed.Client`` for the requested place; closed on exit.

    Parameters
    ----------
    workers : int or "auto", optional
        Worker processes of a LocalCluster started here (default: one per usable
        core, :func:`default_workers`; ``"auto"`` the same); with a scheduler or a
        config, the number of workers to wait for (default 1).
    scheduler : str, optional
        The address of a running scheduler (``tcp://host:8786``, ``host:8786``,
        ``tls://...``, ``ws://...``).
    config : str, optional
        A cluster description (``cluster_configs/*.yaml``).
    connect_timeout : float, optional
        Seconds to reach the scheduler (default 10, or the environment
        variable ``STEALSEARCH_CONNECT_TIMEOUT``).
    wait_workers : float, optional
        Seconds to wait for workers of a scheduler that has fewer than
        needed (default 30); a notice goes to stderr while waiting.  For a
        LocalCluster started here: the seconds its worker processes may take
        to come up (default 60); one still starting then is ended, and the
        cluster goes on with the rest.
    force : bool
        Start a local cluster bigger than the machine (see ``check_worker_count``).
    announce : bool, optional
        Print the dashboard's link once on stderr when connected (default: when
        stderr is a terminal; the CLI passes False for ``--quiet`` and ``--json``).
    cancelled : threading.Event, optional
        An event that, once set, ends a wait for workers with
        :class:`StartCancelled` (the ramp-up's start in the background, abandoned).
    """
    quiet_distributed_logs()
    if scheduler is not None and config is not None:
        raise InputError("give --scheduler or --cluster-config, not both")
    connect_timeout = _seconds(connect_timeout, "--connect-timeout", DEFAULT_CONNECT_TIMEOUT,
                               env="STEALSEARCH_CONNECT_TIMEOUT")
    # a local cluster's worker processes get the start timeout, a scheduler's first
    # worker the wait (both --wait-workers when given)
    start_timeout = _seconds(wait_workers, "--wait-workers", DEFAULT_START_TIMEOUT)
    wait_workers = _seconds(wait_workers, "--wait-workers", DEFAULT_WAIT_WORKERS)
    local = scheduler is None and config is None
    if workers is not None or local:
        # never `workers or DEFAULT`: 0 must be refused, not read as "the default"
        # (a local count is checked against cores and memory by local_cluster itself)
        workers = parse_workers(workers)
        if workers is None:
            workers = default_workers()
    if scheduler is not None:
        scheduler = check_scheduler_address(scheduler)

    owned = None
    security = None
    # how many workers to wait for, and the fewest to go on with once the wait is over
    needed, minimum, timeout = (1 if workers is None else workers), 1, wait_workers
    if config is not None:
        target, is_owned, plan = _cluster_from_config(config, force=force,
                                                      start_timeout=start_timeout)
        owned = target if is_owned else None
        security = plan.security
        if workers is None and plan.expected_workers:
            needed = plan.expected_workers
        if is_owned and plan.kind == "local":
            # a worker that died while it started is gone for good (a note said so)
            needed = min(needed, len(target.workers))
    elif scheduler is not None:
        target = scheduler
    else:
        owned = target = local_cluster(workers, force=force, start_timeout=start_timeout)
        # LocalCluster has started them all already (less any that died or stalled while
        # they started: a note said so); this only confirms it
        needed = minimum = len(target.workers)
        timeout = start_timeout
    try:
        address = target if isinstance(target, str) else target.scheduler_address
        client = _connect(target, address, connect_timeout, security)
        try:
            if wait:
                _wait_for_workers(client, address, needed, timeout, minimum, cancelled)
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
                # (the search's own words and where to resume it from, when it says)
                why = getattr(exc, "reason", None) or first_line(exc)
                note = getattr(exc, "resume_note", None)
                raise SearchFailed(f"lost the scheduler {address} ({why})"
                                   + (f"; {note}" if note else "")) from exc
        finally:
            close_quietly(client)
    finally:
        if owned is not None:
            close_quietly(owned)
