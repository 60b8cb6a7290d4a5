"""The independent verifier of stealsearch.problems.twolevel rejects hand-broken schedules."""
import dataclasses

import numpy as np

from stealsearch.problems.twolevel.algorithms import two_level_opt
from stealsearch.problems.twolevel.generators import random_instance, table1_instance
from stealsearch.problems.twolevel.verify import lower_bound_dates, verify_schedule


def table1():
    inst = table1_instance()
    return inst, two_level_opt(inst)


def broken(sched, **changes):
    return dataclasses.replace(sched, **{k: np.asarray(v) for k, v in changes.items()})


def find_message(inst, sched, task_name, level=None):
    t = inst.names.index(task_name)
    for e in range(sched.n_messages):
        if sched.msg_task[e] == t and (level is None or sched.msg_level[e] == level):
            return e
    raise AssertionError("no such message")


def test_twolevel_verifier_accepts_the_algorithms_schedule():
    inst, sched = table1()
    rep = verify_schedule(inst, sched)
    assert rep.feasible and rep.optimal and rep.errors == [] and rep.n_errors == 0


def test_twolevel_verifier_rejects_a_late_message():
    inst, sched = table1()
    e = find_message(inst, sched, 3, level=1)    # 3 -> processor of 6, needed by t = 7
    start = sched.msg_start.copy()
    start[e] += 1
    rep = verify_schedule(inst, broken(sched, msg_start=start))
    assert not rep.feasible and any("GPC violated" in x for x in rep.errors)


def test_twolevel_verifier_rejects_a_too_short_message():
    inst, sched = table1()
    e = find_message(inst, sched, 2, level=2)
    dur = sched.msg_duration.copy()
    dur[e] = 0.5                                 # holds the channel less than c(2) = 2
    rep = verify_schedule(inst, broken(sched, msg_duration=dur))
    assert not rep.feasible and any("GPC violated" in x for x in rep.errors)


def test_twolevel_verifier_rejects_an_overlapping_channel():
    inst, sched = table1()
    e = 0
    extra = lambda arr: np.append(arr, arr[e])   # noqa: E731 - the same message twice
    fields = ("msg_task", "msg_from_copy", "msg_to_copy", "msg_from_processor",
              "msg_to_processor", "msg_level", "msg_start", "msg_duration")
    bad = broken(sched, **{f: extra(getattr(sched, f)) for f in fields})
    rep = verify_schedule(inst, bad)
    assert not rep.feasible and any("contention on channel" in x for x in rep.errors)


def test_twolevel_verifier_rejects_a_missing_copy():
    inst, sched = table1()
    keep = sched.copy_task != inst.names.index(16)
    fields = ("copy_task", "copy_index", "copy_processor", "copy_cluster", "copy_start")
    bad = broken(sched, **{f: getattr(sched, f)[keep] for f in fields})
    # message rows refer to copy rows: renumber them
    new_row = np.cumsum(keep) - 1
    bad = broken(bad, msg_from_copy=new_row[sched.msg_from_copy],
                 msg_to_copy=new_row[sched.msg_to_copy])
    rep = verify_schedule(inst, bad)
    assert not rep.feasible and any("task 16 has no copy" in x for x in rep.errors)


def test_twolevel_verifier_rejects_overlapping_copies():
    inst, sched = table1()
    start = sched.copy_start.copy()
    r = int(np.flatnonzero(sched.copy_task == inst.names.index(4))[0])
    start[r] -= 1                                # 4 now starts while 3 still runs
    rep = verify_schedule(inst, broken(sched, copy_start=start))
    assert not rep.feasible and any("overlap" in x for x in rep.errors)


def test_twolevel_verifier_rejects_a_message_sent_too_early():
    inst, sched = table1()
    start = sched.msg_start.copy()
    start[0] -= 1
    rep = verify_schedule(inst, broken(sched, msg_start=start))
    assert not rep.feasible and any("before its sending copy ends" in x for x in rep.errors)


def test_twolevel_verifier_derives_the_level_from_the_clusters():
    # every processor in its own cluster: the intra-cluster messages now pay c(2)
    inst, sched = table1()
    bad = broken(sched, processor_cluster=np.arange(sched.n_processors))
    rep = verify_schedule(inst, bad)
    assert not rep.feasible and any("GPC violated" in x for x in rep.errors)


def test_twolevel_verifier_rejects_a_wrong_channel_and_missing_message():
    inst, sched = table1()
    fp = sched.msg_from_processor.copy()
    fp[0] = (fp[0] + 1) % sched.n_processors
    rep = verify_schedule(inst, broken(sched, msg_from_processor=fp))
    assert not rep.feasible and any("channel starts at processor" in x for x in rep.errors)
    fields = ("msg_task", "msg_from_copy", "msg_to_copy", "msg_from_processor",
              "msg_to_processor", "msg_level", "msg_start", "msg_duration")
    rep = verify_schedule(inst, broken(sched, **{f: getattr(sched, f)[1:] for f in fields}))
    assert not rep.feasible and any("GPC violated" in x for x in rep.errors)


def _lower_bound_by_networkx(inst) -> float:
    """max_j (b_j + p_j) with b_j the earliest start date of seed 004's Algorithm 1,
    written again over a networkx DiGraph: at most one predecessor g can run on j's
    processor (its result is there at b_g + p_g); every other predecessor's result
    arrives after its smallest delay c(1)."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(range(inst.n))
    for a in range(inst.m):
        g.add_edge(int(inst.src[a]), int(inst.dst[a]), c1=float(inst.c1[a]))
    b = {}
    for j in nx.topological_sort(g):
        preds = list(g.predecessors(j))
        if not preds:
            b[j] = 0.0
            continue
        ready = {i: b[i] + float(inst.p[i]) for i in preds}
        arrive = {i: ready[i] + g.edges[i, j]["c1"] for i in preds}
        b[j] = min(max([ready[local]] + [arrive[i] for i in preds if i != local])
                   for local in preds)
    return max(b[j] + float(inst.p[j]) for j in g)


def test_twolevel_lower_bound_dates_match_networkx_on_random_instances():
    for kind in ("layered", "sp", "forkjoin"):
        for seed in range(4):
            inst = random_instance(120, seed=seed, kind=kind)
            b = lower_bound_dates(inst.n, inst.p, inst.src, inst.dst, inst.c1)
            assert float(np.max(b + inst.p)) == _lower_bound_by_networkx(inst), (kind, seed)


def test_twolevel_verifier_lower_bound_on_random_instances():
    for seed in range(5):
        inst = random_instance(500, seed=seed, kind="forkjoin")
        sched = two_level_opt(inst)
        rep = verify_schedule(inst, sched)
        assert rep.lower_bound == _lower_bound_by_networkx(inst) == rep.makespan
        # moving any copy earlier than its b_i breaks feasibility (b is a lower bound)
        r = int(np.argmax(sched.copy_start))
        start = sched.copy_start.copy()
        start[r] -= 1
        assert not verify_schedule(inst, broken(sched, copy_start=start)).feasible
