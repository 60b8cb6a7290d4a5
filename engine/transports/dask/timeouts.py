"""Every wait of the Dask backend's client side, in seconds (and its two sizes): one home.

The modules read them at call time (``timeouts.PEER_TIMEOUT``), so a test may shorten
one for a whole run with a single ``monkeypatch.setattr(timeouts, ...)``.  The worker
side's own waits are beside their code (:mod:`.tables`, :mod:`stealsearch.engine.core.worker`).
"""
import contextlib

from ...core import epochs

#: a peer call (steal, credit, stop) slower than this aborts the epoch (the engine's one
#: peer timeout, :data:`stealsearch.engine.core.epochs.PEER_TIMEOUT`)
PEER_TIMEOUT = epochs.PEER_TIMEOUT
#: how often the client pings each worker of a running epoch (its watchdog: a worker
#: that answered no ping sent in the last PEER_TIMEOUT s is stalled; epoch_watch.py)
PING_EVERY = 1.0
#: rows the client expands at most before the first deal
SETUP_NODE_CAP = 10_000
#: how often the client polls for progress and for lost workers
CLIENT_POLL = 0.1
#: seconds the survivors of an aborted epoch get to return
ABORT_GRACE = 5.0
#: seconds the workers get to return after Ctrl-C / SIGTERM
INTERRUPT_GRACE = 2.0
#: seconds to wait for a worker when none is left
WAIT_FOR_WORKERS = 60.0
#: timeout of one call from the client to the scheduler or a worker
CALL_TIMEOUT = 10.0
#: timeout of the plugin's registration (a broadcast that waits for every worker)
REGISTER_TIMEOUT = 3.0
#: a load (send, unpickle, kernel warm-up) slower than this, plus the bytes' time at
#: LOAD_RATE, is given up: the worker is left out and tried again later
LOAD_TIMEOUT = 60.0
LOAD_RATE = 20e6
#: seconds a worker keeps a share that no task took (a task cancelled before it ran);
#: far longer than a task takes to start, and a task that misses it fails its epoch
SHARE_KEEP = 120.0
#: a failed load is retried after this long, doubling up to LOAD_RETRY_MAX
LOAD_RETRY = 0.25
LOAD_RETRY_MAX = 8.0
#: seconds a worker keeps a search's problem that no epoch used (the client vanished
#: without its teardown); longer than any pause between epochs (WAIT_FOR_WORKERS),
#: and a worker that dropped it early is just loaded again
PROBLEM_KEEP_IDLE = 300.0
#: seconds the client waits for the outcome of a worker that left gracefully (its
#: close ends its epoch and sends the outcome: slow on a loaded machine)
RETIRE_GRACE = 10.0
#: seconds a stop sent to every worker of an epoch may take (one call each, at once);
#: also the search's teardown on every worker (a stalled one must not hold the end)
STOP_TIMEOUT = 1.0

#: the waits above that are periods of the search (the set-up's too): what
#: :func:`dilated` multiplies
PERIODS = ("PEER_TIMEOUT", "PING_EVERY", "CLIENT_POLL", "ABORT_GRACE", "INTERRUPT_GRACE",
           "WAIT_FOR_WORKERS", "CALL_TIMEOUT", "REGISTER_TIMEOUT", "LOAD_TIMEOUT",
           "SHARE_KEEP", "LOAD_RETRY", "LOAD_RETRY_MAX", "PROBLEM_KEEP_IDLE",
           "RETIRE_GRACE", "STOP_TIMEOUT")


@contextlib.contextmanager
def dilated(dilation: float):
    """Every client wait of this module ``dilation`` times longer (and LOAD_RATE that
    many times slower) while the block runs; restored after it.  The client's half of
    the emulated cluster's time dilation (benchmarks/emulate_cluster.py); the worker's
    half is :class:`stealsearch.engine.core.worker.Periods`, from the policy's
    ``dilation``."""
    g = globals()
    saved = {name: g[name] for name in PERIODS + ("LOAD_RATE",)}
    try:
        for name in PERIODS:
            g[name] = saved[name] * dilation
        g["LOAD_RATE"] = saved["LOAD_RATE"] / dilation
        yield
    finally:
        g.update(saved)
