"""The scheduling algorithms of seed 001 and two baselines, one function each.

* ``direct``      §2: ceil(h/2) 2-relations, each in <= 3 rounds, no forwarding: <= 3 ceil(h/2).
* ``forwarding``  §3: the same 2-relations with forwarding in 12 rounds of 1/5 (even P):
                  <= 12/5 ceil(h/2); odd P removes packets into a matching M (§3.2, Lemma 3.1):
                  <= (6/5 + 2/P)(h + 1) (see the note below).
* ``weighted``    §4: the strongly polynomial variant: message halves + closed trails over odd
                  remainders, matchings peeled with multiplicities; the time to *compute* the
                  schedule and its size depend on the number of messages, not packets.
* ``regular``     §5.2: the 1-factorization schedule (P rounds for odd P, P-1 for even P) of the
                  regular part l = min_{i != j} (m_ij + m_ji) and ``forwarding`` for the rest.
* ``naive``       baseline: direct exchange in greedy rounds (heaviest pending pairs first, each
                  round as long as its lightest chosen pair's remaining data).
* ``two_phase``   baseline in the spirit of [19, 14]: every PE spreads its packets evenly over all
                  PEs (phase 1), the intermediates deliver (phase 2); each phase is scheduled
                  with the 1-factorization rounds, a round as long as its busiest pair.

Every function returns a :class:`~stealsearch.problems.hrelation.schedule.Schedule` (time in ticks of
1/5 packet).

Note on the odd-P bound: the paper's count charges ceil(h/2)/ceil(P/4) for flushing M
(Lemma 3.1) and ignores that the *last* flush may hold fewer than ceil(P/4) packets.  With h
odd the bound (6/5 + 2/P)(h + 1) has no slack for that, so on an adversarial colouring
(P >= 15, every PE on cycles in one 2-relation, few 2-relations) one flush round more than the
bound allows is conceivable.  It never occurred on the seeded random and cycle-plus-matching
instances of the tests and benchmarks (benchmarks/results/hrelation.md compares the lengths with the
bounds).
"""
from __future__ import annotations

import math

import numpy as np

from .colouring import konig_colouring, orient_halves, orient_packets, pad_regular
from .model import HRelation, validate_messages
from .schedule import UNIT, Schedule, ScheduleBuilder
from .two_relation import (RemovedMatching, decompose, make_schedulable, schedule_direct,
                           schedule_forwarding)


def _as_matrix(m) -> np.ndarray:
    if isinstance(m, HRelation):
        return m.messages
    return validate_messages(m)


def _h(m: np.ndarray) -> int:
    return int((m.sum(axis=0) + m.sum(axis=1)).max()) if m.size else 0


def _colour_classes(m: np.ndarray, orientation):
    """Typed bipartite edges -> König colour classes as (TwoRelation per class, copies)."""
    P = m.shape[0]
    edges = orientation(m)
    padded, colours = konig_colouring(edges, P)
    eu, ev, es, ed = padded.u, padded.v, padded.src, padded.dst
    out = []
    for ids, k in colours:
        ids = ids.tolist()
        tr = decompose(P, [eu[e] for e in ids], [ev[e] for e in ids],
                       [es[e] for e in ids], [ed[e] for e in ids], 1)
        out.append((tr, k))
    return out


def direct(m) -> Schedule:
    """§2: König colouring into ceil(h/2) 2-relations, each sent directly in <= 3 rounds.

    >>> s = direct([[0, 1, 0], [0, 0, 1], [1, 0, 0]])   # one 3-cycle, h = 2
    >>> s.length
    3.0
    """
    m = _as_matrix(m)
    b = ScheduleBuilder(m.shape[0])
    n = 0
    for tr, copies in _colour_classes(m, orient_packets):
        for _ in range(copies):
            schedule_direct(b, tr)
            n += 1
    return b.build("direct", {"two_relations": n})


def forwarding(m) -> Schedule:
    """§3: the 2-relations of §2 sent with forwarding, packets in 5 pieces.

    >>> from stealsearch.problems.hrelation.generators import figure1_instance
    >>> forwarding(figure1_instance()).length        # two 3-cycles, Figure 1: 12/5
    2.4
    """
    m = _as_matrix(m)
    P = m.shape[0]
    b = ScheduleBuilder(P)
    M = RemovedMatching()
    n = 0
    for tr, copies in _colour_classes(m, orient_packets):
        for _ in range(copies):
            if P % 2:
                tr_now = make_schedulable(tr, M, b)
            else:
                tr_now = tr
            schedule_forwarding(b, tr_now)
            n += 1
    M.flush(b)
    return b.build("forwarding", {"two_relations": n, "flushes": M.flushes,
                                  "flushed_sizes": M.flushed_sizes})


def weighted(m, use_forwarding: bool = True) -> Schedule:
    """§4: strongly polynomial: message halves + closed trails over the odd remainders
    (``orient_halves``), König colouring by perfect matchings with multiplicities; each peeled
    matching is one 2-relation whose edges carry k packets, sent with forwarding (12 rounds of
    k/5) or directly (rounds of k).  The colouring and the emission run compiled
    (``fast.py``); the number of rounds is O(#messages + P) whatever the message lengths.

    >>> weighted([[0, 10**6], [10**6, 0]]).length
    2000000.0
    """
    from .compiled import peel_matchings, weighted_schedule

    m = _as_matrix(m)
    P = m.shape[0]
    padded, delta = pad_regular(orient_halves(m), P)
    name = "weighted" if use_forwarding else "weighted-direct"
    b = ScheduleBuilder(P)
    if delta == 0:
        return b.build(name, {"matchings": 0, "flushes": 0})
    eu = np.array(padded.u, dtype=np.int64)
    ev = np.array(padded.v, dtype=np.int64)
    colours, ks = peel_matchings(P, eu, ev, np.array(padded.count, dtype=np.int64), delta)
    if len(ks) and ks[0] < 0:
        raise RuntimeError("König colouring failed (a regular bipartite graph always has a perfect matching)")
    rows, lengths, flushes = weighted_schedule(P, colours, ks, ev,
                                               np.array(padded.src, dtype=np.int64),
                                               np.array(padded.dst, dtype=np.int64), use_forwarding)
    b.new_rounds(len(lengths), 0)
    b._lengths = lengths.tolist()
    b.add_block(rows)
    return b.build(name, {"matchings": int(len(ks)), "flushes": int(flushes)})


# ----------------------------------------------------------------------------- §5.2 regular

def one_factor_partner(P: int, i: int, j: int) -> int:
    """Partner of PE j in round i of the 1-factorization schedule (§5.2), or j if idle.

    Odd P: rounds 0..P-1, partner (i - j) mod P (idle when 2j = i mod P).  Even P: PEs
    0..P-2 run the odd schedule for P-1 in rounds 0..P-2 and the idle one pairs with P-1.

    >>> [one_factor_partner(4, 0, j) for j in range(4)]
    [3, 2, 1, 0]
    """
    if P % 2:
        return (i - j) % P
    Q = P - 1
    if j == Q:
        return (i * (Q + 1) // 2) % Q  # the x with 2x = i (mod Q); (Q+1)/2 inverts 2
    p = (i - j) % Q
    return Q if p == j else p


def regular_rounds(P: int) -> np.ndarray:
    """int64[R, P]: the partner of every PE in every round of the 1-factorization schedule;
    R = P for odd P, P - 1 for even P (P = 1: no rounds)."""
    if P <= 1:
        return np.zeros((0, P), dtype=np.int64)
    Q = P if P % 2 else P - 1
    i = np.arange(Q)[:, None]
    j = np.arange(Q)[None, :]
    part = i - j
    part += Q * (part < 0)
    if P % 2 == 0:
        idle = part == j
        part = np.where(idle, Q, part)
        last = (np.arange(Q) * ((Q + 1) // 2)) % Q
        part = np.concatenate([part, last[:, None]], axis=1)
    return part.astype(np.int64)


def regular_split(m) -> tuple[int, np.ndarray, np.ndarray]:
    """§5.2: l = min_{i != j} (m_ij + m_ji); the regular part gives every pair l packets
    (as much as possible from i -> j, i < j, the rest j -> i); returns (l, regular, rest).

    >>> l, reg, rest = regular_split([[0, 3, 1], [1, 0, 2], [2, 2, 0]])
    >>> l, reg.tolist(), rest.tolist()
    (3, [[0, 3, 1], [0, 0, 2], [2, 1, 0]], [[0, 0, 0], [1, 0, 0], [0, 1, 0]])
    """
    m = _as_matrix(m)
    P = m.shape[0]
    if P < 2:
        return 0, np.zeros_like(m), m.copy()
    pair = m + m.T
    np.fill_diagonal(pair, np.iinfo(np.int64).max)
    ell = int(pair.min())
    fwd = np.minimum(m, ell)
    reg = np.triu(fwd, 1)
    reg += np.triu(ell - fwd, 1).T
    return ell, reg, m - reg


def regular_schedule(regular_part, P: int | None = None) -> Schedule:
    """§5.2: the 1-factorization schedule of a regular instance: in every round every pair
    exchanges its data both ways over one link, the round lasting the pair total l.

    >>> s = regular_schedule(np.ones((5, 5), dtype=np.int64) - np.eye(5, dtype=np.int64))
    >>> s.num_rounds, s.length
    (5, 10.0)
    """
    from .compiled import regular_rows

    reg = np.ascontiguousarray(regular_part, dtype=np.int64)
    P = reg.shape[0]
    b = ScheduleBuilder(P)
    if P < 2:
        return b.build("regular-part")
    rows, lengths = regular_rows(reg)
    b.new_rounds(len(lengths), 0)
    b._lengths = lengths.tolist()
    b.add_block(rows)
    return b.build("regular-part")


def regular(m, rest=None) -> Schedule:
    """§5.2: 1-factorization schedule for the regular part, ``rest`` (default
    ``forwarding``) for what is left.

    >>> all_to_all = np.full((4, 4), 3) - 3 * np.eye(4, dtype=int)
    >>> s = regular(all_to_all); s.num_rounds, s.length      # P - 1 rounds of 6 packets
    (3, 18.0)
    """
    m = _as_matrix(m)
    rest = forwarding if rest is None else rest
    ell, reg, remainder = regular_split(m)
    P = m.shape[0]
    info = {"ell": ell, "regular_rounds": (P if P % 2 else P - 1) if ell and P > 1 else 0}
    if ell > 0 and not remainder.any():
        s = regular_schedule(reg)
        s.algorithm, s.info = "regular", info
        return s
    b = ScheduleBuilder(m.shape[0])
    if ell > 0:
        b.extend(regular_schedule(reg))
    if remainder.any():
        b.extend(rest(remainder))
    return b.build("regular", info)


# ----------------------------------------------------------------------------- baselines

def naive(m) -> Schedule:
    """Direct exchange in greedy rounds: take pairs with pending data heaviest first into a
    matching; every chosen pair exchanges (both ways over its link) as long as the lightest
    chosen pair needs, so each round finishes at least one pair.

    >>> naive([[0, 1, 0], [0, 0, 1], [1, 0, 0]]).length
    3.0
    """
    m = _as_matrix(m)
    P = m.shape[0]
    left = m.copy()
    b = ScheduleBuilder(P)
    iu, ju = np.triu_indices(P, 1)
    while True:
        pend = left[iu, ju] + left[ju, iu]
        live = np.flatnonzero(pend)
        if live.size == 0:
            break
        order = live[np.argsort(-pend[live], kind="stable")]
        busy = np.zeros(P, dtype=bool)
        chosen = []
        for e in order.tolist():
            a, c = int(iu[e]), int(ju[e])
            if not busy[a] and not busy[c]:
                busy[a] = busy[c] = True
                chosen.append((a, c))
        step = min(int(left[a, c] + left[c, a]) for a, c in chosen)
        r = b.new_round(step * UNIT)
        for a, c in chosen:
            budget = step
            for s, d in ((a, c), (c, a)):
                x = min(int(left[s, d]), budget)
                if x:
                    b.add(r, s, d, s, d, x * UNIT)
                    left[s, d] -= x
                    budget -= x
    return b.build("naive")


def _phase(b: ScheduleBuilder, flows: dict, P: int) -> None:
    """Schedule one phase: ``flows[(frm, to)]`` = list of (src, dst, packets); 1-factorization
    rounds, each as long as its busiest pair."""
    part = regular_rounds(P)
    for row in part:
        pairs = [(j, int(p)) for j, p in enumerate(row.tolist()) if j < p]
        vol = [sum(x for _, _, x in flows.get((j, p), ())) + sum(x for _, _, x in flows.get((p, j), ()))
               for j, p in pairs]
        if not any(vol):
            continue
        r = b.new_round(max(vol) * UNIT)
        for j, p in pairs:
            for f, t in ((j, p), (p, j)):
                for s, d, x in flows.get((f, t), ()):
                    b.add(r, s, d, f, t, x * UNIT)


def two_phase(m) -> Schedule:
    """Two-phase baseline: PE i's outgoing packets, listed by destination, go to intermediates
    i, i+1, i+2, .. (mod P) in turn (phase 1, near-regular); intermediates deliver (phase 2).

    >>> round(two_phase([[0, 4], [4, 0]]).length, 3)
    8.0
    """
    m = _as_matrix(m)
    P = m.shape[0]
    b = ScheduleBuilder(P)
    phase1: dict = {}
    phase2: dict = {}
    for i in range(P):
        pos = i  # next intermediate for PE i
        for j in range(P):
            w = int(m[i, j])
            if not w:
                continue
            full, rem = divmod(w, P)
            for t in range(P):
                k = (pos + t) % P
                x = full + (1 if t < rem else 0)
                if not x:
                    continue
                if k != i:
                    phase1.setdefault((i, k), []).append((i, j, x))
                if k != j:
                    phase2.setdefault((k, j), []).append((i, j, x))
            pos = (pos + rem) % P
    _phase(b, phase1, P)
    _phase(b, phase2, P)
    return b.build("two-phase")


# ----------------------------------------------------------------------------- registry, bounds

ALGORITHMS = {
    "direct": direct,
    "forwarding": forwarding,
    "regular": regular,
    "weighted": weighted,
    "naive": naive,
    "two-phase": two_phase,
}


def upper_bound(algorithm: str, m) -> float | None:
    """The paper's guarantee for ``algorithm`` on ``m`` in packet times (None for baselines).

    >>> upper_bound("direct", [[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    3.0
    """
    m = _as_matrix(m)
    P, h = m.shape[0], _h(m)
    half = math.ceil(h / 2)
    if algorithm == "direct":
        return 3.0 * half
    if algorithm in ("forwarding", "weighted"):
        if h == 0:
            return 0.0
        return 12 / 5 * half if P % 2 == 0 else (6 / 5 + 2 / P) * (h + 1)
    if algorithm == "regular":
        ell, _, rest = regular_split(m)
        reg = ell * (P if P % 2 else P - 1) if ell else 0
        return reg + upper_bound("forwarding", rest)
    return None
