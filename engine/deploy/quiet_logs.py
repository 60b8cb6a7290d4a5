"""What distributed, tornado and bokeh would print that the user does not need: their
chatter below errors, a worker's heartbeat failure at the scheduler's close, and the
traceback of a stray connection to a Dask port.  Installed in the client (whose
LocalCluster's scheduler and nannies run in it) and in every worker (the preload hook
and the stealstack plugin)."""
from __future__ import annotations

import logging


def quiet_distributed_logs() -> None:
    """distributed's, bokeh's and tornado's loggers down to errors: what they would say
    at info or warning level, the search reports itself, in one line."""
    import distributed  # noqa: F401  (its import configures these loggers: go after it)

    for name in ("distributed", "distributed.worker", "distributed.scheduler",
                 "distributed.nanny", "distributed.core", "distributed.http.proxy",
                 "distributed.utils_perf", "bokeh", "tornado"):
        logging.getLogger(name).setLevel(logging.ERROR)
    # "Failed to reconnect to scheduler ... closing client": we report the same
    # failure ourselves, in one line.
    logging.getLogger("distributed.client").setLevel(logging.CRITICAL)


class _HeartbeatNoise(logging.Filter):
    """Drops distributed's "Failed to communicate with scheduler during heartbeat" and
    its three chained tracebacks.  A worker logs it when its scheduler closes while a
    heartbeat is in flight: at the end of a run on a LocalCluster (a race inside
    distributed's shutdown, likelier under load), or when
    the scheduler died, which the client reports itself in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Failed to communicate with scheduler during heartbeat")


def drop_heartbeat_noise() -> None:
    log = logging.getLogger("distributed.worker")
    if not any(isinstance(f, _HeartbeatNoise) for f in log.filters):
        log.addFilter(_HeartbeatNoise())


class _StrayConnectionNoise(logging.Filter):
    """Drops tornado's ~25-line traceback for a connection to a Dask port that does not
    speak Dask's protocol (an HTTP GET, a port scanner: distributed reads the first bytes
    as a frame length and fails to allocate exabytes, a MemoryError), once per
    connection, on the terminal of whoever runs the scheduler or the worker; one warning
    line the first time instead.  The connection is closed either way; nothing of the
    search is touched."""

    warned = False

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except Exception:
            return True
        if "_handle_stream" not in text or not record.exc_info:
            return True
        if not _StrayConnectionNoise.warned:
            _StrayConnectionNoise.warned = True
            exc = record.exc_info[1]
            logging.getLogger("stealsearch").warning(
                "ignored a connection to a cluster port that does not speak Dask's protocol "
                "(%s); further ones are ignored silently", exc.__class__.__name__)
        return False


def quiet_stray_connections() -> None:
    """Install :class:`_StrayConnectionNoise` in this process (idempotent): the client's
    (its LocalCluster's scheduler and nannies run here) and every worker's (the plugin)."""
    log = logging.getLogger("tornado.application")
    if not any(isinstance(f, _StrayConnectionNoise) for f in log.filters):
        log.addFilter(_StrayConnectionNoise())


def dask_setup(worker) -> None:
    """distributed's preload hook (:func:`stealsearch.engine.deploy.cluster.local_cluster`
    starts every worker process with this module preloaded): stray connections quiet from
    the worker's first moment, not only once the stealstack plugin is registered (with
    the ramp-up, at the hand-over)."""
    quiet_stray_connections()
