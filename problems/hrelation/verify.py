"""Independent verifier of h-relation schedules (seed 001, §1 model).

It simulates the synchronized simplex model on the schedule's rows alone and never calls
the schedulers' code.  Checks, in this order:

1. well-formed rows: PEs in range, ``frm != to``, positive amounts, the message exists
   (``m[msg_src, msg_dst] > 0``), data never travels back into its source and never leaves
   its destination;
2. per round, no PE takes part in two transfers with different partners (a *link* is an
   unordered PE pair; a link may carry both directions, see ``schedule.py``) and the amounts on
   a link fit in the round length;
3. every message is delivered exactly once: the amount arriving at ``msg_dst`` equals
   ``m[msg_src, msg_dst] * unit`` ticks (a lost piece gives less, a duplicated one more);
4. a forwarded piece reaches its helper before it leaves it: for each (message, helper) the
   data the helper has sent by the end of round r never exceeds what it received in rounds
   *before* r, and nothing is left stranded at a helper at the end.

The total time is the sum of the round lengths.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .schedule import Schedule


@dataclass
class Verification:
    ok: bool
    length: float
    rounds: int
    transfers: int
    errors: list = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.ok


def verify_schedule(schedule: Schedule, messages, max_errors: int = 5) -> Verification:
    """Check ``schedule`` against the message matrix ``messages``.

    >>> from stealsearch.problems.hrelation.schedule import ScheduleBuilder, UNIT
    >>> b = ScheduleBuilder(P=2); r = b.new_round(UNIT); b.add(r, 0, 1, 0, 1, UNIT)
    >>> verify_schedule(b.build(), [[0, 1], [0, 0]]).ok
    True
    """
    m = np.asarray(messages, dtype=np.int64)
    P = m.shape[0]
    errors: list[str] = []
    lengths = np.asarray(schedule.lengths, dtype=np.int64)
    t = np.asarray(schedule.transfers, dtype=np.int64).reshape(-1, 6)
    unit = int(schedule.unit)
    R = lengths.shape[0]
    total = float(lengths.sum()) / unit if unit > 0 else float("nan")

    def done() -> Verification:
        return Verification(ok=not errors, length=total, rounds=R, transfers=len(t),
                            errors=errors[:max_errors])

    if schedule.P != P:
        errors.append(f"schedule has P={schedule.P}, instance has P={P}")
        return done()
    if unit <= 0:
        errors.append(f"unit must be positive, got {unit}")
        return done()
    if (lengths < 0).any():
        errors.append(f"round {int(np.argmax(lengths < 0))}: negative length")
    rnd, src, dst, frm, to, amt = (t[:, k] for k in range(6))

    # 1. well-formed rows ------------------------------------------------------
    bad = (rnd < 0) | (rnd >= R)
    for c in (src, dst, frm, to):
        bad |= (c < 0) | (c >= P)
    if bad.any():
        i = int(np.argmax(bad))
        errors.append(f"transfer {i}: round or PE index out of range: {t[i].tolist()}")
        return done()
    checks = [
        (frm == to, "a PE sends to itself"),
        (src == dst, "message from a PE to itself"),
        (amt <= 0, "non-positive amount"),
        (m[src, dst] <= 0, "no such message"),
        (to == src, "data sent back into its source PE"),
        (frm == dst, "data leaves its destination PE"),
    ]
    for mask, what in checks:
        if mask.any():
            i = int(np.argmax(mask))
            errors.append(f"round {int(rnd[i])}: {what}: transfer {t[i, 1:].tolist()}")
    if errors:
        return done()

    # 2. one partner per PE per round, link capacity -------------------------------
    a = np.minimum(frm, to)
    b = np.maximum(frm, to)
    link_key = (rnd * P + a) * P + b
    links, inverse = np.unique(link_key, return_inverse=True)
    link_round = links // (P * P)
    link_a = (links // P) % P
    link_b = links % P
    pe_key = np.concatenate([link_round * P + link_a, link_round * P + link_b])
    pe_sorted = np.sort(pe_key)
    dup = pe_sorted[1:] == pe_sorted[:-1]
    if dup.any():
        k = int(pe_sorted[1:][dup][0])
        errors.append(f"round {k // P}: PE {k % P} takes part in two transfers")
    load = np.bincount(inverse.ravel(), weights=amt, minlength=len(links))
    over = load > lengths[link_round]
    if over.any():
        i = int(np.argmax(over))
        errors.append(f"round {int(link_round[i])}: link {int(link_a[i])}-{int(link_b[i])} carries "
                      f"{int(load[i])} ticks in a round of {int(lengths[link_round[i]])}")

    # 3. every message delivered exactly once ----------------------------------------
    arrive = to == dst
    delivered = np.bincount(src[arrive] * P + dst[arrive], weights=amt[arrive],
                            minlength=P * P).reshape(P, P)
    want = m.astype(np.float64) * unit
    wrong = delivered != want
    if wrong.any():
        i, j = map(int, np.argwhere(wrong)[0])
        what = "lost" if delivered[i, j] < want[i, j] else "delivered more than once"
        errors.append(f"message {i}->{j}: {int(delivered[i, j])} of {int(want[i, j])} ticks "
                      f"arrive ({what})")

    # 4. forwarded pieces: received by the helper before they leave it ------------------
    recv = to != dst                  # arrivals at a helper
    send = frm != src                 # departures from a helper
    key = np.concatenate([(src[recv] * P + dst[recv]) * P + to[recv],
                          (src[send] * P + dst[send]) * P + frm[send]])
    when = np.concatenate([rnd[recv], rnd[send]])
    # within one round a departure is ordered before an arrival: data received in round r
    # cannot leave in round r
    order = np.concatenate([np.ones(recv.sum(), dtype=np.int64), np.zeros(send.sum(), dtype=np.int64)])
    delta = np.concatenate([amt[recv], -amt[send]])
    if key.size:
        idx = np.lexsort((order, when, key))
        key, when, delta = key[idx], when[idx], delta[idx]
        csum = np.cumsum(delta)
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        base = np.r_[0, csum[starts[1:] - 1]]
        group = np.cumsum(np.r_[True, key[1:] != key[:-1]]) - 1
        held = csum - base[group]
        neg = held < 0
        if neg.any():
            i = int(np.argmax(neg))
            k = int(key[i])
            errors.append(f"round {int(when[i])}: PE {k % P} forwards a piece of message "
                          f"{k // (P * P)}->{(k // P) % P} before it arrived")
        ends = np.r_[starts[1:] - 1, len(key) - 1]
        stranded = held[ends] != 0
        if stranded.any():
            k = int(key[ends[np.argmax(stranded)]])
            errors.append(f"PE {k % P} keeps {int(held[ends[np.argmax(stranded)]])} ticks of message "
                          f"{k // (P * P)}->{(k // P) % P} that it never passes on")
    return done()
