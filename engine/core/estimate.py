"""How much of a running search is done, and when it will end: Knuth's random probes
below its open rows (D. E. Knuth, "Estimating the efficiency of backtrack programs",
Math. Comp. 29 (1975) 121-136), as in the online estimators of Kilby, Slaney, Thiébaux
and Walsh, "Estimating search tree size", AAAI 2006.  The method, its cost and its
weaknesses: :class:`ProgressEstimator`.
"""
from __future__ import annotations

import logging
import math
import pickle
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from .problem import NODES

log = logging.getLogger(__name__)
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
#: the combined estimate is recomputed at most this often (it costs O(rows of the cuts kept))
REFRESH_SECONDS = 0.2
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
    probes: int                # probes finished since the start


def row_keys(batch) -> list:
    """One hashable key per node of a batch: a row's bytes (int64 rows), a node's pickle
    (the reference tier's objects).  Equal keys are equal nodes, hence equal subtrees."""
    if isinstance(batch, np.ndarray) and batch.dtype != object and batch.ndim == 2:
        b = np.ascontiguousarray(batch, dtype=np.int64)
        raw, w = b.tobytes(), b.shape[1] * 8
        return [raw[i * w:(i + 1) * w] for i in range(len(b))]
    return [pickle.dumps(x, protocol=5) for x in batch]


class _RowStats:
    """Probe sums and counts per distinct node, pooled over every cut that holds it."""

    def __init__(self):
        self.ids: dict = {}
        self.sums = np.zeros(1024, dtype=np.float64)
        self.counts = np.zeros(1024, dtype=np.int64)

    def lookup(self, keys) -> np.ndarray:
        ids = self.ids
        out = np.empty(len(keys), dtype=np.int64)
        for i, k in enumerate(keys):
            j = ids.get(k)
            if j is None:
                j = ids[k] = len(ids)
            out[i] = j
        if len(ids) > len(self.sums):
            n = max(len(ids), 2 * len(self.sums))
            self.sums = np.concatenate([self.sums, np.zeros(n - len(self.sums))])
            self.counts = np.concatenate([self.counts, np.zeros(n - len(self.counts), np.int64)])
        return out

    def keep_only(self, cuts) -> None:
        """Forget the nodes no kept cut holds (renumbering the cuts' ids)."""
        live = np.unique(np.concatenate([c.ids for c in cuts])) if cuts else np.zeros(0, np.int64)
        remap = np.full(len(self.sums), -1, dtype=np.int64)
        remap[live] = np.arange(len(live))
        self.ids = {k: int(remap[j]) for k, j in self.ids.items() if remap[j] >= 0}
        self.sums = np.concatenate([self.sums[live], np.zeros(1024)])
        self.counts = np.concatenate([self.counts[live], np.zeros(1024, np.int64)])
        for c in cuts:
            c.ids = remap[c.ids]


class _CutSample:
    """The open rows of one cut; their probes live in the pooled :class:`_RowStats`."""

    def __init__(self, rows, nodes: int, stats: _RowStats, rng: np.random.Generator):
        self.rows = rows
        self.nodes = int(nodes)
        self.m = len(rows)
        self.stats = stats
        self.ids = stats.lookup(row_keys(rows))
        self.new = stats.counts[self.ids] == 0     # nodes no earlier probe has seen
        self.order = rng.permutation(self.m)
        # probe first the rows with the fewest probes (old rows already have some)
        self.level = int(stats.counts[self.ids].min()) if self.m else 0
        self.cursor = 0            # position in ``order`` of the next row to look at
        self.probes = 0            # probes run on this cut's rows

    def remaining(self) -> float | None:
        """The estimate of the nodes below the cut's rows (None before any probe).  A
        row not probed yet counts as the mean of the probed rows that were new in this
        cut (a uniform sample of them: they are probed in a random order), or of all
        probed rows if none of those is."""
        if self.m == 0:
            return 0.0
        stats = self.stats
        counts = stats.counts[self.ids]
        seen = counts > 0
        k = int(seen.sum())
        if k == 0:
            return None
        means = stats.sums[self.ids[seen]] / counts[seen]
        total = float(means.sum())
        if k < self.m:
            fresh = seen & self.new
            pool = stats.sums[self.ids[fresh]] / counts[fresh] if fresh.any() else means
            total += (self.m - k) * float(pool.mean())
        return total

    def passes(self) -> float:
        return float(self.stats.counts[self.ids].min()) if self.m else math.inf

    def probes_held(self) -> int:
        return int(self.stats.counts[self.ids].sum())


class ProgressEstimator:
    """Fraction done and ETA of a running search from Knuth probes below its open rows.

    The backend's side is four calls::

        est = ProgressEstimator(problem)
        est.observe(rows, nodes_at_cut, incumbent)   # at every cut (rows are copied), or
        est.observe_cut(cut)                         #   an stealsearch.engine.core.epochs.Cut as it is
        est.work()                                   # between chunks / on each progress tick
        est.fraction(nodes_now)                      # in [0, 1), or None (no estimate now)
        est.finish()                                 # the search completed: fraction 1.0

    ``est.estimate(nodes_now, rate)`` gives the total and an ETA as well.  ``rows`` is a
    batch of the problem's stack codec (``cut.rows(codec)`` or ``stack.live()``); ``nodes_at_cut`` the nodes counted above them
    (``cut.nodes``); ``incumbent`` the value the kernel prunes against (the engine's
    internal one, ``cut.incumbent(problem)``; ignored in enumerate mode).

    Method
    ------
    At a **cut** (the Dask backend's consistent cut at an epoch boundary; in the sequential
    backend a copy of the live stack) the search's work splits exactly into the nodes
    already expanded, ``n``, and the subtrees below the open rows ``r_1 .. r_m``.  So the
    tree's total is ``T = n + sum_i S(r_i)``, and ``T`` is estimated by estimating each
    ``S(r_i)`` with **Knuth's random probe**: from ``r``, expand the node, pick
    one of its ``d`` children uniformly at random, expand it, and so on to a leaf; with
    ``c_j`` the nodes the kernel counted for the ``j``-th node of the path and ``d_j`` its
    number of children, ``c_0 + d_0 c_1 + d_0 d_1 c_2 + ...`` is an unbiased estimate of
    the nodes the kernel counts below ``r``.  A probe needs nothing but the engine's
    generic stack operations (:func:`stealsearch.engine.core.stack.make_stack`): push one row,
    ``run(1, incumbent)`` expands it, take the children.  So it works for every tier,
    raw kernels included, and counts nodes as the kernel counts them (a row the kernel
    pops and prunes without counting costs 0), with the search's current incumbent.

    Rows of one cut are probed in a random order, those with the fewest probes first, again
    and again; a row's estimate is the mean of its probes, and a row not probed yet counts
    as the mean of the rows probed so far (those new in this cut: they are a uniform
    sample, the random order sees to it).  With ``pool=True`` the probes of a node are kept
    across cuts for as long as a kept cut holds it (the bottom rows of a DFS stack stay for
    a long time and gather many probes); by default each cut's rows are probed afresh (a
    pooled huge probe of a bottom row skews the total for as long as the row stays open;
    benchmarks/results/estimate.md measures both).  Every cut gives
    ``T_k = n_k + R_k``; they are combined by a weighted mean with weights
    ``probes_k / (T - n_k)^2``, roughly their inverse variances (the spread of ``R_k`` grows
    with the remaining work; ``T`` is the previous combined value), so later cuts (closer to
    the end, and in optimise mode nearer the final incumbent) count most.  The weights do
    not depend on a cut's own estimate, which would favour low ones.  Then

    * fraction done ``= nodes / T``, below 1 while the search runs and exactly 1 after
      :meth:`ProgressEstimator.finish`.  Once the search has done more than ``T`` nodes the
      estimate is known to be too low: nothing is shown (None) until a later cut gives a
      higher one (the sequential backend takes one at once);
    * ETA ``= (T - nodes) / recent node rate`` (:mod:`stealsearch.engine.core.progress` and
      the page compute the rate from the same node counts).

    ``method="calibrated"`` (measured, not the default) scales the latest ``R`` by a factor
    ``c`` fitted so that ``n_k + c R_k`` is the same for every cut (least squares), i.e.
    by how much the work really done between cuts exceeded the probes' drop in ``R``: a
    correction for trees whose probes are systematically low.  It is noisier than it helps.

    This is Knuth's estimator applied to the frontier of an ongoing search, as in Kilby
    et al.'s online estimators.  Their *weighted backtrack estimator* weights the branches the
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
      subtrees, so the estimates are far *below* the truth (orders of magnitude on T3):
      the search passes them at once and no estimate is shown for most of the run.
      Geometric trees (UTS T1) are milder but skewed too: the fraction runs ahead late in
      the run (benchmarks/results/estimate.md shows by how much).
    * Optimise mode: the tree depends on the incumbent, which only improves.  Probes use
      the current incumbent, so early estimates are too high when a better solution comes
      later (the fraction done then lags, and jumps when the incumbent improves).
    * Cost per probe step is one kernel call from Python (tens of microseconds: UTS's
      kernel sets up a table per call), so 3 % of a core buys a few hundred probes a
      second; the figures are rough on any tree whose subtrees vary a lot.
    * Decide mode: the search stops at the first solution; the estimate is that of the
      exhaustive search, an upper bound on the work.
    """

    def __init__(self, problem, *, cpu_share: float = CPU_SHARE,
                 slice_seconds: float = SLICE_SECONDS, seed: int | None = 0,
                 keep_cuts: int = KEEP_CUTS, method: str = "knuth",
                 observe_every: float = OBSERVE_EVERY, observe_max_age: float = OBSERVE_MAX_AGE,
                 pool: bool = False, clock=time.perf_counter):
        if method not in METHODS:
            raise ValueError(f"unknown estimate method {method!r}; expected one of {METHODS}")
        self.problem = problem
        self.method = method
        self.pool = bool(pool)
        self.observe_every = float(observe_every)
        self.observe_max_age = float(observe_max_age)
        self._observed_at = float("-inf")
        self.cpu_share = float(cpu_share)
        self.slice_seconds = float(slice_seconds)
        self.clock = clock
        self.rng = np.random.default_rng(seed)
        self.stack = make_stack(problem)           # the probes' own stack and counters
        self.cuts: deque[_CutSample] = deque(maxlen=keep_cuts)
        self.stats = _RowStats()                   # probes per distinct node, over all cuts
        self.incumbent = int(problem.initial_incumbent())
        self.t0 = clock()
        self.spent = 0.0                           # seconds spent probing
        self.steps = 0                             # probe steps (kernel calls) run
        self.n_probes = 0                          # probes finished
        self.finished = False
        self.failed: str | None = None             # why the probes stopped, if they failed
        self._total: float | None = None          # cached combined estimate
        self._total_at = float("-inf")
        self._stale = False                        # a cut or probes came since it was computed
        self._last_knuth: float | None = None     # the previous Knuth total (the weights' reference)
        self._probe = None                         # [row index, row, weight, sum, steps]
        self.totals: dict = {}
        #: when a list, every :meth:`estimate` appends ``(clock, nodes, fraction, {method: fraction})``
        self.trace: list | None = None

    # -- feeding it ----------------------------------------------------------------------
    def observe(self, rows, nodes: int, incumbent: int | None = None) -> None:
        """A new cut: its open ``rows`` (copied here) and the ``nodes`` counted above them.
        Its cost (copying and keying the rows) counts against ``cpu_share``."""
        start = self.clock()
        if incumbent is not None:
            self.incumbent = int(incumbent)
        if not self.pool:
            self.stats = _RowStats()
        self.cuts.append(_CutSample(rows.copy(), nodes, self.stats, self.rng))
        if self.pool and len(self.stats.ids) > 4 * sum(c.m for c in self.cuts) + 10_000:
            self.stats.keep_only(self.cuts)
        self._probe = None
        self._total = None
        self._stale = True
        self._observed_at = now = self.clock()
        self.spent += now - start

    def observe_cut(self, cut) -> None:
        """A consistent cut of the Dask backend (:class:`stealsearch.engine.core.epochs.Cut`): all its open
        rows, the nodes committed above them and its incumbent."""
        self.observe(cut.rows(self.stack.codec), cut.nodes, cut.incumbent(self.problem))

    def wants_cut(self, nodes: int | None = None) -> bool:
        """Whether a backend that can take a cut at will (the sequential one) should hand
        one now: none yet; or ``observe_every`` s passed and the last cut has had
        ``PASS_PROBES`` probes (one per row if fewer) or the search has passed the
        estimated total (``nodes``: the nodes done now); or the last is
        ``observe_max_age`` s old.  Never while the estimator is over its CPU share."""
        if not self.cuts:
            return True
        now = self.clock()
        age = now - self._observed_at
        if self.budget_left(now) < 0:             # a cut costs (keying its rows): not now
            return False
        if age >= self.observe_max_age:
            return True
        if age < self.observe_every:
            return False
        cut = self.cuts[-1]
        if cut.probes >= PASS_PROBES or cut.passes() >= 1:
            return True
        total = self.total()
        return nodes is not None and total is not None and nodes >= total

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
        except Exception as exc:  # noqa: BLE001 - an estimate must never stop a search
            log.warning("the progress estimate stopped: a probe failed (%r)", exc)
            self.failed = repr(exc)
            self.finished = True
            return finished
        finally:
            self.spent += self.clock() - start
        if finished:
            self._stale = True
        return finished

    def _step(self, cut: _CutSample) -> bool:
        """One kernel call of the current probe (starting one if none); True when a probe
        ended and was recorded."""
        if self._probe is None:
            counts = cut.stats.counts
            while True:                            # the next row with the fewest probes
                if cut.cursor % cut.m == 0:
                    cut.level = int(counts[cut.ids].min())
                i = int(cut.order[cut.cursor % cut.m])
                cut.cursor += 1
                if counts[cut.ids[i]] <= cut.level:
                    break
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
            cut.stats.sums[cut.ids[i]] += total
            cut.stats.counts[cut.ids[i]] += 1
            cut.probes += 1
            self.n_probes += 1
            self._probe = None
            return True
        j = int(self.rng.integers(d))
        self._probe = [i, children[j:j + 1], weight * d, total, steps]
        return False

    def finish(self) -> None:
        """The search is complete: the fraction is 1 from now on (unless probes failed:
        then there is no estimate at all)."""
        self.finished = True
        self._probe = None

    # -- reading it ----------------------------------------------------------------------
    def total(self) -> float | None:
        """The estimated nodes of the whole search (None before enough probes)."""
        now = self.clock()
        if not self._stale or (self._total is not None and (
                now - self._total_at < REFRESH_SECONDS or self.budget_left(now) < 0)):
            return self._total                     # nothing new, or not worth it yet
        try:
            return self._combine()
        finally:
            self._total_at = later = self.clock()
            self._stale = False
            self.spent += later - now

    def _combine(self) -> float | None:
        pts = []                                   # (nodes at the cut, remaining, probes)
        for cut in self.cuts:
            r = cut.remaining()
            if r is not None and (cut.probes >= min(cut.m, MIN_PROBES)
                                  or cut.passes() >= 1):
                pts.append((cut.nodes, r, cut.probes_held()))
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
        """Fraction and ETA at ``nodes`` done, with ``rate`` nodes/s (no rate: no ETA);
        None before enough probes, and while the search is past the estimated total."""
        nodes = int(nodes)
        if self.failed is not None:
            return None
        if self.finished:
            return Estimate(nodes, float(nodes), 1.0, 0.0, self.probes())
        total = self.total()
        if total is None:
            return None
        frac, left = self._fraction(total, nodes)
        if frac is None:
            if self.trace is not None:
                self.trace.append((self.clock(), nodes, None,
                                   {k: self._fraction(t, nodes)[0] for k, t in self.totals.items()}))
            return None
        eta = None if not rate or rate <= 0 else left / rate
        if self.trace is not None:
            self.trace.append((self.clock(), nodes, frac,
                               {k: self._fraction(t, nodes)[0] for k, t in self.totals.items()}))
        return Estimate(nodes, total, frac, eta, self.probes())

    @staticmethod
    def _fraction(total: float, nodes: int) -> tuple[float | None, float]:
        """``(fraction done, nodes left)`` for an estimated ``total``; the fraction is None
        once the search has passed the total (the estimate is then known to be too low,
        and nothing is claimed until a cut gives a higher one)."""
        left = total - nodes
        if left <= 0 and nodes > 0:
            return None, 0.0
        frac = nodes / total if total > 0 else 0.0
        return min(RUNNING_CAP, max(0.0, frac)), max(0.0, left)

    def fraction(self, nodes: int) -> float | None:
        """The fraction done at ``nodes`` (in [0, 1]; None before any probe)."""
        e = self.estimate(nodes)
        return None if e is None else e.fraction

    def probes(self) -> int:
        """Probes finished since the start."""
        return self.n_probes
