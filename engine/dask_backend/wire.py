"""What travels: the comm handler names, the per-epoch set-up and the typed outcome.

Every message names its search and its epoch (``search_id``, ``epoch``); a worker
serves only the epoch it is running, so a message of an aborted epoch finds nobody
and is answered ``GONE`` (see :mod:`stealsearch.engine.epochs`).

Neither the problem nor the rows travel in a task's arguments (the scheduler's
graph): the problem is pickled once per search in the client and loaded once per
worker (``stealsearch_load``, :mod:`.plugin`); each epoch's share of rows is sent to
its worker alone (``stealsearch_share``).  The task carries an :class:`EpochSpec`,
which names the search, and a :class:`ShareTicket`, which says what share to expect;
the worker finds both in its plugin's tables.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..policy import StealPolicy
from ..result import WorkerStats

#: handlers served by every worker's search object (``WorkerSearch.handle_<op>``)
WORKER_OPS = ("steal", "incumbent", "stop", "ping")
#: handlers served by rank 0's coordinator (``CoordinatorEndpoint.handle_<op>``)
COORDINATOR_OPS = ("credit", "report", "request_stop", "progress")
PREFIX = "stealsearch_"

#: handlers of the set-up path, served by the plugin itself (no search object needed)
SETUP_OPS = ("load", "unload", "share", "handover", "handovers")

#: reply of a handler whose (search, epoch) is not (or no longer) on this worker
GONE = "gone"


def handler_name(op: str) -> str:
    return PREFIX + op


@dataclass
class EpochSpec:
    """Everything a worker needs to run one epoch besides the problem (loaded once per
    search, found by ``search_id``) and its own rows (which travel beside it)."""

    search_id: str
    epoch: int
    peers: list[str]
    policy: StealPolicy
    incumbent: int
    epoch_seconds: float            # the worker ends the epoch after this long (a cut)
    time_left: float | None         # the search's time limit, from the epoch's start
    node_limit: int | None          # nodes this epoch may expand (all workers together)
    t_offset: float                 # search seconds before this epoch (for histories)
    peer_timeout: float             # a peer call slower than this aborts the epoch
    #: seconds the task may wait on its worker for the search's problem to be loaded
    #: (the first epoch, whose tasks go out with the loads); 0: it must be there
    load_wait: float = 0.0
    #: search threads (lanes) in each worker, sharing its shared portion (worker.py)
    threads: int = 1


@dataclass(frozen=True)
class ShareTicket:
    """What the epoch task of one worker expects of its share (the rows dealt to it,
    sent beside the task by ``stealsearch_share``): a few numbers, so that the task's
    arguments stay small whatever the cut."""

    n_rows: int                     # rows dealt (checked against what arrived)
    nbytes: int                     # the encoded share's size
    wait: float                     # seconds the task may wait for it to arrive


@dataclass
class EpochOutcome:
    """What one worker returns at the end of its epoch."""

    rank: int
    address: str
    rows: object                    # its open rows, bottom-to-top (a codec batch)
    counters: np.ndarray
    best_value: int | None
    best_buffer: np.ndarray | None
    history: list
    stats: WorkerStats
    rows_left_shared: int           # rows its shared portion still held (conservation)
    stop_reason: str | None         # cut, exhausted, found, time_limit, node_limit, ...
    failure: str | None             # why the epoch cannot be committed as it stands
    coordinator: dict | None = field(default=None)   # rank 0: the coordinator's snapshot
    #: the peers (addresses) whose calls failed, when only peer calls failed; a retired
    #: peer that handed its outcome over explains such a failure (see the driver)
    failed_peers: tuple = ()
    #: the worker did not hold the search's problem (it joined, restarted, or dropped an
    #: idle entry): the client loads it again before dealing to it
    problem_missing: bool = False
