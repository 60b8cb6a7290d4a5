"""The shared portion of a worker's stealstack (seed 003, ch. 3, Fig. 3.2).

The *local* portion is the worker's :class:`stealsearch.engine.core.stack.LocalStack` (owner only,
no lock).  The *shared* portion below is a deque of row batches guarded by one
lock, touched by the owner's search thread (RELEASE, ACQUIRE) and by the worker's
event loop answering thieves (STEAL):

* ``release(rows)``  appends a batch at the top end (newest);
* ``acquire(a)``     the owner takes back up to ``a`` rows from the top end;
* ``steal(k, half)`` a thief takes up to ``k`` rows (or half of them) from the
  bottom end, i.e. the oldest rows, nearest the root: the largest subtrees.

Termination credit
------------------
The portion also holds the worker's *termination credit* (Mattern's credit
recovery, 1989): the search starts with credit 1 per worker; a victim that gives
rows splits its credit ``2^-e`` into two halves ``2^-(e+1)``, one travelling with
the rows; a worker whose local *and* shared portions are both empty returns its
credit to the coordinator (rank 0).  The coordinator declares termination exactly
when all credit is back: no worker holds a row and no steal reply is in flight.
Credit is held as an exponent ``e`` (credit = 2^-e), ``None`` when returned; the
check "both portions empty, so give the credit back" is made under the same lock a
thief takes, so a row can never be stolen from a worker that has no credit.

Lanes (several search threads on one portion)
---------------------------------------------
A worker may run several *lanes* (:mod:`stealsearch.engine.core.worker`): threads with a
local stack each, all releasing into and acquiring from this one portion (the
in-memory steal between the threads of a process: no message, no credit).  The
portion then counts its *active* lanes under its lock.  A lane is marked inactive
only by :meth:`return_credit_if_empty`, called when its local stack is empty, and
made active again only in the same locked step that hands it rows
(:meth:`acquire`, :meth:`receive_credit`); so an inactive lane holds no row.  The
credit goes back only when no lane is active and the portion is empty, i.e. when
the whole process holds no row, which is exactly the single-owner rule above.  And
while the credit is out, the process holds no row and nothing can give it one but
a remote steal reply (which carries credit): so ``credit_exp is None`` if and only
if the process is out of work, and a lane may steal from peers only then (one
lane at a time: the worker's thief lock), which is what :meth:`receive_credit`
asserts.  ``hungry`` counts the inactive lanes (a hint, read without the lock by
busy lanes, which then release rows below the threshold for them); ``rows_ready``
wakes waiting lanes at every release.

Work shared on demand
---------------------
RELEASE alone shares only what grows past ``release_threshold``: on a narrow tree (a
binary branching ``k`` deep, ``k`` below the threshold) the local portion never
passes it, nothing is ever released, and a peer sits idle for the whole search.  So a
thief's request is also a *demand*: a STEAL that finds this portion empty (while the
worker still holds its credit, i.e. still has rows on some lane) sets ``wanted``, and
each lane, after its next chunk, sees ``wanted`` (or a hungry sibling) and releases
the one row at the *bottom* of its local portion even below the threshold, provided it
holds two rows or more (it keeps the rest: YewPar's stack stealing, which takes a
victim's lowest-depth node; on a binary tree that row is about half the stack's work,
where more rows would give nearly all of it away: :data:`.worker.ON_DEMAND_ROWS`).  The
thief, which backs off for a millisecond or so between rounds, finds them at its next
try.  A RELEASE clears
``wanted``.

Exactness is untouched, because nothing new moves rows: an on-demand release is the
same locked RELEASE as any other (rows leave a lane's local stack and enter this
portion in one step; the conservation identity ``dealt + stolen = searched-out +
released - acquired + left`` counts them as before), and the thief takes them by the
same locked STEAL, which splits the credit as always.  ``wanted`` is only a hint read
without the lock: a stale read costs one early or one late release, never a row.
Termination credit: a worker with ``wanted`` set still holds its credit (STEAL only
sets it while ``credit_exp`` is not None), and it gives the credit back only when all
its lanes and this portion are empty, exactly as before.
"""
from __future__ import annotations

import threading
from collections import deque

import numpy as np  # batches are row arrays by default (see stealsearch.engine.core.stack.RowCodec)



#: the problem attribute ``steal_order``'s values (stealsearch.engine.core.problem.Problem)
STEAL_ORDERS = ("oldest", "nearest")


class SharedPortion:
    def __init__(self, codec, lanes: int = 0, steal_order: str = "oldest"):
        self.codec = codec          # joins batches (stealsearch.engine.core.stack.RowCodec or a tier's own)
        if steal_order not in STEAL_ORDERS:
            raise ValueError(f"steal_order must be one of {', '.join(STEAL_ORDERS)}, "
                             f"got {steal_order!r}")
        #: "nearest": a thief takes the oldest batch's top rows (see _take_oldest)
        self.nearest = steal_order == "nearest"
        self.lock = threading.Lock()
        #: notified at every release: lanes waiting for rows wake at once
        self.rows_ready = threading.Condition(self.lock)
        #: lanes that may hold local rows (all start active); 0 with a single owner that
        #: does not pass itself (the owner's empty local portion is the caller's word)
        self.active = lanes
        #: inactive lanes: busy lanes release rows for them below the threshold
        self.hungry = 0
        self._batches: deque[np.ndarray] = deque()
        self._rows = 0
        self.credit_exp: int | None = 0       # credit 2^0 = 1 at start
        # counters for the conservation check
        self.rows_released = 0
        self.releases = 0
        self.rows_acquired = 0
        self.acquires = 0
        self.rows_given = 0
        #: set by close(): the epoch is over on this worker, thieves get nothing
        self.closed = False
        #: a thief found this portion empty while this worker still had rows: its lanes
        #: release rows below the threshold at their next chunk (cleared by a release)
        self.wanted = False
        #: steals that found this portion empty and asked for rows (a figure)
        self.demands = 0

    def __len__(self) -> int:
        return self._rows

    # -- owner side ---------------------------------------------------------------------
    def release(self, rows: np.ndarray) -> None:
        if len(rows) == 0:
            return
        with self.lock:
            self.wanted = False
            self._batches.append(rows)
            self._rows += len(rows)
            self.rows_released += len(rows)
            self.releases += 1
            self.rows_ready.notify(len(rows))      # a waiting lane for each row

    def acquire(self, a: int, lane=None) -> np.ndarray | None:
        """Up to ``a`` of the newest rows, bottom-to-top order; None if empty.  A
        ``lane`` that was inactive becomes active in the same step, and takes only its
        share of the rows there (one part for each inactive lane, itself included): its
        idle siblings take the rest, rather than wait for it to split its stack."""
        with self.lock:
            if not self._rows:
                return None
            if lane is not None and not lane.active:
                a = min(a, -(-self._rows // max(1, self.hungry)))
            taken = self._take_newest(a)
            self.rows_acquired += len(taken)
            self.acquires += 1
            if lane is not None and not lane.active:
                lane.active = True
                self.active += 1
                self.hungry -= 1
            return taken

    def return_credit_if_empty(self, lane=None) -> int | None:
        """Called by an owner (or a ``lane``) whose local portion is empty: the lane
        becomes inactive; if the shared portion is empty and no lane is active, give
        up the credit (returns its exponent, to send to the coordinator); otherwise
        return None and keep it."""
        with self.lock:
            if lane is not None and lane.active:
                lane.active = False
                self.active -= 1
                self.hungry += 1
            if self._rows or self.credit_exp is None or self.active:
                return None
            e, self.credit_exp = self.credit_exp, None
            return e

    def receive_credit(self, e: int, lane=None) -> None:
        """A steal reply's credit; the stealing ``lane`` becomes active (its rows are
        pushed right after: no other lane can give the credit back meanwhile)."""
        with self.lock:
            # a process steals only when out of work, after giving its credit back
            # (one lane at a time), so it holds no credit, no shared row, no active lane
            assert self.credit_exp is None and not self._rows and not self.active, \
                "stole while still holding credit or rows"
            self.credit_exp = e
            if lane is not None:
                lane.active = True
                self.active += 1
                self.hungry -= 1

    def wait_for_rows(self, timeout: float) -> None:
        """Sleep until a release (or ``timeout`` seconds): a lane waiting for a sibling."""
        with self.lock:
            if not self._rows:
                self.rows_ready.wait(timeout)

    # -- thief side (runs on the worker's event loop) ----------------------------------
    def steal(self, k: int, half: bool, at_least: int = 0) -> tuple[np.ndarray | None, int | None]:
        """Take rows from the bottom for a thief; returns (rows, credit exponent): ``k``
        rows or half of them (``half``), or ``at_least`` if that is more (a thief of
        several lanes: a row for each), never more than the portion holds.  None while
        the portion is empty; if the worker still holds rows (its credit), the request
        is remembered as a demand (``wanted``: see "Work shared on demand").  How many
        rows a steal takes never bears on exactness: they leave the deque once, under
        the lock, with half the credit, whatever their number."""
        with self.lock:
            if not self._rows or self.credit_exp is None or self.closed:
                if not self._rows and self.credit_exp is not None and not self.closed:
                    self.wanted = True
                    self.demands += 1
                return None, None
            want = max((self._rows + 1) // 2 if half else k, min(at_least, self._rows))
            taken = self._take_oldest(max(1, want), nearest=self.nearest)
            self.credit_exp += 1
            self.rows_given += len(taken)
            return taken, self.credit_exp

    def drain(self) -> np.ndarray:
        """Everything left (at the end of an interrupted search)."""
        with self.lock:
            return self._take_oldest(self._rows)

    def close(self) -> np.ndarray:
        """End of the epoch on this worker: take everything left and refuse every later
        steal, in one step under the lock.  A thief's request that arrives after this
        gets no rows, so every row is either in what close() returned or already in a
        thief's hands (the thief's steal is synchronous: it holds the rows before its
        own epoch can end).  This is what makes the end of an epoch a consistent cut
        (see :mod:`stealsearch.engine.core.epochs`)."""
        with self.lock:
            self.closed = True
            return self._take_oldest(self._rows)

    # -- batch bookkeeping (lock held) -------------------------------------------------
    def _take_oldest(self, n: int, nearest: bool = False) -> np.ndarray:
        """The ``n`` oldest rows: whole batches from the bottom end of the deque; of the
        last batch touched, its bottom rows, or with ``nearest`` (a problem's
        ``steal_order = "nearest"``) its top rows: of the oldest siblings released
        together, those nearest the owner's current path, which for a value-ordered
        search (clique) are the better ones (McCreesh & Prosser 2015, one discrepancy).
        Only which rows of that batch move changes, never how many: each row still
        leaves the deque exactly once, under the lock."""
        parts, got = [], 0
        while got < n and self._batches:
            b = self._batches[0]
            need = n - got
            if len(b) <= need:
                parts.append(self._batches.popleft())
                got += len(b)
            elif nearest:
                parts.append(b[len(b) - need:])
                self._batches[0] = b[:len(b) - need]
                got += need
            else:
                parts.append(b[:need])
                self._batches[0] = b[need:]
                got += need
        self._rows -= got
        return self._concat(parts)

    def _take_newest(self, n: int) -> np.ndarray:
        parts, got = [], 0
        while got < n and self._batches:
            b = self._batches[-1]
            need = n - got
            if len(b) <= need:
                parts.append(self._batches.pop())
                got += len(b)
            else:
                parts.append(b[len(b) - need:])
                self._batches[-1] = b[:len(b) - need]
                got += need
        self._rows -= got
        parts.reverse()
        return self._concat(parts)

    def _concat(self, parts):
        return self.codec.concat(parts)
