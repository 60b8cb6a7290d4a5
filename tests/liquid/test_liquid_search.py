"""The liquid-schedule searches against independent brute force (seed 000, §3, Annex)."""

import pytest

from stealsearch.engine.core.errors import InputError
from stealsearch.engine.solve import solve
from stealsearch.problems.liquid import (ColouringProblem, LiquidScheduleProblem, Traffic, count_teams,
                             fig1_traffic, no_team_traffic, schedule_traffic, swiss_t1,
                             verify_schedule)
from stealsearch.problems.liquid.generators import random_traffic


# -- independent oracles (plain Python over the raw link sets; no package code) ------------
def _link_sets(x):
    return [set(t.links) for t in x.transfers]


def _duration(sets):
    counts = {}
    for s in sets:
        for l in s:
            counts[l] = counts.get(l, 0) + 1
    return max(counts.values()), counts


def brute_colourable(sets, k):
    """Can the transfers be split into k simultaneous steps?  Plain backtracking."""
    n = len(sets)
    steps = [set() for _ in range(k)]

    def place(i, used):
        if i == n:
            return True
        for c in range(min(used + 1, k)):
            if steps[c].isdisjoint(sets[i]):
                steps[c] |= sets[i]
                if place(i + 1, max(used, c + 1)):
                    return True
                steps[c] -= sets[i]
        return False

    return place(0, 0)


def brute_chromatic(sets):
    lam, _ = _duration(sets)
    k = lam
    while not brute_colourable(sets, k):
        k += 1
    return k


def brute_teams(sets):
    """(teams, full teams): every simultaneous subset, grown one transfer at a time in
    increasing order, then checked against the definitions."""
    lam, counts = _duration(sets)
    bott = {l for l, c in counts.items() if c == lam}
    n = len(sets)
    out = [0, 0]

    def grow(start, sub, used):
        if sub and bott <= used:
            out[0] += 1
            if all(not used.isdisjoint(sets[j]) for j in range(n) if j not in sub):
                out[1] += 1
        for i in range(start, n):
            if used.isdisjoint(sets[i]):
                grow(i + 1, sub + [i], used | sets[i])

    grow(0, [], set())
    return out[0], out[1]


# -- Fig. 1 ------------------------------------------------------------------------------------
def test_fig1_liquid_schedule_six_steps_verified():
    x = fig1_traffic()
    r = schedule_traffic(x, backend="sequential")
    assert r["status"] == "liquid" and r["length"] == 6
    assert verify_schedule(x, r["schedule"], require_liquid=True)["liquid"]
    # every step is a team of the reduced traffic (Fig. 7)
    left = set(range(x.size))
    for step in r["schedule"]:
        assert x.is_team(step, within=sorted(left))
        left -= set(step)


def test_fig1_team_counts_match_brute_force():
    x = fig1_traffic()
    teams, full = brute_teams(_link_sets(x))
    assert count_teams(x) == teams
    assert count_teams(x, full=True) == full


def test_no_team_example_gives_optimal_three_steps():
    x = no_team_traffic()
    assert x.duration() == 2
    assert count_teams(x) == 0
    r = schedule_traffic(x, backend="sequential")
    assert r["status"] == "optimal, not liquid"
    assert r["length"] == 3
    verify_schedule(x, r["schedule"])


# -- random traffics -----------------------------------------------------------------------
CASES = [(seed, 4 + seed % 4, 5 + seed % 6) for seed in range(240)]


def _random(seed, links, n):
    # two thirds with transfers of 2-3 links (many non-liquid traffics), the rest 1-3
    return random_traffic(seed, links=links, transfers=n, min_len=1 if seed % 3 == 0 else 2, max_len=3)


def test_random_traffics_decide_agrees_with_brute_force():
    yes = no = 0
    for seed, links, n in CASES:
        x = _random(seed, links, n)
        sets = _link_sets(x)
        lam, _ = _duration(sets)
        expected = brute_colourable(sets, lam)
        res = solve(LiquidScheduleProblem(x), backend="sequential")
        assert (res.status == "found") == expected, f"seed {seed}"
        if expected:
            yes += 1
            info = verify_schedule(x, res.solution, require_liquid=True)
            assert info["length"] == lam
        else:
            no += 1
    assert yes > 40 and no > 40  # both answers are exercised


def test_random_traffics_plain_tree_agrees_with_anchored():
    for seed, links, n in CASES[:80]:
        x = _random(seed, links, n)
        a = solve(LiquidScheduleProblem(x, anchor=True), backend="sequential").status
        b = solve(LiquidScheduleProblem(x, anchor=False), backend="sequential").status
        assert a == b, f"seed {seed}"


def test_random_team_counts_match_brute_force():
    for seed, links, n in CASES[:200]:
        x = _random(seed, links, n)
        teams, full = brute_teams(_link_sets(x))
        assert count_teams(x) == teams, f"seed {seed}"
        assert count_teams(x, full=True) == full, f"seed {seed}"


def test_random_non_liquid_colouring_is_optimal():
    checked = 0
    for seed, links, n in CASES:
        x = _random(seed, links, n)
        sets = _link_sets(x)
        lam, _ = _duration(sets)
        if brute_colourable(sets, lam):
            continue
        res = solve(ColouringProblem(x), backend="sequential")
        assert res.status == "optimal"
        assert res.objective == brute_chromatic(sets), f"seed {seed}"
        verify_schedule(x, res.solution)
        checked += 1
    assert checked > 40


def test_swiss_t1_small_allocations_are_liquid():
    t1 = swiss_t1()
    for alloc in ([1, 1, 0, 0, 0, 0, 0, 0], [2, 0, 2, 0, 0, 0, 0, 1], [4, 4, 4, 4, 4, 4, 4, 4]):
        x = t1.all_to_all(alloc)
        r = schedule_traffic(x, backend="sequential", node_limit=2_000_000)
        assert r["status"] == "liquid", alloc
        assert r["length"] == x.duration()
        verify_schedule(x, r["schedule"], require_liquid=True)


def test_empty_traffic_is_rejected_by_problems():
    x = Traffic.from_link_sets([])
    with pytest.raises(InputError, match="empty"):
        LiquidScheduleProblem(x)
    assert schedule_traffic(x, backend="sequential")["length"] == 0
