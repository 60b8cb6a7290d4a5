"""The Swiss-T1 study: the 363 classes, vectorised durations, one small sweep (sequential)."""
import json

import numpy as np

from stealsearch.problems.liquid import swiss_t1
from stealsearch.problems.liquid.sweep import (all_allocations, equivalence_classes, evaluate_allocation,
                                   nodes_and_durations)


def test_363_classes_of_equal_nodes_and_duration():
    classes = equivalence_classes()
    assert len(classes) == 363
    assert sum(c["members"] for c in classes) == 5 ** 8
    assert sum(c["nodes"] > 0 for c in classes) == 362
    # sorted on the axis of Figs. 6/9: nodes, then liquid throughput
    keys = [(c["nodes"], c["nodes"] ** 2 / c["duration"] if c["duration"] else 0) for c in classes]
    assert keys == sorted(keys)


def test_vectorised_durations_match_the_traffic_model():
    rng = np.random.default_rng(7)
    allocs = all_allocations()[rng.choice(5 ** 8, size=25, replace=False)]
    n, lam = nodes_and_durations(allocs)
    t1 = swiss_t1()
    for a, nn, ll in zip(allocs, n, lam):
        if nn == 0:
            continue
        x = t1.all_to_all(list(a))
        assert x.size == nn * nn and x.duration() == ll


def test_small_study_through_the_cli_writes_plots(tmp_path, capsys):
    from stealsearch.cli import main

    assert main(["liquid", "t1-study", "--sequential", "--limit", "3", "--out", str(tmp_path), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    rows = res["rows"]
    assert res["summary"]["classes"] == 363
    assert len(rows) == 3 and all(r["status"] == "liquid" for r in rows)
    for r in rows:
        assert r["length"] == r["duration"]
        assert r["round_robin_steps"] >= r["duration"]
    assert (tmp_path / "liquid_fig5_throughput_vs_nodes.png").stat().st_size > 1000
    assert (tmp_path / "liquid_fig6_liquid_vs_round_robin.png").stat().st_size > 1000
    assert (tmp_path / "t1_study.csv").read_text().count("\n") == 4
    assert main(["liquid", "t1-study", "--sequential", "--limit", "0"]) == 2


def test_evaluate_allocation_figures():
    r = evaluate_allocation([2, 0, 2, 0, 0, 0, 0, 0])
    # switches 1 and 3 are joined through switch 2: 2*2 transfers each way on 1>2 and 2>3
    assert r["transfers"] == 16 and r["duration"] == 4
    assert r["liquid_throughput"] == 16 / 4 * 86
    assert r["status"] == "liquid"
