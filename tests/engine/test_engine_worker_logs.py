"""A worker that heartbeats while its scheduler closes logs distributed's "Failed to
communicate with scheduler during heartbeat" with three chained tracebacks: the README's
4-worker example printed them at its end under load.  The plugin drops that record (and
only that one) on every worker it is set up on."""
import logging

from stealsearch.engine.deploy.quiet_logs import _HeartbeatNoise, drop_heartbeat_noise


def _record(msg):
    return logging.LogRecord("distributed.worker", logging.ERROR, __file__, 1, msg, None, None)


def test_the_heartbeat_record_is_dropped_and_others_kept():
    f = _HeartbeatNoise()
    assert not f.filter(_record("Failed to communicate with scheduler during heartbeat."))
    assert f.filter(_record("Compute Failed"))
    assert f.filter(_record("Failed to communicate with scheduler during something else"))


def test_the_filter_is_installed_once_on_distributed_worker(cluster4):
    def filters():
        log = logging.getLogger("distributed.worker")
        return sum(type(f).__name__ == "_HeartbeatNoise" for f in log.filters)

    from stealsearch.engine import solve
    from stealsearch.problems.uts import UTSProblem

    solve(UTSProblem.preset("default"), backend="dask", client=cluster4, workers=2)
    counts = cluster4.run(filters)
    assert counts and all(n == 1 for n in counts.values()), counts
    drop_heartbeat_noise()                     # idempotent in any process
    drop_heartbeat_noise()
    assert sum(isinstance(f, _HeartbeatNoise)
               for f in logging.getLogger("distributed.worker").filters) == 1
