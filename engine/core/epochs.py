"""Epochs and consistent cuts: how a search survives lost workers, stops, and resumes.

A search is a sequence of **epochs**.  An epoch starts from a **cut** (a set of rows,
the committed counters and the incumbent), deals the cut's rows over the workers
present *now*, runs the stealstack on them for at most ``epoch_seconds``, and ends
when every worker of the epoch has returned its state.  What they return is the
next cut.

Why the end of an epoch is a consistent cut (no row in flight)
---------------------------------------------------------------
Every worker ends its epoch by itself (its own clock: the epoch length, a limit, a
stop message), and ends it in one step: :meth:`stealsearch.engine.core.stealstack.SharedPortion.close`
takes its shared rows and refuses every later steal under the lock a thief takes.
A steal is a synchronous request/reply made by the thief's search thread, so a thief
cannot end its epoch while its steal is open.  Hence, once every worker of the epoch
has returned, every row released or stolen during the epoch is at exactly one place:
in the rows some worker returned.  Rows that were dealt are conserved (checked per
epoch: released = acquired + stolen + left in shared).  Nothing is taken from the
credit machinery for this: the credits only detect *early* termination (every worker
empty), after which the cut is empty and the search is complete.

Why no node is lost or counted twice across a rollback
------------------------------------------------------
The counters of a cut count exactly the nodes expanded *above* its rows: the nodes of
every committed epoch (each of which started from the previous cut and ended in this
one).  A committed epoch contributes its counters and its rows together, or nothing.

* Commit: an epoch is committed only if every worker dealt to returned an outcome
  without a failure (no peer call timed out, no worker left).  Then the new cut's
  rows are precisely the unexplored frontier of the old cut's rows minus what the
  epoch expanded, and its counters are the old counters plus what it expanded.
* Abort: if any worker of the epoch is lost, stalls past a timeout, or saw a peer
  call fail, the whole epoch is discarded: its counters (reported as
  ``nodes_redone``) and its rows.  The next epoch starts again from the *old* cut, so
  each node below it is expanded exactly once in the committed history.  Stale
  messages cannot leak into a later epoch: every message carries (search id, epoch)
  and a worker only serves the epoch it runs; a reply to a timed-out request is
  dropped together with the epoch it belonged to.
* The incumbent of an aborted epoch may be kept: it is a verified solution and only
  prunes, so an optimum stays the optimum (counts in optimise mode may differ from
  a run without the kill, as they may between any two parallel runs).  Enumerate
  mode has no incumbent, so its counts are exactly the sequential ones.

Work lost per failure is bounded by one epoch on every worker
(``epoch_seconds x workers`` of compute, plus the detection time).

How a share travels: each worker's share of a deal is sent to it alone by a direct
comm call beside the epoch's task (never in the task's arguments, so never through the
scheduler), and taken by that epoch's task only; a share of a discarded epoch is
dropped by its worker and never searched (the argument is in
:mod:`stealsearch.engine.transports.dask.tables`).  The client keeps the cut it dealt from until the
epoch is committed, so a share lost with its worker is simply dealt again.

Workers that join are dealt rows at the next epoch (every epoch re-deals), once they
hold the search's problem (loaded once per search per worker; a worker that dies
while loading is a lost worker of the epoch it was dealt to).  A worker that leaves
gracefully (``retire_workers``, a scale-down, SIGTERM) ends its epoch as a cut while
it closes and hands its outcome to a peer (:mod:`stealsearch.engine.transports.dask.tables`); the
others then end theirs, and the epoch is committed like any other (all outcomes in,
rows conserved) -- no rollback.  If the hand-over does not arrive, or conservation
fails, the epoch rolls back as for a loss.

Alternatives considered: supervised steals (a victim keeps what it gave until the
thief's subtree is done, HdpH-RS) lose less work per failure but need a replica of
every stolen batch and a tree of obligations; a paused-cut (stop stealing, snapshot,
continue in the same tasks) saves the task restart but needs a second protocol with
its own timeouts.  Ending the epoch is the same code path as a time limit, so it is
the one already exercised by every limit test.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .policy import StealPolicy
from .problem import Problem, reduce_counters
from .result import WorkerStats

#: seconds between consistent cuts (the epoch length): also the most work a lost worker
#: costs, per worker, and how long an orphaned search can outlive its client
DEFAULT_CHECKPOINT_EVERY = 5.0
#: seconds a peer call (steal, credit, stop, report) may take before the epoch is aborted;
#: healthy calls take about a millisecond, so this only catches stalled or dead peers
PEER_TIMEOUT = 10.0


@dataclass
class Cut:
    """A consistent cut of a search: the open rows and everything committed above them.

    ``batches`` maps a holder (a worker address, or "" for rows with no holder, e.g.
    read from disk) to its rows in bottom-to-top order; a worker that is still there
    gets its own rows back at the next epoch (its subtrees stay where they were)."""

    batches: dict[str, object]
    counters: np.ndarray
    best_value: int | None = None
    best_buffer: np.ndarray | None = None
    history: list = field(default_factory=list)
    elapsed: float = 0.0          # search seconds before this cut (across resumes)
    epochs: int = 0               # committed epochs
    recoveries: int = 0           # aborted epochs (rollbacks)
    nodes_redone: int = 0         # nodes of aborted epochs
    #: a search that logs a proof: the scaffold parts of every committed epoch,
    #: ``((path, records), ...)`` in commit order (:mod:`stealsearch.engine.core.proof`);
    #: None for a search that logs none
    proof_parts: tuple | None = None

    @classmethod
    def root(cls, problem: Problem) -> "Cut":
        """The cut before anything ran: the problem's root frontier, zero counters."""
        frontier = np.ascontiguousarray(problem.root_frontier(), dtype=np.int64)
        return cls(batches={"": frontier}, counters=np.zeros(problem.n_counters(), dtype=np.int64))

    def rows(self, codec):
        """Every open row, in one batch."""
        return codec.concat([b for b in self.batches.values() if len(b)])

    def n_rows(self) -> int:
        return sum(len(b) for b in self.batches.values())

    @property
    def nodes(self) -> int:
        return int(self.counters[0])

    def incumbent(self, problem: Problem) -> int:
        init = int(problem.initial_incumbent())
        return init if self.best_value is None else max(init, int(self.best_value))

    def offer(self, value, buffer, history=()) -> None:
        """Keep a better solution (from a committed or an aborted epoch)."""
        if value is not None and (self.best_value is None or value > self.best_value):
            self.best_value, self.best_buffer = int(value), np.asarray(buffer).copy()
        self.history = list(self.history) + list(history)

    def commit(self, problem: Problem, outcomes) -> "Cut":
        """The cut after a committed epoch: every worker's rows replace this cut's, its
        counters are added to the committed ones, a better solution is kept."""
        new = Cut(batches={o.address: o.rows for o in outcomes},
                  counters=reduce_counters(problem, [self.counters] + [o.counters for o in outcomes]),
                  best_value=self.best_value, best_buffer=self.best_buffer,
                  history=list(self.history), elapsed=self.elapsed, epochs=self.epochs + 1,
                  recoveries=self.recoveries, nodes_redone=self.nodes_redone,
                  proof_parts=None if self.proof_parts is None else
                  tuple(self.proof_parts) + tuple(p for o in outcomes for p in o.proof_parts))
        for o in outcomes:
            new.offer(o.best_value, o.best_buffer, o.history)
        return new

    def roll_back(self, outcomes) -> list:
        """This cut again after an aborted epoch: its rows and counters stay, the epoch's
        nodes are counted as re-done; a better (verified) solution is kept.  Returns the
        epoch's proof parts, which the caller deletes: their nodes are not in this cut's
        history, and are expanded (and recorded) again from its rows."""
        for o in outcomes:
            self.offer(o.best_value, o.best_buffer, o.history)
        self.recoveries += 1
        self.nodes_redone += sum(int(o.counters[0]) for o in outcomes)
        return [p for o in outcomes for p in o.proof_parts]


def deal(cut: Cut, workers: list[str], codec) -> list:
    """Rows for each of ``workers``: a worker keeps its own rows; rows whose holder is
    gone (or unknown) are dealt round-robin by row (seed 003 §4.1) over every worker,
    starting with those that hold nothing.  Workers left with nothing steal."""
    shares = {w: [] for w in workers}
    orphans = []
    for holder, rows in cut.batches.items():
        if not len(rows):
            continue
        (shares[holder].append(rows) if holder in shares else orphans.append(rows))
    if orphans:
        rows = codec.concat(orphans)
        order = sorted(workers, key=lambda w: sum(len(b) for b in shares[w]))
        n = len(order)
        for i, w in enumerate(order):
            part = rows[i::n]
            if len(part):
                shares[w].append(part)
    return [codec.concat(shares[w]) if shares[w] else codec.empty() for w in workers]


def conserves(outcomes) -> bool:
    """The conservation identity of one epoch's outcomes: every row released went to an
    acquire, a thief or the rows left in a shared portion, and every row stolen was
    given (a steal reply lost in flight would break it)."""
    released = sum(o.stats.rows_released for o in outcomes)
    acquired = sum(o.stats.rows_acquired for o in outcomes)
    stolen = sum(o.stats.rows_stolen for o in outcomes)
    given = sum(o.stats.rows_given for o in outcomes)
    left = sum(o.rows_left_shared for o in outcomes)
    return released == acquired + stolen + left and stolen == given


def reclaim_lost_gifts(outcomes, codec) -> int:
    """Put the rows of STEAL replies lost in flight back into their giver's outcome;
    returns how many rows.

    A reply whose thief's call failed (``lost_asks``) while its giver counted the rows
    given is a row count that :func:`conserves` cannot balance: the rows are in no
    outcome.  A giver that left gracefully remembers its recent gifts (``gifts``); each
    one whose ask its thief lost goes back into the giver's rows, counted as left in its
    shared portion and no longer as given.  Exact: a thief pushes a reply's rows only
    when its call succeeds, and records the ask as lost only when it fails, so a gift is
    reclaimed exactly when no stack holds its rows.  A lost gift the giver no longer
    remembers stays unbalanced, and the epoch is rolled back."""
    lost = {(o.rank, victim, ask) for o in outcomes for victim, ask in o.lost_asks}
    moved = 0
    for o in outcomes:
        back = [rows for thief, ask, rows in o.gifts if (thief, o.rank, ask) in lost]
        if not back:
            continue
        n = sum(len(rows) for rows in back)
        o.rows = codec.concat([rows for rows in back + [o.rows] if len(rows)])   # oldest first
        o.rows_left_shared += n
        o.stats.rows_given -= n
        o.stats.rows_left += n
        moved += n
    return moved


# -- what travels during an epoch ----------------------------------------------------------
# Every message names its search and its epoch (``search_id``, ``epoch``); a worker serves
# only the epoch it is running, so a message of an aborted epoch finds nobody and is
# answered ``GONE``.  A host (a Dask worker, or this process: engine/core/worker.py) registers
# ``handler_name(op)`` for each op below and routes it to the search object.

#: handlers served by every worker's search object (``WorkerSearch.handle_<op>``)
WORKER_OPS = ("steal", "incumbent", "stop", "ping")
#: handlers served by rank 0's coordinator (``CoordinatorEndpoint.handle_<op>``)
COORDINATOR_OPS = ("credit", "report", "request_stop", "progress")
PREFIX = "stealsearch_"
#: reply of a handler whose (search, epoch) is not (or no longer) on this worker
GONE = "gone"
#: reply of the coordinator's handlers while rank 0 has not started the epoch yet
NOT_READY = "not-ready"


def handler_name(op: str) -> str:
    """The name a host registers the handler of ``op`` under (and a peer calls)."""
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
    #: a search that logs a proof: (the folder, the part-name prefix) of this epoch's
    #: scaffold parts, one per lane (:func:`stealsearch.engine.core.proof.open_part`)
    proof: tuple | None = None
    #: the Dask backend: the token the client wrote beside that folder; a worker that
    #: reads it there writes its parts into that folder (``dask/proof_parts.py``)
    proof_token: str | None = None


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
    #: the scaffold parts this worker's lanes wrote in the epoch, ``((path, records),
    #: ...)``: the records of exactly the nodes its counters count (a proof's search)
    proof_parts: tuple = ()
    #: those parts are in the client's own parts folder already (a worker that shares
    #: the client's filesystem wrote them there): nothing to pull
    proof_in_place: bool = False
    #: the worker that holds those parts, when it is not ``address`` (a retiring worker's
    #: outcome, handed over with its parts to a peer: the Dask backend's hand-over)
    proof_host: str | None = None
    #: ``(victim rank, ask)`` of each STEAL whose call failed (its rows never arrived)
    lost_asks: tuple = ()
    #: a worker that left gracefully: ``(thief rank, ask, rows)`` of the STEAL replies it
    #: gave lately, for :func:`reclaim_lost_gifts`
    gifts: tuple = ()
