"""The ``stealsearch liquid`` command (in-process and through the real console script)."""
import json
import subprocess
import sys

from stealsearch.cli import main


def test_example_json(capsys):
    assert main(["liquid", "example", "--sequential", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["transfers"] == 25 and d["duration"] == 6
    assert d["bottlenecks"] == ["l11", "l12"]
    assert abs(d["liquid_throughput"] - 416.667) < 1e-2
    assert d["round_robin_steps"] == 7
    assert d["liquid_status"] == "liquid" and d["status"] == "found" and len(d["schedule"]) == 6
    assert sorted(t for s in d["schedule"] for t in s) == list(range(25))
    assert d["wall_seconds"] > 0
    # the same fixed tree through the API on the sequential backend: the CLI reports its
    # exact node count (not a placeholder, not the colouring's or the total's)
    from stealsearch.engine import solve
    from stealsearch.problems.liquid import fig1_traffic
    from stealsearch.problems.liquid.problem import LiquidScheduleProblem

    r = solve(LiquidScheduleProblem(fig1_traffic()), backend="sequential")
    assert r.status == "found" and len(r.solution) == 6
    assert d["nodes"] == d["total_nodes"] == r.nodes


def test_alloc_text_and_bad_alloc(capsys):
    assert main(["liquid", "alloc", "1", "1", "0", "0", "0", "0", "0", "1", "--sequential"]) == 0
    out = capsys.readouterr().out
    assert "9 transfers" in out and "status            liquid" in out
    assert main(["liquid", "alloc", "1", "1", "0", "0", "0", "0", "0", "7", "--sequential"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot allocate 7" in err
    assert main(["liquid", "alloc", "0", "0", "0", "0", "0", "0", "0", "0", "--sequential"]) == 2


def test_traffic_file_no_team_example(tmp_path, capsys):
    f = tmp_path / "tri.yaml"
    f.write_text("transfers:\n  - [a, b]\n  - [b, c]\n  - [a, c]\n")
    assert main(["liquid", "traffic", str(f), "--sequential", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["liquid_status"] == "optimal, not liquid" and d["status"] == "none" and d["length"] == 3 and d["duration"] == 2
    assert main(["liquid", "teams", str(f), "--sequential", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["teams"] == 0


def test_teams_example(capsys):
    assert main(["liquid", "teams", "example", "--full", "--sequential", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["what"] == "full teams" and d["full_teams"] == d["count"] == 72 and d["teams"] == 504   # brute force: test_liquid_oracles.py


def test_bad_topology_files_exit_2(tmp_path, capsys):
    cases = {
        "unknown.yaml": "topology: {switches: [A, B], cables: [[A, Z]]}\nallocation: [1, 1]\n",
        "disconnected.yaml": "topology: {switches: [A, B, C], nodes: 1, cables: [[A, B]]}\nallocation: [1, 1, 1]\n",
        "route.yaml": ("topology:\n  switches: [A, B, C]\n  nodes: 1\n  cables: [[A, B], [B, C]]\n"
                       "  routing: [[x, v, v], [v, x, v], [B, v, x]]\nallocation: [1, 1, 1]\n"),
        "syntax.json": "{\"transfers\": [[\"a\"]",
        "dup.yaml": "transfers: [[a, b], [b, a]]\n",
    }
    for name, text in cases.items():
        f = tmp_path / name
        f.write_text(text)
        assert main(["liquid", "traffic", str(f), "--sequential"]) == 2, name
        err = capsys.readouterr().err
        assert err.startswith("stealsearch: error:") and err.count("\n") == 1, (name, err)
    assert main(["liquid", "traffic", str(tmp_path / "missing.yaml"), "--sequential"]) == 2


def test_console_script_subprocess():
    p = subprocess.run([sys.executable, "-m", "stealsearch", "liquid", "example", "--sequential", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["length"] == 6
    p = subprocess.run([sys.executable, "-m", "stealsearch", "liquid", "traffic", "/nonexistent.yaml"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0
