"""``stealsearch sweep``: every item kind of the application against independent values
(UTS published sizes, networkx clique numbers, the paper's Table 1 partition, liquid
duration), bad grid files as one line and exit 2, a real Ctrl-C and a resume."""
import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import networkx as nx
import pytest

from stealsearch.cli import main
from procutil import startup_hook


BIN = os.path.join(os.path.dirname(sys.executable), "stealsearch")


def table(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write(tmp_path, text, name="grid.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


ALL_KINDS = """
name: all
items:
  - kind: uts
    instance: {tree: default}
  - kind: uts
    instance: {options: "-t 3 -d 4 -b 3"}
  - kind: clique
    instance: {generator: gnp, n: 30, p: [0.3, 0.7], seed: [1, 2]}
    settings: {bound: [colour, size]}
  - kind: hrelation
    instance: {P: [5, 8], h: 12, seed: 3}
    settings: {algorithm: [direct, forwarding]}
  - kind: commclust
    instance: {table: cg8, seed: [0, 1]}
  - kind: twolevel
    instance: {n: 40, kind: [layered, sp], seed: 1}
  - kind: liquid
    instance: {traffic: example}
  - kind: liquid
    instance: {allocation: [[1, 1, 0, 0, 0, 0, 0, 0]]}
"""


def test_every_kind_sequentially_against_independent_values(tmp_path, capsys):
    from stealsearch.problems.clique.generators import gnp

    grid = write(tmp_path, ALL_KINDS)
    out = tmp_path / "out"
    assert main(["sweep", grid, "--out", str(out), "--sequential", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["total"], summary["ran"], summary["ok"], summary["failed"]) == (20, 20, 20, 0)
    rows = table(out / "all.csv")
    assert all(r["status"] == "ok" for r in rows)
    by = {}
    for r in rows:
        by.setdefault(r["kind"], []).append(r)
    default = [r for r in by["uts"] if r["tree"] == "default"][0]
    assert (default["count"], default["depth"], default["leaves"]) == ("1732", "6", "1050")
    ternary = [r for r in by["uts"] if r["options"]][0]     # 1 + 3 + 9 + 27 + 81
    assert ternary["count"] == "121"
    for r in by["clique"]:
        g = gnp(30, float(r["p"]), seed=int(r["seed"])).to_networkx()
        assert int(r["omega"]) == max(len(c) for c in nx.find_cliques(g)), r
        assert r["verified"] == "True"
    for r in by["hrelation"]:
        assert float(r["length"]) <= float(r["bound"]) and int(r["load"]) == 12
    for r in by["commclust"]:                   # the paper's Table 1: two groups of four
        assert json.loads(r["best_partition"]) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    for r in by["twolevel"]:                    # the DAG kind is kept apart from the item kind
        assert r["param_kind"] in ("layered", "sp") and r["makespan"] == r["lower_bound"]
    example = [r for r in by["liquid"] if r["traffic"] == "example"][0]
    assert (example["transfers"], example["duration"], example["length"]) == ("25", "6", "6")
    pair = [r for r in by["liquid"] if r["allocation"]][0]
    assert json.loads(pair["allocation"]) == [1, 1, 0, 0, 0, 0, 0, 0] and pair["liquid"] == "True"
    # the same command again: nothing left to run, nothing appended
    assert main(["sweep", grid, "--out", str(out), "--sequential"]) == 0
    assert "20 done before, ran 0" in capsys.readouterr().out
    assert len(table(out / "all.csv")) == 20


def test_every_registered_kind_is_a_sweep_kind(tmp_path, capsys):
    """The kinds come from the registry (stealsearch/registry.py), the same for ``sweep``
    and ``reproduce``: a reproduction item runs in a sweep of one's own, its values
    against the paper's (seed 001 §3.3: a direct schedule of the 3-cycle family takes
    3h/2, forwarding 6h/5; seed 004 Table 1: makespan 20 at the lower bound)."""
    from stealsearch import registry

    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    listed = " ".join(capsys.readouterr().out.split())
    assert "Item kinds: " + ", ".join(registry.item_kinds()) + "." in listed
    grid = write(tmp_path, """
name: papers
items:
  - kind: hrelation_cycles
    instance: {k: 2, h: 4, algorithm: direct}
  - kind: hrelation_cycles
    instance: {k: 2, h: 10, algorithm: forwarding}
  - kind: twolevel_table1
""")
    assert main(["sweep", grid, "--out", str(tmp_path), "--sequential", "--quiet"]) == 0
    rows = {(r["kind"], r.get("param_algorithm") or r.get("algorithm")): r
            for r in table(tmp_path / "papers.csv")}
    assert float(rows["hrelation_cycles", "direct"]["length"]) == 1.5 * 4
    assert float(rows["hrelation_cycles", "forwarding"]["length"]) == 1.2 * 10
    t1 = rows["twolevel_table1", ""]
    assert float(t1["makespan"]) == float(t1["lower_bound"]) == 20


@pytest.mark.parametrize("text, message", [
    ("items: [kind: uts\n  - {", "not valid YAML"),
    ("items:\n  - kind: knapsack\n", "unknown item kind 'knapsack'"),
    ("items:\n  - kind: uts\n    instance: {tree: default}\n    cores: 4\n", "unknown key 'cores'"),
    ("items:\n  - kind: clique\n    instance: {n: 30, p: 0.5, colour: red}\n",
     "unknown parameter 'colour'"),
    ("items:\n  - kind: hrelation\n    instance: {P: [], h: 3}\n", "empty list"),
    ("items:\n  - kind: clique\n    instance: {n: thirty, p: 0.5}\n", "should be int"),
    ("items:\n  - kind: hrelation\n    instance: {h: 3}\n", "'P' is required"),
    ("items: {kind: uts}\n", "non-empty list"),
    ("items:\n  - kind: clique\n    instance: {file: nowhere.clq}\n", "file not found"),
])
def test_bad_grid_files_give_one_line_and_exit_2(tmp_path, capsys, text, message):
    grid = write(tmp_path, text)
    assert main(["sweep", grid, "--out", str(tmp_path / "out"), "--sequential"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("stealsearch: error: ") and message in err, err
    assert not (tmp_path / "out").exists()          # nothing ran, nothing written


@pytest.mark.parametrize("extra", [["--limit", "-1"], ["--timeout", "0"], ["--workers", "0"],
                                   ["--sequential", "--workers", "2"]])
def test_bad_flags_exit_2(tmp_path, capsys, extra):
    grid = write(tmp_path, "items:\n  - kind: uts\n    instance: {tree: default}\n")
    assert main(["sweep", grid, "--out", str(tmp_path / "o")] + extra) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_missing_grid_and_foreign_table(tmp_path, capsys):
    assert main(["sweep", str(tmp_path / "nope.yaml"), "--sequential"]) == 2
    assert "grid file not found" in capsys.readouterr().err
    grid = write(tmp_path, "name: data\nitems:\n  - kind: uts\n    instance: {tree: default}\n")
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    assert main(["sweep", grid, "--out", str(tmp_path), "--sequential"]) == 2
    assert "not a sweep table" in capsys.readouterr().err
    assert (tmp_path / "data.csv").read_text() == "a,b\n1,2\n"


SLOW = """
name: slow
items:
  - kind: uts
    instance: {options: ["-t 1 -a 3 -d 8 -b 4 -r 1", "-t 1 -a 3 -d 8 -b 4 -r 2",
                         "-t 1 -a 3 -d 8 -b 4 -r 3", "-t 1 -a 3 -d 8 -b 4 -r 4",
                         "-t 1 -a 3 -d 8 -b 4 -r 5", "-t 1 -a 3 -d 8 -b 4 -r 6",
                         "-t 1 -a 3 -d 8 -b 4 -r 7", "-t 1 -a 3 -d 8 -b 4 -r 8"]}
"""


#: the command's uts items after its first hold (at most 120 s) until the file named by
#: STEALSEARCH_TEST_HOLD exists or a stop is requested, then run: a Ctrl-C after the
#: first row lands in the second item, as if that item were searching
HOLD_AFTER_THE_FIRST_ITEM = """\
import functools
import os
import time

import stealsearch.problems.uts.sweep_items as _items
from stealsearch.engine.core import stop_request

_real, _started = _items.uts, []


def uts(**kwargs):
    _started.append(1)
    until = time.monotonic() + 120
    while len(_started) > 1 and not stop_request.requested() and time.monotonic() < until \\
            and not os.path.exists(os.environ["STEALSEARCH_TEST_HOLD"]):
        time.sleep(0.01)
    return _real(**kwargs)


_items.uts = functools.update_wrapper(uts, _real)
"""


def test_ctrl_c_keeps_whole_rows_and_a_rerun_finishes_without_repeating(tmp_path, capsys):
    grid = write(tmp_path, SLOW)
    out = tmp_path / "out"
    csv_path = out / "slow.csv"
    release = tmp_path / "release"
    env = startup_hook(tmp_path / "hook", HOLD_AFTER_THE_FIRST_ITEM,
                       STEALSEARCH_TEST_HOLD=str(release))
    proc = subprocess.Popen([BIN, "sweep", grid, "--out", str(out), "--sequential", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if csv_path.exists() and len(table(csv_path)) >= 1:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        release.touch()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert csv_path.read_text().endswith("\n")
    before = table(csv_path)
    assert len(before) == 1 and before[0]["status"] == "ok"     # the second item was held
    assert main(["sweep", grid, "--out", str(out), "--sequential", "--quiet"]) == 0
    assert f"{len(before)} done before, ran {8 - len(before)}" in capsys.readouterr().out
    after = table(csv_path)
    assert after[:len(before)] == before                   # the kept rows are untouched
    keys = [r["key"] for r in after]
    assert len(after) == 8 and len(set(keys)) == 8         # no item ran twice


def test_on_a_running_scheduler_small_and_big_items(tmp_path, capsys, cluster4):
    grid = write(tmp_path, """
name: two
items:
  - kind: hrelation
    instance: {P: 6, h: 10, seed: [0, 1, 2]}
  - kind: uts
    instance: {tree: default}
    size: big
""")
    address = cluster4.scheduler.address
    assert main(["sweep", grid, "--out", str(tmp_path), "--scheduler", address, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["ran"], summary["ok"]) == (4, 4)
    rows = table(tmp_path / "two.csv")
    big = [r for r in rows if r["size"] == "big"][0]
    n = len(cluster4.scheduler_info()["workers"])
    assert big["backend"] == f"dask[{n}]" and big["count"] == "1732"
    assert all(r["worker"].startswith("tcp://") for r in rows if r["size"] == "small")


def test_no_out_writes_nothing_and_time_limit_bounds_the_whole_sweep(tmp_path, monkeypatch,
                                                                     capsys):
    """Without --out the table lives in a temporary folder (no ``results/`` appears where
    the user works); --time-limit 0 starts nothing and says so; with --out the items not
    run are left for the same command, which finishes them."""
    grid = str(Path(__file__).resolve().parents[1] / "benchmarks" / "grids" /
               "hrelation_small.yaml")
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", grid, "--sequential", "--limit", "3", "--json", "--quiet"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["ran"], d["ok"], d["table"]) == (3, 3, None)
    assert list(tmp_path.iterdir()) == []
    assert main(["sweep", grid, "--sequential", "--time-limit", "0", "--out", "o", "--json",
                 "--quiet"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["time_limited"] is True and d["ran"] == 0 and d["remaining"] == d["total"] == 48
    assert main(["sweep", grid, "--sequential", "--out", "o", "--json", "--quiet"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["time_limited"] is False and d["ran"] == d["ok"] == 48 and d["remaining"] == 0
    assert main(["sweep", grid, "--sequential", "--time-limit", "-1"]) == 2
    assert "--time-limit" in capsys.readouterr().err
