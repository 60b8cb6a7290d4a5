"""The Dask backend: the stealstack protocol over the workers of a distributed cluster.

Shape of a run (seed 003, ch. 3 and §4.1-4.2), as a sequence of epochs
(:mod:`stealsearch.engine.core.epochs` has the argument for exactness across failures; the
epoch loop itself, the same for every backend, is :mod:`stealsearch.engine.core.loop`):

1. The client expands the root frontier until every worker can get a row: the first
   cut.  It pickles the problem once and loads it on each worker by one comm call
   (unpickled, kernel warmed, before the reply); the search clock starts when the
   first of the first epoch's workers replied, i.e. started searching (:mod:`.tables`,
   :mod:`.driver`; starting it at the last reply would overstate speed-ups).
2. Every epoch deals the last cut over the workers present now that hold the problem
   (a worker keeps its own rows; rows of lost workers are dealt round-robin, seed
   §4.1) and submits one long-running task per worker, pinned to it, with only that
   worker's share and a spec that names the search (not the problem).
3. Each task (:mod:`.task`) ``secede``\\ s and runs the worker core
   (:mod:`stealsearch.engine.core.worker`): kernel chunks,
   RELEASE / ACQUIRE / STEAL; steals, incumbent updates, credit returns, progress
   reports and stops go worker to worker through comm handlers (the worker's
   stealstack extension, :mod:`.tables`, routes them to the search object's
   methods).  The scheduler is not on the steal path.  Handlers answer in ~1 ms;
   actors in 1.5-3.4 ms and die with their worker; Pub/Sub no longer exists
   (ARCHITECTURE.md).
4. A task ends its epoch by itself after ``checkpoint_every`` seconds, at a limit,
   on a stop, or when the credit says the tree is exhausted, and returns its rows
   and counters (an :class:`~stealsearch.engine.core.epochs.EpochOutcome`).  The loop commits
   them as the next cut (optionally written to disk, :mod:`stealsearch.engine.core.checkpoint`), or,
   if a worker was lost or stalled, discards the epoch and deals the last cut again.
   A worker that leaves gracefully hands its outcome over to a peer as it closes: the
   epoch ends early as a cut and is committed without it (no rollback).

Modules: :mod:`.driver` (the transport: which workers, how an epoch runs), :mod:`.epoch_watch`
(one epoch: shares sent, tasks watched, outcomes fetched, lost and leaving workers),
:mod:`.shipper` (the problem to the workers), :mod:`.calls` (every client call, each
bounded), :mod:`.timeouts` (every client wait), :mod:`.wire` (the set-up path's
messages), and on the workers :mod:`.task` (the epoch's task: the worker core's thin
adapter), :mod:`.plugin` (the worker plugin: attaches the extension, hands over on
close) and :mod:`.tables` (the worker extension: the searches' state on a worker, the
router, the set-up handlers, the hand-over, and why a share is taken once).
"""
from .calls import live_workers  # noqa: F401
from .driver import DaskTransport, first_cut, run_dask  # noqa: F401
from .plugin import PLUGIN_NAME, StealstackPlugin  # noqa: F401
from .tables import EXTENSION_NAME, StealstackExtension  # noqa: F401
from .timeouts import PEER_TIMEOUT  # noqa: F401
