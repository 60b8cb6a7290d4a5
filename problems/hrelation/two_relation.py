"""Scheduling one 2-relation: direct (§2) and with forwarding (§3.1, Figures 1-2).

A 2-relation here is one colour class of the König colouring: oriented edges u -> v, every
PE with at most one outgoing and one incoming edge, each edge carrying ``k`` packets of one
message (``k = 1`` in the packet-level algorithms, the peel multiplicity in §4).  Dummy
edges are dropped, so the components are directed *paths* (a PE with no edge is a path of
one vertex) and *cycles*.

Direct (§2): paths and even cycles alternate their edges over 2 rounds; an odd cycle of
length L sends edges 0, 2, .., L-3 in round 0, edges 1, 3, .., L-2 in round 1 and edge L-1
in round 2.  Rounds last k packets: total 3k with an odd cycle, 2k otherwise.

Forwarding (§3.1): every packet in 5 pieces, 12 rounds of k/5 packet.  Odd cycles are paired
(A, B).  A cycle is labelled a_0..a_{L-1} so that its *closing* packet travels a_{L-1} -> a_0.
In rounds 2i, 2i+1 (i = 0, 1, 2) of the *helped* phase, the even edges (a_{2j}, a_{2j+1}) send
a piece in round 2i, the odd edges in round 2i+1, and the closing packet's piece goes
a_{L-1} -> helper_i -> a_0.  In the same 6 rounds the *helping* cycle B sends two pieces of
each edge: edges (b_{2j+1}, b_{2j+2}) in rounds 0-1 (b_0 free, it is helper_0), edges
(b_{2j}, b_{2j+1 mod L}), j >= 1, in rounds 2-3 (b_1 free), edge (b_0, b_1) in rounds 4-5 (b_2
free).  Rounds 6-11 swap the roles: 3 + 2 = 5 pieces of every packet.

Choices where the paper is brief:

* Paths and even cycles send their even edges in rounds 0-4 and odd edges in rounds 5-9.
* With an odd number of odd cycles (possible when the 2-relation also has paths, or always
  for odd P) the unpaired cycle is helped by the free end x_0 of a path (or a PE with no edge):
  that path then sends its odd edges in rounds 0-4 and its even edges (the one at x_0) in
  rounds 6-10, so x_0 is free in rounds 0-5; the unpaired cycle uses the helping pattern on its
  own in rounds 6-11 (it needs no partner for that).  §3.2's "even cycle paired with an odd
  cycle" is the case where the even cycle lost a packet to M and became such a path.
* A 2-relation without odd cycles is sent directly in 2 rounds of k packets (time 2 < 12/5).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .colouring import DUMMY
from .schedule import UNIT, ScheduleBuilder


@dataclass
class Component:
    """A path (``cycle=False``) x_0 .. x_{n-1} with edges (x_i, x_{i+1}), or a cycle with
    the extra edge (x_{n-1}, x_0).  ``msgs[i]`` is the message (src, dst) of edge i."""

    verts: list
    msgs: list
    cycle: bool

    @property
    def odd_cycle(self) -> bool:
        return self.cycle and len(self.verts) % 2 == 1


@dataclass
class TwoRelation:
    P: int
    k: int                      # packets per edge
    comps: list = field(default_factory=list)   # cycles and paths with >= 1 edge
    free: list = field(default_factory=list)    # PEs on no edge

    def copy(self) -> "TwoRelation":
        return TwoRelation(self.P, self.k, [Component(list(c.verts), list(c.msgs), c.cycle)
                                            for c in self.comps], list(self.free))


def decompose(P: int, us, vs, srcs, dsts, k: int) -> TwoRelation:
    """Split a colour class into paths and cycles (dummy edges dropped).

    >>> tr = decompose(3, [0, 1, 2], [1, 2, 0], [0, 1, 2], [1, 2, 0], 1)
    >>> [(c.verts, c.cycle) for c in tr.comps]
    [([0, 1, 2], True)]
    """
    succ = [-1] * P
    pred = [-1] * P
    msg = [None] * P  # message on the edge leaving x
    for u, v, s, d in zip(us, vs, srcs, dsts):
        if s == DUMMY:
            continue
        succ[u] = v
        pred[v] = u
        msg[u] = (s, d)
    tr = TwoRelation(P, k)
    seen = [False] * P
    for x in range(P):
        if succ[x] < 0 and pred[x] < 0:
            tr.free.append(x)
            seen[x] = True
    for x in range(P):  # paths start at a vertex with no predecessor
        if seen[x] or pred[x] >= 0:
            continue
        verts, msgs = [x], []
        seen[x] = True
        while succ[verts[-1]] >= 0:
            msgs.append(msg[verts[-1]])
            verts.append(succ[verts[-1]])
            seen[verts[-1]] = True
        tr.comps.append(Component(verts, msgs, False))
    for x in range(P):  # what is left lies on cycles
        if seen[x]:
            continue
        verts, msgs = [x], [msg[x]]
        seen[x] = True
        y = succ[x]
        while y != x:
            verts.append(y)
            msgs.append(msg[y])
            seen[y] = True
            y = succ[y]
        tr.comps.append(Component(verts, msgs, True))
    return tr


def break_cycle(comp: Component, edge_index: int) -> Component:
    """The path left when edge ``edge_index`` (x_i, x_{i+1}) is removed from a cycle."""
    n = len(comp.verts)
    i = edge_index
    verts = [comp.verts[(i + 1 + t) % n] for t in range(n)]
    msgs = [comp.msgs[(i + 1 + t) % n] for t in range(n - 1)]
    return Component(verts, msgs, False)


# ----------------------------------------------------------------------------- direct

def schedule_direct(builder: ScheduleBuilder, tr: TwoRelation) -> None:
    """§2: 3 rounds of k packets if there is an odd cycle, else 2 (idle rounds vanish)."""
    ticks = tr.k * UNIT
    has_odd = any(c.odd_cycle for c in tr.comps)
    base = builder.new_rounds(3 if has_odd else 2, ticks)
    for c in tr.comps:
        n_edges = len(c.msgs)
        for i, (s, d) in enumerate(c.msgs):
            r = 2 if (c.odd_cycle and i == n_edges - 1) else i % 2
            builder.add(base + r, s, d, s, d, ticks)


# ----------------------------------------------------------------------------- forwarding

def _label_for_closing(comp: Component):
    """Vertices a_0..a_{L-1} of an odd cycle such that the packet on (a_{L-1}, a_0) goes
    a_{L-1} -> a_0, and the message on each edge (a_j, a_{j+1 mod L})."""
    x, L = comp.verts, len(comp.verts)
    s, _ = comp.msgs[0]          # edge (x_0, x_1)
    if s == x[0]:                # x_0 -> x_1: a_{L-1} = x_0, a_0 = x_1
        a = [x[(j + 1) % L] for j in range(L)]
        msgs = [comp.msgs[(j + 1) % L] for j in range(L)]
    else:                        # x_1 -> x_0: walk backwards, a_0 = x_0, a_{L-1} = x_1
        a = [x[(-j) % L] for j in range(L)]
        msgs = [comp.msgs[(-j - 1) % L] for j in range(L)]
    return a, msgs


def _helped(builder, base, a, msgs, helpers, k):
    """Rounds base..base+5: 3 pieces of each edge of cycle a, the closing packet through
    helpers[0..2]."""
    L = len(a)
    cs, cd = msgs[L - 1]
    assert (cs, cd) == (a[L - 1], a[0])
    for i in range(3):
        r0, r1 = base + 2 * i, base + 2 * i + 1
        for j in range(0, L - 1, 2):
            s, d = msgs[j]
            builder.add(r0, s, d, s, d, k)
        for j in range(1, L - 1, 2):
            s, d = msgs[j]
            builder.add(r1, s, d, s, d, k)
        builder.add(r0, cs, cd, a[L - 1], helpers[i], k)
        builder.add(r1, cs, cd, helpers[i], a[0], k)


def _helping(builder, base, a, msgs, k):
    """Rounds base..base+5: 2 pieces of each edge of odd cycle a, leaving a_0 free in rounds
    0-1, a_1 in rounds 2-3, a_2 in rounds 4-5."""
    L = len(a)
    for rr, edges in ((0, range(1, L - 1, 2)), (2, range(2, L, 2)), (4, range(0, 1))):
        for j in edges:
            s, d = msgs[j]
            builder.add(base + rr, s, d, s, d, k)
            builder.add(base + rr + 1, s, d, s, d, k)


def _alternate(builder, base, comp: Component, k, first_rounds, second_rounds):
    for i, (s, d) in enumerate(comp.msgs):
        for r in (first_rounds if i % 2 == 0 else second_rounds):
            builder.add(base + r, s, d, s, d, k)


def schedule_forwarding(builder: ScheduleBuilder, tr: TwoRelation) -> None:
    """§3.1: 12 rounds of k/5 packet if there are odd cycles, else 2 rounds of k packets.

    Needs an even number of odd cycles, or a helper (a PE on no edge or a path).
    """
    odd = [c for c in tr.comps if c.odd_cycle]
    if not odd:
        schedule_direct(builder, tr)
        return
    k = tr.k  # ticks per piece: one fifth of k packets
    base = builder.new_rounds(12, k)
    labelled = [_label_for_closing(c) for c in odd]
    lone = None
    if len(labelled) % 2:
        lone = labelled.pop()
    for (a, am), (b, bm) in zip(labelled[0::2], labelled[1::2]):
        _helped(builder, base, a, am, b[:3], k)
        _helping(builder, base, b, bm, k)
        _helped(builder, base + 6, b, bm, a[:3], k)
        _helping(builder, base + 6, a, am, k)
    helper_path = None
    if lone is not None:
        if tr.free:
            helper = tr.free[0]
        else:
            helper_path = next((c for c in tr.comps if not c.cycle), None)
            if helper_path is None:
                raise ValueError("odd number of odd cycles and no path: remove a packet first (§3.2)")
            helper = helper_path.verts[0]
        a, am = lone
        _helped(builder, base, a, am, [helper] * 3, k)
        _helping(builder, base + 6, a, am, k)
    for c in tr.comps:
        if c.odd_cycle:
            continue
        if c is helper_path:   # x_0 (on edge 0) must be free in rounds 0-5
            _alternate(builder, base, c, k, range(6, 11), range(0, 5))
        else:
            _alternate(builder, base, c, k, range(0, 5), range(5, 10))


# ----------------------------------------------------------------------------- §3.2 matching M

class RemovedMatching:
    """§3.2: packets removed from 2-relations, kept as a matching M of PE pairs; flushed in
    one round when no candidate packet can join it (Lemma 3.1: then |M| >= ceil(P/4))."""

    def __init__(self):
        self.pairs: dict = {}      # (a, b) -> list of (src, dst, ticks)
        self.busy: set = set()
        self.flushes = 0
        self.flushed_sizes: list = []

    def __len__(self):
        return len(self.pairs)

    def can_take(self, x: int, y: int) -> bool:
        return x not in self.busy and y not in self.busy

    def add(self, s: int, d: int, ticks: int) -> None:
        key = (min(s, d), max(s, d))
        self.pairs.setdefault(key, []).append((s, d, ticks))
        self.busy.update(key)

    def flush(self, builder: ScheduleBuilder) -> None:
        if not self.pairs:
            return
        length = max(sum(t for _, _, t in v) for v in self.pairs.values())
        r = builder.new_round(length)
        for v in self.pairs.values():
            for s, d, t in v:
                builder.add(r, s, d, s, d, t)
        self.flushes += 1
        self.flushed_sizes.append(len(self.pairs))
        self.pairs = {}
        self.busy = set()


def make_schedulable(tr: TwoRelation, M: RemovedMatching, builder: ScheduleBuilder) -> TwoRelation:
    """§3.2 for odd P: if every PE lies on a cycle and the number of odd cycles is odd,
    remove one packet (all k of the edge) into M, flushing M first when no cycle edge can join
    it.  Odd cycles' edges are preferred (the cycle becomes a path and the rest pair up)."""
    n_odd = sum(1 for c in tr.comps if c.odd_cycle)
    if n_odd % 2 == 0 or tr.free or any(not c.cycle for c in tr.comps):
        return tr

    def pick():
        for want_odd in (True, False):
            for ci, c in enumerate(tr.comps):
                if c.odd_cycle != want_odd:
                    continue
                n = len(c.verts)
                for i in range(n):
                    if M.can_take(c.verts[i], c.verts[(i + 1) % n]):
                        return ci, i
        return None

    choice = pick()
    if choice is None:
        M.flush(builder)
        choice = pick()
    ci, i = choice
    tr = tr.copy()
    c = tr.comps[ci]
    s, d = c.msgs[i]
    M.add(s, d, tr.k * UNIT)
    tr.comps[ci] = break_cycle(c, i)
    return tr
