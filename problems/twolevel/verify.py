"""Independent checker of a 2LVDS schedule, and the lower bound max_i (b_i + p_i).

Seed paper 004, section 2.1 (feasibility: at least one copy per task, one copy at a
time per processor, the Generalized Precedence Constraints, no message contention;
makespan, equation (1)).  Written from the paper's definitions only: it shares no code
with :mod:`stealsearch.problems.twolevel.algorithms` or its kernels, and takes a schedule as plain
arrays (so a schedule read from a file can be checked as well).

What is checked, for a schedule of an instance (V, E, p, c):

1. every task has >= 1 copy; ids are in range; starts are finite and >= 0;
2. a processor runs one copy at a time (intervals [start, start + p) do not overlap);
3. every message starts no earlier than its sending copy ends, goes to another
   processor, and its channel is (processor of the sending copy, receiving processor);
4. GPC: for every copy j_l and every arc (i, j), either a copy of i on j_l's processor
   ends by t(j_l), or a message with i's result reaches j_l's processor on time:
   ``start + c_ij(level) <= t(j_l)`` where level is 1 when the sending and receiving
   processors share a cluster and 2 otherwise (the verifier derives the level from the
   clusters; it does not trust the schedule's), and the message holds its channel at
   least that long (``duration >= c_ij(level)``);
5. no unidirectional channel (from, to) carries two overlapping messages
   (``[start, start + duration)``);
6. the makespan C_max and the lower bound LB = max_i (b_i + p_i), with b_i recomputed
   here from its definition, ``b_j = min over predecessors g of max(b_g + p_g,
   max_{h != g} b_h + p_h + c_hj(1))`` (put g on j's processor, every other result
   travels at least c(1)) — equal to Algorithm 1's value, computed differently
   (plain Python over its own topological order).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

MAX_ERRORS = 20


@dataclass
class VerificationReport:
    """Outcome of :func:`verify_schedule`; ``feasible`` iff ``errors`` is empty."""

    feasible: bool
    makespan: float
    lower_bound: float
    errors: list = field(default_factory=list)
    n_errors: int = 0

    @property
    def optimal(self) -> bool:
        """Feasible and reaching the lower bound (Theorem 1)."""
        return self.feasible and self.makespan == self.lower_bound

    def to_dict(self) -> dict:
        return {"feasible": self.feasible, "optimal": self.optimal, "makespan": self.makespan,
                "lower_bound": self.lower_bound, "n_errors": self.n_errors,
                "errors": list(self.errors)}


def lower_bound_dates(n, p, src, dst, c1) -> np.ndarray:
    """b_j for every task, straight from the definition (plain Python, topological order);
    a source gets 0.

    Example::

        >>> lower_bound_dates(3, np.array([2., 3, 1]), np.array([0, 1]), np.array([2, 2]),
        ...                   np.array([1., 1])).tolist()
        [0.0, 0.0, 3.0]
    """
    p = [float(x) for x in np.asarray(p, float)]
    src = np.asarray(src, np.int64).tolist()
    dst = np.asarray(dst, np.int64).tolist()
    c1 = [float(x) for x in np.asarray(c1, float)]
    preds = [[] for _ in range(n)]
    succs = [[] for _ in range(n)]
    for a, (u, v) in enumerate(zip(src, dst)):
        preds[v].append(a)
        succs[u].append(v)
    waiting = [len(x) for x in preds]
    ready = [v for v in range(n) if waiting[v] == 0]
    b = [0.0] * n
    done = 0
    while ready:
        j = ready.pop()
        done += 1
        arcs = preds[j]
        if arcs:
            finish = [b[src[a]] + p[src[a]] for a in arcs]
            message = [f + c1[a] for f, a in zip(finish, arcs)]
            if len(arcs) == 1:
                b[j] = finish[0]
            else:
                # the best and second best message arrivals
                top = max(range(len(arcs)), key=message.__getitem__)
                second = max(message[k] for k in range(len(arcs)) if k != top)
                best = message[top]
                # g = the predecessor run on j's processor; every other result travels
                b[j] = min(max(finish[k], second if k == top else best)
                           for k in range(len(arcs)))
        for w in succs[j]:
            waiting[w] -= 1
            if waiting[w] == 0:
                ready.append(w)
    if done != n:
        raise ValueError("the precedence graph has a cycle")
    return np.array(b, dtype=np.float64)


def verify_schedule(instance, schedule) -> VerificationReport:
    """Check ``schedule`` (anything with the :class:`TwoLevelSchedule` array fields)
    against ``instance``; never raises on a bad schedule, reports it.

    Example::

        >>> from stealsearch.problems.twolevel.generators import table1_instance
        >>> from stealsearch.problems.twolevel.algorithms import two_level_opt
        >>> inst = table1_instance(); rep = verify_schedule(inst, two_level_opt(inst))
        >>> rep.feasible, rep.makespan, rep.lower_bound
        (True, 20.0, 20.0)
    """
    n = instance.n
    p = np.asarray(instance.p, float)
    src = np.asarray(instance.src, np.int64)
    dst = np.asarray(instance.dst, np.int64)
    c1 = np.asarray(instance.c1, float)
    c2 = np.asarray(instance.c2, float)
    names = instance.names
    errors: list[str] = []
    count = [0]

    def fail(msg):
        count[0] += 1
        if len(errors) < MAX_ERRORS:
            errors.append(msg)

    cluster_of = np.asarray(schedule.processor_cluster, np.int64)
    nproc = cluster_of.shape[0]
    task = np.asarray(schedule.copy_task, np.int64)
    proc = np.asarray(schedule.copy_processor, np.int64)
    start = np.asarray(schedule.copy_start, float)
    m_task = np.asarray(schedule.msg_task, np.int64)
    m_from = np.asarray(schedule.msg_from_copy, np.int64)
    m_to = np.asarray(schedule.msg_to_processor, np.int64)
    m_start = np.asarray(schedule.msg_start, float)
    m_dur = np.asarray(schedule.msg_duration, float)
    m_from_proc_claimed = getattr(schedule, "msg_from_processor", None)

    lb = float(np.max(lower_bound_dates(n, p, src, dst, c1) + p))

    def report(makespan):
        return VerificationReport(not errors and count[0] == 0, makespan, lb, errors, count[0])

    # 1. shapes, ranges, one copy per task at least
    if task.size == 0:
        fail("the schedule has no copies")
        return report(float("nan"))
    if (task.min() < 0 or task.max() >= n or proc.min() < 0 or proc.max() >= nproc
            or task.shape != proc.shape or task.shape != start.shape):
        fail("copy table: task or processor id out of range, or columns of unequal length")
        return report(float("nan"))
    bad = np.flatnonzero(~np.isfinite(start) | (start < 0))
    for r in bad[:5]:
        fail(f"copy row {r} of task {names[task[r]]!r}: start {start[r]!r} is not a date >= 0")
    missing = np.flatnonzero(np.bincount(task, minlength=n) == 0)
    for t in missing[:5]:
        fail(f"task {names[t]!r} has no copy")
    count[0] += max(0, missing.shape[0] - 5) + max(0, bad.shape[0] - 5)
    end = start + p[task]
    makespan = float(np.max(end))

    # 2. one copy at a time per processor
    o = np.lexsort((start, proc))
    same_proc = proc[o][1:] == proc[o][:-1]
    clash = np.flatnonzero(same_proc & (start[o][1:] < end[o][:-1]))
    for k in clash[:5]:
        r1, r2 = o[k], o[k + 1]
        fail(f"processor {proc[r1]}: copies of tasks {names[task[r1]]!r} and "
             f"{names[task[r2]]!r} overlap ([{start[r1]:g}, {end[r1]:g}) and starts {start[r2]:g})")
    count[0] += max(0, clash.shape[0] - 5)

    # 3. messages are well formed
    nmsg = m_task.shape[0]
    m_ok = np.ones(nmsg, bool)
    m_src_proc = np.full(nmsg, -1, np.int64)
    if nmsg:
        in_range = ((m_from >= 0) & (m_from < task.shape[0]) & (m_to >= 0) & (m_to < nproc)
                    & (m_task >= 0) & (m_task < n))
        for e in np.flatnonzero(~in_range)[:5]:
            fail(f"message {e}: copy or processor id out of range")
        m_ok &= in_range
        safe_from = np.where(in_range, m_from, 0)
        m_src_proc = np.where(in_range, proc[safe_from], -1)
        wrong_task = in_range & (task[safe_from] != m_task)
        for e in np.flatnonzero(wrong_task)[:5]:
            fail(f"message {e}: says task {names[m_task[e]]!r} but its sending copy is a copy "
                 f"of {names[task[m_from[e]]]!r}")
        early = in_range & ~(m_start >= end[safe_from])
        for e in np.flatnonzero(early)[:5]:
            fail(f"message {e} of task {names[m_task[e]]!r}: starts at {m_start[e]:g} before "
                 f"its sending copy ends at {end[m_from[e]]:g}")
        loop = in_range & (m_src_proc == m_to)
        for e in np.flatnonzero(loop)[:5]:
            fail(f"message {e}: sent from processor {m_to[e]} to itself")
        bad_dur = ~(np.isfinite(m_dur) & (m_dur > 0))
        for e in np.flatnonzero(bad_dur)[:5]:
            fail(f"message {e}: duration {m_dur[e]!r} is not positive")
        if m_from_proc_claimed is not None:
            claimed = np.asarray(m_from_proc_claimed, np.int64)
            wrong_ch = in_range & (claimed != m_src_proc)
            for e in np.flatnonzero(wrong_ch)[:5]:
                fail(f"message {e}: channel starts at processor {claimed[e]} but the sending "
                     f"copy runs on processor {m_src_proc[e]}")
            count[0] += max(0, int(wrong_ch.sum()) - 5)
        count[0] += sum(max(0, int(x.sum()) - 5) for x in (~in_range, wrong_task, early, loop,
                                                           bad_dur))
        m_ok &= ~(wrong_task | early | loop | bad_dur)

    # 4. GPC: every copy receives each predecessor's result in time
    by_dst = np.argsort(dst, kind="stable")
    dptr = np.concatenate(([0], np.cumsum(np.bincount(dst, minlength=n))))
    deg = dptr[task + 1] - dptr[task]
    total = int(deg.sum())
    if total:
        req_row = np.repeat(np.arange(task.shape[0]), deg)
        offset = np.arange(total) - np.repeat(np.cumsum(deg) - deg, deg)
        req_arc = by_dst[np.repeat(dptr[task], deg) + offset]
        req_pred = src[req_arc]
        need_by = start[req_row]
        req_proc = proc[req_row]
        # (a) a copy of the predecessor on the same processor, ending in time
        key_copy = task * nproc + proc
        ko = np.argsort(key_copy, kind="stable")
        kc = key_copy[ko]
        group_start = np.flatnonzero(np.concatenate(([True], kc[1:] != kc[:-1])))
        uniq = kc[group_start]
        earliest_end = np.minimum.reduceat(end[ko], group_start)
        want = req_pred * nproc + req_proc
        pos = np.searchsorted(uniq, want)
        posc = np.minimum(pos, uniq.shape[0] - 1)
        local = (uniq[posc] == want) & (earliest_end[posc] <= need_by)
        # (b) a message of the predecessor's result to this processor, on time
        pending = np.flatnonzero(~local)
        served = np.zeros(pending.shape[0], bool)
        if pending.size and nmsg:
            ok_msgs = np.flatnonzero(m_ok)
            mkey = m_task[ok_msgs] * nproc + m_to[ok_msgs]
            mo = np.argsort(mkey, kind="stable")
            mk = mkey[mo]
            lo = np.searchsorted(mk, want[pending], side="left")
            hi = np.searchsorted(mk, want[pending], side="right")
            most = int((hi - lo).max()) if hi.size else 0
            for k in range(most):   # usually one message per (task, processor): one pass
                has = lo + k < hi
                e = ok_msgs[mo[np.minimum(lo + k, mk.shape[0] - 1)]]
                a = req_arc[pending]
                same_cluster = cluster_of[m_src_proc[e]] == cluster_of[m_to[e]]
                delay = np.where(same_cluster, c1[a], c2[a])
                good = has & (m_start[e] + delay <= need_by[pending]) & (m_dur[e] >= delay)
                served |= good
        late = pending[~served]
        for k in late[:5]:
            r, a = req_row[k], req_arc[k]
            fail(f"GPC violated: copy {schedule_copy_label(names, task, r)} on processor "
                 f"{proc[r]} (start {start[r]:g}) gets the result of task {names[src[a]]!r} "
                 f"neither from its own processor nor by a message on time")
        count[0] += max(0, late.shape[0] - 5)

    # 5. no two overlapping messages on one unidirectional channel
    if nmsg:
        ok_msgs = np.flatnonzero(m_ok)
        ch = m_src_proc[ok_msgs] * nproc + m_to[ok_msgs]
        o = ok_msgs[np.lexsort((m_start[ok_msgs], ch))]
        chs = m_src_proc[o] * nproc + m_to[o]
        same = chs[1:] == chs[:-1]
        overlap = np.flatnonzero(same & (m_start[o][1:] < m_start[o][:-1] + m_dur[o][:-1]))
        for k in overlap[:5]:
            e1, e2 = o[k], o[k + 1]
            fail(f"contention on channel {m_src_proc[e1]}->{m_to[e1]}: message {e1} "
                 f"[{m_start[e1]:g}, {m_start[e1] + m_dur[e1]:g}) overlaps message {e2} "
                 f"starting at {m_start[e2]:g}")
        count[0] += max(0, overlap.shape[0] - 5)
    return report(makespan)


def schedule_copy_label(names, task, r) -> str:
    return f"{names[task[r]]!r}#row{r}"
