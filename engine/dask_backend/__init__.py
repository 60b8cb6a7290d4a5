"""The Dask backend: the stealstack protocol over the workers of a distributed cluster.

Shape of a run (seed 003, ch. 3 and §4.1-4.2), as a sequence of epochs
(:mod:`stealsearch.engine.epochs` has the argument for exactness across failures):

1. The client expands the root frontier until every worker can get a row: the first
   cut.  It pickles the problem once and loads it on each worker by one comm call
   (unpickled, kernel warmed, before the reply); the search clock starts when the
   first epoch's workers have replied (:mod:`.plugin`, :mod:`.driver`).
2. Every epoch deals the last cut over the workers present now that hold the problem
   (a worker keeps its own rows; rows of lost workers are dealt round-robin, seed
   §4.1) and submits one long-running task per worker, pinned to it, with only that
   worker's share and a spec that names the search (not the problem).
3. Each task (:mod:`.worker`) ``secede``\\ s and runs the search loop: kernel chunks,
   RELEASE / ACQUIRE / STEAL; steals, incumbent updates, credit returns, progress
   reports and stops go worker to worker through comm handlers (:mod:`.plugin`
   routes them to the search object's methods).  The scheduler is not on the steal
   path.  Handlers answer in ~1 ms; actors in 1.5-3.4 ms and die with their worker;
   Pub/Sub no longer exists (ARCHITECTURE.md).
4. A task ends its epoch by itself after ``checkpoint_every`` seconds, at a limit,
   on a stop, or when the credit says the tree is exhausted, and returns its rows
   and counters (:class:`.wire.EpochOutcome`).  The client (:mod:`.driver`) commits
   them as the next cut (optionally written to disk, :mod:`stealsearch.engine.checkpoint`), or,
   if a worker was lost or stalled, discards the epoch and deals the last cut again.
   A worker that leaves gracefully hands its outcome over to a peer as it closes: the
   epoch ends early as a cut and is committed without it (no rollback).

Modules: :mod:`.wire` (message names, typed set-up and outcome), :mod:`.worker`
(the per-worker search object with its handlers, rank 0's coordinator handlers),
:mod:`.plugin` (the router, the problem table and the hand-over of a closing worker),
:mod:`.driver` (the client).
"""
from .calls import live_workers  # noqa: F401
from .driver import DaskTransport, first_cut, run_dask  # noqa: F401
from .plugin import PLUGIN_NAME, SEARCHES, StealstackPlugin  # noqa: F401
from .timeouts import PEER_TIMEOUT  # noqa: F401
