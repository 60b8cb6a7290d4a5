"""The independent verifier rejects broken schedules (seed 001 model, §1 and §3)."""
import numpy as np

from stealsearch.problems.hrelation import UNIT, figure1_instance, forwarding, verify_schedule
from stealsearch.problems.hrelation.schedule import Schedule, ScheduleBuilder


def sched(P, rounds):
    """rounds: list of (length_packets, [(src, dst, frm, to, packets), ...])."""
    b = ScheduleBuilder(P)
    for length, transfers in rounds:
        r = b.new_round(int(length * UNIT))
        for s, d, f, t, x in transfers:
            b.add(r, s, d, f, t, int(x * UNIT))
    return b.build("hand-made")


M = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]])   # one 3-cycle


def test_good_direct_schedule():
    s = sched(3, [(1, [(0, 1, 0, 1, 1)]), (1, [(1, 2, 1, 2, 1)]), (1, [(2, 0, 2, 0, 1)])])
    v = verify_schedule(s, M)
    assert v.ok and v.length == 3.0 and v.rounds == 3


def test_pe_in_two_transfers():
    s = sched(3, [(1, [(0, 1, 0, 1, 1), (1, 2, 1, 2, 1)]), (1, [(2, 0, 2, 0, 1)])])
    v = verify_schedule(s, M)
    assert not v.ok and "PE 1 takes part in two transfers" in v.errors[0]


def test_lost_piece():
    s = sched(3, [(1, [(0, 1, 0, 1, 1)]), (1, [(1, 2, 1, 2, 0.8)]), (1, [(2, 0, 2, 0, 1)])])
    v = verify_schedule(s, M)
    assert not v.ok and "1->2" in v.errors[0] and "lost" in v.errors[0]


def test_piece_delivered_twice():
    s = sched(3, [(1, [(0, 1, 0, 1, 1)]), (1, [(1, 2, 1, 2, 1)]), (1, [(2, 0, 2, 0, 1)]),
                  (1, [(0, 1, 0, 1, 1)])])
    v = verify_schedule(s, M)
    assert not v.ok and "more than once" in v.errors[0]


def test_piece_forwarded_before_it_arrived():
    # 2 -> 0 via helper 1: the helper sends in round 0, receives in round 1
    s = sched(3, [(1, [(0, 1, 0, 1, 1)]), (1, [(1, 2, 1, 2, 1)]),
                  (1, [(2, 0, 1, 0, 1)]), (1, [(2, 0, 2, 1, 1)])])
    v = verify_schedule(s, M)
    assert not v.ok and "before it arrived" in v.errors[0]


def test_forwarding_in_the_same_round_is_too_early():
    m = np.array([[0, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]])
    ok = sched(4, [(1, [(2, 0, 2, 1, 1)]), (1, [(2, 0, 1, 0, 1)])])
    assert verify_schedule(ok, m).ok
    # same round: PE 1 would be in two transfers and forward what it has not yet got
    bad = sched(4, [(1, [(2, 0, 2, 1, 1), (2, 0, 1, 0, 1)])])
    v = verify_schedule(bad, m)
    assert not v.ok


def test_piece_stranded_at_helper():
    m = np.array([[0, 1, 0], [0, 0, 0], [0, 0, 0]])
    s = sched(3, [(1, [(0, 1, 0, 2, 1)]), (1, [(0, 1, 0, 1, 1)])])
    v = verify_schedule(s, m)
    assert not v.ok and "never passes on" in " ".join(v.errors)


def test_link_overload_and_bad_rows():
    m = np.array([[0, 2], [1, 0]])
    over = sched(2, [(2, [(0, 1, 0, 1, 2), (1, 0, 1, 0, 1)])])   # 3 packets in a round of 2
    v = verify_schedule(over, m)
    assert not v.ok and "carries" in v.errors[0]
    both_ways = sched(2, [(3, [(0, 1, 0, 1, 2), (1, 0, 1, 0, 1)])])   # an exchange (§5.2)
    assert verify_schedule(both_ways, m).ok
    wrong_msg = sched(2, [(1, [(0, 1, 1, 0, 1)])])
    assert not verify_schedule(wrong_msg, m).ok


def test_mutated_forwarding_schedule_is_rejected():
    m = figure1_instance()
    s = forwarding(m)
    assert verify_schedule(s, m).ok and s.length == 2.4
    rng = np.random.default_rng(0)
    for trial in range(20):
        t = s.transfers.copy()
        i = int(rng.integers(len(t)))
        kind = trial % 3
        if kind == 0:
            t = np.delete(t, i, axis=0)                 # drop a piece
        elif kind == 1:
            t[i, 0] = (t[i, 0] + 1) % s.num_rounds       # move a piece to another round
        else:
            t[i, 4] = (t[i, 4] + 1) % m.shape[0]         # send it to someone else
        broken = Schedule(P=s.P, lengths=s.lengths, transfers=t[np.argsort(t[:, 0], kind="stable")])
        assert not verify_schedule(broken, m).ok, (trial, t)


def test_json_round_trip_keeps_validity(tmp_path):
    m = figure1_instance()
    s = forwarding(m)
    path = tmp_path / "s.json"
    s.write_json(path)
    import json
    back = Schedule.from_json_obj(json.loads(path.read_text()))
    assert verify_schedule(back, m).ok and back.length == s.length
