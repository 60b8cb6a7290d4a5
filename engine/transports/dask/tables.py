"""The stealstack's worker extension: the searches' state on one Dask worker, the comm
handlers that fill it, and the waits on it.

A worker holds one :class:`StealstackExtension` as ``worker.extensions[EXTENSION_NAME]``,
attached by the plugin (:mod:`.plugin`) the first time it is set up there.  The state is
the extension's own (workers of one process each have theirs), and it lives as long as
its worker: re-registering the plugin tears the old one down (the extension closes) and
sets the new one up (the same extension opens again), so it never drops a running
search.  The extension registers its handlers and its reaper on the worker when it
opens and removes them when it closes, as ``distributed``'s ``WorkStealing`` does on the
scheduler.

Router: one comm handler per message name, dispatching to the search object of the
(search, epoch) the message names.

Set-up (``stealsearch_load``): the client pickles the problem once per search and
sends the same bytes to each worker once, with a plain comm call (no future, no task:
a future tied to a dying worker was what made earlier attempts flaky).  The handler
unpickles it and runs the kernel once (numba loads its cache: ~1-2 s on a fresh
process, nothing on a warm one), in a thread so the worker's event loop keeps serving,
and replies only then: the client starts its clock when every worker of the first
epoch has replied.

Problems: a search's problem stays here from its load until the client's teardown
unloads it, or, if the client went away, until no epoch used it for the ``keep_idle``
seconds the client asked for (the reaper, :meth:`StealstackExtension.reap`): an
external cluster never keeps a dead client's problem.  A worker that lacks it when an
epoch arrives answers ``problem_missing`` and is loaded again.

Shares (``stealsearch_share``): each epoch's rows for this worker, kept under (search,
epoch) until that epoch's task takes them (:meth:`StealstackExtension.take_share`).  Why
no share is searched twice or searched for a discarded epoch:

* A share is keyed by its epoch, and epoch numbers are never reused within a search
  (a rolled-back epoch is dealt again under a new number), so only the one task of
  that (search, epoch) on this worker can take it; taking pops it under the
  extension's condition's lock, so it is taken at most once.
* A stop that discards the epoch (any reason but ``cut``) drops the share, and a
  share that arrives after such a stop (or after the search's teardown, or once the
  extension closed) is dropped on arrival and answered ``dropped``; the task of a
  stopped epoch returns without searching.  (A stop that cannot reach a stalled
  worker cannot stop it: its task may search its share until its own epoch clock
  ends, but the client never commits a discarded epoch's outcome, so those nodes are
  in no cut.)  The reaper drops a share no task took within the keep time the client
  asked for (a task cancelled before it started); a task that then finds no share
  fails its epoch, which rolls back.
* A share delivered to a worker that dies dies with it: the client still holds the
  cut it was dealt from, so the epoch rolls back and the rows are dealt again
  (:mod:`stealsearch.engine.core.epochs`).  A share whose delivery failed aborts the
  epoch the same way.
* A stop ``cut`` (a peer left gracefully and the epoch is committed) keeps the
  share: the task waits for it and returns its rows as its outcome.

Waits are event-driven: a task waiting for its problem or its share sleeps on the
extension's condition (:attr:`StealstackExtension.changed`), which every load, share,
stop, teardown and close notifies.

Graceful leave: when a worker closes (``retire_workers``, ``cluster.scale`` down, a
SIGTERM), the plugin's ``teardown`` runs while the worker can still talk:
:meth:`StealstackExtension.hand_over` ends its running epochs as a cut (the same code
path as the epoch's own clock) and hands each outcome over to the epoch's other peers
(``stealsearch_handover``), from whom the client fetches it (``stealsearch_handovers``).
The task's own result cannot be used: the scheduler forgets a retiring worker before
it closes.  The outcome carries the rows the worker gave thieves lately: a reply lost in
flight (the others close their connections to a leaving worker) is put back from them
(:func:`stealsearch.engine.core.epochs.reclaim_lost_gifts`).

Proofs: a search that logs one writes its parts into a folder of its own on each
worker (:class:`.proof_parts.WorkerParts`), read by the client in chunks
(``stealsearch_proof_read``) and deleted once pulled (``stealsearch_proof_drop``); the
search's teardown, the reaper and the close remove the folder.  A worker that shares
the client's filesystem writes them into the client's folder instead, and keeps
nothing.  A peer that takes a retiring worker's hand-over pulls the outcome's parts
from it first, unless they are in the client's folder already
(:meth:`StealstackExtension.handle_handover`).

The probes at the end (:func:`running_searches`, :func:`loaded_problems`, ...) are
``client.run`` functions that read a worker's extension: tests and benchmarks check
with them that nothing is left behind after a search.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field

from ...core.epochs import COORDINATOR_OPS, GONE, WORKER_OPS, handler_name
from .proof_parts import WorkerParts, pull_part, read_handler
from .wire import SETUP_OPS

logger = logging.getLogger("stealsearch")

#: the key of the extension in ``worker.extensions``
EXTENSION_NAME = "stealsearch"
#: the key of its reaper in ``worker.periodic_callbacks``
REAPER_NAME = "stealsearch-reaper"
#: seconds between two sweeps of the reaper (idle problems, stale hand-overs)
REAP_INTERVAL = 1.0
#: seconds a closing worker waits for its running epochs to end before it hands over
HANDOVER_WAIT = 5.0
#: seconds a hand-over is kept for the client to fetch
HANDOVER_KEEP = 120.0
#: seconds one chunk of a retiring peer's proof part may take to arrive
HANDOVER_PULL_TIMEOUT = 10.0
#: searches remembered as ended (a load that completes after the unload is dropped)
ENDED_KEEP = 256
#: stops remembered (the oldest is forgotten first)
STOPPED_KEEP = 1000


@dataclass
class LoadedProblem:
    """A search's problem on one worker, and when an epoch last used it."""

    problem: object
    keep_idle: float
    last_used: float = field(default_factory=time.monotonic)

    def touch(self) -> None:
        self.last_used = time.monotonic()


@dataclass
class Share:
    """The rows dealt to this worker for one epoch, as the codec encoded them."""

    payload: object
    n_rows: int
    keep: float
    arrived: float = field(default_factory=time.monotonic)


def discards(reason) -> bool:
    """Does a stop for this reason discard the epoch (anything but a cut)?"""
    return reason is not None and reason != "cut"


def _unpickle_and_warm(blob) -> tuple[object, float]:
    """Runs in a thread: the problem from its bytes, and its kernel run once (numba
    reads its on-disk cache the first time a process runs a kernel class)."""
    from distributed.protocol.pickle import loads

    from ...core.stack import make_stack

    t0 = time.perf_counter()
    try:
        problem = loads(blob)
        make_stack(problem).run(0, int(problem.initial_incumbent()))
    except RuntimeError as exc:
        # a worker just (re)started imports modules on its loop while this thread
        # unpickles (the problem's own modules) and compiles: once a load failed with
        # "dictionary changed size during iteration" there; a problem that cannot load
        # fails the second time too, and that error goes to the client
        if "changed size during iteration" not in str(exc):
            raise
        logger.info("loading a problem met a concurrent import (%s); once more", exc)
        problem = loads(blob)
        make_stack(problem).run(0, int(problem.initial_incumbent()))
    return problem, time.perf_counter() - t0


class StealstackExtension:
    """The stealstack's state on one Dask worker, and its handlers.

    Parameters
    ----------
    worker : distributed.Worker
        The worker to attach to: the extension puts itself in ``worker.extensions``
        and opens (its handlers and its reaper registered on the worker).

    Notes
    -----
    Keys are a search's id, or (search id, epoch).  The event loop (handlers, reaper)
    and the epoch tasks' threads share the state: what a waiting task reads is
    changed under :attr:`changed`'s lock, which is notified after every such change.
    """

    worker: object
    #: (search id, epoch) -> the epoch's search object while its task runs here
    searches: dict[tuple[str, int], object]
    #: search id -> the search's problem
    problems: dict[str, LoadedProblem]
    #: search id -> the load under way (concurrent loads of one search share it)
    loading: dict[str, asyncio.Future]
    #: problems unpickled here (a test checks: once per search per worker)
    loads: int
    #: search id -> when its client ended it here (its teardown arrived)
    ended: dict[str, float]
    #: the plugin was torn down (the worker closes): epoch tasks still waiting here for
    #: a problem or a share give up at once, and nothing new is kept
    closed: bool
    #: (search id, epoch) -> {rank: EpochOutcome} handed over by leaving peers
    handovers: dict[tuple[str, int], dict]
    #: (search id, epoch) -> when its last hand-over arrived
    handover_times: dict[tuple[str, int], float]
    #: (search id, epoch) -> reason: stops that arrived before the epoch's task started
    #: here (it then returns at once); bounded in size
    stopped: dict[tuple[str, int], str]
    #: (search id, epoch) -> the share of that epoch, until its task takes it
    shares: dict[tuple[str, int], Share]
    #: notified (under its lock) on every change a waiting epoch task may be waiting
    #: for: a problem loaded, a share arrived, a stop, a search ended, a close
    changed: threading.Condition
    #: the proof parts of the searches that log one (a folder per search)
    proof: WorkerParts

    def __init__(self, worker):
        self.worker = worker
        self.searches = {}
        self.problems = {}
        self.loading = {}
        self.loads = 0
        self.ended = {}
        self.closed = True
        self.handovers = {}
        self.handover_times = {}
        self.stopped = {}
        self.shares = {}
        self.changed = threading.Condition()
        self.proof = WorkerParts(getattr(worker, "local_directory", None))
        self._reaper = None
        worker.extensions[EXTENSION_NAME] = self
        self.open()

    def __repr__(self) -> str:
        return (f"<StealstackExtension {self.worker.address_safe}: {len(self.searches)} "
                f"running, {len(self.problems)} problems, closed={self.closed}>")

    # -- life cycle --------------------------------------------------------------------------
    def open(self) -> None:
        """Register the handlers and the reaper on the worker (again, after a close:
        the plugin was registered anew); what the extension holds is kept."""
        from tornado.ioloop import PeriodicCallback

        with self.changed:
            self.closed = False
        handlers = self.worker.handlers
        for op in WORKER_OPS:
            handlers[handler_name(op)] = self._worker_handler(op)
        for op in COORDINATOR_OPS:
            handlers[handler_name(op)] = self._coordinator_handler(op)
        for op, fn in self._setup_handlers().items():
            assert op in SETUP_OPS
            handlers[handler_name(op)] = fn
        if self._reaper is None:
            self._reaper = PeriodicCallback(self.reap, REAP_INTERVAL * 1000)
            self.worker.periodic_callbacks[REAPER_NAME] = self._reaper
            self._reaper.start()

    def close(self) -> None:
        """Remove the handlers and the reaper; epoch tasks still waiting here for a
        problem or a share give up at once; the problems and shares go.  Idempotent
        (the plugin's teardown closes it, then the closing worker once more)."""
        for op in WORKER_OPS + COORDINATOR_OPS + SETUP_OPS:
            self.worker.handlers.pop(handler_name(op), None)
        if self._reaper is not None:
            self._reaper.stop()
            if self.worker.periodic_callbacks.get(REAPER_NAME) is self._reaper:
                del self.worker.periodic_callbacks[REAPER_NAME]
            self._reaper = None
        with self.changed:
            self.closed = True
            self.problems.clear()
            self.shares.clear()
            self.changed.notify_all()
            self.proof.remove_all()

    # -- the router ----------------------------------------------------------------------------
    def lookup(self, search_id, epoch):
        """The search object of ``(search_id, epoch)`` running here, or None."""
        return self.searches.get((search_id, int(epoch)))

    def _worker_handler(self, op):
        def handler(search_id, epoch, **msg):
            search = self.lookup(search_id, epoch)
            if search is None and op == "stop" and search_id:
                self.record_stop((search_id, int(epoch)), msg.get("reason", "stop"))
            return GONE if search is None else getattr(search, f"handle_{op}")(**msg)
        handler.__name__ = handler_name(op)
        return handler

    def _coordinator_handler(self, op):
        def handler(search_id, epoch, **msg):
            search = self.lookup(search_id, epoch)
            if search is None or search.endpoint is None:
                return GONE
            return getattr(search.endpoint, f"handle_{op}")(**msg)
        handler.__name__ = handler_name(op)
        return handler

    # -- the set-up path ---------------------------------------------------------------------
    def _setup_handlers(self) -> dict:
        return {"load": self.handle_load, "unload": self.handle_unload,
                "share": self.handle_share, "handover": self.handle_handover,
                "handovers": self.handle_handovers, "proof_read": self.handle_proof_read,
                "proof_drop": self.handle_proof_drop}

    async def handle_load(self, search_id, blob, keep_idle):
        """Unpickle and warm a search's problem (once: a load under way is shared);
        reply once it is ready, or with the error that kept it from loading."""
        if search_id in self.problems:
            self.problems[search_id].touch()
            return {"status": "ok", "loaded": False, "seconds": 0.0}
        task = self.loading.get(search_id)
        if task is None:
            task = self.loading[search_id] = asyncio.ensure_future(
                asyncio.get_running_loop().run_in_executor(None, _unpickle_and_warm, blob))
        try:
            problem, seconds = await asyncio.shield(task)
        except Exception as exc:       # a problem that cannot load here: the client fails
            return {"status": "error", "message": f"{exc.__class__.__name__}: {exc}"}
        finally:
            if task.done():
                self.loading.pop(search_id, None)
        self.add_problem(search_id, problem, float(keep_idle))
        return {"status": "ok", "loaded": True, "seconds": seconds}

    def handle_share(self, search_id, epoch, payload, n_rows, keep):
        """Keep an epoch's share for its task; ``dropped`` if its epoch is discarded."""
        kept = self.add_share((search_id, int(epoch)), Share(payload, int(n_rows), float(keep)))
        return {"status": "ok" if kept else "dropped"}

    def handle_unload(self, search_id, reason="teardown"):
        """The client's teardown of a search (see :meth:`end_search`)."""
        self.end_search(search_id, reason)
        return "ok"

    async def handle_handover(self, search_id, epoch, rank, outcome):
        """Keep the outcome a leaving peer of epoch ``(search_id, epoch)`` handed here;
        a proof's parts are pulled from it first (it waits for this reply before it
        closes), into this worker's folder, where the client pulls them from (parts in
        the client's folder already stay there).  A pull
        that fails leaves the outcome naming the leaving worker's parts: the client's
        pull of them fails and the epoch rolls back."""
        key = (search_id, int(epoch))
        if outcome.proof_parts and outcome.proof_host is None and not outcome.proof_in_place:
            outcome = await self._take_parts(search_id, outcome)
        self.handovers.setdefault(key, {})[int(rank)] = outcome
        self.handover_times[key] = time.monotonic()
        return "ok"

    async def _take_parts(self, search_id, outcome):
        """A retiring peer's outcome, its parts pulled into this worker's folder."""
        import dataclasses
        import os

        folder = self.proof_folder(search_id)
        if folder is None:
            return outcome
        entry = self.problems.get(search_id)
        width = getattr(entry.problem, "proof_record_width", None) if entry else None
        names = [(os.path.basename(str(path)), int(records))
                 for path, records in outcome.proof_parts]
        try:
            for name, records in names:
                await pull_part(self.worker, outcome.address, search_id, name, folder / name,
                                None if width is None else records * int(width) * 8,
                                HANDOVER_PULL_TIMEOUT)
        except Exception as exc:      # the client's own pull then fails: a roll-back
            logger.warning("search %s: the proof parts of a hand-over did not arrive (%r)",
                           search_id, exc)
            return outcome
        return dataclasses.replace(
            outcome, proof_parts=tuple((str(folder / n), k) for n, k in names),
            proof_host=self.worker.address)

    async def handle_proof_read(self, search_id, part, offset, size):
        """Up to ``size`` bytes of one of the search's proof parts here, from ``offset``."""
        return await read_handler(self.proof, search_id, part, offset, size)

    def handle_proof_drop(self, search_id, parts):
        """The client holds these parts now: delete them here."""
        return {"status": "ok", "dropped": self.proof.drop(search_id, parts)}

    def proof_folder(self, search_id: str):
        """The folder the search's epoch tasks write their parts into here, or None
        once the search ended here (its task then fails the epoch)."""
        with self.changed:
            if self.is_ended(search_id):
                return None
            return self.proof.folder(search_id)

    def proof_in_place(self, search_id: str, folder, token) -> bool | None:
        """Does the search's epoch task here write its parts straight into the client's
        ``folder`` (:meth:`.proof_parts.WorkerParts.in_place`)?  None once the search
        ended here (its task then fails the epoch)."""
        with self.changed:
            if self.is_ended(search_id):
                return None
        return self.proof.in_place(search_id, folder, token)

    def handle_handovers(self, search_id, epoch):
        """The outcomes leaving peers handed here for the client to fetch."""
        from distributed.protocol import to_serialize

        return {"outcomes": to_serialize(self.handovers.get((search_id, int(epoch)), {}))}

    # -- the state -----------------------------------------------------------------------------
    def is_ended(self, search_id: str) -> bool:
        """Has the client ended ``search_id`` on this worker (its teardown arrived), or
        is this worker closing (the extension closed)?"""
        return search_id in self.ended or self.closed

    def problem_of(self, search_id: str):
        """The problem of ``search_id`` on this worker (touched), or None if not loaded."""
        entry = self.problems.get(search_id)
        if entry is None:
            return None
        entry.touch()
        return entry.problem

    def add_problem(self, search_id: str, problem, keep_idle: float) -> None:
        """A search's problem, loaded on this worker (not if the search ended
        meanwhile, or the extension closed)."""
        with self.changed:
            if search_id not in self.problems and not self.is_ended(search_id):
                self.problems[search_id] = LoadedProblem(problem, keep_idle)
                self.loads += 1
            self.changed.notify_all()

    def add_share(self, key, share: Share) -> bool:
        """Keep an epoch's share until its task takes it; False (dropped) if the search
        ended, the epoch was discarded already, or the extension closed."""
        with self.changed:
            if self.is_ended(key[0]) or discards(self.stopped.get(key)):
                return False
            self.shares[key] = share
            self.changed.notify_all()
        return True

    def take_share(self, key) -> Share | None:
        """Pop the share of ``key`` (at most once: the caller is that epoch's task)."""
        with self.changed:
            return self.shares.pop(key, None)

    def record_stop(self, key, reason: str) -> None:
        """A stop for an epoch whose task has not started here: remember it; one that
        discards the epoch drops its share."""
        with self.changed:
            self.stopped[key] = reason
            while len(self.stopped) > STOPPED_KEEP:
                self.stopped.pop(next(iter(self.stopped)))
            if reason != "cut":
                self.shares.pop(key, None)
            self.changed.notify_all()

    def stop_of(self, key):
        """The reason of a stop recorded for ``key`` before its task started, or None."""
        return self.stopped.get(key)

    def forget_stop(self, key):
        """Pop the stop recorded for ``key`` (its task returns or has started)."""
        return self.stopped.pop(key, None)

    def started(self, key, search):
        """The task of epoch ``key`` runs ``search`` here from now on (messages reach
        it); returns the stop that arrived before, if any (the task then stops it)."""
        self.searches[key] = search
        # popped after the search is visible: a stop arriving now reaches one or the other
        return self.stopped.pop(key, None)

    def finished(self, key) -> None:
        """The task of epoch ``key`` returned: its search is no longer here, and its
        problem was used until now."""
        self.searches.pop(key, None)
        self.problem_of(key[0])

    def end_search(self, search_id: str, reason: str = "teardown") -> None:
        """Stop the search's running epochs here and forget its problem, its shares and
        its hand-overs (a running epoch keeps its own reference to the problem until it
        returns)."""
        for key, search in list(self.searches.items()):
            if key[0] == search_id:
                search.handle_stop(reason)
        with self.changed:
            self.problems.pop(search_id, None)
            self.ended[search_id] = time.monotonic()
            while len(self.ended) > ENDED_KEEP:
                self.ended.pop(next(iter(self.ended)))
            for key in [k for k in self.shares if k[0] == search_id]:
                self.shares.pop(key, None)
            self.changed.notify_all()
        for key in [k for k in self.handovers if k[0] == search_id]:
            self.handovers.pop(key, None)
            self.handover_times.pop(key, None)
        self.proof.remove(search_id)

    def reap(self) -> None:
        """Drop problems no epoch used for their ``keep_idle`` seconds (the client went
        away without its teardown), shares no task took within their keep time, and
        hand-overs nobody fetched."""
        now = time.monotonic()
        with self.changed:
            for key, share in list(self.shares.items()):
                if now - share.arrived > share.keep:
                    logger.info("dropping the share of search %s epoch %d: not taken in %.0f s",
                                key[0], key[1], now - share.arrived)
                    self.shares.pop(key, None)
        running = {sid for sid, _ in self.searches}
        for sid, entry in list(self.problems.items()):
            if sid not in running and now - entry.last_used > entry.keep_idle:
                logger.info("dropping the problem of search %s: idle for %.0f s", sid,
                            now - entry.last_used)
                self.problems.pop(sid, None)
                self.proof.remove(sid)
        for key, t in list(self.handover_times.items()):
            if now - t > HANDOVER_KEEP:
                self.handovers.pop(key, None)
                self.handover_times.pop(key, None)

    # -- the waits of an epoch's task (in its thread) ------------------------------------------
    def wait_for(self, ready, timeout: float) -> bool:
        """Block (a task's thread) until ``ready()`` is true or ``timeout`` s passed;
        ``ready`` is evaluated under :attr:`changed`'s lock, after every notification."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not ready():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
            return True

    def wait_for_problem(self, key, timeout: float):
        """The problem of epoch ``key``'s search (touched); the first epoch's task waits
        for the load that the client sent with it (at most ``timeout`` s, less if
        stopped).  None: not loaded (never, or dropped: the client loads it again) or
        stopped.

        A stop that ends the epoch as a cut (a peer left gracefully) keeps it waiting:
        the epoch is committed, so this worker must return its rows as a valid outcome,
        which needs the problem (its counters); any other stop discards the epoch."""
        search_id = key[0]
        found = []

        def ready():
            if search_id in self.problems:
                found.append(True)
                return True
            return discards(self.stopped.get(key)) or self.is_ended(search_id)

        self.wait_for(ready, timeout)
        return self.problem_of(search_id) if found else None

    def wait_for_share(self, key, timeout: float) -> tuple[Share | None, bool]:
        """Epoch ``key``'s share, taken (no one else gets it), once it arrived (at most
        ``timeout`` s), and whether the epoch was stopped: (share, False); (None, True):
        discarded meanwhile (then the share, if it comes, is dropped on arrival); (None,
        False): not arrived in time.  A stop ``cut`` keeps waiting, as for the problem."""
        arrived = self.wait_for(
            lambda: key in self.shares or discards(self.stopped.get(key))
            or self.is_ended(key[0]), timeout)
        share = self.take_share(key)
        if share is not None and not discards(self.stopped.get(key)) \
                and not self.is_ended(key[0]):
            return share, False
        return None, share is not None or arrived

    # -- a graceful leave ----------------------------------------------------------------------
    async def hand_over(self) -> None:
        """End this worker's running epochs as a cut and give their outcomes to peers."""
        mine = list(self.searches.values())
        if not mine:
            return
        for search in mine:
            search.leaving = True       # its outcome carries its recent STEAL replies
            search.handle_stop("cut")
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + HANDOVER_WAIT
        for search in mine:
            left = max(0.0, deadline - time.monotonic())
            # the search thread needs this loop for its calls: wait for it off the loop
            await loop.run_in_executor(None, search.finished.wait, left)

        async def give(search, peer):
            from distributed.protocol import to_serialize

            spec = search.spec
            await asyncio.wait_for(self.worker.rpc(peer).stealsearch_handover(
                search_id=spec.search_id, epoch=spec.epoch, rank=search.rank,
                outcome=to_serialize(search.outcome)), spec.peer_timeout)

        for search in mine:
            if search.outcome is None:
                logger.warning("search %s: epoch %d did not end in time to hand over",
                               search.spec.search_id, search.spec.epoch)
                continue
            others = [a for r, a in enumerate(search.peers) if r != search.rank]
            replies = await asyncio.gather(*(give(search, a) for a in others),
                                           return_exceptions=True)
            if all(isinstance(r, Exception) for r in replies):
                logger.warning("search %s: nobody took the hand-over of epoch %d",
                               search.spec.search_id, search.spec.epoch)


def extension_of(worker) -> StealstackExtension | None:
    """The worker's stealstack extension, or None if the plugin never reached it."""
    return worker.extensions.get(EXTENSION_NAME)


def running_searches(dask_worker=None) -> int:
    """Epochs of searches running on this worker now (``client.run`` it to check that
    nothing is left after a search; orphans would show here)."""
    ext = extension_of(dask_worker)
    return 0 if ext is None else len(ext.searches)


def loaded_problems(dask_worker=None) -> list[str]:
    """Searches whose problem this worker holds now (``client.run`` it: nothing may be
    left after a search's teardown)."""
    ext = extension_of(dask_worker)
    return [] if ext is None else sorted(ext.problems)


def shares_held(dask_worker=None) -> int:
    """Shares this worker holds that no task took yet (``client.run`` it: none may be
    left after a search)."""
    ext = extension_of(dask_worker)
    return 0 if ext is None else len(ext.shares)


def loads_under_way(dask_worker=None) -> int:
    """Loads this worker is unpickling or warming now."""
    ext = extension_of(dask_worker)
    return 0 if ext is None else len(ext.loading)


def load_count(dask_worker=None) -> int:
    """Problems this worker has unpickled since it started."""
    ext = extension_of(dask_worker)
    return 0 if ext is None else ext.loads
