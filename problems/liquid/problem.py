"""Liquid-schedule searches as engine plug-ins (seed 000, §3 and Annex).

* :class:`LiquidScheduleProblem` (decide): does X have a liquid schedule?  The tree of
  §3.2 (Fig. 8): at each node the reduced traffic with its own bottlenecks recomputed;
  steps among the full teams of the reduced traffic, generated without repetition from
  skeletons expanded by non-congesting transfers; a node without a team is a dead end
  (Theorem 2), the path to an empty traffic is a liquid schedule (Theorem 1).
* :class:`TeamCountProblem` (enumerate): the number of teams / full teams of X.
* :class:`ColouringProblem` (optimise): the optimal schedule = a minimum colouring of the
  congestion graph (Annex), Λ as the lower bound, used when no liquid schedule exists.
* :func:`schedule_traffic`: decide first, colour if no liquid schedule, and report.

See :mod:`stealsearch.problems.liquid.kernels` for the row layouts and for what the kernels add to
the paper's tree while keeping it exact (an anchor transfer per step, no dead "without"
branch for a bottleneck's last candidate, value ordering by link loads).

>>> from stealsearch.problems.liquid.topology import fig1_traffic
>>> r = schedule_traffic(fig1_traffic(), backend="sequential")
>>> r["status"], r["length"], r["liquid"]
('liquid', 6, True)
"""
from __future__ import annotations

import time

import numpy as np

from stealsearch.engine.core.errors import InputError
from stealsearch.engine.core.problem import Mode, Problem, SolutionError

from . import kernels as K
from .model import Traffic
from .verify import verify_schedule


def bitset_tables(traffic: Traffic):
    """``conf``, ``users``, ``tlinks`` as int64 bitset tables (see kernels docstring)."""
    n, L = traffic.size, len(traffic.links)
    W, LW = max(1, (n + 63) // 64), max(1, (L + 63) // 64)
    index = {l: i for i, l in enumerate(traffic.links)}
    tl = np.zeros((max(n, 1), LW), dtype=np.uint64)
    us = np.zeros((max(L, 1), W), dtype=np.uint64)
    for t, tr in enumerate(traffic.transfers):
        for name in tr.links:
            l = index[name]
            tl[t, l >> 6] |= np.uint64(1) << np.uint64(l & 63)
            us[l, t >> 6] |= np.uint64(1) << np.uint64(t & 63)
    conf = np.zeros((max(n, 1), W), dtype=np.uint64)
    for t, tr in enumerate(traffic.transfers):
        for name in tr.links:
            conf[t] |= us[index[name]]
        conf[t, t >> 6] &= ~(np.uint64(1) << np.uint64(t & 63))
    return conf.view(np.int64), us.view(np.int64), tl.view(np.int64), W, LW


def _layout(n: int, L: int, W: int, LW: int, anchor: bool, full: bool) -> np.ndarray:
    p = np.zeros(K.N_PARAMS, dtype=np.int64)
    p[K.P_N], p[K.P_L], p[K.P_W], p[K.P_LW] = n, L, W, LW
    p[K.P_ANCHOR], p[K.P_FULL] = int(anchor), int(full)
    off = 4
    for slot, size in ((K.P_OR, W), (K.P_OA, W), (K.P_OC, W), (K.P_OE, W),
                       (K.P_OBN, LW), (K.P_OCOV, LW), (K.P_OLOAD, (L + 3) // 4),
                       (K.P_OAS, (n + 3) // 4)):
        p[slot] = off
        off += size
    p[K.P_WIDTH] = off
    return p


def _set_bits(row: np.ndarray, off: int, ids) -> None:
    u = row.view(np.uint64)
    for t in ids:
        u[off + (t >> 6)] |= np.uint64(1) << np.uint64(t & 63)


class _TrafficProblem(Problem):
    extra_counters = (("steps_taken", "sum"), ("dead_ends", "sum"))

    def __init__(self, traffic: Traffic, anchor: bool = True, full: bool = True):
        if traffic.size == 0:
            raise InputError("the traffic is empty: nothing to schedule")
        self.traffic = traffic
        self.duration = traffic.duration()
        if self.duration > 65535:
            raise InputError(f"duration {self.duration} exceeds the 65535 steps a row can record")
        self.conf, self.users, self.tlinks, W, LW = bitset_tables(traffic)
        self.params = _layout(traffic.size, len(traffic.links), W, LW, anchor, full)
        index = {l: i for i, l in enumerate(traffic.links)}
        maxlen = max(len(t.links) for t in traffic.transfers)
        self.tlist = np.full((traffic.size, maxlen), -1, dtype=np.int64)
        for i, t in enumerate(traffic.transfers):
            self.tlist[i, :len(t.links)] = sorted(index[l] for l in t.links)
        self.params[K.P_MAXLEN] = maxlen
        self.row_width = int(self.params[K.P_WIDTH])
        self.anchor = anchor

    def kernel_data(self) -> tuple:
        return (self.conf, self.users, self.tlinks, self.tlist, self.params)

    def _bottleneck_ids(self) -> list[int]:
        idx = {l: i for i, l in enumerate(self.traffic.links)}
        return [idx[l] for l in self.traffic.bottlenecks()]


class LiquidScheduleProblem(_TrafficProblem):
    """Decide mode: a liquid schedule of ``traffic`` exists (target 1) or not.

    ``anchor`` (default on) starts every step from one anchor transfer (symmetry
    breaking, see :mod:`stealsearch.problems.liquid.kernels`); off gives the paper's plain tree.

    >>> from stealsearch.engine.solve import solve
    >>> from stealsearch.problems.liquid.topology import fig1_traffic
    >>> solve(LiquidScheduleProblem(fig1_traffic()), backend="sequential").status
    'found'
    """

    name = "liquid"
    kernel = staticmethod(K.liquid_kernel)
    max_children = 2
    mode = Mode.DECIDE
    target = 1

    def __init__(self, traffic: Traffic, anchor: bool = True):
        super().__init__(traffic, anchor=anchor, full=True)
        self.solution_size = traffic.size

    def root_frontier(self) -> np.ndarray:
        row = np.zeros((1, self.row_width), dtype=np.int64)
        _set_bits(row[0], int(self.params[K.P_OR]), range(self.traffic.size))
        row[0, 2] = self.duration
        return row

    def decode(self, solution: np.ndarray, value: int) -> list[list[int]]:
        steps: dict[int, list[int]] = {}
        for t, s in enumerate(solution.tolist()):
            steps.setdefault(int(s), []).append(t)
        return [steps[s] for s in sorted(steps)]

    def verify(self, solution, value) -> bool:
        verify_schedule(self.traffic, solution, require_liquid=True)
        return True

    def describe(self) -> dict:
        return {"problem": self.name, "traffic": self.traffic.name, "transfers": self.traffic.size,
                "duration": self.duration, "anchor": self.anchor}


class TeamCountProblem(_TrafficProblem):
    """Enumerate mode: count the teams (``full=False``) or full teams (``full=True``)
    of ``traffic`` (the first level of the search tree, §3.2).

    >>> from stealsearch.engine.solve import solve
    >>> from stealsearch.problems.liquid.topology import fig1_traffic
    >>> solve(TeamCountProblem(fig1_traffic(), full=True), backend="sequential").count > 0
    True
    """

    name = "liquid-teams"
    kernel = staticmethod(K.teams_kernel)
    max_children = 2
    mode = Mode.ENUMERATE
    solution_size = 1

    def __init__(self, traffic: Traffic, full: bool = False):
        super().__init__(traffic, anchor=False, full=full)
        self.full = full

    def root_frontier(self) -> np.ndarray:
        row = np.zeros((1, self.row_width), dtype=np.int64)
        n = self.traffic.size
        _set_bits(row[0], int(self.params[K.P_OR]), range(n))
        _set_bits(row[0], int(self.params[K.P_OC]), range(n))
        _set_bits(row[0], int(self.params[K.P_OBN]), self._bottleneck_ids())
        row[0, 0] = 1
        row[0, 2] = self.duration
        return row

    def describe(self) -> dict:
        return {"problem": self.name, "traffic": self.traffic.name, "transfers": self.traffic.size,
                "full": self.full}


def greedy_colouring(traffic: Traffic) -> list[list[int]]:
    """DSATUR colouring of the congestion graph: a schedule (upper bound) and a vertex
    order for the exact search.

    >>> from stealsearch.problems.liquid.topology import no_team_traffic
    >>> greedy_colouring(no_team_traffic())
    [[0], [1], [2]]
    """
    n = traffic.size
    adj = [set() for _ in range(n)]
    for a, b in traffic.congestion_edges():
        adj[a].add(b)
        adj[b].add(a)
    colour = [-1] * n
    sat = [set() for _ in range(n)]
    classes: list[list[int]] = []
    for _ in range(n):
        v = max((u for u in range(n) if colour[u] < 0), key=lambda u: (len(sat[u]), len(adj[u]), -u))
        c = 0
        while c in sat[v]:
            c += 1
        colour[v] = c
        if c == len(classes):
            classes.append([])
        classes[c].append(v)
        for u in adj[v]:
            sat[u].add(c)
    return [sorted(cl) for cl in classes]


class ColouringProblem(Problem):
    """Optimise mode: the shortest schedule = minimum colouring of the congestion graph
    (Annex), objective = -(number of steps), Λ(X) as the lower bound, DSATUR as the
    initial incumbent (so the result is always a schedule, proven optimal when the
    search completes).

    >>> from stealsearch.engine.solve import solve
    >>> from stealsearch.problems.liquid.topology import no_team_traffic
    >>> r = solve(ColouringProblem(no_team_traffic()), backend="sequential")
    >>> r.status, r.objective
    ('optimal', 3)
    """

    name = "liquid-colouring"
    kernel = staticmethod(K.colour_kernel)
    mode = Mode.OPTIMISE
    objective_sense = -1

    def __init__(self, traffic: Traffic):
        if traffic.size == 0:
            raise InputError("the traffic is empty: nothing to schedule")
        self.traffic = traffic
        self.duration = traffic.duration()
        self.greedy = greedy_colouring(traffic)
        self.conf, _, _, W, _ = bitset_tables(traffic)
        n = traffic.size
        kmax = len(self.greedy)
        # vertex order: the greedy's classes, largest-degree vertices of each class first
        deg = [0] * n
        for a, b in traffic.congestion_edges():
            deg[a] += 1
            deg[b] += 1
        colour_of = {v: c for c, cl in enumerate(self.greedy) for v in cl}
        self.order = np.array(sorted(range(n), key=lambda v: (-deg[v], colour_of[v], v)), dtype=np.int64)
        self.cparams = np.array([n, W, kmax, self.duration], dtype=np.int64)
        self.row_width = 2 + kmax * W
        self.max_children = kmax + 1
        self.solution_size = n

    def kernel_data(self) -> tuple:
        return (self.conf, self.order, self.cparams)

    def root_frontier(self) -> np.ndarray:
        return np.zeros((1, self.row_width), dtype=np.int64)

    def initial_incumbent(self) -> int:
        return -len(self.greedy)

    def initial_solution(self):
        return [list(c) for c in self.greedy]

    def row_bounds(self, rows: np.ndarray) -> np.ndarray:
        return -np.maximum(rows[:, 1], self.duration)

    def decode(self, solution: np.ndarray, value: int) -> list[list[int]]:
        steps: dict[int, list[int]] = {}
        for t, c in enumerate(solution.tolist()):
            steps.setdefault(int(c), []).append(t)
        return [steps[c] for c in sorted(steps)]

    def verify(self, solution, value) -> bool:
        info = verify_schedule(self.traffic, solution)
        # the engine hands the kernel's value (-steps) to the verifier
        if info["length"] != abs(int(value)):
            raise SolutionError(f"schedule has {info['length']} steps, objective says {value}")
        return True

    def describe(self) -> dict:
        return {"problem": self.name, "traffic": self.traffic.name, "transfers": self.traffic.size,
                "duration": self.duration, "greedy_steps": len(self.greedy)}


def count_teams(traffic: Traffic, full: bool = False, **solve_kwargs) -> int:
    """Number of teams (or full teams) of ``traffic``, counted on the engine.

    >>> from stealsearch.problems.liquid.topology import no_team_traffic
    >>> count_teams(no_team_traffic(), backend="sequential")
    0
    """
    from stealsearch.engine.solve import solve

    if traffic.size == 0:
        return 0
    solve_kwargs.setdefault("backend", "sequential")
    return int(solve(TeamCountProblem(traffic, full=full), **solve_kwargs).count)


def schedule_traffic(traffic: Traffic, *, colour_if_not_liquid: bool = True, anchor: bool = True,
                     **solve_kwargs) -> dict:
    """Search a liquid schedule; if none exists, the optimal schedule by colouring.

    Returns a dict: ``status`` is ``liquid`` (a verified liquid schedule), ``optimal, not
    liquid`` (no liquid schedule; the colouring search proved the length optimal),
    ``not liquid`` (no liquid schedule; colouring interrupted: best schedule found and
    proven bound), or ``unknown`` (the liquid search itself was interrupted).
    ``solve_kwargs`` go to :func:`stealsearch.engine.solve.solve` (backend, client, node_limit...).
    """
    from stealsearch.engine.solve import solve

    from .roundrobin import round_robin_summary

    t0 = time.perf_counter()
    out = dict(traffic.summary())
    out.update(round_robin_summary(traffic))
    if traffic.size == 0:
        out.update(status="liquid", schedule=[], length=0, liquid=True, nodes=0,
                   wall_seconds=time.perf_counter() - t0, search=None)
        return out
    res = solve(LiquidScheduleProblem(traffic, anchor=anchor), **solve_kwargs)
    out["search"] = res.as_dict()
    out["nodes"] = res.nodes
    out["search_seconds"] = res.search_seconds
    if res.status == "found":
        out.update(status="liquid", schedule=res.solution, length=len(res.solution), liquid=True)
    elif res.status == "interrupted":
        out.update(status="unknown", schedule=None, length=None, liquid=None)
    else:
        out.update(status="no liquid schedule", schedule=None, length=None, liquid=False)
        if colour_if_not_liquid:
            col = solve(ColouringProblem(traffic), **solve_kwargs)
            out["colouring"] = col.as_dict()
            out["nodes"] += col.nodes
            out["schedule"] = col.solution
            out["length"] = len(col.solution)
            if col.status == "optimal":
                out["status"] = "optimal, not liquid"
            else:
                out["status"] = "not liquid"
                out["length_lower_bound"] = col.bound
    if out.get("length"):
        out["schedule_throughput"] = traffic.throughput_of_length(out["length"])
    out["wall_seconds"] = time.perf_counter() - t0
    return out
