"""One epoch of the stealstack on one worker: the search object and its handlers.

The search loop (seed 003, ch. 3): kernel chunks on the local portion, RELEASE of k
bottom rows when the local portion exceeds the threshold, ACQUIRE from the own shared
portion when empty, FINDWORK/STEAL from peers when both are empty.  The epoch ends when
its time is up (a cut), at a limit, or on a stop message, and returns an
:class:`~stealsearch.engine.core.epochs.EpochOutcome`; the search object is then dropped,
so nothing outlives the epoch.

This is the worker *core*: it imports no Dask.  What carries its messages is its *host*,
an object with ``address``, ``loop`` (``add_callback(fn)`` runs ``fn``, or the coroutine
it returns, on an event-loop thread), ``handlers`` (``handler_name(op)`` -> this worker's
handlers) and ``rpc(address)`` (whose ``stealsearch_<op>(**msg)`` coroutines reach that
peer's handlers): a ``distributed`` Worker (:mod:`stealsearch.engine.transports.dask`) or
:class:`stealsearch.engine.transports.lanes.InProcessWorker` (one worker, no peer).  Rank 0
also serves the epoch's coordinator (:mod:`stealsearch.engine.core.termination`).

One file: the lanes, RELEASE/ACQUIRE/FINDWORK, the node-limit reservations, the incumbent
and the cut share one worker's state under the shared portion's and the grant's locks,
and the exactness argument (:class:`WorkerSearch`) is about all of them at once.
"""
from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import threading
import time

from .epochs import GONE, NOT_READY, EpochOutcome, EpochSpec, handler_name
from .finished import arm
from .outcome import improve
from .problem import IMPROVED, Mode, reduce_counters
from .proof import attach_scaffold, close_part, open_part
from .result import WorkerStats
from .stack import BudgetTuner, make_stack
from .stealstack import SharedPortion
from .termination import Coordinator, CoordinatorEndpoint
from .victims import VictimOrder

logger = logging.getLogger("stealsearch")

#: seconds between a worker's progress reports to the coordinator
REPORT_INTERVAL = 0.1
#: a worker waiting for a node-limit grant asks again this often
GRANT_POLL = 0.005


#: a lane whose sibling (or a thief) waits for rows runs chunks this many times shorter
#: until it has released some: the wait is then ~chunk_seconds / 16, not a whole chunk
#: (a narrow tree's gifts are small subtrees, soon searched: a whole chunk's wait for
#: each would leave the receiver idle much of the time)
HUNGRY_SLICES = 16
#: rows an on-demand release gives: the ONE bottom row of the lane's stack (YewPar's
#: stack stealing takes the lowest-depth node).  On a narrow binary tree the bottom row
#: is about half of what the stack holds, the next a quarter, and so on: giving k rows
#: (or half of them) gives away nearly all of it, and the work goes back and forth
#: (benchmarks/bench_narrow.py measures it)
ON_DEMAND_ROWS = 1
DEMAND_POLL = 0.0005
#: seconds a lane may take to leave its loop once the epoch ends, beyond a peer call's
#: timeout (a chunk lasts ~chunk_seconds; a steal call at most peer_timeout)
LANE_JOIN_GRACE = 5.0
#: seconds a synchronous peer call may wait beyond its timeout for the host's loop
LOOP_GRACE = 5.0
#: seconds between two tries of a message to rank 0 before it has started the epoch
POST_RETRY = 0.005
#: how often a search thread waiting for a peer's reply looks whether the epoch was aborted
ABORT_POLL = 0.05


class Lane:
    """One search thread of a worker: its own stack, budget tuner and figures.
    ``active`` is maintained under the shared portion's lock (see stealsearch.engine.core.stealstack)."""

    def __init__(self, index: int, problem, policy):
        self.index = index
        self.stack = make_stack(problem)
        self.tuner = BudgetTuner(policy)
        self.active = True
        self.chunks = 0
        self.idle_seconds = 0.0
        self.busy_seconds = 0.0


class Periods:
    """The worker's waits, in seconds of this run: the real cluster's, times the
    policy's ``dilation`` (1: the constants above as they are).

    Dilation (the emulated cluster, benchmarks/emulate_cluster.py): a chunk of the kernel
    is followed by a sleep that makes it last ``dilation`` times its CPU time
    (:meth:`WorkerSearch._stretch`), and every wait below is that many times longer, as
    are the epoch's own (the peer timeout and the client's waits, scaled by
    :func:`stealsearch.engine.transports.dask.timeouts.dilated`; the epoch's length, the
    caller's ``checkpoint_every``).  Off (``dilation`` 1), a chunk costs two tests of a
    local flag more than it would without the seam, and every wait is its constant.
    Why it cannot change what a search counts: the stretch is a sleep on the lane's own
    thread between the end of a chunk and the RELEASE that follows it, two steps that
    happen in that order anyway; a longer wait only changes *when* a lane, a thief or
    the supervisor acts, never what a locked step does.  The kernel, the budget (the
    tuner times the kernel alone), RELEASE, ACQUIRE, STEAL, the credit and the cut are
    the code they are without it, and every interleaving a dilated run produces is
    one an undilated run can produce on a slower machine."""

    def __init__(self, policy):
        # (a policy not resolved for its workers is one process's, as the tuner takes it)
        policy = policy.for_workers(1)
        d = self.dilation = float(policy.dilation)
        self.report = REPORT_INTERVAL * d
        self.grant_poll = GRANT_POLL * d
        # a steal that finds the shared portion empty while the victim still has rows
        # waits up to ``policy.demand_wait`` chunks for the on-demand release (polling
        # every DEMAND_POLL seconds); 0: it is answered at once
        self.demand_wait = policy.demand_wait * (policy.chunk_seconds or 0.005) * d
        self.demand_poll = DEMAND_POLL * d
        self.lane_join_grace = LANE_JOIN_GRACE * d
        self.loop_grace = LOOP_GRACE * d
        self.retry = POST_RETRY * d
        self.backoff = policy.idle_backoff * d
        self.backoff_max = policy.idle_backoff_max * d


class WorkerSearch:
    """One epoch of one search on one worker, searched by ``spec.threads`` *lanes*.

    Lanes are Python threads, each with its own local stack, budget tuner and counters,
    running the kernel (numba, ``nogil``) in parallel.  All lanes of a worker release
    into and acquire from ONE shared portion: the in-memory steal between the threads of
    a process (no message, no credit moves).  Processes steal from each other's shared
    portions (YewPar: the threads of a locality share a workpool and localities steal).
    The task's own thread is the *supervisor* (:meth:`run`): it sends the progress
    reports and ends the epoch; it never runs the kernel.

    Exactness, lane by lane (no node lost or duplicated):

    * rows move between a lane and the portion only under the portion's lock (RELEASE,
      ACQUIRE) and to peers only by STEAL under the same lock; a row is at every moment in
      exactly one place: one lane's local stack, the portion, or a steal reply in flight
      (the thief holds it before its epoch can end: its call is synchronous); a reply
      lost in flight as its giver leaves is put back by the client
      (:meth:`_remember_gift`);
    * the cut (:meth:`_final`): the supervisor sets the stop event, waits for every lane
      to end its chunk and leave its loop (a lane does nothing after that), then closes
      the portion and takes every lane's rows: the outcome's rows are the portion's plus
      every lane's, and the counters are reduced over the lanes by the problem's rule.
      A lane that does not stop in time fails the epoch (rolled back), never half-read;
    * termination credit (:mod:`stealsearch.engine.core.stealstack`, "Lanes"): the credit
      goes back only when no lane holds a row and the portion is empty, checked under its
      lock; a process steals from peers only when out of work and one lane at a time, so
      a thief never holds two credits;
    * node limit: the coordinator's grant is per worker; lanes draw from it by
      lock-protected reservations (:meth:`_reserve`): a lane reserves at most its chunk
      budget of what is left and returns the unused part after the chunk, so the
      worker's nodes never pass its grant and grants never sum past the limit.

    Proofs (``spec.proof``): each lane runs the problem's proof kernel, which records
    every node the lane expands; the lane's own thread drains the records into the
    lane's part for this epoch after each chunk (no lock: one writer per file).  The
    outcome names the parts with its counters, and the parts share the epoch's fate
    (kept on commit, deleted on roll-back: :mod:`stealsearch.engine.core.loop`).  Why the
    records of different lanes still make one valid proof: a record is about an
    *expansion*, which happens on exactly one stack, and rows (RELEASE, ACQUIRE, STEAL)
    move unexpanded nodes, never records; so, with the argument above, every node the
    committed counters count has exactly one record, in the part of the lane that
    expanded it.  A node's proof steps need only the node's record, the final bound and
    its children's steps (:mod:`stealsearch.problems.clique.proof`); the elaboration
    merges every part and writes deeper levels first, so whichever lane expanded a
    child, its steps precede its parent's.  A lane's incumbent may lag the others'
    (it expands more), never exceed the final best: every step holds for any
    incumbent up to it.  A stuck lane fails the epoch: its part is never read.

    Idle lanes: a lane that runs dry ACQUIREs; if the portion is empty it is counted
    *hungry* and busy siblings release rows for it at their next chunk even below the
    threshold.  While any lane holds a row the process keeps its credit and does not steal
    from peers (one credit per process); once the whole process is dry, one lane steals
    for all.
    """

    def __init__(self, worker, spec: EpochSpec, rank: int, rows, problem):
        self.worker = worker
        self.spec = spec
        self.problem = problem
        self.rank = rank
        self.peers = spec.peers
        # the fields left to the run take the values for this many workers (the same
        # on every worker of the epoch: they all have its peers)
        self.policy = spec.policy.for_workers(len(spec.peers))
        self.periods = Periods(self.policy)
        n_lanes = max(1, int(getattr(spec, "threads", 1) or 1))
        self.lanes = [Lane(i, problem, self.policy) for i in range(n_lanes)]
        self.stack = self.lanes[0].stack
        # a proof: each lane drains its scaffold into a part of its own for this epoch
        # (the part's fate is the epoch's: see the class docstring)
        self.parts = []
        if spec.proof is not None:
            for lane in self.lanes:
                part = open_part(spec.proof, rank, lane.index, problem.proof_record_width)
                self.parts.append(part)
                attach_scaffold(lane.stack, part)
        for i, lane in enumerate(self.lanes):   # the dealt rows, round-robin over the lanes
            if i < len(rows):
                lane.stack.push(rows[i::n_lanes])
        if len(self.peers) == 1 and spec.proof is None:
            # every row of the epoch is on these lanes: the problem's finished subtrees
            # are known here (stealsearch.engine.core.finished); with peers, rows travel
            # between processes and nothing is armed
            arm(problem, [lane.stack for lane in self.lanes], rows, int(spec.incumbent),
                spec.search_id)
        self.shared = SharedPortion(self.stack.codec, lanes=n_lanes,
                                    steal_order=getattr(problem, "steal_order", "oldest"))
        self.victims = VictimOrder(self.policy, rank, len(self.peers))
        self.incumbent = int(spec.incumbent)
        self.stop_event = threading.Event()
        self.stop_reason: str | None = None
        # set by the client's "abort" stop: this epoch is rolled back whatever it returns
        self.aborted = threading.Event()
        self.best_value = None
        self.best_buffer = None
        self.best_lock = threading.Lock()
        self.history: list[tuple[float, int]] = []
        self.stats = WorkerStats(worker=worker.address, rows_dealt=len(rows))
        self.failure: str | None = None
        # the peers whose calls failed; a failure of anything else is not explained by
        # a peer that left gracefully (the driver's hand-over path)
        self.failed_peers: set[str] = set()
        self.failed_otherwise = False
        # STEALs from peers by their ask (a number per group of calls): those whose call
        # failed, and the rows this worker gave each thief, kept while the thief's call may
        # still fail (see :meth:`_remember_gift` and epochs.reclaim_lost_gifts)
        self.asks = 0
        self.lost_asks: list[tuple[int, int]] = []
        self.gifts: collections.deque = collections.deque()
        self.gift_lock = threading.Lock()
        # a thief's call ends within the peer timeout and the loop's grace: a gift older
        # than twice that is forgotten (see _remember_gift)
        self.gift_memory = 2 * (spec.peer_timeout + self.periods.loop_grace)
        # set by a graceful leave (the Dask host's hand-over): the outcome carries the gifts
        self.leaving = False
        # set once run() has built its outcome (a closing worker hands it over)
        self.finished = threading.Event()
        self.outcome: EpochOutcome | None = None
        self.endpoint = None
        if rank == 0:
            self.endpoint = CoordinatorEndpoint(self, Coordinator(len(self.peers), spec.node_limit))
        # one lane at a time steals from peers (and only when the process is out of work)
        self.thief = threading.Lock()
        # node-limit grant (None: unlimited): an absolute node total for this worker;
        # ``reserved`` = nodes done by all lanes + reservations outstanding <= grant
        self.grant_lock = threading.Lock()
        self.grant = None if spec.node_limit is None else self._first_grant()
        self.reserved = 0
        self.outstanding = 0
        # the sequence of our reports; at most one grant request in flight
        self.report_lock = threading.Lock()
        self.seq = 0
        self.applied_seq = 0
        self.asking = False
        self.t_start = time.time()
        # load the kernel now (numba reads its on-disk cache), before the clock starts
        self.stack.run(0, self.incumbent)

    def _first_grant(self) -> int:
        n, limit = len(self.peers), self.spec.node_limit
        return limit // n + (limit - n * (limit // n) if self.rank == 0 else 0)

    @property
    def nodes(self) -> int:
        return sum(lane.stack.nodes for lane in self.lanes)

    # -- handlers (run on the worker's event loop) -------------------------------------
    def handle_steal(self, k, half, lanes=1, thief=-1, ask=-1):
        """A peer's STEAL: ``k`` rows or half (``half``), and with ``remote_rows`` set at
        least that many per lane of the thief (``lanes``, all idle: a process steals
        only when it holds no row).  Exact whatever the number: the rows leave the
        portion in one locked step with half the credit (:meth:`SharedPortion.steal`).
        ``thief`` (its rank) and ``ask`` name the request: the rows given are remembered
        under them (:meth:`_remember_gift`)."""
        at_least = self.policy.remote_rows * max(1, int(lanes))
        gift = (int(thief), int(ask))
        rows, credit = self.shared.steal(int(k), bool(half), at_least)
        if rows is None and self.shared.wanted and self.periods.demand_wait > 0:
            # the portion is empty but this worker still has rows: its lanes split their
            # stacks for us within ~chunk_seconds / HUNGRY_SLICES; the reply waits for that
            # (a coroutine: the host's loop awaits it), so that the rows go to this thief
            # and not back to their own lane, which re-acquires them once it runs dry.
            # With ``demand_wait`` 0 the empty reply goes at once: ``wanted`` stays set,
            # so a lane still releases a row, which waits in the portion for the next
            # thief (or its own lanes): the same locked RELEASE and STEAL, only later
            return self._steal_on_demand(int(k), bool(half), at_least, gift)
        return self._steal_reply(rows, credit, gift)

    def _steal_reply(self, rows, credit, gift):
        if rows is None:
            return {"n": 0, "shared": len(self.shared)}
        self._remember_gift(gift, rows)
        return {"rows": self.shared.codec.encode(rows), "n": len(rows), "credit": credit,
                "shared": len(self.shared)}

    async def _steal_on_demand(self, k, half, at_least, gift):
        deadline = time.monotonic() + self.periods.demand_wait
        rows = credit = None
        while rows is None and self.shared.wanted and time.monotonic() < deadline \
                and not self.stop_event.is_set():
            await asyncio.sleep(self.periods.demand_poll)
            rows, credit = self.shared.steal(k, half, at_least)
        return self._steal_reply(rows, credit, gift)

    def _remember_gift(self, gift, rows) -> None:
        """Keep the rows of a STEAL reply while the thief's call may still fail.

        A reply can be lost in flight although this worker gave its rows: when a worker
        leaves gracefully, the scheduler tells the others to close their connections to
        it, calls in flight included.  Its thief then counts a failed STEAL (its
        ``lost_asks``), this worker a given one, and the rows are nowhere.  A leaving
        worker's outcome carries the gifts it still remembers, and the client puts back
        those whose ask a thief lost (:func:`.epochs.reclaim_lost_gifts`): exact, because
        a thief pushes a reply's rows only when its call succeeds, so every gift is
        either stolen or lost, never both.  A thief's call ends within the peer timeout
        and the loop's grace, so a gift older than twice that is forgotten; one lost
        and forgotten still fails the conservation check and the epoch is rolled back."""
        now = time.monotonic()
        with self.gift_lock:
            while self.gifts and now - self.gifts[0][0] > self.gift_memory:
                self.gifts.popleft()
            self.gifts.append((now, gift[0], gift[1], rows))

    def handle_incumbent(self, value):
        with self.best_lock:       # never lowers what a lane has just raised
            if value > self.incumbent:
                self.incumbent = int(value)
        return "ok"

    def handle_stop(self, reason):
        if self.stop_reason is None:
            self.stop_reason = reason
        if reason == "abort":
            self.aborted.set()
        self.stop_event.set()
        return "ok"

    def handle_ping(self):
        return "ok"

    # -- messaging from the search threads -----------------------------------------------
    def _fail(self, what: str, peer: int | None = None) -> None:
        if self.failure is None:
            self.failure = what
        if peer is None or peer == self.rank:
            self.failed_otherwise = True
        else:
            self.failed_peers.add(self.peers[peer])
        self.stop_event.set()

    def _calls(self, targets, op: str, **kwargs) -> list:
        """Synchronous requests/replies to peers' handlers, from a search thread, all at
        once: the calls run on the host's loop, this thread waits for every reply (each
        at most the peer timeout, and a little more for the loop to take it), and for
        none once the client aborted the epoch: a thread held by a stalled peer would
        otherwise hold the abort, and the next epoch, for up to a peer timeout.  Not
        waiting is exact because the epoch is discarded: a reply not waited for is a
        failure of the epoch (:meth:`_fail`: its outcome is never committed), and the
        rows a late steal reply carries are dropped with the epoch's other rows (the
        client deals its last cut again).  Returns ``[(peer, reply or the exception it
        raised)]`` in the order of ``targets``."""
        timeout = self.spec.peer_timeout
        replies = []
        for to in targets:
            reply: concurrent.futures.Future = concurrent.futures.Future()

            async def call(to=to, reply=reply):
                try:
                    rpc = self.worker.rpc(self.peers[to])
                    reply.set_result(await asyncio.wait_for(
                        getattr(rpc, handler_name(op))(search_id=self.spec.search_id,
                                                       epoch=self.spec.epoch, **kwargs),
                        timeout))
                except BaseException as exc:       # the caller sees it as its own
                    reply.set_exception(exc)

            self.worker.loop.add_callback(call)
            replies.append(reply)
        out = []
        wait_until = time.monotonic() + timeout + self.periods.loop_grace
        for to, reply in zip(targets, replies):
            while not reply.done() and not self.aborted.is_set():
                left = wait_until - time.monotonic()
                if left <= 0:
                    break
                concurrent.futures.wait([reply], timeout=min(left, ABORT_POLL))
            if reply.done():
                # (the call's own timeout is a TimeoutError too: it is the reply's, not
                # the loop's, so it is read from the future, never from this wait)
                exc = reply.exception()
                out.append((to, reply.result() if exc is None else exc))
            elif self.aborted.is_set():
                out.append((to, ConnectionAbortedError(
                    f"{op} to {self.peers[to]}: not waited for, the epoch was aborted")))
            else:
                out.append((to, TimeoutError(f"{op} to {self.peers[to]}: the host's loop "
                                             "did not run the call")))
        return out

    def _post(self, to: int, op: str, on_reply=None, retry_not_ready=False, on_done=None,
              **kwargs) -> None:
        """Fire-and-forget message to a peer (or to this worker's own handler).  A
        failure aborts the epoch: a lost message must not pass unnoticed.  ``on_done``
        runs once the message is settled, whatever happened."""
        sid, ep = self.spec.search_id, self.spec.epoch

        async def send():
            deadline = time.monotonic() + self.spec.peer_timeout
            try:
                while True:
                    if to == self.rank:
                        reply = self.worker.handlers[handler_name(op)](
                            search_id=sid, epoch=ep, **kwargs)
                        if asyncio.iscoroutine(reply):
                            reply = await reply
                    else:
                        rpc = self.worker.rpc(self.peers[to])
                        reply = await asyncio.wait_for(
                            getattr(rpc, handler_name(op))(search_id=sid, epoch=ep, **kwargs),
                            max(0.01, deadline - time.monotonic()))
                    if reply in (NOT_READY, GONE) and retry_not_ready:
                        # rank 0 has not started the epoch yet (or has ended it)
                        if self.stop_event.is_set() or time.monotonic() > deadline:
                            return
                        await asyncio.sleep(self.periods.retry)
                        continue
                    if on_reply is not None and reply not in (NOT_READY, GONE):
                        on_reply(reply)
                    return
            except Exception as exc:
                self._fail(f"{op} to {self.peers[to]} failed: {exc!r}", to)
            finally:
                if on_done is not None:
                    on_done()

        self.worker.loop.add_callback(send)

    def request_stop(self, reason: str) -> None:
        self._post(0, "request_stop", retry_not_ready=True, reason=reason)

    # -- node-limit grant, shared by the lanes -------------------------------------------
    def _reserve(self, want: int) -> int | None:
        """Up to ``want`` expansions of this worker's grant for one chunk of a lane
        (None: no limit; 0: the grant is used up)."""
        if self.grant is None:
            return None
        with self.grant_lock:
            r = max(0, min(want, self.grant - self.reserved))
            self.reserved += r
            self.outstanding += r
            return r

    def _settle(self, reserved: int | None, done: int) -> None:
        """After the chunk: the unused part of the reservation goes back."""
        if reserved is None:
            return
        with self.grant_lock:
            self.reserved -= reserved - done
            self.outstanding -= reserved

    def _ask_grant(self) -> None:
        """A lane's grant is used up: ask rank 0 (one request in flight at a time)."""
        with self.report_lock:
            if self.asking:
                return
            self.asking = True

        def done():
            self.asking = False
        self._report(force=True, on_done=done)

    def _give_back_grant(self) -> None:
        """The process is out of work: its unused grant goes back to the coordinator
        (which grants it to workers that ask).  Only with no reservation outstanding;
        ``grant`` then equals the nodes done, so it is still >= ``reserved``."""
        if self.grant is None:
            return
        with self.grant_lock:
            if self.outstanding or self.grant <= self.reserved:
                return
            self.grant = self.reserved
        self._report(force=True, idle=True)

    # -- the epoch: the supervisor and its lanes -------------------------------------------
    def run(self) -> EpochOutcome:
        start = self.t_start = time.time()
        cut_at = start + self.spec.epoch_seconds
        deadline = None if self.spec.time_left is None else start + self.spec.time_left
        threads = [threading.Thread(target=self._lane_main, args=(lane,), daemon=True,
                                    name=f"stealsearch-lane-{self.rank}.{lane.index}")
                   for lane in self.lanes]
        for t in threads:
            t.start()
        next_report = start
        while True:
            now = time.time()
            if now >= next_report:
                self._report()
                next_report = now + self.periods.report
            if deadline is not None and now >= deadline:
                self.stop_reason = self.stop_reason or "time_limit"
                self.request_stop("time_limit")
                break
            if now >= cut_at:
                self.stop_reason = self.stop_reason or "cut"
                break
            wake = min(next_report, cut_at, deadline if deadline is not None else cut_at)
            if self.stop_event.wait(max(0.0, wake - now)):
                break         # a stop message, a decision, a failure
        self.stop_event.set()     # every lane leaves its loop after its chunk
        stuck = []
        join_by = time.monotonic() + self.spec.peer_timeout + self.periods.lane_join_grace
        for t, lane in zip(threads, self.lanes):
            t.join(max(0.0, join_by - time.monotonic()))
            if t.is_alive():
                stuck.append(lane)
        if stuck:
            self._fail(f"search thread(s) {[lane.index for lane in stuck]} did not stop")
        end = time.time()
        # busy and idle seconds are lane-seconds (with T lanes they add up to T times the
        # epoch), as are chunks; steal figures are the process's (one thief at a time)
        st = self.stats
        st.chunks = sum(lane.chunks for lane in self.lanes)
        st.idle_seconds = sum(lane.idle_seconds for lane in self.lanes)
        st.busy_seconds = (end - start) * len(self.lanes) - st.idle_seconds
        return self._final(stuck)

    def _lane_main(self, lane: Lane) -> None:
        try:
            self._lane_loop(lane)
        except BaseException as exc:       # the epoch fails (rolled back), never half-read
            logger.exception("search thread %d failed", lane.index)
            self._fail(f"search thread {lane.index} failed: {exc!r}")

    def _lane_loop(self, lane: Lane) -> None:
        pol, shared, stack, tuner = self.policy, self.shared, lane.stack, lane.tuner
        periods = self.periods
        dilated = periods.dilation != 1.0
        stop = self.stop_event
        backoff = periods.backoff
        idle_since = None
        try:
            while not stop.is_set():
                if len(stack):
                    if idle_since is not None:
                        lane.idle_seconds += time.time() - idle_since
                        idle_since = None
                    want = tuner.budget
                    if shared.hungry > 0 or shared.wanted:
                        # someone waits for rows (this stack splits once it holds 2): a short chunk, so
                        # that the release below comes within ~1/HUNGRY_SLICES of a chunk
                        want = max(1, want // HUNGRY_SLICES)
                    cap = self._reserve(want)
                    if cap == 0:
                        # wait for a node-limit grant: one request in flight per
                        # worker, and the supervisor keeps making the epoch's cut and
                        # time checks meanwhile, so a grant-starved worker still ends
                        # its epoch at the cut like every other
                        self._ask_grant()
                        stop.wait(periods.grant_poll)
                        continue
                    before = stack.nodes
                    if dilated:
                        cpu0, wall0 = time.thread_time(), time.perf_counter()
                    try:
                        status, value = tuner.run(stack, self.incumbent,
                                                  cap=want if cap is None else cap)
                    finally:
                        self._settle(cap, stack.nodes - before)
                    if dilated:
                        self._stretch(cpu0, wall0)
                    lane.chunks += 1
                    if status == IMPROVED:
                        self._improved(value, lane)
                        if stop.is_set():
                            break
                    # RELEASE: the oldest rows beyond the threshold, k at a time
                    while len(stack) > pol.release_threshold:
                        shared.release(stack.take_bottom(pol.k))
                    # work on demand (stealsearch.engine.core.stealstack, "Work shared on
                    # demand"): a sibling lane is idle, or a peer's steal found the portion
                    # empty, and it still is; or the portion holds less than the policy's
                    # reserve for thieves: split this stack at its bottom (it keeps >= 1
                    # row), whatever the threshold
                    keep = max(pol.reserve, 1 if shared.hungry > 0 or shared.wanted else 0)
                    if len(shared) < keep and len(stack) > 1:
                        shared.release(stack.take_bottom(ON_DEMAND_ROWS))
                    continue
                rows = shared.acquire(pol.acquire, lane)       # ACQUIRE
                if rows is not None:
                    stack.push(rows)
                    backoff = periods.backoff
                    continue
                if idle_since is None:
                    idle_since = time.time()
                e = shared.return_credit_if_empty(lane)
                if e is not None:           # the whole process is out of work
                    self._post(0, "credit", retry_not_ready=True, exponent=e)
                    self._give_back_grant()
                if pol.stealing and shared.credit_exp is None \
                        and self.thief.acquire(blocking=False):
                    try:
                        found = shared.credit_exp is None and self._findwork(lane)
                    finally:
                        self.thief.release()
                    if found:
                        backoff = periods.backoff
                        continue
                    stop.wait(backoff)      # a round of peers found nothing: back off
                    backoff = min(backoff * 2, periods.backoff_max)
                else:
                    shared.wait_for_rows(periods.backoff_max)   # a sibling releases
        finally:
            if idle_since is not None:
                lane.idle_seconds += time.time() - idle_since

    def _stretch(self, cpu0: float, wall0: float) -> None:
        """Dilation (:class:`Periods`): make the chunk just run last ``dilation`` times
        the CPU time its thread spent in it (CPU time, not wall time: a lane that waited
        for a core on a crowded machine is not charged for the wait).  The sleep ends
        early on a stop, as a chunk's end would come at once after it."""
        wait = self.periods.dilation * (time.thread_time() - cpu0) - (time.perf_counter() - wall0)
        if wait > 0:
            self.stop_event.wait(wait)

    def _findwork(self, lane: Lane) -> bool:
        """Poll victims in policy order, ``probes`` at a time (concurrently); STEAL from
        every one of them with shared rows.

        Several replies may bring rows.  Each is a STEAL made under its victim's lock
        (the rows left the victim with half its credit), and this thread keeps them all:
        it waits for every reply of the group before it goes on, so none is in flight
        when its epoch can end (the cut argument of stealsearch.engine.core.epochs).  The
        first reply's credit becomes this worker's; every further one goes straight back
        to the coordinator, which is Mattern's rule for a worker that holds credit
        already: the credit out stays the credit of the rows out, and this worker holds
        some for as long as it holds rows, so the search cannot be declared exhausted
        before they are searched."""
        st, pol = self.stats, self.policy
        order = self.victims.round()
        found = False
        for i in range(0, len(order), pol.probes):
            if self.stop_event.is_set():
                return found
            group = order[i:i + pol.probes]
            st.steals_tried += len(group)
            failed = None
            self.asks += 1
            for victim, reply in self._calls(group, "steal", k=pol.k, half=pol.steal_half,
                                             lanes=len(self.lanes), thief=self.rank,
                                             ask=self.asks):
                if isinstance(reply, BaseException):
                    # its rows, if the victim gave any, never reached this stack
                    self.lost_asks.append((victim, self.asks))
                    failed = failed or (victim, reply)
                    continue
                if not isinstance(reply, dict):   # the peer has not started this epoch, or ended it
                    continue
                self.victims.known_sizes[victim] = reply.get("shared", 0)
                if reply.get("n"):
                    rows = self.shared.codec.decode(reply["rows"])
                    if found:
                        self._post(0, "credit", retry_not_ready=True, exponent=reply["credit"])
                    else:
                        self.shared.receive_credit(reply["credit"], lane)
                    lane.stack.push(rows)
                    found = True
                    st.steals_succeeded += 1
                    st.rows_stolen += len(rows)
            if failed is not None:
                victim, exc = failed
                self._fail(f"steal from {self.peers[victim]} failed: {exc!r}", victim)
                return found
            if found:
                self._share_with_siblings(lane)
                return True
        return False

    def _share_with_siblings(self, lane: Lane) -> None:
        """After a steal from a peer: the idle siblings' shares of the rows go to the shared
        portion (its bottom rows, the largest subtrees), where each acquires its own
        (:meth:`~stealsearch.engine.core.stealstack.SharedPortion.acquire`), instead of
        waiting for this lane to split its stack a row a chunk.  A RELEASE like any
        other: the rows move under the portion's lock."""
        idle, stack = self.shared.hungry, lane.stack
        if idle > 0 and len(stack) > 1:
            keep = max(1, len(stack) // (idle + 1))
            self.shared.release(stack.take_bottom(len(stack) - keep))

    def _improved(self, value: int, lane: Lane) -> None:
        with self.best_lock:       # lanes improve concurrently: one best, one history
            better = self.best_value is None or value > self.best_value
            self.incumbent = max(self.incumbent, value)
            self.best_value, self.best_buffer, self.history = improve(
                self.best_value, self.best_buffer, self.history, value, lane.stack.solution,
                self.spec.t_offset + time.time() - self.t_start)
        if not better:
            return
        if self.problem.mode is Mode.DECIDE:
            self.stop_reason = self.stop_reason or "found"
            self.stop_event.set()
            self.request_stop("found")
            return
        for r in range(len(self.peers)):
            if r != self.rank:
                self._post(r, "incumbent", value=int(value))

    def _report(self, force: bool = False, idle: bool = False, on_done=None) -> None:
        with self.report_lock:
            self.seq += 1
            seq = self.seq
            if idle:
                self.applied_seq = seq

        def on_reply(reply):
            if not isinstance(reply, dict):
                return
            self.victims.known_sizes = list(reply["shared"])
            if reply.get("grant") is not None:
                with self.grant_lock:
                    # a late reply must not hand back a grant given back since
                    if seq > self.applied_seq:
                        self.applied_seq = seq
                        self.grant = int(reply["grant"])

        local = sum(len(lane.stack) for lane in self.lanes)
        shared = len(self.shared)
        self._post(0, "report", on_reply=on_reply, retry_not_ready=force, on_done=on_done,
                   rank=self.rank, nodes=self.reserved if idle else self.nodes, shared=shared,
                   steals=self.stats.steals_succeeded, best=self.best_value, seq=seq, idle=idle,
                   local=local, looking=local == 0 and shared == 0)

    def _final(self, stuck=()) -> EpochOutcome:
        st, sh = self.stats, self.shared
        left_shared = sh.close()        # from now on thieves get nothing: a consistent cut
        lanes = [lane for lane in self.lanes if lane not in stuck]
        st.nodes = self.nodes
        st.releases, st.rows_released = sh.releases, sh.rows_released
        st.acquires, st.rows_acquired = sh.acquires, sh.rows_acquired
        st.rows_given = sh.rows_given
        codec = sh.codec
        parts = [left_shared] + [lane.stack.take_all() for lane in lanes]
        left = codec.concat([p for p in parts if len(p)])
        st.rows_left = len(left)
        counters = reduce_counters(self.problem, [lane.stack.counters for lane in self.lanes])
        # a lane that left its loop drained its last chunk; a stuck lane's part (still
        # open: its thread may write) is named only to be deleted with the failed epoch
        proof_parts = tuple(
            p for lane, part in zip(self.lanes, self.parts)
            for p in (((str(part.path), part.records),) if lane in stuck else close_part(part)))
        return EpochOutcome(
            rank=self.rank, address=self.worker.address, rows=left,
            counters=counters, best_value=self.best_value,
            best_buffer=self.best_buffer, history=self.history, stats=st,
            rows_left_shared=len(left_shared), stop_reason=self.stop_reason,
            failure=self.failure,
            coordinator=None if self.endpoint is None else self.endpoint.coordinator.snapshot(),
            failed_peers=() if self.failed_otherwise else tuple(sorted(self.failed_peers)),
            proof_parts=proof_parts, lost_asks=tuple(self.lost_asks),
            gifts=self._gifts_held() if self.leaving else ())

    def _gifts_held(self) -> tuple:
        with self.gift_lock:
            return tuple((thief, ask, rows) for _, thief, ask, rows in self.gifts)
