"""A discrete-event simulation of the stealstack protocol, to predict scaling past 2 cores.

What is modelled (engine/transports/dask/, engine/core/stealstack.py, engine/core/victims.py,
engine/core/stack.py; seed 003 ch. 3-4):

* **Dealing.**  The client expands the root depth-first until the stack holds at least
  one row per worker (or is empty) and deals the rows round-robin (row i to worker
  i mod n); these nodes are set-up, not search.
* **Chunks.**  A worker runs the kernel on its local portion for ``budget`` node
  expansions, which take ``nodes / rate + chunk_overhead`` seconds; the budget adapts
  like :class:`stealsearch.engine.core.stack.BudgetTuner` (start 2,000, doubled while a full chunk
  takes less than half of ``chunk_seconds``, halved when one takes more than twice).
* **RELEASE** of the ``k`` bottom rows while the local portion holds more than
  ``release_threshold`` rows, after every chunk; the shared portion is a deque of
  batches.  **ACQUIRE** of up to ``acquire`` newest shared rows when the local
  portion is empty.
* **FINDWORK.**  An idle worker polls victims one at a time in the policy's order
  (ring / random / permutation / richest, ``polling`` per round) with a synchronous
  steal: the request travels ``latency / 2``, waits for the victim's event loop (a
  single server: every message it handles occupies it ``handler_seconds``), takes
  ``k`` oldest rows or half of them, and travels back ``latency / 2``.  A fruitless
  round sleeps ``idle_backoff`` doubling to ``idle_backoff_max``.
* **Gossip** for "richest": every ``REPORT_INTERVAL`` a worker reports its shared size
  to rank 0 (a message through rank 0's event loop) and gets back the table.
* **Termination.**  Credit recovery: the search ends once the last row is done and
  the last credit has reached rank 0 and the stop has come back (one round trip).

The tree.  A row is a subtree of known size.  The top of the tree is the *real*
tree, recorded by :mod:`stealsearch.benchmarks.record_profile` with the real kernel (the first
levels exactly, with the exact subtree size of every node of the deepest recorded
level).  A row below the recorded levels is split when popped into children whose
sizes follow a *split template* drawn from the recorded tree's own splits (parent
size s, children's shares of s - 1, children in stack order), taken from a recorded
parent of similar size (the nearest powers of two, pooled until 64 splits), so work is conserved
exactly: the simulated node count is the real tree's.  A row of at most ``cutoff``
nodes is consumed as a block (it is far smaller than a chunk; a block cut by the end
of a chunk leaves its remainder on top of the local portion).

Run ``python -m stealsearch.benchmarks.simulate --help``; the scaling study is
``python -m stealsearch.benchmarks.scaling_study``.
"""
from __future__ import annotations

import argparse
import heapq
import json
import math
import random
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from stealsearch.engine.core.policy import StealPolicy

REPORT_INTERVAL = 0.1
#: recorded splits pooled (nearest sizes first) to split one unrecorded row.
MIN_TEMPLATES = 64


# The simulated policy is the engine's own StealPolicy (same fields, same defaults, same
# validation), so the model cannot drift from what the workers run.
SimPolicy = StealPolicy


@dataclass(frozen=True)
class Machine:
    #: node expansions per second of one worker's kernel.
    rate: float = 4.4e6
    #: round trip of one steal message, seconds (bench_comm: 0.83-0.98 ms).
    latency: float = 0.0009
    #: seconds a worker's event loop is busy per message it handles.
    handler_seconds: float = 0.0001
    #: Python work around one kernel call (release, timing), seconds.
    chunk_overhead: float = 2e-5
    #: seconds between worker starts (tasks do not start at the same instant).
    start_skew: float = 0.0
    #: the machine's ceiling: with n cores busy each runs at ``rate / (1 + contention *
    #: (n - 1))`` (turbo, shared caches and memory: what n independent sequential runs
    #: at once measure, bench_scaling.py's "ceiling").  0 on a machine that keeps its
    #: per-core rate; XEON16 below is fitted to issue #21's 16-core figures.
    contention: float = 0.0

    def rate_at(self, n: int) -> float:
        """One worker's kernel rate while ``n`` workers search."""
        return self.rate / (1.0 + self.contention * (n - 1))


# -- the tree --------------------------------------------------------------------------------
class Profile:
    """A recorded tree top (see stealsearch.benchmarks.record_profile) and its split templates."""

    def __init__(self, parent: np.ndarray, size: np.ndarray, depth: np.ndarray, meta: dict):
        self.parent, self.size, self.depth, self.meta = parent, size, depth, meta
        n = len(parent)
        self.children: list[list[int]] = [[] for _ in range(n)]
        for i in range(n):
            if parent[i] >= 0:
                self.children[parent[i]].append(i)
        self.roots = [i for i in range(n) if parent[i] < 0]
        self.total = int(size[self.roots].sum())
        # templates: (parent size - 1, child shares) of recorded parents with children,
        # by floor(log2(size)); the deepest levels are the most like what lies below.
        buckets: dict[int, list[np.ndarray]] = {}
        for i in range(n):
            kids = self.children[i]
            if kids and size[i] > 2:
                shares = size[kids].astype(float) / float(size[i] - 1)
                buckets.setdefault(int(math.log2(size[i])), []).append(shares)
        if not buckets:
            raise ValueError("profile has no recorded split to draw templates from")
        self.buckets = buckets
        self.bucket_keys = np.array(sorted(buckets))
        self._nearest: dict[int, list[list[float]]] = {}

    @classmethod
    def load(cls, path: str) -> "Profile":
        z = np.load(path, allow_pickle=False)
        return cls(z["parent"], z["size"], z["depth"], json.loads(str(z["meta"])))

    @classmethod
    def from_tree(cls, parent, size) -> "Profile":
        parent = np.asarray(parent, dtype=np.int32)
        size = np.asarray(size, dtype=np.int64)
        return cls(parent, size, np.zeros(len(parent), dtype=np.int16), {"case": "synthetic"})

    def template(self, s: int, rng) -> list[float]:
        """A recorded split (children's shares, stack order) of a parent of size ~s."""
        b = int(s).bit_length() - 1
        lst = self._nearest.get(b)
        if lst is None:
            # the nearest powers of two, pooled until there are MIN_TEMPLATES splits (a
            # bucket of one or two recorded parents would repeat their shape forever)
            lst = []
            for key in sorted(self.buckets, key=lambda k: (abs(k - b), k)):
                lst += [list(map(float, x)) for x in self.buckets[key]]
                if len(lst) >= MIN_TEMPLATES:
                    break
            self._nearest[b] = lst
        return lst[int(rng.random() * len(lst))]


class Tree:
    """Rows are ints: ``-(i + 1)`` for recorded node i, a positive size otherwise."""

    def __init__(self, profile: Profile, cutoff: int, rng):
        self.p = profile
        self.cutoff = cutoff
        self.rng = rng

    def roots(self) -> list[int]:
        return [-(i + 1) for i in self.p.roots]

    def size(self, row: int) -> int:
        return int(self.p.size[-row - 1]) if row < 0 else row

    def expand(self, row: int) -> list[int]:
        """Children (bottom-to-top) of a row that is not a block; its own node costs 1."""
        if row < 0:
            i = -row - 1
            kids = self.p.children[i]
            if kids:
                return [-(c + 1) for c in kids]
            row = int(self.p.size[i])
        rest = row - 1
        if rest <= 0:
            return []
        shares = self.p.template(row, self.rng)
        if len(shares) >= rest:     # as many children as nodes left: all leaves
            return [1] * rest
        # every child is a row of at least one node (a leaf still sits on the stack until
        # it is popped: dropping the children whose share rounds to 0 would undercount the
        # stack's height and so the RELEASEs; measured: 10-25x too few on UTS T1)
        sizes = [max(1, int(f * rest)) for f in shares]
        excess = sum(sizes) - rest
        if excess > 0:              # take the rounding excess from the largest children
            for i in sorted(range(len(sizes)), key=sizes.__getitem__, reverse=True):
                cut = min(excess, sizes[i] - 1)
                sizes[i] -= cut
                excess -= cut
                if not excess:
                    break
        i = 0
        while excess < 0:           # hand the remainder out, one node each
            sizes[i % len(sizes)] += 1
            excess += 1
            i += 1
        return sizes

    def search(self, local: list, budget: int) -> int:
        """One chunk on a stack of rows (bottom first): pop the top row; a block (at
        most ``cutoff`` nodes) is consumed, its remainder left on top if the budget ends
        inside it; any other row costs one expansion and pushes its children.  Returns
        the nodes done (at most ``budget``)."""
        done = 0
        size, cutoff = self.p.size, self.cutoff
        while done < budget and local:
            row = local.pop()
            s = row if row > 0 else int(size[-row - 1])
            if s <= cutoff:
                take = min(s, budget - done)
                done += take
                if take < s:
                    local.append(s - take)
            else:
                done += 1
                local.extend(self.expand(row))
        return done


def take_newest(owner, a: int) -> list:
    """ACQUIRE: up to ``a`` of the newest rows of ``owner.shared`` (a deque of batches,
    ``owner.shared_rows`` rows), bottom-to-top."""
    got: list = []
    while a > 0 and owner.shared:
        b = owner.shared[-1]
        if len(b) <= a:
            owner.shared.pop()
            got[:0] = b
            a -= len(b)
        else:
            got[:0] = b[len(b) - a:]
            owner.shared[-1] = b[:len(b) - a]
            a = 0
    owner.shared_rows -= len(got)
    return got


def take_oldest(owner, want: int) -> list:
    """STEAL: up to ``want`` of the oldest rows of ``owner.shared``."""
    rows: list = []
    while len(rows) < want and owner.shared:
        b = owner.shared[0]
        need = want - len(rows)
        if len(b) <= need:
            rows.extend(owner.shared.popleft())
        else:
            rows.extend(b[:need])
            owner.shared[0] = b[need:]
    owner.shared_rows -= len(rows)
    return rows


# -- workers ---------------------------------------------------------------------------------
@dataclass
class W:
    rank: int
    local: list = field(default_factory=list)
    shared: deque = field(default_factory=deque)
    shared_rows: int = 0
    budget: int = 2000
    backoff: float = 0.001
    round: list = field(default_factory=list)
    loop_free: float = 0.0
    known: list = field(default_factory=list)
    next_report: float = 0.0
    idle_since: float | None = None
    hidden: float = 0.0
    idle: float = 0.0
    nodes: int = 0
    chunks: int = 0
    steals_tried: int = 0
    steals_ok: int = 0
    rows_stolen: int = 0
    releases: int = 0
    acquires: int = 0
    start: float = 0.0
    perm: list = field(default_factory=list)


def simulate(profile: Profile, n: int, policy: SimPolicy = SimPolicy(),
             machine: Machine = Machine(), cutoff: int | None = None, seed: int = 0,
             hidden_per_level: float = 0.0, max_events: int = 50_000_000) -> dict:
    """Simulate one search on ``n`` workers; returns times, counters, per-worker stats.

    ``hidden_per_level``: a block cut by the end of a chunk is one row here, but in the
    real stack it is the unexplored siblings along the path into it; they count towards
    the RELEASE threshold as ``hidden_per_level * log2(remaining block size)`` rows (they
    sit on top, so RELEASE still takes the real rows below).  Fitted per tree on the real
    1-worker RELEASE count (``stealsearch.benchmarks.scaling_study``)."""
    rng = random.Random(seed)
    if cutoff is None:
        cutoff = max(64, int(machine.rate * (policy.chunk_seconds or 0.005) / 20))
    tree = Tree(profile, cutoff, rng)
    # a field the policy leaves to the run takes its few-process value: the protocol's own
    pol, mc = policy.for_workers(1), machine
    rate_n = mc.rate_at(n)
    half_lat = mc.latency / 2
    # dealing (client side, DFS like _deal)
    stack = tree.roots()
    setup_nodes = 0
    while 0 < len(stack) < n and setup_nodes < 10_000:
        row = stack.pop()
        setup_nodes += 1
        stack.extend(tree.expand(row))
    workers = [W(rank=r, budget=pol.budget, backoff=pol.idle_backoff, known=[0] * n)
               for r in range(n)]
    for i, row in enumerate(stack):
        workers[i % n].local.append(row)
    remaining = sum(tree.size(r) for r in stack)
    total = remaining + setup_nodes
    vrng = np.random.default_rng([pol.seed, 12345])
    for w in workers:
        w.start = w.rank * mc.start_skew
        w.next_report = w.start
        peers = [r for r in range(n) if r != w.rank]
        w.perm = list(np.random.default_rng([pol.seed, w.rank]).permutation(peers)) if peers else []

    events: list = []
    seq = 0

    def push(t, kind, who, data=None):
        nonlocal seq
        seq += 1
        heapq.heappush(events, (t, seq, kind, who, data))

    polling = pol.polling or (n - 1)

    def victims_round(w: W) -> list[int]:
        if n <= 1:
            return []
        if pol.victims == "ring":
            order = [(w.rank + i) % n for i in range(1, n)]
        elif pol.victims == "random":
            order = [r for r in vrng.permutation(n) if r != w.rank]
        elif pol.victims == "permutation":
            order = w.perm
        else:
            order = sorted((r for r in range(n) if r != w.rank),
                           key=lambda r: (-w.known[r], (r - w.rank) % n))
        return [int(r) for r in order[:polling]]

    def serve(v: W, t: float) -> float:
        """Queue a message on v's event loop; returns when it is handled."""
        start = max(t, v.loop_free)
        v.loop_free = start + mc.handler_seconds
        return v.loop_free

    coord_table = [0] * n

    def report(w: W, t: float):
        if t >= w.next_report:
            w.next_report = t + REPORT_INTERVAL
            push(t + half_lat, "report", 0, (w.rank, w.shared_rows))

    running = 0     # chunks under way: their nodes have left ``remaining`` already

    def run_chunk(w: W, t: float):
        nonlocal remaining, running
        if w.idle_since is not None:
            w.idle += t - w.idle_since
            w.idle_since = None
        local, cut, budget = w.local, cutoff, w.budget
        done = tree.search(local, budget)
        w.hidden = hidden_per_level * math.log2(local[-1]) if local and 0 < local[-1] <= cut else 0.0
        w.nodes += done
        w.chunks += 1
        remaining -= done
        running += 1
        dt = done / rate_n + mc.chunk_overhead
        if pol.chunk_seconds is not None:
            if dt > 2 * pol.chunk_seconds:
                w.budget = max(1, w.budget // 2)
            elif done >= budget and dt < pol.chunk_seconds / 2:
                w.budget = min(pol.max_budget, w.budget * 2)
        push(t + dt, "chunk_end", w.rank)

    end_time = None

    def step(w: W, t: float):
        """The search loop's next move at time t (after a chunk, a reply or a wake)."""
        nonlocal end_time
        if end_time is not None:
            return
        if w.local:
            run_chunk(w, t)
            return
        if w.shared_rows:
            got = take_newest(w, pol.acquire)
            w.acquires += 1
            w.local.extend(got)
            run_chunk(w, t)
            return
        if w.idle_since is None:
            w.idle_since = t
        if remaining == 0 and running == 0:
            # the last chunk has ended (a worker idle while another searches its last
            # nodes must not end the search): the last credit travels to rank 0, which
            # broadcasts the stop
            end_time = serve(workers[0], t + half_lat) + half_lat
            return
        report(w, t)
        if not pol.stealing or n == 1:
            push(t + w.backoff, "wake", w.rank)
            w.backoff = min(w.backoff * 2, pol.idle_backoff_max)
            return
        w.round = victims_round(w)
        try_next(w, t)

    def try_next(w: W, t: float):
        if not w.round:
            push(t + w.backoff, "wake", w.rank)
            w.backoff = min(w.backoff * 2, pol.idle_backoff_max)
            return
        v = w.round.pop(0)
        w.steals_tried += 1
        push(t + half_lat, "steal_req", v, w.rank)

    for w in workers:
        push(w.start, "wake", w.rank)

    n_events = 0
    while events and end_time is None:
        t, _, kind, who, data = heapq.heappop(events)
        n_events += 1
        if n_events > max_events:
            raise RuntimeError("simulation ran past max_events")
        w = workers[who]
        if kind == "chunk_end":
            running -= 1
            while len(w.local) + w.hidden > pol.release_threshold and len(w.local) > 1:
                take = min(pol.k, len(w.local) - 1)
                batch = w.local[:take]
                del w.local[:take]
                w.shared.append(batch)
                w.shared_rows += len(batch)
                w.releases += 1
            report(w, t)
            step(w, t)
        elif kind == "wake":
            step(w, t)
        elif kind == "steal_req":
            push(serve(w, t), "steal_serve", who, data)
        elif kind == "steal_serve":
            thief = data
            rows = []
            if w.shared_rows:
                want = (w.shared_rows + 1) // 2 if pol.steal_half else pol.k
                rows = take_oldest(w, max(1, want))
            push(t + half_lat, "steal_reply", thief, (who, rows, w.shared_rows))
        elif kind == "steal_reply":
            v, rows, vshared = data
            w.known[v] = vshared
            if rows:
                w.local.extend(rows)
                w.steals_ok += 1
                w.rows_stolen += len(rows)
                w.backoff = pol.idle_backoff
                w.round = []
                step(w, t)
            else:
                try_next(w, t)
        elif kind == "report":
            rank, sh = data
            coord_table[rank] = sh
            push(serve(w, t) + half_lat, "report_reply", rank, list(coord_table))
        elif kind == "report_reply":
            w.known = data
    if end_time is None:
        raise RuntimeError("simulation ended without termination")
    nodes = sum(w.nodes for w in workers)
    assert nodes + setup_nodes == total, (nodes, setup_nodes, total)
    t0 = min(w.start for w in workers)
    search = end_time - t0
    work = nodes / rate_n
    # efficiency: against the machine's ceiling (n cores at their shared rate); speedup:
    # against one core alone (the sequential search), so it includes the ceiling
    return {"workers": n, "search_seconds": search, "nodes": nodes + setup_nodes,
            "setup_nodes": setup_nodes, "tree_nodes": profile.total,
            "efficiency": work / (n * search), "speedup": (total / mc.rate) / search,
            "steals": sum(w.steals_ok for w in workers),
            "steals_tried": sum(w.steals_tried for w in workers),
            "idle_fraction": sum(w.idle + (end_time - w.idle_since if w.idle_since is not None else 0)
                                 for w in workers) / (n * search),
            "per_worker_nodes": [w.nodes for w in workers],
            "chunks": sum(w.chunks for w in workers), "events": n_events, "cutoff": cutoff,
            "releases": sum(w.releases for w in workers), "acquires": sum(w.acquires for w in workers)}


# -- calibrated on the 16-core figures of issue #21 ----------------------------------------------
#: Intel Xeon, 16 cores, Python 3.12 (issue #21, same commit, same run): sequential UTS rates
#: (T1XL 6.87, T3XXL 7.46 M nodes/s) and 16-worker results (processes / lanes).
XEON16_FIGURES = {
    "T1XL": {"sequential_rate": 6.87e6, "speedup_16": {"processes": 12.6, "lanes": 12.5}},
    "T3XXL": {"sequential_rate": 7.46e6, "speedup_16": {"processes": 10.8, "lanes": 11.9}},
    "T3L": {"sequential_rate": 7.46e6, "nodes": 111_345_631,
            "search_16": {"processes": 1.80, "lanes": 1.35}},
}
#: the ceiling of that machine, fitted by :func:`fit_contention` to T1XL's 12.6x at 16
#: processes: the model (T1L profile, 6.87 M nodes/s, no contention) loses 0.40 s per
#: worker at 16 (efficiency 0.697 of a 1.33 s search: start, steals, termination); the
#: same loss over T1XL's 18.9 s search at 16 is an efficiency of 0.979, so 12.6x leaves
#: a ceiling of 16 / (1 + 15 c) = 12.6 / 0.979, c = 0.0162 (each of 16 busy cores at
#: 0.80 of one core alone).  Checked against T3L (RESULTS.md, "The limit at 16 cores").
XEON16_CONTENTION = 0.0162


def fit_contention(speedup: float, n: int, protocol_efficiency: float) -> float:
    """The contention for which ``n`` workers at ``protocol_efficiency`` of the ceiling
    reach ``speedup`` over one core: n / (1 + c (n - 1)) * eff = speedup."""
    return (n * protocol_efficiency / speedup - 1.0) / (n - 1)


def xeon16(**changes) -> Machine:
    """The model of issue #21's 16-core Xeon (T1XL's sequential rate; ``rate=`` for others)."""
    return Machine(**{"rate": XEON16_FIGURES["T1XL"]["sequential_rate"],
                      "contention": XEON16_CONTENTION, **changes})


def main(argv=None):
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("profile", help="benchmarks/profiles/<case>.npz")
    ap.add_argument("--workers", nargs="+", type=int, default=[1, 2, 4, 8, 16])
    ap.add_argument("--rate", type=float, default=4.4e6)
    ap.add_argument("--latency", type=float, default=0.0009)
    ap.add_argument("--handler", type=float, default=0.0001)
    ap.add_argument("--victims", default="ring")
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--no-half", action="store_true")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--contention", type=float, default=0.0,
                    help="per-core slowdown with n cores busy: rate / (1 + c (n - 1))")
    ap.add_argument("--xeon16", action="store_true",
                    help="issue #21's 16-core machine: its contention (and --rate if not given)")
    args = ap.parse_args(argv)
    prof = Profile.load(args.profile)
    pol = SimPolicy(victims=args.victims, k=args.k, steal_half=not args.no_half)
    contention = XEON16_CONTENTION if args.xeon16 else args.contention
    mc = Machine(rate=args.rate, latency=args.latency, handler_seconds=args.handler,
                 contention=contention)
    for n in args.workers:
        rs = [simulate(prof, n, pol, mc, seed=s) for s in range(args.seeds)]
        eff = sorted(r["efficiency"] for r in rs)
        print(f"{n:5d} workers: search {np.median([r['search_seconds'] for r in rs]):.4f} s, "
              f"speed-up {np.median([r['speedup'] for r in rs]):.2f}x, "
              f"efficiency {np.median(eff):.3f} [{eff[0]:.3f}-{eff[-1]:.3f}], "
              f"steals {np.median([r['steals'] for r in rs]):.0f}, events {rs[0]['events']}",
              flush=True)


if __name__ == "__main__":
    main()
