"""How much of a running search is done, and when it will end: Knuth probes below its open rows.

Method
------
At a **cut** (the Dask backend's consistent cut at an epoch boundary; in the sequential
backend a copy of the live stack) the search's work splits exactly into the nodes
already expanded, ``n``, and the subtrees below the open rows ``r_1 .. r_m``.  So the
tree's total is ``T = n + sum_i S(r_i)``, and ``T`` is estimated by estimating each
``S(r_i)`` with **Knuth's random probe** (D. E. Knuth, "Estimating the efficiency of
backtrack programs", Math. Comp. 29 (1975) 121-136): from ``r``, expand the node, pick
one of its ``d`` children uniformly at random, expand it, and so on to a leaf; with
``c_j`` the nodes the kernel counted for the ``j``-th node of the path and ``d_j`` its
number of children, ``c_0 + d_0 c_1 + d_0 d_1 c_2 + ...`` is an unbiased estimate of
the nodes the kernel counts below ``r``.  A probe needs nothing but the engine's
generic stack operations (:func:`engine.stack.make_stack`): push one row,
``run(1, incumbent)`` expands it, take the children.  So it works for every tier,
raw kernels included, and counts nodes as the kernel counts them (a row the kernel
pops and prunes without counting costs 0), with the search's current incumbent.

Rows of one cut are probed in a random order (so the first pass is a uniform sample of
rows: ``(m / k) * sum`` over the ``k`` probed rows is unbiased), then again and again
in the same order, each row's estimate the mean of its probes.  Every cut gives an
estimate ``T_k = n_k + R_k``; they are combined by a weighted mean with weights
``probes_k / (T - n_k)^2``, roughly their inverse variances (the spread of ``R_k`` grows
with the remaining work; ``T`` is the previous combined value), so later cuts (closer to
the end, and in optimise mode nearer the final incumbent) count most.  The weights do
not depend on a cut's own estimate, which would favour low ones.  Then

* fraction done ``= nodes / max(T, nodes)`` (below 1 while the search runs; exactly 1
  after :meth:`ProgressEstimator.finish`);
* ETA ``= (T - nodes) / recent node rate`` (the caller's rate; :mod:`engine.progress`
  computes it from the same nodes).

This is Knuth's estimator applied to the frontier of an ongoing search, as in the
online estimators of P. Kilby, J. Slaney, S. Thiébaux, T. Walsh, "Estimating search
tree size", AAAI 2006.  Their *weighted backtrack estimator* weights the branches the
search itself has completed; it needs the depth of every completed branch, which only
the kernel sees (kernels are opaque numba code run a chunk at a time), so it is not
available here; probes from the open rows are.

Cost and isolation
------------------
Probes run in the caller's thread between the search's chunks (sequential backend) or
in the client while an epoch runs (Dask backend): :meth:`work` runs probe steps for at
most a slice of time and never more than ``cpu_share`` of the time since the
estimator started (default 3 %).  A probe is a resumable state (current row, weight,
sum), so one deep probe is spread over many slices.  Probes run on a stack of their
own, on copies of the rows, with a private random generator; they never touch the
search's stacks, counters or incumbent (an improvement a probe happens to find is
dropped), so the search's counts are the same with or without the estimate.

Known weaknesses
----------------
* Heavy-tailed trees.  Knuth's estimate is unbiased but its distribution can be very
  skewed: on UTS T3 (binomial, q m = 0.999, a near-critical branching process) almost
  every probe ends after a step or two and the mass of the tree sits in rare deep
  subtrees, so most estimates are far *below* the truth and the fraction done runs
  ahead until the search has passed the deep subtrees (benchmarks/results/estimate.md
  shows by how much).
* Optimise mode: the tree depends on the incumbent, which only improves.  Probes use
  the current incumbent, so early estimates are too high when a better solution comes
  later (the fraction done then lags, and jumps when the incumbent improves).
* Decide mode: the search stops at the first solution; the estimate is that of the
  exhaustive search, an upper bound on the work.
"""
from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from .problem import NODES
from .stack import make_stack

#: share of one core the probes may take (measured from the estimator's start)
CPU_SHARE = 0.03
#: the longest single :meth:`ProgressEstimator.work` call, in seconds
SLICE_SECONDS = 0.02
#: cuts whose estimates are combined (the oldest are forgotten first)
KEEP_CUTS = 32
#: a probe is abandoned (counted as what it has summed so far) after this many steps
MAX_PROBE_STEPS = 100_000
#: while the search runs, the fraction shown stays below this
RUNNING_CAP = 0.999
#: a cut counts once this many of its rows (or all) have been probed
MIN_PROBES = 16
#: a new cut is wanted once the last has had this many probes (or one per row)
PASS_PROBES = 256
#: the calibrated method needs this many cuts before it departs from plain Knuth
MIN_CUTS = 4
#: seconds of probing granted at the start (so a first estimate comes at once)
ALLOWANCE = 0.02
#: a new cut is wanted once the last was probed through and this many seconds passed
OBSERVE_EVERY = 1.0
#: ... and after this many seconds even if it was not
OBSERVE_MAX_AGE = 10.0
METHODS = ("knuth", "calibrated")


@dataclass
class Estimate:
    """What the estimator says at one moment."""

    nodes: int                 # nodes done now
    total: float               # estimated nodes of the whole search
    fraction: float            # nodes / total, in [0, 1]
    eta: float | None          # seconds left, from the rate given (None: no rate)
    probes: int                # probes finished, over all cuts kept


class _CutSample:
    """The open rows of one cut and the probes run below them."""

    def __init__(self, rows, nodes: int, rng: np.random.Generator):
        self.rows = rows
        self.nodes = int(nodes)
        self.m = len(rows)
        self.order = rng.permutation(self.m)
        self.sums = np.zeros(self.m, dtype=np.float64)
        self.counts = np.zeros(self.m, dtype=np.int64)
        self.cursor = 0            # position in ``order`` of the next row to probe
        self.probes = 0

    def remaining(self) -> float | None:
        """The estimate of the nodes below the cut's rows (None before any probe)."""
        if self.m == 0:
            return 0.0
        seen = self.counts > 0
        k = int(seen.sum())
        if k == 0:
            return None
        per_row = self.sums[seen] / self.counts[seen]
        return float(per_row.sum()) * (self.m / k)

    def passes(self) -> float:
        return self.probes / self.m if self.m else math.inf


class ProgressEstimator:
    """Fraction done and ETA of a running search from Knuth probes below its open rows.

    See the module docstring for the method, its references and its weaknesses.  The
    backend's side is four calls::

        est = ProgressEstimator(problem)
        est.observe(rows, nodes_at_cut, incumbent)   # at every cut (rows are copied)
        est.work()                                   # between chunks / on each progress tick
        est.fraction(nodes_now)                      # None until a probe has finished
        est.finish()                                 # the search completed: fraction 1.0

    ``rows`` is a batch of the problem's stack codec (``cut.rows(codec)`` or
    ``stack.live()``); ``nodes_at_cut`` the nodes counted above them
    (``cut.nodes``); ``incumbent`` the value the kernel prunes against (the engine's
    internal one, ``cut.incumbent(problem)``; ignored in enumerate mode).
    """

    def __init__(self, problem, *, cpu_share: float = CPU_SHARE,
                 slice_seconds: float = SLICE_SECONDS, seed: int | None = 0,
                 keep_cuts: int = KEEP_CUTS, method: str = "knuth",
                 observe_every: float = OBSERVE_EVERY, observe_max_age: float = OBSERVE_MAX_AGE,
                 clock=time.perf_counter):
        if method not in METHODS:
            raise ValueError(f"unknown estimate method {method!r}; expected one of {METHODS}")
        self.problem = problem
        self.method = method
        self.observe_every = float(observe_every)
        self.observe_max_age = float(observe_max_age)
        self._observed_at = float("-inf")
        self.cpu_share = float(cpu_share)
        self.slice_seconds = float(slice_seconds)
        self.clock = clock
        self.rng = np.random.default_rng(seed)
        self.stack = make_stack(problem)           # the probes' own stack and counters
        self.cuts: deque[_CutSample] = deque(maxlen=keep_cuts)
        self.incumbent = int(problem.initial_incumbent())
        self.t0 = clock()
        self.spent = 0.0                           # seconds spent probing
        self.steps = 0                             # probe steps (kernel calls) run
        self.finished = False
        self._total: float | None = None          # cached combined estimate
        self._last_knuth: float | None = None     # the previous Knuth total (the weights' reference)
        self._probe = None                         # [row index, row, weight, sum, steps]
        self.totals: dict = {}
        #: when a list, every :meth:`estimate` appends ``(clock, nodes, fraction, {method: fraction})``
        self.trace: list | None = None

    # -- feeding it ----------------------------------------------------------------------
    def observe(self, rows, nodes: int, incumbent: int | None = None) -> None:
        """A new cut: its open ``rows`` (copied here) and the ``nodes`` counted above them."""
        if incumbent is not None:
            self.incumbent = int(incumbent)
        self.cuts.append(_CutSample(rows.copy(), nodes, self.rng))
        self._probe = None
        self._total = None
        self._observed_at = self.clock()

    def wants_cut(self, nodes: int | None = None) -> bool:
        """Whether a backend that can take a cut at will (the sequential one) should hand
        one now: none yet; or ``observe_every`` s passed and the last cut has had
        ``PASS_PROBES`` probes (one per row if fewer) or the search has passed the
        estimated total (``nodes``: the nodes done now); or the last is
        ``observe_max_age`` s old."""
        if not self.cuts:
            return True
        age = self.clock() - self._observed_at
        if age >= self.observe_max_age:
            return True
        if age < self.observe_every:
            return False
        cut = self.cuts[-1]
        if cut.probes >= min(cut.m, PASS_PROBES):
            return True
        total = self.total()
        return nodes is not None and total is not None and nodes >= total

    def latest_cut_passes(self) -> float:
        """How many times (on average) each row of the newest cut has been probed."""
        return self.cuts[-1].passes() if self.cuts else 0.0

    def budget_left(self, now: float | None = None) -> float:
        """Seconds of probing allowed now (``cpu_share`` of the time since the start)."""
        now = self.clock() if now is None else now
        return ALLOWANCE + self.cpu_share * (now - self.t0) - self.spent

    def work(self, seconds: float | None = None) -> int:
        """Run probe steps for at most ``seconds`` (default: the slice) and at most what
        ``cpu_share`` allows now; returns the probes finished."""
        if not self.cuts or self.finished:
            return 0
        start = self.clock()
        allowed = min(self.slice_seconds if seconds is None else seconds, self.budget_left(start))
        if allowed <= 0:
            return 0
        end = start + allowed
        finished = 0
        cut = self.cuts[-1]
        if cut.m == 0:
            return 0
        try:
            while True:
                if self._step(cut):
                    finished += 1
                if self.clock() >= end:
                    break
        finally:
            self.spent += self.clock() - start
        if finished:
            self._total = None
        return finished

    def _step(self, cut: _CutSample) -> bool:
        """One kernel call of the current probe (starting one if none); True when a probe
        ended and was recorded."""
        if self._probe is None:
            i = int(cut.order[cut.cursor % cut.m])
            cut.cursor += 1
            self._probe = [i, cut.rows[i:i + 1], 1.0, 0.0, 0]
        i, row, weight, total, steps = self._probe
        st = self.stack
        st.take_all()                              # a probe's stack holds one path's children
        st.push(row)
        before = st.counters[NODES]
        st.run(1, self.incumbent)
        total += weight * float(st.counters[NODES] - before)
        children = st.take_all()
        d = len(children)
        steps += 1
        self.steps += 1
        if d == 0 or steps >= MAX_PROBE_STEPS:
            cut.sums[i] += total
            cut.counts[i] += 1
            cut.probes += 1
            self._probe = None
            return True
        j = int(self.rng.integers(d))
        self._probe = [i, children[j:j + 1], weight * d, total, steps]
        return False

    def finish(self) -> None:
        """The search is complete: the fraction is 1 from now on."""
        self.finished = True
        self._probe = None

    # -- reading it ----------------------------------------------------------------------
    def total(self) -> float | None:
        """The estimated nodes of the whole search (None before enough probes)."""
        if self._total is not None:
            return self._total
        pts = []                                   # (nodes at the cut, remaining, probes)
        for cut in self.cuts:
            r = cut.remaining()
            if r is not None and (cut.probes >= min(cut.m, MIN_PROBES)):
                pts.append((cut.nodes, r, cut.probes))
        if not pts:
            return None
        knuth = self._knuth_total(pts)
        c = self._calibration(pts)
        calibrated = knuth if c is None else pts[-1][0] + c * pts[-1][1]
        #: both methods' totals (the benchmark compares them on the same probes)
        self.totals = {"knuth": knuth, "calibrated": calibrated}
        self._last_knuth = knuth
        self._total = self.totals[self.method]
        return self._total

    def _knuth_total(self, pts) -> float:
        """The cuts' ``n_k + R_k``, weighted by ``probes_k / (T - n_k)^2``."""
        ref = pts[-1][0] + pts[-1][1] if self._last_knuth is None else self._last_knuth
        floor = 0.01 * max(ref, 1.0)
        weights = [max(p, 1) / max(ref - n, floor) ** 2 for n, _, p in pts]
        return sum(w * (n + r) for w, (n, r, _) in zip(weights, pts)) / sum(weights)

    @staticmethod
    def _calibration(pts) -> float | None:
        """The factor ``c`` with ``n_k + c R_k`` the same for every cut (least squares of
        ``n_k`` on ``R_k``: ``c`` is minus the slope), or None when the cuts cannot tell
        (fewer than ``MIN_CUTS``, no spread, or a slope of the wrong sign)."""
        if len(pts) < MIN_CUTS:
            return None
        n = np.array([p[0] for p in pts], dtype=np.float64)
        r = np.array([p[1] for p in pts], dtype=np.float64)
        rc = r - r.mean()
        var = float(rc @ rc)
        if var <= 1e-12 * max(float(r @ r), 1.0):
            return None
        c = -float(rc @ (n - n.mean())) / var
        return c if c > 0 else None

    def estimate(self, nodes: int, rate: float | None = None) -> Estimate | None:
        """Fraction and ETA at ``nodes`` done, with ``rate`` nodes/s (None: no ETA)."""
        nodes = int(nodes)
        if self.finished:
            return Estimate(nodes, float(nodes), 1.0, 0.0, self.probes())
        total = self.total()
        if total is None:
            return None
        frac, left = self._fraction(total, nodes)
        eta = None if not rate or rate <= 0 else left / rate
        if self.trace is not None:
            self.trace.append((self.clock(), nodes, frac,
                               {k: self._fraction(t, nodes)[0] for k, t in self.totals.items()}))
        return Estimate(nodes, total, frac, eta, self.probes())

    def _fraction(self, total: float, nodes: int) -> tuple[float, float]:
        """``(fraction done, nodes left)`` for an estimated ``total``."""
        left = total - nodes
        if left <= 0:
            # the search went past the estimate: it is too low; until a new cut says
            # more, the latest cut's remaining less what was done since is what is known
            last = self.cuts[-1]
            left = max(0.0, (last.remaining() or 0.0) - (nodes - last.nodes))
        frac = nodes / (nodes + left) if nodes + left > 0 else 0.0
        return min(RUNNING_CAP, max(0.0, frac)), left

    def fraction(self, nodes: int) -> float | None:
        """The fraction done at ``nodes`` (in [0, 1]; None before any probe)."""
        e = self.estimate(nodes)
        return None if e is None else e.fraction

    def probes(self) -> int:
        return int(sum(c.probes for c in self.cuts))
