"""The scale-out figure (benchmarks/plot_scale_out.py): points grouped and summarised as
the runs say, model lines from simulate_cluster's --json, bad input refused."""
import json

import pytest

from stealsearch.benchmarks.plot_scale_out import main, measured_points, model_lines
from stealsearch.benchmarks.simulate_cluster import main as model_main

T1 = "benchmarks/profiles/T1.npz"


def _run(tree, machines, eff, rtt=0.5, probes=4, **extra):
    return json.dumps({"tree": tree, "machines": machines, "lanes": 16,
                       "emulated_cores": machines * 16, "rtt_ms": rtt, "efficiency": eff,
                       "exact": True, "load_average": 1.0,
                       "policy": {"k": 8, "probes": probes}, **extra})


@pytest.fixture
def logs(tmp_path):
    a, b = tmp_path / "run-1.log", tmp_path / "run-2.log"
    a.write_text("== header line\nuptime before: x\n" + _run("T1XL-shaped d=14", 8, 0.81)
                 + "\n" + _run("T1XL-shaped d=14", 8, 0.80, rtt=5.0) + "\nrc 0\n")
    b.write_text(_run("T1XL-shaped d=14", 8, 0.86) + "\n" + _run("T1XL-shaped d=14", 8, 0.84)
                 + "\n" + _run("T3-shaped b0=100000", 8, 0.7) + "\n"
                 + _run("T1XL-shaped d=14", 8, 0.1, fault={"kind": "kill"}) + "\n{not json\n"
                 + _run("T1XL-shaped d=14", 8, 0.9, probes=8) + "\n"
                 + _run("clique G(1000,0.5) seed 1, heuristic none", 8, 0.95) + "\n"
                 + _run("clique G(1000,0.5) seed 1, heuristic amts", 8, 0.83) + "\n")
    return [str(a), str(b)]


def test_runs_group_by_shape_size_round_trip_and_policy(logs):
    points = {(p["shape"], p["cores"], p["rtt_ms"], p["tag"]): p for p in measured_points(logs)}
    assert set(points) == {("T1XL-shaped", 128, 0.5, "probes=4"), ("T1XL-shaped", 128, 5.0, "probes=4"),
                           ("T3-shaped", 128, 0.5, "probes=4"), ("T1XL-shaped", 128, 0.5, "probes=8"),
                           ("clique, heuristic none", 128, 0.5, "probes=4"),
                           ("clique, heuristic amts", 128, 0.5, "probes=4")}
    assert points[("T1XL-shaped", 128, 0.5, "probes=8")]["runs"] == 1
    p = points[("T1XL-shaped", 128, 0.5, "probes=4")]
    # three runs (a fault's run is no scaling point): 0.81, 0.84, 0.86
    assert p["runs"] == 3 and p["efficiency"] == 0.84
    assert (p["low"], p["high"]) == (0.81, 0.86)
    assert points[("T3-shaped", 128, 0.5, "probes=4")]["runs"] == 1


def test_the_figure_from_runs_and_the_model(logs, tmp_path, capsys):
    model = tmp_path / "model.jsonl"
    model_main(["run", T1, "--machines", "2", "3", "--lanes", "2", "--seeds", "1",
                "--json", str(model)])
    rows = [json.loads(x) for x in model.read_text().splitlines()]
    assert [r["cores"] for r in rows] == [4, 6]
    assert list(model_lines([str(model)])) == [("T1", 0.5, "")]
    model_main(["run", T1, "--machines", "2", "--lanes", "2", "--seeds", "1",
                "--policy", "probes=2", "--json", str(model)])
    lines = model_lines([str(model)])
    assert sorted(lines) == [("T1", 0.5, "probes=2"), ("T1", 0.5, "probes=None")]
    assert [r["cores"] for r in lines[("T1", 0.5, "probes=None")]] == [4, 6]
    capsys.readouterr()
    png = tmp_path / "fig.png"
    assert main(["--measured", *logs, "--model", str(model), "--out", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    table = capsys.readouterr().out
    assert "| measured, T1XL-shaped, probes=4 | 128 | 0.5 ms | 0.84 [0.81-0.86] | 3 |" in table
    assert "| measured, T1XL-shaped, probes=8 | 128 | 0.5 ms | 0.90 | 1 |" in table
    assert f"| model, T1 x 1, probes=None | 6 | 0.5 ms | {rows[1]['efficiency']:.2f} | 1 |" in table


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    for argv in (["--measured", str(tmp_path / "missing.log"), "--out", str(tmp_path / "x.png")],
                 ["--model", str(bad), "--out", str(tmp_path / "x.png")],
                 ["--out", str(tmp_path / "x.png")]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("plot_scale_out: ") and "\n" not in err
    assert not (tmp_path / "x.png").exists()
