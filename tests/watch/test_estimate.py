"""The fraction-done estimate (stealsearch.engine.core.estimate): exact where Knuth's estimator is exact,
always in [0, 1], 1 at the end, and invisible to the search's counts."""
import io

import numpy as np
import pytest

from stealsearch.engine import PythonProblem, StealPolicy
from stealsearch.engine.core.estimate import ProgressEstimator
from stealsearch.engine.core.progress import RATE_SECONDS, Progress
from stealsearch.engine.transports.sequential import run_sequential
from stealsearch.engine.core.stack import make_stack
from stealsearch.problems.clique.generators import gnp
from stealsearch.problems.clique.problem import CliqueProblem
from stealsearch.problems.uts.problem import UTSParams, UTSProblem


class CompleteTree(PythonProblem):
    """The complete ``b``-ary tree of height ``h`` (nodes are depths): every probe is exact."""

    mode = "enumerate"

    def __init__(self, b: int, h: int):
        super().__init__()
        self.b, self.h = b, h

    def root(self):
        return 0

    def children(self, d):
        return [d + 1] * self.b if d < self.h else []

    def is_solution(self, d):
        return d == self.h

    def size(self, below: int = 0) -> int:
        """Nodes of the subtree of a node at depth ``below``."""
        return sum(self.b ** k for k in range(self.h - below + 1))


def ticking(step: float = 0.0002):
    """A clock for the estimator that advances ``step`` seconds each time it is read:
    its probing slices, CPU share and cut ages then depend on what it did, not on how
    fast this machine did it."""
    now = [0.0]

    def clock():
        now[0] += step
        return now[0]
    return clock


def probed(est: ProgressEstimator, probes: int) -> None:
    while est.probes() < probes:
        est.work(seconds=1.0)


def test_knuth_estimate_is_exact_on_a_complete_tree():
    tree = CompleteTree(3, 6)
    est = ProgressEstimator(tree, cpu_share=1.0, seed=5)
    est.observe(make_stack(tree).codec.empty(), 0)           # no open rows: nothing left
    assert est.total() == 0
    # at the root: the whole tree
    est = ProgressEstimator(tree, cpu_share=1.0, seed=5)
    stack = make_stack(tree)
    stack.push(tree.root_frontier())
    est.observe(stack.live(), 0)
    probed(est, 3)
    assert est.total() == pytest.approx(1093, rel=1e-12) and tree.size() == 1093
    # midway through the search: nodes done + the probes below the open rows, exactly
    stack.run(200, 0)
    rows = stack.live()
    assert len(rows) > 1
    est.observe(rows, stack.nodes)
    probed(est, est.probes() + len(rows))
    assert est.total() == pytest.approx(tree.size(), rel=1e-12)   # a new cut: computed afresh
    assert est.totals["knuth"] == pytest.approx(tree.size(), rel=1e-12)
    assert est.totals["calibrated"] == pytest.approx(tree.size(), rel=1e-12)
    assert est.fraction(stack.nodes) == pytest.approx(stack.nodes / tree.size())
    assert est.estimate(stack.nodes, rate=100.0).eta == pytest.approx((1093 - stack.nodes) / 100)


def test_a_dask_cut_of_several_holders_is_estimated_exactly():
    # what the Dask driver hands over at an epoch boundary: every open row of the search
    from stealsearch.engine.core.epochs import Cut

    tree = CompleteTree(2, 9)
    stack = make_stack(tree)
    stack.push(tree.root_frontier())
    stack.run(40, 0)
    rows = stack.take_all()
    cut = Cut(batches={"tcp://a": rows[::2], "tcp://b": rows[1::2], "tcp://gone": rows[:0]},
              counters=stack.counters.copy())
    for pool in (False, True):
        est = ProgressEstimator(tree, cpu_share=1.0, pool=pool)
        est.observe_cut(cut)
        probed(est, len(rows))
        assert est.total() == pytest.approx(tree.size(), rel=1e-12)   # exact but for rounding
        assert est.fraction(cut.nodes) == pytest.approx(40 / tree.size())


def test_fraction_stays_in_range_and_is_one_at_the_end():
    # a random tree (UTS geometric) on the reference tier's budget: many chunks and cuts
    tree = UTSProblem(UTSParams.parse("-t 1 -a 3 -d 7 -b 4 -r 19"))
    est = ProgressEstimator(tree, cpu_share=0.2, observe_every=0.01, slice_seconds=0.001,
                            clock=ticking())
    est.trace = []
    policy = StealPolicy(budget=500, chunk_seconds=None)
    r = run_sequential(tree, policy=policy, estimate=est)
    fractions = [f for _, _, f, _ in est.trace if f is not None]   # None: past the estimate
    assert len(fractions) > 10 and r.info["estimate_probes"] > 0
    assert all(0.0 <= f < 1.0 for f in fractions)
    assert all(f is None or 0.0 <= f < 1.0 for _, _, _, per in est.trace for f in per.values())
    assert est.fraction(r.nodes) == 1.0 and est.estimate(r.nodes).eta == 0.0


def test_the_estimate_does_not_change_the_search():
    policy = StealPolicy(budget=300, chunk_seconds=None)
    uts = UTSProblem(UTSParams.parse("-t 1 -a 3 -d 7 -b 4 -r 19"))
    # optimise, from no initial clique: the incumbent improves while the probes run
    clique = CliqueProblem(gnp(200, 0.6, seed=3), heuristic="none")
    for problem in (uts, clique):
        plain = run_sequential(problem, policy=policy, estimate=False)
        est = ProgressEstimator(problem, cpu_share=0.5, observe_every=0.0, slice_seconds=0.001,
                                clock=ticking())
        watched = run_sequential(problem, policy=policy, estimate=est)
        assert est.probes() > 0
        assert watched.nodes == plain.nodes and watched.count == plain.count
        assert watched.objective == plain.objective
        assert [v for _, v in watched.incumbent_history] == \
            [v for _, v in plain.incumbent_history]
        assert np.array_equal(np.asarray(list(watched.counters.values())),
                              np.asarray(list(plain.counters.values())))
        assert "estimate_probes" not in plain.info
    assert len(watched.incumbent_history) > 1


def test_sequential_live_line_shows_the_estimate(capsys):
    tree = UTSProblem(UTSParams.parse("-t 1 -a 3 -d 7 -b 4 -r 19"))
    run_sequential(tree, progress=True, policy=StealPolicy(budget=500, chunk_seconds=None))
    err = capsys.readouterr().err
    assert err.endswith("\n") and "100% done" in err.splitlines()[-1]


def test_line_while_running():
    out = io.StringIO()
    out.isatty = lambda: True
    bar = Progress(True, desc="uts", file=out, mininterval=0)
    now = [100.0]
    bar._bar._time = lambda: now[0]                    # tqdm's clock, moved by hand
    bar.update(1000)
    now[0] += RATE_SECONDS                             # (a rate measured: see progress)
    bar.update(3000, fraction_done=0.5)
    line = bar.line()
    assert "~50% done, ETA " in line
    bar.update(3000, fraction_done=0.9999)
    assert "~99% done" in bar.line()                   # never 100% while it runs
    bar.close()
    assert out.getvalue().endswith("\n")


def test_a_failing_probe_ends_the_estimate_not_the_search():
    tree = CompleteTree(3, 7)
    est = ProgressEstimator(tree, cpu_share=1.0, observe_every=0.0)

    def broken(budget, incumbent):
        raise RuntimeError("a probe's kernel failed")

    est.stack.run = broken
    r = run_sequential(tree, estimate=est, policy=StealPolicy(budget=50, chunk_seconds=None))
    assert r.nodes == tree.size() and r.count == 3 ** 7 and r.status == "exhausted"
    assert est.failed and est.fraction(r.nodes) is None


def test_asking_for_the_fraction_costs_nothing_until_something_new_came():
    # the backends ask at every chunk; that must not eat the probes' budget
    tree = CompleteTree(4, 6)
    est = ProgressEstimator(tree, cpu_share=0.01, clock=ticking())
    stack = make_stack(tree)
    stack.push(tree.root_frontier())
    stack.run(30, 0)
    est.observe(stack.live(), stack.nodes)
    assert est.fraction(stack.nodes) is None                # no probe yet
    spent = est.spent
    for _ in range(2000):
        assert est.fraction(stack.nodes) is None
    assert est.spent == spent
    assert est.work() > 0 and est.fraction(stack.nodes) is not None
