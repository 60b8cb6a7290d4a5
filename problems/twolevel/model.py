"""The 2LVDS scheduling problem: a DAG of tasks with two-level communication delays.

Seed paper 004: J.-Y. Colin and M. Nakechbandi, *Scheduling Tasks and Communications
on a Hierarchical System with Message Contention*, section 2.1 (the 2LVDS model).

An instance is ``(V, E, p, c)``: tasks ``V = {0..n-1}`` (each keeps the name it had in
its file), processing times ``p_i > 0``, and for every arc ``(i, j)`` an intra-cluster
delay ``c_ij(1) > 0`` and an inter-cluster delay ``c_ij(2) >= c_ij(1)``.

The algorithm 2LVDSOPT is only proven for DAGs with *small communication delays*,
equations (2) and (3) of the paper.  :func:`check_small_delays` refuses an instance
that violates them, naming the task and the two arcs involved.

Choices where the paper is ambiguous
------------------------------------
* Equations (2) and (3) are written ``min_{g in PRED(i)} p_g >= max_{h in PRED(i)-{g}} c_hi(1)``:
  the bound variable ``g`` of the ``min`` also appears under the ``max``.  We read the
  formula as "for every predecessor g: p_g >= max over the *other* predecessors h of
  c_hi(1)" (i.e. ``min_g (p_g - max_{h != g} c_hi(1)) >= 0``).  This is the reading the
  lower-bound argument needs (two predecessors run on one processor: the later one, g,
  hides the delay of the earlier one, h) and the one under which BUILD is contention
  free (the next task on the sending processor, a successor k of i, lasts at least as
  long as the message of i to any other successor j).  (3) is read the same way with
  successors and c(2).  A task with fewer than two predecessors (successors) satisfies
  (2) ((3)) trivially.
* "Times" must be positive and finite (the paper: "positive processing time",
  "positive communication delay"); parallel arcs and self-loops are refused.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from stealsearch.engine.core.errors import InputError


class TwoLevelInputError(InputError):
    """Bad 2LVDS input: a malformed file, a cycle, a bad time, or a violated condition."""


class CycleError(TwoLevelInputError):
    """The precedence graph is not acyclic."""


class SmallDelayError(TwoLevelInputError):
    """Condition (2) or (3) of the paper (small communication delays) does not hold."""


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass
class TwoLevelInstance:
    """A 2LVDS instance: tasks 0..n-1 with times ``p``; arcs ``src -> dst`` with ``c1 <= c2``.

    ``names[k]`` is the task's id as the user wrote it (int or str).  ``task_where`` /
    ``arc_where`` optionally say where each task / arc came from (for error messages),
    e.g. ``"arcs.csv line 7"``.

    Example::

        >>> inst = TwoLevelInstance.build([1, 2, 3], {1: 4, 2: 3, 3: 2},
        ...                               [(1, 2, 1, 2), (1, 3, 1, 3)])
        >>> inst.n, inst.m
        (3, 2)
    """

    names: list
    p: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    c1: np.ndarray
    c2: np.ndarray
    source: str = "<instance>"
    task_where: list | None = None
    arc_where: list | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ build
    @classmethod
    def build(cls, names: Sequence, p, arcs, source: str = "<instance>",
              task_where=None, arc_where=None, validate: bool = True) -> "TwoLevelInstance":
        """Instance from task names, ``p`` (mapping name->time or sequence) and arcs
        ``(from_name, to_name, c1, c2)``.  Validates unless ``validate=False``."""
        names = list(names)
        index = {}
        for k, name in enumerate(names):
            if name in index:
                where = task_where[k] if task_where else f"task #{k}"
                raise TwoLevelInputError(f"{source}: {where}: duplicate task id {name!r}")
            index[name] = k
        if isinstance(p, dict):
            pv = np.array([p[name] for name in names], dtype=np.float64)
        else:
            pv = np.asarray(p, dtype=np.float64).reshape(-1)
            if pv.shape[0] != len(names):
                raise TwoLevelInputError(f"{source}: {len(names)} tasks but {pv.shape[0]} times")
        arcs = list(arcs)
        m = len(arcs)
        src = np.empty(m, np.int64)
        dst = np.empty(m, np.int64)
        c1 = np.empty(m, np.float64)
        c2 = np.empty(m, np.float64)
        for a, (u, v, x1, x2) in enumerate(arcs):
            for end in (u, v):
                if end not in index:
                    where = arc_where[a] if arc_where else f"arc #{a}"
                    raise TwoLevelInputError(f"{source}: {where}: arc ({u!r}, {v!r}) names "
                                             f"unknown task {end!r}")
            src[a] = index[u]
            dst[a] = index[v]
            c1[a] = x1
            c2[a] = x2
        inst = cls(names, pv, src, dst, c1, c2, source, task_where, arc_where)
        if validate:
            inst.validate()
        return inst

    @classmethod
    def from_arrays(cls, p, src, dst, c1, c2, names=None, source="<generated>",
                    validate: bool = True) -> "TwoLevelInstance":
        """Instance from index arrays (tasks named 0..n-1 unless ``names`` given)."""
        p = np.ascontiguousarray(p, dtype=np.float64)
        n = p.shape[0]
        inst = cls(list(range(n)) if names is None else list(names), p,
                   np.ascontiguousarray(src, dtype=np.int64),
                   np.ascontiguousarray(dst, dtype=np.int64),
                   np.ascontiguousarray(c1, dtype=np.float64),
                   np.ascontiguousarray(c2, dtype=np.float64), source)
        if validate:
            inst.validate()
        return inst

    # ------------------------------------------------------------- properties
    @property
    def n(self) -> int:
        return int(self.p.shape[0])

    @property
    def m(self) -> int:
        return int(self.src.shape[0])

    @property
    def integral(self) -> bool:
        """True when every time is an integer (results then print as integers)."""
        if "integral" not in self._cache:
            self._cache["integral"] = bool(
                np.all(np.mod(self.p, 1) == 0) and np.all(np.mod(self.c1, 1) == 0)
                and np.all(np.mod(self.c2, 1) == 0))
        return self._cache["integral"]

    def where_task(self, k: int) -> str:
        if self.task_where:
            return f"{self.task_where[k]}: task {self.names[k]!r}"
        return f"task {self.names[k]!r}"

    def where_arc(self, a: int) -> str:
        s = f"arc ({self.names[self.src[a]]!r}, {self.names[self.dst[a]]!r})"
        if self.arc_where:
            return f"{self.arc_where[a]}: {s}"
        return s

    def csr(self, by: str):
        """``(ptr, arcs)``: the arc ids grouped by ``dst`` (``by='pred'``) or ``src``
        (``by='succ'``), ``arcs[ptr[v]:ptr[v+1]]`` being those of task v."""
        key = f"csr_{by}"
        if key not in self._cache:
            group = self.dst if by == "pred" else self.src
            order = np.argsort(group, kind="stable").astype(np.int64)
            counts = np.bincount(group, minlength=self.n)
            ptr = np.zeros(self.n + 1, np.int64)
            np.cumsum(counts, out=ptr[1:])
            self._cache[key] = (ptr, order)
        return self._cache[key]

    def topological_order(self) -> np.ndarray:
        """Kahn's order of the tasks; shorter than n iff the graph has a cycle."""
        if "topo" not in self._cache:
            from .compiled import topological_order
            pptr, parcs = self.csr("pred")
            sptr, sarcs = self.csr("succ")
            self._cache["topo"] = topological_order(self.n, pptr, sptr, self.dst[sarcs])
        return self._cache["topo"]

    # ------------------------------------------------------------- validation
    def validate(self) -> None:
        """Raise a :class:`TwoLevelInputError` naming the first offending task or arc."""
        n, m = self.n, self.m
        if n == 0:
            raise TwoLevelInputError(f"{self.source}: no tasks")
        bad = np.flatnonzero(~np.isfinite(self.p) | (self.p <= 0))
        if bad.size:
            k = int(bad[0])
            raise TwoLevelInputError(f"{self.source}: {self.where_task(k)}: processing time "
                                     f"must be positive and finite, got {self.p[k]!r}")
        if m:
            if self.src.min() < 0 or self.src.max() >= n or self.dst.min() < 0 or self.dst.max() >= n:
                raise TwoLevelInputError(f"{self.source}: arc endpoint out of range 0..{n - 1}")
            for arr, label in ((self.c1, "c1"), (self.c2, "c2")):
                bad = np.flatnonzero(~np.isfinite(arr) | (arr <= 0))
                if bad.size:
                    a = int(bad[0])
                    raise TwoLevelInputError(f"{self.source}: {self.where_arc(a)}: {label} must be "
                                             f"positive and finite, got {arr[a]!r}")
            bad = np.flatnonzero(self.c1 > self.c2)
            if bad.size:
                a = int(bad[0])
                raise TwoLevelInputError(
                    f"{self.source}: {self.where_arc(a)}: intra-cluster delay c1 = {_fmt(self.c1[a])} "
                    f"exceeds inter-cluster delay c2 = {_fmt(self.c2[a])} (need c1 <= c2)")
            loops = np.flatnonzero(self.src == self.dst)
            if loops.size:
                a = int(loops[0])
                raise CycleError(f"{self.source}: {self.where_arc(a)}: self-loop (the graph must be a DAG)")
            key = self.src * n + self.dst
            order = np.argsort(key, kind="stable")
            dup = np.flatnonzero(key[order][1:] == key[order][:-1])
            if dup.size:
                a = int(order[dup[0] + 1])
                raise TwoLevelInputError(f"{self.source}: {self.where_arc(a)}: duplicate arc")
        self._check_acyclic()
        check_small_delays(self)

    def _check_acyclic(self) -> None:
        order = self.topological_order()
        if order.shape[0] == self.n:
            return
        done = np.zeros(self.n, bool)
        done[order] = True
        pptr, parcs = self.csr("pred")
        # walk backwards through unfinished predecessors until a task repeats
        v = int(np.flatnonzero(~done)[0])
        seen = {}
        path = []
        while v not in seen:
            seen[v] = len(path)
            path.append(v)
            for a in parcs[pptr[v]:pptr[v + 1]]:
                u = int(self.src[a])
                if not done[u]:
                    v = u
                    break
        cycle = path[seen[v]:][::-1]
        cycle.append(cycle[0])
        shown = [repr(self.names[t]) for t in cycle]
        if len(shown) > 8:
            shown = shown[:4] + ["..."] + shown[-3:]
        raise CycleError(f"{self.source}: the precedence graph has a cycle: "
                         + " -> ".join(shown))


def _top_two(group: np.ndarray, value: np.ndarray, ngroups: int, largest: bool = True):
    """Per group: (best value, arc of the best, second value) — second = -inf/+inf if none."""
    fill = -np.inf if largest else np.inf
    best = np.full(ngroups, fill)
    best_arc = np.full(ngroups, -1, np.int64)
    second = np.full(ngroups, fill)
    second_arc = np.full(ngroups, -1, np.int64)
    if group.shape[0] == 0:
        return best, best_arc, second, second_arc
    order = np.lexsort((-value if largest else value, group))
    g = group[order]
    first = np.ones(g.shape[0], bool)
    first[1:] = g[1:] != g[:-1]
    idx_first = np.flatnonzero(first)
    best[g[idx_first]] = value[order[idx_first]]
    best_arc[g[idx_first]] = order[idx_first]
    nxt = idx_first + 1
    has_second = nxt < g.shape[0]
    has_second[has_second] = g[nxt[has_second]] == g[idx_first[has_second]]
    gs = g[idx_first[has_second]]
    second[gs] = value[order[nxt[has_second]]]
    second_arc[gs] = order[nxt[has_second]]
    return best, best_arc, second, second_arc


def check_small_delays(inst: TwoLevelInstance) -> None:
    """Refuse an instance that violates condition (2) or (3) of the paper.

    (2): for every task j and every predecessor g of j, ``p_g >= c_hj(1)`` for every
    other predecessor h of j.  (3): for every task i and every successor k of i,
    ``p_k >= c_ij(2)`` for every other successor j of i.  O(m log m).

    Example::

        >>> bad = TwoLevelInstance.build("abc", {"a": 1, "b": 5, "c": 1},
        ...        [("a", "c", 1, 1), ("b", "c", 2, 2)], validate=False)
        >>> check_small_delays(bad)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        stealsearch.problems.twolevel.model.SmallDelayError: <instance>: condition (2) violated at task 'c': predecessor 'a' has p = 1 < c(1) = 2 of arc ('b', 'c') ...
    """
    n, src, dst = inst.n, inst.src, inst.dst
    if inst.m == 0:
        return
    names = inst.names
    # (2) on predecessors of each task, with c(1)
    best, best_arc, second, second_arc = _top_two(dst, inst.c1, n)
    other = np.where(best_arc[dst] == np.arange(inst.m), second[dst], best[dst])
    bad = np.flatnonzero(inst.p[src] < other)
    if bad.size:
        a = int(bad[0])
        j, g = int(dst[a]), int(src[a])
        h_arc = int(second_arc[j] if best_arc[j] == a else best_arc[j])
        raise SmallDelayError(
            f"{inst.source}: condition (2) violated at task {names[j]!r}: predecessor "
            f"{names[g]!r} has p = {_fmt(inst.p[g])} < c(1) = {_fmt(inst.c1[h_arc])} of "
            f"{inst.where_arc(h_arc)} (need p_g >= c_hj(1) for predecessors g != h)")
    # (3) on successors of each task, with c(2)
    best, best_arc, second, second_arc = _top_two(src, inst.c2, n)
    other = np.where(best_arc[src] == np.arange(inst.m), second[src], best[src])
    bad = np.flatnonzero(inst.p[dst] < other)
    if bad.size:
        a = int(bad[0])
        i, k = int(src[a]), int(dst[a])
        j_arc = int(second_arc[i] if best_arc[i] == a else best_arc[i])
        raise SmallDelayError(
            f"{inst.source}: condition (3) violated at task {names[i]!r}: successor "
            f"{names[k]!r} has p = {_fmt(inst.p[k])} < c(2) = {_fmt(inst.c2[j_arc])} of "
            f"{inst.where_arc(j_arc)} (need p_k >= c_ij(2) for successors k != j)")
