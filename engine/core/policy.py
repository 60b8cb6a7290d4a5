"""The tunables of the stealstack protocol, in one object a sweep can vary.

Seed 003 (Thimm, Kreher, Merkey 2005), §3.1 and §4.2: every worker's stack is
split into a *local* portion (its top, owner only) and a *shared* portion (its
bottom, stealable).  The numbers below are the paper's k (rows per release and per
steal), the FULL() limit (``release_threshold``), the ACQUIRE size, the polling
order and the polling count.

The paper's coordination rule ("a shared portion must never be left holding rows
that nobody can take", §4.2) holds for every setting here: the shared portion is a
deque of whole batches; ACQUIRE takes up to ``acquire`` rows from it whatever their
number; a steal takes up to ``k`` rows (or half) whatever is there.  No count is ever
"too few to take".
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

VICTIM_ORDERS = ("ring", "random", "permutation", "richest")
#: the fields a policy leaves to the run (None) and their values with fewer than
#: ``MULTI_PROCESS_WORKERS`` workers (one process of lanes, or two workers: the paper's
#: protocol, as measured on one machine) ...
FEW_PROCESSES = {"probes": 1, "reserve": 0, "demand_wait": 2.0, "remote_rows": 0,
                 "victims": "ring", "chunk_seconds": 0.005}
#: ... and with that many or more (a cluster of machines: the emulated cluster's 8 x 16
#: lanes, benchmarks/RESULTS.md "Scale-out, measured")
MULTI_PROCESS = {"probes": 8, "reserve": 2, "demand_wait": 0.0, "remote_rows": 1,
                 "victims": "random", "chunk_seconds": 0.001}
MULTI_PROCESS_WORKERS = 3


def _left(name: str, value) -> bool:
    """Whether a policy field's ``value`` is left to the run (0 for ``chunk_seconds``,
    whose None is a fixed budget; None for the others)."""
    return value == 0 if name == "chunk_seconds" else value is None


@dataclass(frozen=True)
class StealPolicy:
    #: rows moved by one RELEASE and taken by one STEAL (seed's k).
    k: int = 8
    #: RELEASE when the local portion holds more than this many rows (seed's FULL()).
    release_threshold: int = 32
    #: rows an owner takes back from its own shared portion when its local one is empty.
    #: Large enough that the next chunk is not cut short by an empty stack (on a tree of
    #: tiny subtrees a few rows are searched out long before the chunk's budget).
    acquire: int = 64
    #: victim order of FINDWORK: "ring" (next in ring, the paper's), "random",
    #: "permutation" (a fixed random permutation per worker), "richest" (largest last
    #: known shared portion first; sizes are gossiped with progress reports).  None (the
    #: default): :data:`MULTI_PROCESS` with three workers or more, else "ring".
    victims: str | None = None
    #: steal half of the victim's shared rows instead of k (adaptive batch size).  On
    #: by default: on trees of many tiny subtrees (UTS T3) k rows buy a thief too little
    #: work, and it spends its time stealing again.
    steal_half: bool = True
    #: victims polled per FINDWORK round before the worker backs off (0 = all peers).
    polling: int = 0
    #: victims a thief asks at once: the round's victims are polled ``probes`` at a
    #: time, concurrently, and the thief keeps every row that comes back.  1 (the
    #: paper's) pays one round trip per victim, so a round over n peers lasts n - 1
    #: round trips; more probes find a victim with rows in fewer round trips, at the cost
    #: of steals that may bring more rows than one lane needs (its siblings share them).
    #: Across machines, at long round trips, most idle time is a thief waiting for
    #: replies, much of it near a search's end when few machines still hold rows: 8 at
    #: once ask every peer of up to 9 machines in one round trip, and on more machines
    #: need half the round trips of 4.
    #: Every reply's rows are kept and every extra credit returned (``_findwork``), so
    #: the number asked at once changes no count.
    #: None (the default): :data:`MULTI_PROCESS` with three workers or more, else 1.
    probes: int | None = None
    #: rows a worker keeps in its shared portion for thieves: while the portion holds
    #: fewer, a lane releases the bottom row of its stack (its largest subtree) after
    #: each chunk, if it holds two rows or more.  0: only the threshold and on-demand
    #: releases.  A multi-lane worker whose lanes' stacks stay under the threshold
    #: otherwise answers a remote thief only on demand, a chunk later, with one row:
    #: far too little for a machine of idle lanes.  None (the default):
    #: :data:`MULTI_PROCESS` with three workers or more, else 0.
    reserve: int | None = None
    #: chunks a peer's steal that finds the shared portion empty, while this worker's
    #: lanes still hold rows, is held for the row they release on demand (the reply
    #: waits, so the row goes to that thief).  0: the reply goes at once, empty, and the
    #: lanes still release a row for the next thief.  A thief held for a victim's row
    #: learns nothing of the other victims meanwhile: with many machines, most of the
    #: thieves' time goes to such holds; with two workers the thief has nobody else to
    #: ask, and the hold gives it the row before the victim's own lanes take it back.
    #: None (the default): :data:`MULTI_PROCESS` with three workers or more, else 2.
    demand_wait: float | None = None
    #: rows a steal from a peer takes per idle lane of the thief, at least (the thief
    #: says how many lanes it has; all of them are idle, as a process steals only once
    #: it holds no row), the victim's whole shared portion at most; the usual half (or
    #: ``k``) when that is more.  0: the usual half (or ``k``).  A thief of 16 lanes given
    #: one row splits it a row a chunk to feed its siblings, while the victim's portion
    #: kept the rows that would have fed them at once.  None (the default):
    #: :data:`MULTI_PROCESS` with three workers or more, else 0.
    remote_rows: int | None = None
    #: node expansions of the first kernel call (a chunk); with ``chunk_seconds`` set,
    #: later chunks adapt so that one lasts about that long.
    budget: int = 2_000
    #: target duration of one chunk: long enough that Python's share is tiny (a call
    #: costs ~5 us), short enough that RELEASE happens often, thieves find rows and
    #: stops and limits act within milliseconds whatever one node costs (a UTS node
    #: ~0.2 us, a clique node on 1000 vertices ~50 us, a liquid node up to ms).
    #: None keeps ``budget`` fixed.  0 (the default): chosen by the run, 5 ms with one
    #: or two workers, :data:`MULTI_PROCESS`'s with three or more (a thief on another
    #: machine waits for a victim's next chunk: its RELEASE, its on-demand row).
    chunk_seconds: float | None = 0.0
    #: upper limit of the adapted budget.
    max_budget: int = 1_000_000
    #: False disables STEAL: every worker searches only what it was dealt (the "no
    #: sharing" rows of the seed's Tables 4.4-4.5).
    stealing: bool = True
    #: seconds an idle worker sleeps between FINDWORK rounds; doubles after every
    #: fruitless round up to ``idle_backoff_max``.  Victims release rows at chunk
    #: boundaries (every ``chunk_seconds``), so sleeping much longer only idles.
    idle_backoff: float = 0.001
    idle_backoff_max: float = 0.004
    #: seed for the random and permutation victim orders.
    seed: int = 0
    #: time dilation, for the emulated cluster (benchmarks/emulate_cluster.py) only:
    #: the worker core stretches every kernel chunk to ``dilation`` times its CPU time
    #: (a sleep after it: no CPU, the GIL released) and multiplies every period of its
    #: own (back-offs, on-demand waits, reports, grant polls, joins) by it, so that a
    #: node costs ``dilation`` times more while every ratio of a period to the work
    #: stays what it is on a real cluster.  Node budgets stay the real ones (the tuner
    #: times the kernel alone).  What a search counts cannot change: the stretch is a
    #: sleep after a chunk, between two steps that run in the same order anyway
    #: (stealsearch.engine.core.worker, "Dilation").  1 (the default): off, no cost.
    dilation: float = 1.0

    def __post_init__(self):
        for name in ("k", "release_threshold", "acquire", "budget", "max_budget"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"StealPolicy.{name} must be a positive integer, got {value!r}")
        if self.polling < 0:
            raise ValueError(f"StealPolicy.polling must be >= 0, got {self.polling}")
        if self.probes is not None and (not isinstance(self.probes, int) or self.probes < 1):
            raise ValueError(f"StealPolicy.probes must be a positive integer or None, "
                             f"got {self.probes!r}")
        for name in ("reserve", "remote_rows"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 0):
                raise ValueError(f"StealPolicy.{name} must be an integer >= 0 or None, "
                                 f"got {value!r}")
        if self.demand_wait is not None and not (
                isinstance(self.demand_wait, (int, float)) and 0 <= self.demand_wait < float("inf")):
            raise ValueError(f"StealPolicy.demand_wait must be a number >= 0 or None, "
                             f"got {self.demand_wait!r}")
        if self.victims is not None and self.victims not in VICTIM_ORDERS:
            raise ValueError(f"StealPolicy.victims must be one of {', '.join(VICTIM_ORDERS)}, "
                             f"got {self.victims!r}")
        if self.chunk_seconds is not None and not 0 <= self.chunk_seconds < float("inf"):
            raise ValueError("StealPolicy.chunk_seconds must be > 0, 0 (chosen by the run) "
                             f"or None, got {self.chunk_seconds!r}")
        if self.idle_backoff <= 0:
            raise ValueError("StealPolicy.idle_backoff must be > 0")
        if not (isinstance(self.dilation, (int, float)) and 1 <= self.dilation < float("inf")):
            raise ValueError(f"StealPolicy.dilation must be a number >= 1, got {self.dilation!r}")

    def for_workers(self, n: int) -> "StealPolicy":
        """This policy with every field left to the run (None) set for a search on ``n``
        worker processes (:data:`FEW_PROCESSES`, :data:`MULTI_PROCESS`): the fields that
        act only between processes, so one process of lanes, and two workers, search
        exactly as with the paper's protocol."""
        table = MULTI_PROCESS if n >= MULTI_PROCESS_WORKERS else FEW_PROCESSES
        # (a chunk_seconds of None is a fixed budget, given: 0 is the one left to the run)
        return replace(self, **{k: v for k, v in table.items() if _left(k, getattr(self, k))})

    def with_(self, **changes) -> "StealPolicy":
        return replace(self, **changes)

    def as_dict(self) -> dict:
        return asdict(self)
