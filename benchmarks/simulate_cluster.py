"""A discrete-event model of the stealstack on machines of several lanes, to predict
scaling past what the emulated cluster holds (1,024 and 4,096 cores).

It extends :mod:`stealsearch.benchmarks.simulate` (one lane per worker) with what one
Dask worker of T lanes does.  Every rule is the engine's; where it lives:

* **Dealing** (``transports/dask/driver.py: first_cut``, ``core/epochs.py: deal``,
  ``core/worker.py: WorkerSearch.__init__``): the client expands the top row until the
  stack holds a row per machine (at most ``SETUP_NODE_CAP`` expansions, which delay the
  start: the client runs them undilated) and deals row i to machine i mod M; a machine
  deals its rows round-robin over its lanes.
* **Chunks** (``core/worker.py: _lane_loop``, ``core/stack.py: BudgetTuner``): a lane
  runs ``budget`` expansions (``nodes / rate`` seconds, plus ``chunk_overhead``), cut
  ``HUNGRY_SLICES`` times shorter while a sibling is idle or a thief waits (``hungry``,
  ``wanted``); the tuner times the kernel alone and halves the budget after a chunk over
  2 ``chunk_seconds``, doubles it after a full one under half.
* **RELEASE** (``_lane_loop``; ``core/stealstack.py: SharedPortion.release``): after a
  chunk, ``k`` bottom rows at a time while the stack holds more than the threshold;
  then one bottom row (``ON_DEMAND_ROWS``) if the portion holds fewer than
  ``max(reserve, 1 if hungry or wanted)`` rows and the stack two or more.  A release
  clears ``wanted`` and wakes a waiting lane per row.
* **ACQUIRE** (``SharedPortion.acquire``): a dry lane takes up to ``acquire`` of the
  newest rows; one that was idle takes only its share (rows / hungry, rounded up).
* **Idle lanes** (``_lane_loop``, ``SharedPortion.return_credit_if_empty``): a dry lane
  with nothing to acquire becomes hungry; once no lane is active the machine is out of
  work and one lane (the thief lock) runs FINDWORK; the others wait for a release or
  ``idle_backoff_max``.  A fruitless thief sleeps its own back-off (not woken by a
  release), doubling to ``idle_backoff_max``.
* **FINDWORK** (``_findwork``, ``_share_with_siblings``; ``core/victims.py``): the
  round's victims (ring, random, permutation or richest, ``polling`` of them) are asked
  ``probes`` at a time; each request travels ``latency / 2``, waits for the victim's
  event loop (a single server busy ``handler_seconds`` a message) and takes half (or
  ``k``) of its oldest shared rows; the thief waits for the whole group, keeps every
  row, and releases its idle siblings' share (its bottom rows) at once.
* **Steal on demand** (``handle_steal``, ``_steal_on_demand``): a request that finds the
  portion empty while the victim still works sets ``wanted`` and polls every
  ``DEMAND_POLL`` for up to ``DEMAND_WAIT_CHUNKS`` chunks.
* **Reports** (``run``, ``_report``; ``core/termination.py``): every ``REPORT_INTERVAL``
  each machine sends rank 0 a report (a message on rank 0's loop); the reply carries
  every shared size (what ``richest`` orders by).
* **Termination** (``core/stealstack.py``, "Termination credit"): once the last row is
  searched the last credit travels to rank 0 and the stop back.
* **Dilation** (``core/worker.py: Periods``; the emulated cluster): with
  ``policy.dilation`` D every period above is D times longer and the tuner's target is D
  chunks of kernel time, while ``handler_seconds`` and ``chunk_overhead`` stay real: the
  emulation's frame, in which a node costs D times its real cost (``rate`` is then the
  emulated one).

The tree is the recorded one (:class:`~stealsearch.benchmarks.simulate.Profile`, rows
split below the recorded levels by recorded split shapes; work is conserved exactly).
Not modelled: the GIL and the CPU spent on messages (a loop is a server of
``handler_seconds`` a message, nothing more), the credit messages' cost, epochs, faults.

Levers (:class:`Levers`), given apart from the policy: ``remote_rows`` (a remote
steal takes enough rows for every lane of the thief: the engine's
``StealPolicy.remote_rows``), ``demand_wait_chunks`` (how long a remote thief is held
for an on-demand row: ``StealPolicy.demand_wait``), ``deal_lanes`` (a row per lane at
the deal: the Dask driver's deal with lanes), and two the engine does not have, for the
model's diagnosis only: ``lifelines`` (X10 GLB: a machine whose round failed registers
with a few buddies, which push it rows as soon as they have them to spare) and
``feed_siblings`` (a row released for every idle sibling).  A policy field left to the
run takes its one-process value here: the engine's defaults from three workers on are
modelled by giving them (and the levers) explicitly.

    python -m stealsearch.benchmarks.simulate_cluster run benchmarks/profiles/T1L.npz --machines 8 32
    python -m stealsearch.benchmarks.simulate_cluster study --plot benchmarks/results/scale_out_model.png

``study`` fits the model on the emulated cluster's measured points (:data:`MEASURED`) and
predicts 16-lane machines to 4,096 cores (benchmarks/RESULTS.md, "Scale-out model").
"""
from __future__ import annotations

import argparse
import heapq
import math
import random
from collections import deque
from dataclasses import asdict, dataclass

import numpy as np

from .simulate import Machine, Profile, SimPolicy, Tree, take_newest, take_oldest

#: the engine's constants (engine/core/worker.py, engine/transports/dask/timeouts.py)
HUNGRY_SLICES = 16
DEMAND_WAIT_CHUNKS = 2.0
DEMAND_POLL = 0.0005
ON_DEMAND_ROWS = 1
REPORT_INTERVAL = 0.1
SETUP_NODE_CAP = 10_000


@dataclass(frozen=True)
class Levers:
    """Stealing rules modelled apart from the policy (see the module docstring: three of
    them the engine has as policy fields or in its deal, two it does not).

    ``remote_rows``: a steal between machines takes ``max(half, remote_rows x the
    thief's lanes)`` of the victim's shared rows (0: the engine's half), and a victim
    with fewer splits its lanes' stacks for it (each busy lane releases its bottom row
    after its next chunk until the request is met or the wait ends).
    ``lifelines``: after a fruitless round a machine registers with this many buddies
    (the hypercube neighbours of its rank, X10 GLB); a buddy whose shared portion holds
    two rows or more after a RELEASE pushes half of them to one registered machine
    (one message, ``latency / 2``).  0: off (the engine).
    ``deal_lanes``: the client expands the top until a row per *lane* (not per machine)
    and deals them so that every lane starts with one.
    ``demand_wait_chunks``: how long a victim whose portion is empty holds a remote
    thief's reply for an on-demand row (the engine: ``DEMAND_WAIT_CHUNKS``; 0: it
    answers at once, and its lanes still release a row for the next thief).
    ``feed_siblings``: a busy lane releases its bottom row while the portion holds fewer
    rows than there are idle siblings (the engine: fewer than one)."""

    remote_rows: int = 0
    lifelines: int = 0
    deal_lanes: bool = False
    demand_wait_chunks: float = DEMAND_WAIT_CHUNKS
    feed_siblings: bool = False


class _Lane:
    __slots__ = ("i", "local", "budget", "active", "idle_since", "idle", "nodes",
                 "chunks", "token", "waiting", "hidden", "backoff")

    def __init__(self, i: int, budget: int, backoff: float):
        self.i = i
        self.local: list = []
        self.budget = budget
        self.active = True
        self.idle_since = None
        self.idle = 0.0
        self.nodes = 0
        self.chunks = 0
        self.token = 0
        self.waiting = False
        self.hidden = 0.0
        self.backoff = backoff


class _Machine:
    def __init__(self, rank: int, lanes: int, budget: int, backoff: float):
        self.rank = rank
        self.lanes = [_Lane(i, budget, backoff) for i in range(lanes)]
        self.shared: deque = deque()
        self.shared_rows = 0
        self.active = lanes
        self.hungry = 0
        self.wanted = False
        self.want_more = 0          # Levers.remote_rows: rows a waiting thief still wants
        self.thief: _Lane | None = None
        self.loop_free = 0.0
        self.round: list = []
        self.group: list = []
        self.replies: dict = {}
        self.known: list = []
        self.perm: list = []
        self.rng = None
        self.lifeline_waiting: list = []   # machines registered with this one
        self.registered = False
        self.steals_tried = 0
        self.steals_ok = 0
        self.rows_stolen = 0
        self.acquires = 0
        self.releases = 0
        self.pushes = 0
        self.since = 0.0
        self.idle_by = {"sibling": 0.0, "steal": 0.0, "backoff": 0.0}


def _hypercube(rank: int, n: int, count: int) -> list[int]:
    out, bit = [], 1
    while len(out) < count and bit < n:
        peer = rank ^ bit
        if peer < n:
            out.append(peer)
        bit <<= 1
    return out


def simulate_cluster(profile: Profile, machines: int, lanes: int,
                     policy: SimPolicy = SimPolicy(), machine: Machine = Machine(),
                     levers: Levers = Levers(), cutoff: int | None = None, seed: int = 0,
                     hidden_per_level: float = 0.0, bins: int = 0,
                     max_events: int = 200_000_000) -> dict:
    """Simulate one search on ``machines`` x ``lanes``; returns times and counters.

    Parameters
    ----------
    profile : Profile
        The recorded tree (``benchmarks/profiles/<case>.npz``).
    machines, lanes : int
        Dask workers, and search threads in each.
    policy : StealPolicy
        The engine's policy (its ``dilation`` scales every period, as the engine does).
    machine : Machine
        One lane's kernel rate (nodes per second, in the frame of ``policy.dilation``),
        the round trip between machines, an event loop's seconds per message, a chunk's
        Python overhead.
    levers : Levers
        Stealing changes the engine does not make (default: none).
    cutoff : int, optional
        Rows of at most this many nodes are consumed as blocks (default: 1/20 of a
        chunk).
    seed : int
        Seed of the split resampling below the recorded levels.
    hidden_per_level : float
        See :func:`stealsearch.benchmarks.simulate.simulate`.
    bins : int
        If > 0, ``utilisation``: the busy share of the lanes in each of this many equal
        slices of the search (where the idle time lies: ramp-up, steady state, tail).

    Returns
    -------
    dict
        ``search_seconds``, ``efficiency`` (kernel time / (cores x search)),
        ``idle_fraction`` (lanes' idle time / (cores x search)), node and message counts.
    """
    rng = random.Random(seed)
    # a field the policy leaves to the run takes its few-process value (the protocol's
    # own): the engine's multi-process defaults are modelled by giving them, and the
    # levers for demand_wait and remote_rows, explicitly
    pol, mc, lv = policy.for_workers(1), machine, levers
    d = float(pol.dilation)
    chunk = pol.chunk_seconds or 0.005
    if cutoff is None:
        cutoff = max(64, int(mc.rate * chunk * d / 20))
    tree = Tree(profile, cutoff, rng)
    M, T = machines, lanes
    n = M * T
    rate = mc.rate_at(n)
    half_lat = mc.latency / 2
    backoff0, backoff_max = pol.idle_backoff * d, pol.idle_backoff_max * d
    demand_wait, demand_poll = lv.demand_wait_chunks * chunk * d, DEMAND_POLL * d
    report_every = REPORT_INTERVAL * d
    target = None if pol.chunk_seconds is None else pol.chunk_seconds * d

    stack = tree.roots()
    setup_nodes = 0
    while 0 < len(stack) < (M * T if lv.deal_lanes else M) and setup_nodes < SETUP_NODE_CAP:
        row = stack.pop()
        setup_nodes += 1
        stack.extend(tree.expand(row))
    ms = [_Machine(r, T, pol.budget, backoff0) for r in range(M)]
    for m in ms:
        rows = stack[m.rank::M]
        for lane in m.lanes:
            lane.local = rows[lane.i::T]
        m.rng = np.random.default_rng([pol.seed, m.rank])
        peers = [r for r in range(M) if r != m.rank]
        m.perm = [int(x) for x in m.rng.permutation(peers)] if peers else []
        m.known = [0] * M
    remaining = sum(tree.size(r) for r in stack)
    total = remaining + setup_nodes
    running = 0             # chunks under way: their nodes are no longer in remaining
    chunk_spans: list = []
    polling = pol.polling or (M - 1)

    events: list = []
    seq = 0

    def push(t, kind, a, b=None, data=None):
        nonlocal seq
        seq += 1
        heapq.heappush(events, (t, seq, kind, a, b, data))

    end_time = None

    def victims(m: _Machine) -> list[int]:
        """core/victims.py: VictimOrder.round."""
        if M <= 1:
            return []
        if pol.victims == "ring":
            order = [(m.rank + i) % M for i in range(1, M)]
        elif pol.victims == "random":
            order = [int(r) for r in m.rng.permutation([r for r in range(M) if r != m.rank])]
        elif pol.victims == "permutation":
            order = m.perm
        else:
            order = sorted((r for r in range(M) if r != m.rank),
                           key=lambda r: (-m.known[r], (r - m.rank) % M))
        return order[:polling]

    def account(m: _Machine, t: float):
        """Idle lane-seconds since the last change, by what the idle lanes wait for."""
        idle = (T - m.active) * (t - m.since)
        if m.active:
            m.idle_by["sibling"] += idle       # rows from a busy sibling of the machine
        elif m.thief is not None:
            m.idle_by["steal"] += idle         # the machine's thief waits for replies
        else:
            m.idle_by["backoff"] += idle       # out of work, between steal rounds
        m.since = t

    def serve(v: _Machine, t: float) -> float:
        start = max(t, v.loop_free)
        v.loop_free = start + mc.handler_seconds
        return v.loop_free

    def release(m: _Machine, rows: list, t: float):
        """SharedPortion.release: one batch at the top end, ``wanted`` cleared, a waiting
        lane woken per row."""
        if not rows:
            return
        m.shared.append(rows)
        m.shared_rows += len(rows)
        m.releases += 1
        m.wanted = False
        woken = 0
        for lane in m.lanes:
            if woken >= len(rows):
                break
            if lane.waiting:
                lane.waiting = False
                lane.token += 1
                push(t, "wake", m.rank, lane.i, lane.token)
                woken += 1
        if lv.lifelines and m.lifeline_waiting and m.shared_rows >= 2:
            lifeline_push(m, t)

    def lifeline_push(m: _Machine, t: float):
        to = m.lifeline_waiting.pop(0)
        got = take_oldest(m, m.shared_rows // 2)
        m.pushes += 1
        push(serve(m, t) + half_lat, "lifeline_push", to, None, got)

    def run_chunk(lane: _Lane, m: _Machine, t: float):
        nonlocal remaining, running
        if lane.idle_since is not None:
            lane.idle += t - lane.idle_since
            lane.idle_since = None
        budget = lane.budget
        if m.hungry > 0 or m.wanted or m.shared_rows < m.want_more:
            budget = max(1, budget // HUNGRY_SLICES)
        local = lane.local
        done = tree.search(local, budget)
        lane.hidden = hidden_per_level * math.log2(local[-1]) \
            if local and 0 < local[-1] <= cutoff else 0.0
        lane.nodes += done
        lane.chunks += 1
        remaining -= done
        running += 1
        kernel = done / rate
        if target is not None:                  # BudgetTuner.update
            if kernel > 2 * target:
                lane.budget = max(1, lane.budget // 2)
            elif done >= lane.budget and kernel < target / 2:
                lane.budget = min(max(pol.max_budget, pol.budget), lane.budget * 2)
        if bins:
            chunk_spans.append((t, t + kernel + mc.chunk_overhead))
        push(t + kernel + mc.chunk_overhead, "chunk_end", m.rank, lane.i)

    def after_chunk(lane: _Lane, m: _Machine, t: float):
        local = lane.local
        while len(local) + lane.hidden > pol.release_threshold and local:
            # take_bottom(k); a block cut by the chunk stays with its hidden siblings
            take = min(pol.k, len(local) - (1 if lane.hidden else 0))
            if take <= 0:
                break
            batch = local[:take]
            del local[:take]
            release(m, batch, t)
        hungry = m.hungry if lv.feed_siblings else min(1, m.hungry)
        keep = max(pol.reserve, hungry, 1 if m.wanted else 0, m.want_more)
        if m.shared_rows < keep and len(local) > 1:
            release(m, local[:ON_DEMAND_ROWS], t)
            del local[:ON_DEMAND_ROWS]

    def step(lane: _Lane, m: _Machine, t: float):
        """One turn of _lane_loop at time t."""
        nonlocal end_time
        if end_time is not None:
            return
        if lane.local:
            run_chunk(lane, m, t)
            return
        if m.shared_rows:                     # ACQUIRE (an idle lane: its share only)
            a = pol.acquire
            if not lane.active:
                a = min(a, -(-m.shared_rows // max(1, m.hungry)))
                account(m, t)
                lane.active = True
                m.active += 1
                m.hungry -= 1
            lane.local = take_newest(m, a)
            m.acquires += 1
            lane.backoff = backoff0
            run_chunk(lane, m, t)
            return
        if lane.idle_since is None:
            lane.idle_since = t
        if lane.active:                        # return_credit_if_empty
            account(m, t)
            lane.active = False
            m.active -= 1
            m.hungry += 1
        if remaining == 0 and running == 0:
            # the last credit travels to rank 0, which broadcasts the stop
            end_time = serve(ms[0], t + half_lat) + half_lat
            return
        if m.active == 0 and pol.stealing and M > 1 and m.thief is None \
                and not m.registered:
            account(m, t)
            m.thief = lane
            m.round = victims(m)
            next_group(m, t)
            return
        lane.waiting = True                    # wait_for_rows(backoff_max)
        lane.token += 1
        push(t + backoff_max, "wake", m.rank, lane.i, lane.token)

    def next_group(m: _Machine, t: float):
        if not m.round:                        # a fruitless round: this lane backs off
            account(m, t)
            thief, m.thief = m.thief, None
            thief.token += 1
            push(t + thief.backoff, "wake", m.rank, thief.i, thief.token)
            thief.backoff = min(thief.backoff * 2, backoff_max)
            if lv.lifelines:
                m.registered = True
                for b in _hypercube(m.rank, M, lv.lifelines):
                    push(t + half_lat, "lifeline_reg", b, None, m.rank)
            return
        m.group, m.round = m.round[:pol.probes], m.round[pol.probes:]
        m.replies = {}
        for v in m.group:
            m.steals_tried += 1
            push(t + half_lat, "steal_req", v, None, m.rank)

    def steal_want(v: _Machine) -> int:
        want = (v.shared_rows + 1) // 2 if pol.steal_half else pol.k
        return max(1, want, min(v.shared_rows, lv.remote_rows * T))

    def give(m: _Machine, thief: _Lane, rows: list, t: float):
        """Rows from other machines reach a machine out of work: the receiving lane
        becomes active, its idle siblings' share goes to the portion at once."""
        account(m, t)
        thief.local.extend(rows)
        thief.active = True
        m.active += 1
        m.hungry -= 1
        thief.backoff = backoff0
        if m.hungry > 0 and len(thief.local) > 1:    # _share_with_siblings
            keep = max(1, len(thief.local) // (m.hungry + 1))
            moved = thief.local[:len(thief.local) - keep]
            del thief.local[:len(thief.local) - keep]
            release(m, moved, t)
        step(thief, m, t)

    # the client's expansions run undilated, before any lane starts
    start = setup_nodes / (mc.rate * d)
    for m in ms:
        for lane in m.lanes:
            push(start + mc.start_skew * m.rank, "wake", m.rank, lane.i, lane.token)
        push(start + mc.start_skew * m.rank, "report_send", m.rank)

    n_events = 0
    while events and end_time is None:
        t, _, kind, a, b, data = heapq.heappop(events)
        n_events += 1
        if n_events > max_events:
            raise RuntimeError("simulation ran past max_events")
        m = ms[a]
        if kind == "chunk_end":
            running -= 1
            lane = m.lanes[b]
            after_chunk(lane, m, t)
            step(lane, m, t)
        elif kind == "wake":
            lane = m.lanes[b]
            if data != lane.token or m.thief is lane:
                continue                      # a stale wake-up
            lane.waiting = False
            step(lane, m, t)
        elif kind == "steal_req":
            push(serve(m, t), "steal_serve", a, None, (data, t + demand_wait))
        elif kind == "steal_serve":
            thief, deadline = data
            busy = m.active > 0
            if m.shared_rows and (not lv.remote_rows or m.shared_rows >= lv.remote_rows * T
                                  or not busy or t >= deadline):
                m.want_more = 0
                rows = take_oldest(m, steal_want(m))
                push(t + half_lat, "steal_reply", thief, None, (a, rows, m.shared_rows))
            elif busy and t < deadline:
                if not m.shared_rows:
                    m.wanted = True
                if lv.remote_rows:
                    m.want_more = lv.remote_rows * T
                push(t + demand_poll, "steal_serve", a, None, data)
            else:
                # SharedPortion.steal: an empty portion of a working machine is a demand
                m.wanted = m.wanted or (busy and not m.shared_rows)
                m.want_more = 0
                push(t + half_lat, "steal_reply", thief, None, (a, [], m.shared_rows))
        elif kind == "steal_reply":
            victim, rows, vshared = data
            m.known[victim] = vshared
            m.replies[victim] = rows
            if rows:
                m.steals_ok += 1
                m.rows_stolen += len(rows)
            if len(m.replies) < len(m.group):
                continue
            got = [r for v in m.group for r in m.replies[v]]
            if got:
                account(m, t)
                thief, m.thief = m.thief, None
                m.round = []
                give(m, thief, got, t)
            else:
                next_group(m, t)
        elif kind == "lifeline_reg":
            # kept even by a machine out of work: it pushes once it has rows again
            if data not in m.lifeline_waiting:
                m.lifeline_waiting.append(data)
            if m.shared_rows >= 2:
                lifeline_push(m, t)
        elif kind == "lifeline_push":
            if m.registered and m.active == 0 and m.thief is None and not m.shared_rows:
                m.registered = False
                lane = next(x for x in m.lanes if not x.active)
                lane.token += 1
                lane.waiting = False
                m.rows_stolen += len(data)
                give(m, lane, data, t)
            else:
                # the machine found work meanwhile: the rows are its own now
                m.registered = False
                release(m, data, t)
        elif kind == "report_send":
            push(serve(ms[0], t + half_lat) + half_lat, "report_reply", a, None,
                 [x.shared_rows for x in ms])
            push(t + report_every, "report_send", a)
        elif kind == "report_reply":
            m.known = data
    if end_time is None:
        raise RuntimeError("simulation ended without termination")
    for m in ms:
        account(m, end_time)
    lanes_all = [lane for m in ms for lane in m.lanes]
    nodes = sum(lane.nodes for lane in lanes_all)
    if nodes + setup_nodes != total or remaining != 0:
        raise AssertionError(f"work not conserved: {nodes} + {setup_nodes} != {total}")
    search = end_time
    work = nodes / rate
    idle = sum(lane.idle + (end_time - lane.idle_since if lane.idle_since is not None else 0)
               for lane in lanes_all)
    out = {"machines": M, "lanes": T, "cores": n, "search_seconds": search,
            "setup_seconds": start,
            "nodes": nodes + setup_nodes, "setup_nodes": setup_nodes,
            "kernel_seconds": work,
            "efficiency": work / (n * search), "speedup": (total / mc.rate) / search,
            "steals": sum(m.steals_ok for m in ms),
            "steals_tried": sum(m.steals_tried for m in ms),
            "rows_stolen": sum(m.rows_stolen for m in ms),
            "acquires": sum(m.acquires for m in ms),
            "releases": sum(m.releases for m in ms),
            "pushes": sum(m.pushes for m in ms),
            "chunks": sum(lane.chunks for lane in lanes_all),
            "idle_by": {k: sum(m.idle_by[k] for m in ms) / (n * search) for k in ms[0].idle_by},
            "idle_fraction": idle / (n * search),
            "per_machine_nodes": [sum(lane.nodes for lane in m.lanes) for m in ms],
            "per_lane_nodes": [lane.nodes for lane in lanes_all],
            "events": n_events, "cutoff": cutoff}
    if bins:
        out["utilisation"] = _utilisation(chunk_spans, end_time, bins, n)
    return out


def scaled(profile: Profile, factor: int) -> Profile:
    """The same tree ``factor`` times larger: every deepest recorded node's subtree is
    ``factor`` times its size (split below by the same templates, so for a UTS tree of
    fixed branching it is the tree log_b(factor) levels deeper); the recorded levels
    above keep their shape (a parent is 1 + its children)."""
    if not isinstance(factor, int) or factor < 1:
        raise ValueError(f"factor must be a positive integer, got {factor!r}")
    size = profile.size.astype(np.int64).copy()
    leaf = np.array([not kids for kids in profile.children])
    size[leaf] *= factor
    for i in range(len(size) - 1, -1, -1):   # level order: children come after parents
        kids = profile.children[i]
        if kids:
            size[i] = 1 + size[kids].sum()
    meta = dict(profile.meta, scaled=factor, tree_nodes=int(size[profile.roots].sum()))
    return Profile(profile.parent, size, profile.depth, meta)


def _utilisation(intervals, end: float, bins: int, lanes: int) -> list[float]:
    width = end / bins
    share = [0.0] * bins
    for a, b in intervals:
        i = min(int(a / width), bins - 1)
        while a < b and i < bins:
            edge = min(b, (i + 1) * width)
            share[i] += edge - a
            a = edge
            i += 1
    return [x / (width * lanes) for x in share]


# -- the study: calibration on the emulated cluster, predictions to 4,096 cores ------------------
#: The emulated cluster's measured points (benchmarks/emulate_cluster.py, the T1XL-shaped
#: tree = T1L, 102,181,082 nodes, 0.5 ms round trip asked; ``rtt_ms``: the equivalent the
#: run measured).  RESULTS.md "Emulated cluster" (2026-11-28 05:17-06:30 UTC, load 8.6-32.7
#: on 2 cores: lower bounds), and two runs of this study's (08:18-08:21 UTC, commit 1618456,
#: load 5.2-5.9).  ``engine``: "now" for the engine this model follows; "before" for the
#: runs before commit 465317e (the dealt rows all on lane 0, no share for idle siblings
#: after a steal, an idle lane acquiring up to ``acquire``), which matter only with
#: several lanes: the 2 x 1 run is the engine's of now in every rule modelled.
MEASURED = [
    dict(label="2 x 1", machines=2, lanes=1, dilation=4, rtt_ms=0.32, ideal_s=21.8, search_s=25.1,
         efficiency=0.87, idle=0.00, steals=13, tried=15, acquires=1505, load=8.6, engine="now"),
    dict(label="2 x 4", machines=2, lanes=4, dilation=16, rtt_ms=0.44, ideal_s=22.1, search_s=35.2,
         efficiency=0.63, idle=0.06, steals=16, tried=21, acquires=2768, load=9.0, engine="before"),
    dict(label="4 x 4", machines=4, lanes=4, dilation=32, rtt_ms=0.48, ideal_s=24.5, search_s=29.1,
         efficiency=0.84, idle=0.12, steals=46, tried=56, acquires=3020, load=11.1, engine="before"),
    dict(label="8 x 4", machines=8, lanes=4, dilation=64, rtt_ms=0.53, ideal_s=22.8, search_s=41.1,
         efficiency=0.59, idle=0.29, steals=156, tried=284, acquires=4543, load=9.8, engine="before"),
    dict(label="8 x 16", machines=8, lanes=16, dilation=256, rtt_ms=0.51, ideal_s=22.4,
         search_s=47.5, efficiency=0.47, idle=0.47, steals=68, tried=162, acquires=10421,
         load=26.9, engine="before"),
    dict(label="8 x 16", machines=8, lanes=16, dilation=256, rtt_ms=0.51, ideal_s=26.3,
         search_s=59.1, efficiency=0.45, idle=0.52, steals=89, tried=232, acquires=None,
         load=27.4, engine="now"),
    dict(label="8 x 16, probes 4 reserve 2", machines=8, lanes=16, dilation=256, rtt_ms=0.51,
         ideal_s=24.8, search_s=39.6, efficiency=0.63, idle=0.37, steals=126, tried=237,
         acquires=None, load=32.7, engine="now", policy={"probes": 4, "reserve": 2}),
    dict(label="2 x 4", machines=2, lanes=4, dilation=16, rtt_ms=0.563, ideal_s=20.38,
         search_s=23.84, efficiency=0.855, idle=0.030, steals=5, tried=7, acquires=1875,
         load=5.2, engine="now"),
    dict(label="4 x 2", machines=4, lanes=2, dilation=16, rtt_ms=0.595, ideal_s=20.52,
         search_s=24.87, efficiency=0.825, idle=0.085, steals=74, tried=96, acquires=1753,
         load=5.9, engine="now"),
]
#: the real cluster of the predictions: one lane's rate as the emulation's oracle measured
#: it (0.100-0.120 us a node), an event loop's time per message and a chunk's Python time
#: as simulate.py's calibration (bench_comm, 1-2 workers)
PREDICT_RATE = 1.0e7
HANDLER_SECONDS = 1e-4
CHUNK_OVERHEAD = 2e-5
#: T1's fitted rows hidden per level (stealsearch.benchmarks.scaling_study.HIDDEN; T1L is the
#: same generator)
HIDDEN_T1L = 2.3
LANES = 16
CORES = (32, 128, 512, 1024, 4096)
RTTS_MS = (0.5, 5.0)
POLICIES = {"defaults": {}, "probes 4, reserve 2": {"probes": 4, "reserve": 2}}
#: the modelled change (engine policy fields and model-only levers) and what it is made of
CHANGE = ("random victims, probes 4, reserve 2, chunks of 1 ms (engine fields), and, model "
          "only: a remote thief never held for an on-demand row, a remote steal of a row per "
          "thief lane, a row per lane at the deal",
          {"probes": 4, "reserve": 2, "victims": "random", "chunk_seconds": 0.001},
          Levers(demand_wait_chunks=0.0, remote_rows=1, deal_lanes=True))
#: the grown tree's sizes (each run is one seed and costs minutes past 1,024 cores)
GROWN_CORES = (128, 512, 1024)


def _median_runs(profile, machines, lanes, policy, mc, levers=Levers(), seeds=(0,)) -> dict:
    rs = [simulate_cluster(profile, machines, lanes, policy, mc, levers, seed=s,
                           hidden_per_level=HIDDEN_T1L, bins=10) for s in seeds]
    key = sorted(rs, key=lambda r: r["efficiency"])[len(rs) // 2]
    return {"efficiency": key["efficiency"], "efficiency_min": min(r["efficiency"] for r in rs),
            "efficiency_max": max(r["efficiency"] for r in rs),
            "idle": key["idle_fraction"], "steals": key["steals"],
            "tried": key["steals_tried"], "acquires": key["acquires"],
            "search_seconds": key["search_seconds"], "utilisation": key["utilisation"],
            "idle_by": key["idle_by"],
            "seeds": len(rs)}


def calibration(profile: Profile, seeds) -> list[dict]:
    """The model at each measured point, in the emulation's frame: a node costs what the
    run's ideal time says (nodes x node cost / cores), the round trip is the one it
    measured, every period is dilated as the engine's, the event loop and a chunk's
    Python are real time."""
    out = []
    for p in MEASURED:
        cores = p["machines"] * p["lanes"]
        D = p["dilation"]
        mc = Machine(rate=profile.total / (p["ideal_s"] * cores), latency=D * p["rtt_ms"] / 1e3,
                     handler_seconds=HANDLER_SECONDS, chunk_overhead=CHUNK_OVERHEAD)
        pol = SimPolicy(dilation=D, **p.get("policy", {}))
        out.append({"measured": p, "model": _median_runs(profile, p["machines"], p["lanes"],
                                                         pol, mc, seeds=seeds)})
    return out


def predictions(profile: Profile, seeds, grown_seconds: float, grown_seeds) -> list[dict]:
    """16-lane machines, each round trip and policy, on the emulation's tree and on one
    grown with the cores (``grown_seconds`` of work per core)."""
    out = []
    for tree in ("emulation", "grown"):
        for rtt in RTTS_MS:
            mc = Machine(rate=PREDICT_RATE, latency=rtt / 1e3, handler_seconds=HANDLER_SECONDS,
                         chunk_overhead=CHUNK_OVERHEAD)
            for name, fields in list(POLICIES.items()) + [("change", None)]:
                for cores in (CORES if tree == "emulation" else GROWN_CORES):
                    if tree == "grown" and name == "change" and (cores > 512 or rtt != RTTS_MS[0]):
                        continue
                    prof, factor = profile, 1
                    if tree == "grown":
                        factor = max(1, round(cores * grown_seconds * PREDICT_RATE / profile.total))
                        prof = scaled(profile, factor)
                    pol = SimPolicy(**(CHANGE[1] if fields is None else fields))
                    levers = CHANGE[2] if fields is None else Levers()
                    r = _median_runs(prof, cores // LANES, LANES, pol, mc, levers,
                                     seeds if tree == "emulation" else grown_seeds)
                    r.update(tree=tree, factor=factor, nodes=prof.total, rtt_ms=rtt,
                             policy=name, cores=cores,
                             ideal_seconds=prof.total / (PREDICT_RATE * cores))
                    out.append(r)
                    print(f"  {tree:9s} rtt {rtt:g} ms {name:20s} {cores:5d} cores: "
                          f"efficiency {r['efficiency']:.3f} idle {r['idle']:.3f}", flush=True)
    return out


def plot(cal: list[dict], pred: list[dict], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    colour = {0.5: "tab:blue", 5.0: "tab:red"}
    style = {"defaults": "-", "probes 4, reserve 2": "--", "change": ":"}
    for ax, tree, title in ((axes[0], "emulation", "the emulation's tree (T1L, 11 CPU-s at any size)"),
                            (axes[1], "grown", "a tree grown with the cores")):
        for rtt in RTTS_MS:
            for name in style:
                rs = [r for r in pred if r["tree"] == tree and r["rtt_ms"] == rtt
                      and r["policy"] == name]
                if rs:
                    label = f"model, {rtt:g} ms, " + ("the change (RESULTS.md)" if name == "change" else name)
                    ax.plot([r["cores"] for r in rs], [r["efficiency"] for r in rs], style[name],
                            marker="o", ms=4, color=colour[rtt], label=label)
        if tree == "emulation":
            for c in cal:
                p, m = c["measured"], c["model"]
                cores = p["machines"] * p["lanes"]
                filled = p["engine"] == "now"
                ax.plot(cores, p["efficiency"], "s", ms=7, color="black",
                        mfc="black" if filled else "none")
                ax.plot(cores, m["efficiency"], "x", ms=7, color="tab:green")
            ax.plot([], [], "s", color="black", label="measured, 0.5 ms (emulated; open: engine before 465317e)")
            ax.plot([], [], "x", color="tab:green", label="model at the measured point")
        ax.axhline(0.9, color="grey", lw=0.6)
        ax.axhline(0.8, color="grey", lw=0.6)
        ax.set_xscale("log", base=2)
        ticks = [2, 8, 32, 128, 512, 1024, 4096]
        ax.set_xticks(ticks, [f"{x:,}" for x in ticks])
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("cores (16 lanes per machine for the model's lines)")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6.5, loc="lower left")
    axes[0].set_ylabel("efficiency")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def markdown(cal: list[dict], pred: list[dict], grown_seconds: float) -> str:
    lines = ["### Fit: the emulation's points against the model (no parameter fitted to them)", "",
             "| point | engine | load | efficiency meas / model | idle meas / model | "
             "remote steals (tried) meas / model | local acquires meas / model |",
             "|---|---|---|---|---|---|---|"]
    for c in cal:
        p, m = c["measured"], c["model"]
        acq = "-" if p["acquires"] is None else f"{p['acquires']:,}"
        lines.append(f"| {p['label']} | {p['engine']} | {p['load']:g} | {p['efficiency']:.2f} / "
                     f"{m['efficiency']:.2f} | {p['idle']:.2f} / {m['idle']:.2f} | "
                     f"{p['steals']} ({p['tried']}) / {m['steals']} ({m['tried']}) | "
                     f"{acq} / {m['acquires']:,} |")
    for tree, head in (("emulation", "the emulation's tree (T1L, 102,181,082 nodes at every size)"),
                       ("grown", f"a tree grown with the cores ({grown_seconds:g} s of work per core)")):
        sizes = CORES if tree == "emulation" else GROWN_CORES
        lines += ["", f"### Predicted efficiency, 16 lanes per machine, {head}", "",
                  "| round trip | policy | " + " | ".join(f"{c:,}" for c in sizes) + " |",
                  "|---|---|" + "---|" * len(sizes)]
        for rtt in RTTS_MS:
            for name in list(POLICIES) + ["change"]:
                rs = {r["cores"]: r for r in pred if r["tree"] == tree and r["rtt_ms"] == rtt
                      and r["policy"] == name}
                if not rs:
                    continue
                cells = []
                for c in sizes:
                    r = rs.get(c)
                    if r is None:
                        cells.append("-")
                    elif r["seeds"] > 1:
                        cells.append(f"{r['efficiency']:.2f} [{r['efficiency_min']:.2f}-"
                                     f"{r['efficiency_max']:.2f}]")
                    else:
                        cells.append(f"{r['efficiency']:.2f}")
                label = "the change (below)" if name == "change" else name
                lines.append(f"| {rtt:g} ms | {label} | " + " | ".join(cells) + " |")
    lines += ["", "The change: " + CHANGE[0] + ".", "",
              "### Where the time goes (the largest size of each tree; idle lane time by what "
              "it waits for: a busy sibling's row, the machine's thief's replies, the next "
              "round; busy share of the lanes in tenths of the search)", "",
              "| tree | cores | round trip | policy | ideal s | search s | idle: sibling / steal "
              "/ back-off | busy share by tenth |",
              "|---|---|---|---|---|---|---|---|"]
    for r in pred:
        if r["cores"] == max(CORES if r["tree"] == "emulation" else GROWN_CORES) or \
                (r["policy"] == "change" and r["cores"] == 512):
            by = r["idle_by"]
            lines.append(f"| {r['tree']} | {r['cores']:,} | {r['rtt_ms']:g} ms | {r['policy']} | "
                         f"{r['ideal_seconds']:.4f} | {r['search_seconds']:.4f} | "
                         f"{by['sibling']:.2f} / {by['steal']:.2f} / {by['backoff']:.2f} | "
                         + " ".join(f"{x:.2f}" for x in r["utilisation"]) + " |")
    return "\n".join(lines) + "\n"


def study(args) -> None:
    import json
    import time

    from .common import commit, cpu_model

    t0 = time.time()
    load = __import__("os").getloadavg()[0]
    started_at = commit()          # the code that runs, whatever is committed meanwhile
    prof = Profile.load(args.profile)
    if args.seeds < 1 or args.grown_seconds <= 0:
        raise SystemExit("simulate_cluster: --seeds and --grown-seconds must be positive")
    seeds = tuple(range(args.seeds))
    print("calibration", flush=True)
    cal = calibration(prof, seeds)
    print("predictions", flush=True)
    pred = predictions(prof, seeds, args.grown_seconds, (0,))
    header = {"machine": cpu_model(), "commit": started_at,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t0)),
              "load_at_start": load, "load_at_end": __import__("os").getloadavg()[0],
              "seconds": time.time() - t0, "profile": args.profile, "seeds": args.seeds,
              "grown_seconds": args.grown_seconds}
    text = markdown(cal, pred, args.grown_seconds)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "calibration": cal, "predictions": pred,
                       "markdown": text}, f, indent=1)
    if args.plot:
        plot(cal, pred, args.plot)
    print(json.dumps(header))


def _append_json(path: str, record: dict) -> None:
    import json

    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", allow_abbrev=False, help="simulate some cluster sizes")
    run.add_argument("profile", help="benchmarks/profiles/<case>.npz")
    run.add_argument("--machines", nargs="+", type=int, default=[1, 2, 8, 32])
    run.add_argument("--lanes", type=int, default=LANES)
    run.add_argument("--rate", type=float, default=PREDICT_RATE, help="nodes per second of one lane")
    run.add_argument("--rtt-ms", type=float, default=0.5, help="round trip between machines")
    run.add_argument("--handler", type=float, default=HANDLER_SECONDS)
    run.add_argument("--seeds", type=int, default=3)
    run.add_argument("--scale", type=int, default=1, help="the tree this many times larger")
    run.add_argument("--policy", action="append", metavar="FIELD=VALUE", default=[])
    run.add_argument("--remote-rows", type=int, default=0, help="model-only lever (Levers)")
    run.add_argument("--lifelines", type=int, default=0, help="model-only lever (Levers)")
    run.add_argument("--deal-lanes", action="store_true", help="model-only lever (Levers)")
    run.add_argument("--demand-wait-chunks", type=float, default=DEMAND_WAIT_CHUNKS,
                     help="model-only lever (Levers)")
    run.add_argument("--feed-siblings", action="store_true", help="model-only lever (Levers)")
    run.add_argument("--json", metavar="FILE",
                     help="append one JSON line per size to FILE (what plot_scale_out draws)")
    st = sub.add_parser("study", allow_abbrev=False,
                        help="the fit on the emulated cluster and the predictions to 4,096 cores")
    st.add_argument("--profile", default="benchmarks/profiles/T1L.npz")
    st.add_argument("--seeds", type=int, default=3)
    st.add_argument("--grown-seconds", type=float, default=0.25,
                    help="work per core of the grown tree, real-cluster seconds")
    st.add_argument("--plot", help="write the figure (PNG) here")
    st.add_argument("--json", help="write every figure (JSON) here")
    args = ap.parse_args(argv)
    try:
        prof = Profile.load(args.profile)
    except (OSError, ValueError, KeyError) as exc:
        ap.error(f"{args.profile}: not a recorded profile ({exc})")
    if args.command == "study":
        study(args)
        return
    from .emulate_cluster import parse_policy

    if min(args.machines) < 1 or args.lanes < 1 or args.seeds < 1 or args.scale < 1:
        ap.error("--machines, --lanes, --seeds and --scale must be positive")
    if args.remote_rows < 0 or args.lifelines < 0 or args.demand_wait_chunks < 0:
        ap.error("--remote-rows, --lifelines and --demand-wait-chunks must be >= 0")
    if args.scale > 1:
        prof = scaled(prof, args.scale)
    try:
        pol = SimPolicy(**parse_policy(args.policy))
    except (ValueError, TypeError) as exc:
        ap.error(f"--policy: {exc}")
    levers = Levers(remote_rows=args.remote_rows, lifelines=args.lifelines,
                    deal_lanes=args.deal_lanes, demand_wait_chunks=args.demand_wait_chunks,
                    feed_siblings=args.feed_siblings)
    mc = Machine(rate=args.rate, latency=args.rtt_ms / 1e3, handler_seconds=args.handler,
                 chunk_overhead=CHUNK_OVERHEAD)
    for M in args.machines:
        r = _median_runs(prof, M, args.lanes, pol, mc, levers, tuple(range(args.seeds)))
        print(f"{M:5d} x {args.lanes} = {M * args.lanes:6d} cores: search "
              f"{r['search_seconds']:.4f} s, efficiency {r['efficiency']:.3f} "
              f"[{r['efficiency_min']:.3f}-{r['efficiency_max']:.3f}], idle {r['idle']:.3f}, "
              f"steals {r['steals']} ({r['tried']})", flush=True)
        if args.json:
            _append_json(args.json, {
                "profile": args.profile, "scale": args.scale, "nodes": prof.total,
                "machines": M, "lanes": args.lanes, "cores": M * args.lanes,
                "rtt_ms": args.rtt_ms, "rate": args.rate, "policy": parse_policy(args.policy),
                "levers": asdict(levers), **r})


if __name__ == "__main__":
    main()

