"""CLI steal-policy flags reach the search end to end (``stealsearch.cli.main``, --json)."""
import json

import pytest

import stealsearch.problems.uts.problem as uts_problem
from stealsearch.cli import main


def run_json(capsys, argv, code=0):
    assert main(argv) == code
    return json.loads(capsys.readouterr().out)


def test_no_stealing_means_no_steal_attempt_on_any_worker(capsys, cluster4):
    d = run_json(capsys, ["uts", "--tree", "T1", "--node-limit", "100000", "--scheduler",
                          cluster4.scheduler.address, "--no-stealing", "--json", "--quiet"])
    assert d["policy"]["stealing"] is False
    searching = [w for w in d["workers"] if w["worker"] != "client (setup)"]
    assert len(searching) == 4
    assert [w["steals_tried"] for w in searching] == [0, 0, 0, 0]


def test_policy_flags_reach_the_json_policy(capsys):
    d = run_json(capsys, ["uts", "--sequential", "--json", "--quiet", "--victims", "random",
                          "--budget", "17", "--fixed-budget", "--steal-k", "3",
                          "--no-steal-half"])
    p = d["policy"]
    assert (p["victims"], p["budget"], p["chunk_seconds"], p["k"], p["steal_half"]) == \
        ("random", 17, None, 3, False)
    assert d["count"] == 1732                       # the published size of 'default'


@pytest.mark.parametrize("limit", [1, 37, 1000, 12345])
def test_node_limit_sequential_expands_exactly_n_nodes(capsys, limit):
    d = run_json(capsys, ["uts", "--tree", "T1", "--node-limit", str(limit), "--sequential",
                          "--json", "--quiet"])
    assert (d["status"], d["stop_reason"], d["nodes"]) == ("interrupted", "node_limit", limit)


def test_published_size_mismatch_exits_1(capsys, monkeypatch):
    options, (nodes, depth, leaves) = uts_problem.PRESETS["default"]
    monkeypatch.setitem(uts_problem.PRESETS, "default", (options, (nodes + 1, depth, leaves)))
    d = run_json(capsys, ["uts", "--sequential", "--json", "--quiet"], code=1)
    assert d["count"] == 1732 and d["matches_published"] is False


def test_published_size_match_exits_0(capsys):
    d = run_json(capsys, ["uts", "--sequential", "--json", "--quiet"])
    assert d["count"] == 1732 and d["matches_published"] is True
