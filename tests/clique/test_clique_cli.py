"""``stealsearch clique | design | factorize`` in-process and as a real process."""
import json
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from stealsearch.problems.clique.generators import gnp
from stealsearch.cli import main

DATA = Path(__file__).parent / "data"


def run_json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_clique_gnp_json(capsys):
    d = run_json(capsys, ["clique", "--gnp", "80", "0.5", "--seed", "3", "--sequential", "--json"])
    for key in ("status", "objective", "solution", "nodes", "wall_seconds", "backend", "workers"):
        assert key in d
    assert d["status"] == "optimal" and d["backend"] == "sequential"
    assert d["objective"] == len(d["solution"]) == d["clique_size"] and d["verified"]


@pytest.mark.parametrize("bound", ["greedy", "sampling", "size"])
def test_clique_file_seed_bounds(capsys, bound):
    d = run_json(capsys, ["clique", str(DATA / "johnson8-4-4.clq"), "--bound", bound,
                          "--sequential", "--json"])
    assert d["objective"] == 14 and d["info"]["bound"] == bound


def test_clique_modes(capsys):
    f = str(DATA / "MANN_a9.clq")
    d = run_json(capsys, ["clique", f, "--mode", "decide", "--k", "16", "--sequential", "--json"])
    assert d["status"] == "found" and len(d["solution"]) >= 16
    d = run_json(capsys, ["clique", f, "--mode", "decide", "--k", "17", "--sequential", "--json"])
    assert d["status"] == "none" and d["solution"] is None
    # the same G(30, 0.3) as the CLI's (--seed 0), counted independently by networkx
    g = gnp(30, 0.3, seed=0).to_networkx()
    all_cliques = 1 + sum(1 for _ in nx.enumerate_all_cliques(g))      # + the empty clique
    maximal = sum(1 for _ in nx.find_cliques(g))
    d = run_json(capsys, ["clique", "--gnp", "30", "0.3", "--mode", "count", "--sequential", "--json"])
    assert d["status"] == "exhausted" and d["count"] == all_cliques
    d = run_json(capsys, ["clique", "--gnp", "30", "0.3", "--mode", "count-maximal",
                          "--sequential", "--json"])
    assert d["status"] == "exhausted" and d["count"] == maximal


def test_clique_text_output(capsys):
    assert main(["clique", "--gnp", "40", "0.5", "--sequential"]) == 0
    out = capsys.readouterr().out
    assert "optimal" in out and "solution" in out


def test_design_and_factorize(capsys):
    d = run_json(capsys, ["design", "2", "7", "3", "--sequential", "--json"])
    assert d["status"] == "found" and d["design"]["is_design"] and len(d["design"]["blocks"]) == 7
    d = run_json(capsys, ["design", "2", "8", "3", "--sequential", "--json"])
    assert d["status"] == "none" and d["design"] is None
    d = run_json(capsys, ["factorize", "cube", "1", "--sequential", "--json"])
    assert d["factorization"]["is_factorization"] and len(d["factorization"]["factors"]) == 3
    assert d["k_factors"] == 9
    d = run_json(capsys, ["factorize", "K5", "2", "--sequential", "--json"])
    assert d["factorization"]["is_factorization"]


@pytest.mark.parametrize("argv,message", [
    (["clique", "--sequential"], "give a graph FILE or --gnp"),
    (["clique", "--gnp", "10", "x", "--sequential"], "--gnp expects"),
    (["clique", "--gnp", "10", "0.5", "--mode", "decide", "--sequential"], "decide needs --k"),
    (["clique", "--gnp", "10", "0.5", "--bound", "nope", "--sequential"], "invalid choice"),
    (["design", "2", "3", "7", "--sequential"], "1 <= t <= k <= v"),
    (["factorize", "nosuchgraph", "1", "--sequential"], "unknown graph name"),
])
def test_bad_arguments_exit_2_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_console_script_subprocess(tmp_path):
    bad = tmp_path / "bad.clq"
    bad.write_text("p edge 3 1\ne 1 9\n")
    proc = subprocess.run([sys.executable, "-m", "stealsearch", "clique", str(bad), "--sequential"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"stealsearch: error: {bad}:2: vertex 9 outside 1..3"
    proc = subprocess.run([sys.executable, "-m", "stealsearch", "clique", str(DATA / "keller4.clq"),
                           "--sequential", "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["objective"] == 11
