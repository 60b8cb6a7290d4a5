"""Model, validation (incl. conditions (2)-(3)) and I/O of stealsearch.problems.twolevel (seed 004)."""
import json

import networkx as nx
import numpy as np
import pytest

from stealsearch.engine.core.errors import InputError
from stealsearch.problems.twolevel.generators import (VIOLATIONS, random_instance, table1_instance,
                                          violating_instance)
from stealsearch.problems.twolevel.io import (from_networkx, instance_to_dict, read_csv, read_instance,
                                  read_json, to_networkx, write_csv, write_json)
from stealsearch.problems.twolevel.model import (CycleError, SmallDelayError, TwoLevelInputError,
                                     TwoLevelInstance, check_small_delays)


def build(p, arcs, validate=True):
    return TwoLevelInstance.build(list(p), p, arcs, validate=validate)


def test_twolevel_valid_instance_builds():
    inst = build({"a": 3, "b": 2, "c": 1}, [("a", "c", 2, 2), ("b", "c", 2, 3)])
    assert (inst.n, inst.m) == (3, 2)
    assert inst.integral
    assert issubclass(TwoLevelInputError, InputError)


@pytest.mark.parametrize("p, arcs, kind, words", [
    ({"a": 1, "b": 0}, [("a", "b", 1, 1)], TwoLevelInputError, ["'b'", "processing time"]),
    ({"a": 1, "b": -2}, [], TwoLevelInputError, ["'b'", "positive"]),
    ({"a": 1, "b": 1}, [("a", "b", 0, 1)], TwoLevelInputError, ["('a', 'b')", "c1"]),
    ({"a": 1, "b": 1}, [("a", "b", 1, float("inf"))], TwoLevelInputError, ["c2"]),
    ({"a": 1, "b": 1}, [("a", "b", 3, 2)], TwoLevelInputError, ["('a', 'b')", "c1 = 3",
                                                                "c2 = 2"]),
    ({"a": 1, "b": 1}, [("a", "b", 1, 1), ("a", "b", 1, 1)], TwoLevelInputError, ["duplicate"]),
    ({"a": 1}, [("a", "a", 1, 1)], CycleError, ["self-loop"]),
    ({"a": 1, "b": 1, "c": 1}, [("a", "b", 1, 1), ("b", "c", 1, 1), ("c", "a", 1, 1)],
     CycleError, ["cycle", "'a'", "'b'", "'c'"]),
    ({"a": 1, "b": 1}, [("a", "zz", 1, 1)], TwoLevelInputError, ["unknown task", "'zz'"]),
])
def test_twolevel_validation_errors_name_the_culprit(p, arcs, kind, words):
    with pytest.raises(kind) as info:
        build(p, arcs)
    msg = str(info.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg


def test_twolevel_condition2_violation_names_task_and_arcs():
    # c: predecessors a (p=1) and b; c_bc(1) = 2 > p_a = 1
    with pytest.raises(SmallDelayError) as info:
        build({"a": 1, "b": 5, "c": 1}, [("a", "c", 1, 1), ("b", "c", 2, 2)])
    msg = str(info.value)
    assert "condition (2)" in msg and "task 'c'" in msg and "'a'" in msg and "('b', 'c')" in msg


def test_twolevel_condition3_violation_names_task_and_arcs():
    # a: successors b (p=1) and c; c_ac(2) = 3 > p_b = 1
    with pytest.raises(SmallDelayError) as info:
        build({"a": 5, "b": 1, "c": 4}, [("a", "b", 1, 1), ("a", "c", 1, 3)])
    msg = str(info.value)
    assert "condition (3)" in msg and "task 'a'" in msg and "'b'" in msg and "('a', 'c')" in msg


def _conditions_hold(inst) -> bool:
    """Conditions (2) and (3) of seed 004 straight from their statement, pair by pair."""
    preds = {j: [a for a in range(inst.m) if inst.dst[a] == j] for j in range(inst.n)}
    succs = {i: [a for a in range(inst.m) if inst.src[a] == i] for i in range(inst.n)}
    for arcs in preds.values():           # (2): p_g >= c_hj(1) for predecessors g != h of j
        for ga in arcs:
            for ha in arcs:
                if ga != ha and inst.p[inst.src[ga]] < inst.c1[ha]:
                    return False
    for arcs in succs.values():           # (3): p_k >= c_ij(2) for successors k != j of i
        for ka in arcs:
            for ja in arcs:
                if ka != ja and inst.p[inst.dst[ka]] < inst.c2[ja]:
                    return False
    return True


def test_twolevel_conditions_hold_with_equality_and_single_arcs():
    # equality is allowed; one predecessor / successor never violates anything
    tight = build({"a": 2, "b": 2, "c": 9}, [("a", "c", 2, 2), ("b", "c", 2, 2)])
    lone = build({"a": 1, "b": 1}, [("a", "b", 50, 90)])
    assert _conditions_hold(tight) and _conditions_hold(lone)
    # one unit less on the tight side is refused, by the model and by the definition
    with pytest.raises(SmallDelayError, match=r"condition \(2\)"):
        build({"a": 2, "b": 1.5, "c": 9}, [("a", "c", 2, 2), ("b", "c", 2, 2)])
    loose = build({"a": 2, "b": 1.5, "c": 9}, [("a", "c", 2, 2), ("b", "c", 2, 2)], validate=False)
    assert not _conditions_hold(loose)


def test_twolevel_condition_reading_is_for_every_g():
    # succ(i) = {k1 (p=1), k2 (p=5)}, c_ik1(2) = 5, c_ik2(2) = 1.  With only the argmin
    # k1: p_k1 = 1 >= c_ik2(2) = 1 holds; but k2 must also cover c_ik1(2) = 5: it does.
    build({"i": 9, "k1": 1, "k2": 5}, [("i", "k1", 1, 5), ("i", "k2", 1, 1)])
    # the "for every k" reading refuses when the larger successor is too short
    with pytest.raises(SmallDelayError):
        build({"i": 9, "k1": 1, "k2": 4}, [("i", "k1", 1, 5), ("i", "k2", 1, 1)])


@pytest.mark.parametrize("which", VIOLATIONS)
def test_twolevel_generated_violations_are_refused(which):
    base = random_instance(60, seed=3, kind="layered")
    for seed in range(5):
        bad = violating_instance(base, which, seed=seed)
        with pytest.raises(TwoLevelInputError):
            bad.validate()
    if which in ("cond2", "cond3"):
        with pytest.raises(SmallDelayError, match=r"condition \(%s\)" % which[-1]):
            check_small_delays(violating_instance(base, which, seed=0))


def test_twolevel_random_generators_satisfy_conditions():
    for kind in ("layered", "sp", "forkjoin"):
        for seed in range(10):
            inst = random_instance(80 + seed, seed=seed, kind=kind)
            check_small_delays(inst)          # the model's check agrees with the definition
            assert _conditions_hold(inst), (kind, seed)
            assert np.all(inst.c1 <= inst.c2)
            assert inst.topological_order().shape[0] == inst.n


def test_twolevel_json_roundtrip(tmp_path):
    inst = table1_instance()
    path = tmp_path / "t1.json"
    write_json(inst, path)
    back = read_json(path)
    assert back.names == inst.names
    assert np.array_equal(back.p, inst.p) and np.array_equal(back.c2, inst.c2)
    assert read_instance(path).m == inst.m


def test_twolevel_csv_roundtrip_and_string_ids(tmp_path):
    inst = TwoLevelInstance.build(["x", "y", 3], {"x": 2.5, "y": 1, 3: 2},
                                  [("x", "y", 0.5, 1.5), ("x", 3, 1, 1)])
    write_csv(inst, tmp_path / "t.csv", tmp_path / "a.csv")
    back = read_csv(tmp_path / "t.csv", tmp_path / "a.csv")
    assert back.names == ["x", "y", 3]
    assert back.p.tolist() == [2.5, 1.0, 2.0] and not back.integral
    assert read_instance(tmp_path / "t.csv", tmp_path / "a.csv").m == 2


def test_twolevel_networkx_roundtrip():
    inst = random_instance(40, seed=5, kind="sp")
    g = to_networkx(inst)
    back = from_networkx(g)
    assert back.n == inst.n and back.m == inst.m
    g2 = nx.DiGraph()
    g2.add_node("a", p=1)
    g2.add_node("b")
    with pytest.raises(TwoLevelInputError, match="'b' has no attribute 'p'"):
        from_networkx(g2)
    with pytest.raises(TwoLevelInputError, match="directed"):
        from_networkx(nx.Graph())


def test_twolevel_file_errors_name_file_and_line(tmp_path):
    (tmp_path / "t.csv").write_text("task,p\n1,2\n2,abc\n")
    (tmp_path / "a.csv").write_text("from,to,c1,c2\n1,2,1,1\n")
    with pytest.raises(TwoLevelInputError, match=r"t\.csv: line 3: p must be a number"):
        read_csv(tmp_path / "t.csv", tmp_path / "a.csv")
    (tmp_path / "t.csv").write_text("task,p\n1,2\n2,3\n")
    (tmp_path / "a.csv").write_text("from,to,c1,c2\n1,2,1,1\n2,1,1,1\n")
    with pytest.raises(CycleError, match="cycle"):
        read_csv(tmp_path / "t.csv", tmp_path / "a.csv")
    (tmp_path / "a.csv").write_text("from,to,c1,c2\n1,2,2,1\n")
    with pytest.raises(TwoLevelInputError, match=r"a\.csv line 2: arc \(1, 2\)"):
        read_csv(tmp_path / "t.csv", tmp_path / "a.csv")
    (tmp_path / "a.csv").write_text("from,to,c1\n1,2,2\n")
    with pytest.raises(TwoLevelInputError, match="missing c2"):
        read_csv(tmp_path / "t.csv", tmp_path / "a.csv")
    with pytest.raises(TwoLevelInputError, match="needs its arcs file"):
        read_instance(tmp_path / "t.csv")
    (tmp_path / "bad.json").write_text('{"tasks": [{"id": 1, "p": 2}], "arcs": [\n{"from": 1}]}')
    with pytest.raises(TwoLevelInputError, match=r"arcs\[0\]"):
        read_json(tmp_path / "bad.json")
    (tmp_path / "broken.json").write_text('{"tasks": [\n')
    with pytest.raises(TwoLevelInputError, match="line 2: not valid JSON"):
        read_json(tmp_path / "broken.json")
    data = instance_to_dict(table1_instance())
    data["arcs"][0]["c1"] = 5
    (tmp_path / "c.json").write_text(json.dumps(data))
    with pytest.raises(TwoLevelInputError, match=r"arcs\[0\]: arc \(1, 2\)"):
        read_json(tmp_path / "c.json")
    with pytest.raises(TwoLevelInputError, match="no such file"):
        read_json(tmp_path / "nope.json")
