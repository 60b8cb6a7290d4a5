"""Independent oracles for the liquid package: teams counted by brute force from the
paper's own description of Fig. 1 (no model helper involved), and the verifier's and
the colouring problem's rejection branches."""
import itertools

import pytest

from stealsearch.engine.core.problem import SolutionError
from stealsearch.problems.liquid import ColouringProblem, count_teams, fig1_traffic, verify_schedule
from stealsearch.problems.liquid.model import Traffic


def _fig1_link_sets():
    """Fig. 1 of seed 000 from its text: transmitter T_i uses link l_i, receiver R_j uses
    l_{5+j}; T4, T5 -> R1..R3 cross l11; T1..T3 -> R4, R5 cross l12."""
    sets = []
    for i in range(1, 6):
        for j in range(1, 6):
            links = {f"l{i}", f"l{5 + j}"}
            if i >= 4 and j <= 3:
                links.add("l11")
            if i <= 3 and j >= 4:
                links.add("l12")
            sets.append(frozenset(links))
    return sets


def _brute_force_teams(link_sets):
    """(teams, full teams) by enumerating every simultaneous subset (§3.2: a team is a
    simultaneous subset that uses every bottleneck; a full team is a team that every
    other transfer congests with)."""
    load = {}
    for ls in link_sets:
        for l in ls:
            load[l] = load.get(l, 0) + 1
    top = max(load.values())
    bottlenecks = {l for l, c in load.items() if c == top}
    n = len(link_sets)
    teams = full = 0

    def grow(start, chosen, used):
        nonlocal teams, full
        if chosen and bottlenecks <= used:
            teams += 1
            if all(j in chosen or link_sets[j] & used for j in range(n)):
                full += 1
        for j in range(start, n):
            if not link_sets[j] & used:
                chosen.add(j)
                grow(j + 1, chosen, used | link_sets[j])
                chosen.discard(j)

    grow(0, set(), frozenset())
    return teams, full


def test_fig1_teams_match_brute_force():
    teams, full = _brute_force_teams(_fig1_link_sets())
    assert (teams, full) == (504, 72)     # the figures the README states
    x = fig1_traffic()
    assert count_teams(x, backend="sequential") == teams
    assert count_teams(x, full=True, backend="sequential") == full


@pytest.mark.parametrize("seed", range(6))
def test_random_traffic_teams_match_brute_force(seed):
    import random
    rng = random.Random(seed)
    links = [f"l{k}" for k in range(7)]
    distinct = {frozenset(rng.sample(links, rng.randint(1, 3))) for _ in range(rng.randint(3, 14))}
    link_sets = sorted(distinct, key=sorted)   # a traffic is a set of distinct transfers
    x = Traffic.from_link_sets([sorted(s) for s in link_sets], links=links)
    teams, full = _brute_force_teams(link_sets)
    assert count_teams(x, backend="sequential") == teams
    assert count_teams(x, full=True, backend="sequential") == full


def test_verifier_rejects_empty_steps_and_bad_ids():
    x = Traffic.from_link_sets([["a", "b"], ["b", "c"], ["a", "c"]])
    good = [[0], [1], [2]]
    assert verify_schedule(x, good)["length"] == 3
    cases = {
        "is empty": [[0], [], [1], [2]],
        "not an id": [[0], [1], [7]],
        "not an id ": [[0], [1], ["2"]],
        "not an id  ": [[0], [1], [True]],
        "steps 0 and 2": [[0], [1], [0, 2]],
        "congest on link": [[0, 1], [2]],
        "in no step": [[0], [1]],
    }
    for message, schedule in cases.items():
        with pytest.raises(SolutionError, match=message.strip()):
            verify_schedule(x, schedule)
    with pytest.raises(SolutionError, match="duration is 2"):
        verify_schedule(x, good, require_liquid=True)


def test_colouring_problem_rejects_a_wrong_step_count():
    x = Traffic.from_link_sets([["a", "b"], ["b", "c"], ["a", "c"]])
    p = ColouringProblem(x)
    assert p.verify([[0], [1], [2]], -3)
    with pytest.raises(SolutionError, match="objective says -2"):
        p.verify([[0], [1], [2]], -2)


def test_every_simultaneous_subset_of_a_triangle_is_a_singleton():
    # a cross-check of the brute force itself on a case small enough to list by hand
    sets = [frozenset("ab"), frozenset("bc"), frozenset("ac")]
    singles = [c for r in range(1, 4) for c in itertools.combinations(range(3), r)
               if all(not (sets[i] & sets[j]) for i, j in itertools.combinations(c, 2))]
    assert singles == [(0,), (1,), (2,)]
    assert _brute_force_teams(sets) == (0, 0)   # one transfer leaves a bottleneck unused
