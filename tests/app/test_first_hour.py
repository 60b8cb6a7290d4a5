"""Regression tests of the first hour of a new user: one per bug."""
import json
from pathlib import Path

import pytest

from stealsearch.engine.app.commandline import policy_from_args
from stealsearch.problems.clique import check_clique, read_dimacs
from stealsearch.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
CLIQUE_DATA = ROOT / "tests" / "clique" / "data"


@pytest.mark.parametrize("name", ["keller4", "brock200_2"])
@pytest.mark.parametrize("limit", [["--node-limit", "1"], ["--node-limit", "3"],
                                   ["--node-limit", "5"], ["--time-limit", "0.001"]])
def test_clique_under_tiny_limits_reports_a_verified_clique(capsys, name, limit):
    """An interrupted search's incumbent need not be maximal: the result claims a clique
    of the reported size, checked here again by the verifier that reads only the graph."""
    path = CLIQUE_DATA / f"{name}.clq"
    assert main(["clique", str(path), "--sequential", "--json", *limit]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["status"] in ("interrupted", "optimal")
    assert d["objective"] == len(d["solution"]) == d["clique_size"]
    assert d["bound"] >= d["objective"]
    assert check_clique(read_dimacs(path), d["solution"], size=d["objective"])


def test_clique_under_tiny_limit_text_output(capsys):
    assert main(["clique", str(CLIQUE_DATA / "keller4.clq"), "--sequential",
                 "--node-limit", "3"]) == 0
    out = capsys.readouterr().out
    assert "interrupted" in out and "the best clique found (search interrupted)" in out


def test_no_steal_half_reaches_the_policy(capsys):
    parser = build_parser()
    assert policy_from_args(parser.parse_args(["uts", "--no-steal-half"])).steal_half is False
    assert policy_from_args(parser.parse_args(["uts", "--steal-half"])).steal_half is True
    assert policy_from_args(parser.parse_args(["uts"])).steal_half is True
    assert main(["uts", "--options", "-t 1 -a 3 -d 4 -b 4 -r 19", "--sequential", "--json",
                 "--no-steal-half", "--steal-k", "5"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["policy"]["steal_half"] is False and d["policy"]["k"] == 5


def _all_parsers(parser, path=()):
    import argparse

    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _all_parsers(sub, path + (name,))


def test_every_option_has_help_and_shows_its_default():
    import argparse

    for path, parser in _all_parsers(build_parser()):
        text = parser.format_help()
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction,
                                   argparse._SubParsersAction)):
                continue
            assert action.help, (path, action.dest)
            shown = action.default is not None and action.default is not False
            if shown and action.option_strings:
                flat = " ".join(text.split())
                assert f"(default: {action.default})" in flat, (path, action.dest)
                # once: a help string that names its default itself showed it twice
                assert flat.count(f"(default: {action.default}) (default:") == 0, (path, action.dest)


@pytest.mark.parametrize("argv", [
    ["clique", "--gnp", "10", "0.5", "--seed", "-1", "--sequential"],
    ["hrel", "--random", "4", "4", "--seed", "-1"],
    ["twolevel", "--random", "10", "--seed", "-1"],
    ["commclust", "--example", "random8", "--seed", "-1"],
    ["hrel", "--random", "4", "4", "--skew", "-1"],
    ["clique", "--gnp", "10", "0.5", "--mode", "max", "--k", "3", "--sequential"],
    ["hrel", "sweep", "--workers", "0"],
    ["liquid", "t1-study", "--workers", "0"],
    ["twolevel", "sweep", "--workers", "0"],
    ["commclust", "sweep", "--example", "cg8", "--workers", "0"],
    ["uts", "--workers", "0"],
])
def test_bad_options_are_one_line_exit_2(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("stealsearch") and err.count("\n") == 1 and "Traceback" not in err


def test_a_directory_is_reported_as_a_directory(tmp_path, capsys):
    for argv in (["hrel", str(tmp_path)], ["commclust", str(tmp_path)],
                 ["liquid", "traffic", str(tmp_path), "--sequential"],
                 ["twolevel", str(tmp_path)], ["clique", str(tmp_path), "--sequential"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "is a directory" in err, (argv, err)


def test_unwritable_outputs_are_one_line_before_any_work(tmp_path, capsys):
    missing = tmp_path / "no" / "such"
    for argv in (["hrel", "--random", "4", "4", "--out", str(missing / "s.json")],
                 ["hrel", "sweep", "--sequential", "--plot", str(tmp_path / "x.txt")],
                 ["twolevel", "--table1", "--save-instance", str(missing / "i.json")],
                 ["commclust", "--example", "cg8", "--plot", str(tmp_path)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "cannot write" in err, (argv, err)


@pytest.mark.parametrize("argv", [
    ["hrel", "sweep", "--sequential", "--P", "4", "--h", "2", "--skews", "0", "--seeds", "1",
     "--algorithms", "direct"],
    ["hrel", "--random", "4", "4"],
    ["liquid", "t1-study", "--limit", "2", "--sequential"],
    ["liquid", "example", "--sequential"],
    ["commclust", "sweep", "--example", "cg8", "--tie-seeds", "2", "--sequential"],
    ["commclust", "--example", "cg8"],
    ["twolevel", "sweep", "--sizes", "10", "--seeds", "1", "--kinds", "sp", "--sequential"],
    ["twolevel", "--table1"],
    ["clique", "--gnp", "20", "0.5", "--sequential"],
    ["uts", "--sequential"],
    ["sweep", str(ROOT / "benchmarks" / "grids" / "hrelation_small.yaml"), "--sequential",
     "--limit", "2"],
], ids=lambda a: " ".join(a[:2]))
def test_no_file_written_unless_asked(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 0
    assert list(tmp_path.iterdir()) == []


def test_time_limit_stops_a_sweep_and_says_so(capsys):
    assert main(["twolevel", "sweep", "--sequential", "--sizes", "50", "--seeds", "50",
                 "--kinds", "sp", "--time-limit", "0.000001", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["status"] == "interrupted" and len(d["runs"]) < d["runs_planned"] == 50


def test_quiet_silences_warnings_and_warnings_are_one_line(tmp_path, capsys):
    p = tmp_path / "loops.txt"
    p.write_text("1 2\n2 2\n2 3\n")
    assert main(["clique", str(p), "--sequential"]) == 0
    err = capsys.readouterr().err
    assert err == f"stealsearch: warning: {p}: dropped 1 self-loop(s) (the first at vertex 2)\n"
    assert main(["clique", str(p), "--sequential", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_broken_pipe_is_a_quiet_exit(tmp_path):
    """``stealsearch ... | head -1``: the reader goes away; no traceback, no message."""
    import subprocess
    import sys

    script = (f"set -o pipefail; '{sys.executable}' -m stealsearch twolevel --random 3000 "
              "--json --full | head -1")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.stdout == "{\n"
    assert proc.stderr == "", proc.stderr
    assert proc.returncode == 141


# -- timings printed by the CLI are warm -------------------------------------------------

@pytest.mark.parametrize("module, argv", [
    ("stealsearch.problems.hrelation.sweep", ["hrel", str(ROOT / "examples" / "data" / "messages.csv"),
                                  "--algorithm", "all"]),
    ("stealsearch.problems.twolevel.cli", ["twolevel", str(ROOT / "examples" / "data" / "dag.json")]),
    ("stealsearch.problems.commclust.cli", ["commclust", str(ROOT / "examples" / "data" / "table.csv")]),
])
def test_cli_clocks_start_after_the_kernels_are_warm(monkeypatch, capsys, module, argv):
    """A first call loads a numba kernel (0.02-0.4 s, up to 1000x the run it would be
    added to): every clock the command reads comes after its warm-up.  The module's
    ``time`` and ``_warm`` are wrapped to log their order (no time is measured here)."""
    import importlib
    import time as real_time
    import types

    mod = importlib.import_module(module)
    events = []
    real_warm = mod._warm

    def warm(*a, **k):
        events.append("warm")
        return real_warm(*a, **k)

    def perf_counter():
        events.append("clock")
        return real_time.perf_counter()

    monkeypatch.setattr(mod, "_warm", warm)
    monkeypatch.setattr(mod, "time", types.SimpleNamespace(perf_counter=perf_counter))
    assert main(argv) == 0
    capsys.readouterr()
    assert "warm" in events and "clock" in events
    assert events.index("warm") < events.index("clock"), events[:5]


# -- design, factorize and teams print readable results ------------------------------------

def test_design_and_factorize_print_blocks_and_factors_as_lines(capsys):
    assert main(["design", "2", "7", "3", "--sequential"]) == 0
    out = capsys.readouterr().out
    assert "{" not in out and "7 blocks over points 0..6" in out
    blocks = [line.split() for line in out.splitlines() if line.startswith("    ")]
    assert len(blocks) == 7 and all(len(b) == 3 for b in blocks)
    pairs = {frozenset(p) for b in blocks for p in
             [(b[0], b[1]), (b[0], b[2]), (b[1], b[2])]}
    assert len(pairs) == 21                        # every pair of the 7 points exactly once
    assert main(["factorize", "K8", "1", "--sequential"]) == 0
    out = capsys.readouterr().out
    assert "{" not in out
    factors = [line for line in out.splitlines() if line.strip().startswith("factor ")]
    assert len(factors) == 7
    edges = [e for f in factors for e in f.split(":")[1].split()]
    assert len(edges) == len(set(edges)) == 28     # the 28 edges of K8, each once


def test_liquid_teams_full_prints_what_the_docs_show(capsys):
    assert main(["liquid", "teams", "example", "--full", "--sequential"]) == 0
    out = capsys.readouterr().out
    assert "72 full teams (504 teams)" in out
    page = (ROOT / "docs" / "reference" / "problems.md").read_text()
    assert "liquid teams example --full --sequential   # 72 full teams (504 teams)" in page


# -- every reader takes its input gzipped ----------------------------------------------------

_DATA = ROOT / "examples" / "data"
_GZ_CASES = [
    (["hrel", "{messages.csv}", "--algorithm", "direct"], "length"),
    (["commclust", "{table.csv}"], "best"),
    (["commclust", "{trace.txt}", "--format", "trace"], "best"),
    (["twolevel", "{dag.json}"], "makespan"),
    (["twolevel", "{tasks.csv}", "--arcs", "{arcs.csv}"], "makespan"),
    (["clique", "{edges.txt}", "--sequential"], "objective"),
    (["clique", "{g.clq}", "--sequential"], "objective"),
    (["liquid", "traffic", "{ring4_alltoall.yaml}", "--sequential"], "length"),
]


@pytest.mark.parametrize("argv, key", _GZ_CASES, ids=lambda x: x if isinstance(x, str) else x[0])
def test_every_reader_takes_gzip(tmp_path, capsys, argv, key):
    """The same command on a gzipped copy of each sample input gives the same answer."""
    import gzip
    import shutil

    liquid = ROOT / "problems" / "liquid" / "examples"
    for f in list(_DATA.iterdir()) + list(liquid.glob("*.yaml")):
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
            (tmp_path / (f.name + ".gz")).write_bytes(gzip.compress(f.read_bytes()))

    def run(suffix):
        words = [str(tmp_path / (w[1:-1] + suffix)) if w.startswith("{") else w for w in argv]
        assert main(words + ["--json"]) == 0, words
        return json.loads(capsys.readouterr().out)

    plain, zipped = run(""), run(".gz")
    assert key in plain and plain[key] == zipped[key]


# -- hrel FILE with a place flag runs its algorithms there -----------------------------------

def test_hrel_file_with_a_scheduler_runs_every_algorithm_as_a_dask_task(capsys, cluster4):
    path = str(ROOT / "examples" / "data" / "messages.csv")
    assert main(["hrel", path, "--algorithm", "all", "--json", "--quiet"]) == 0
    here = json.loads(capsys.readouterr().out)
    assert here["backend"] == "sequential"
    assert main(["hrel", path, "--algorithm", "all", "--json", "--quiet",
                 "--scheduler", cluster4.scheduler.address]) == 0
    there = json.loads(capsys.readouterr().out)
    assert there["backend"] == "dask[4]" and there["verified"] is True
    assert [r["length"] for r in there["results"]] == [r["length"] for r in here["results"]]
    assert main(["hrel", path, "--algorithm", "direct", "--scheduler",
                 cluster4.scheduler.address, "--quiet"]) == 0
    assert "each algorithm a Dask task on dask[4]" in capsys.readouterr().out


@pytest.mark.parametrize("content, extra, fragment", [
    ("0,a\n", [], "not a number: 'a'"),
    ("0,1\n1,0\n", ["--groups", "0,a"], "--groups: expected sizes like 4,4 or 2x8, got '0,a'"),
])
def test_commclust_0_a_says_what_is_wrong(tmp_path, capsys, content, extra, fragment):
    """It used to say "need at least 2 processes, got 1"."""
    path = tmp_path / "t.csv"
    path.write_text(content)
    assert main(["commclust", str(path), *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "at least 2 processes" not in err


def test_resume_takes_the_cluster_flags_of_a_new_search(tmp_path, capsys):
    """A resumed search may move to a bigger place: --workers beyond 4 per core is refused
    with the advice to add --force, which resume now takes (with --connect-timeout and
    --wait-workers), as every command that starts a cluster does."""
    d = tmp_path / "ck"
    assert main(["uts", "--tree", "T1", "--sequential", "--node-limit", "100000",
                 "--checkpoint", str(d), "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "interrupted"
    assert main(["resume", str(d), "--workers", "100000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "add --force" in err
    assert main(["resume", str(d), "--sequential", "--force", "--connect-timeout", "4",
                 "--wait-workers", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["count"] == 4130071 and out["matches_published"] is True
    assert main(["resume", str(d), "--workers", "2", "--connect-timeout", "-1"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("graph, fragment", [
    ("K2000", "more than 20000 1-factors"),          # (n-1)!! factors: it never ended
    ("K16", "more than 20000 1-factors"),
    ("K100000000", "a named graph has 1 to 2000"),   # the edge list alone: 10^16 pairs
    ("K3,99999999", "a named graph has 1 to 2000"),
])
def test_factorize_refuses_graphs_with_too_many_factors(capsys, graph, fragment):
    assert main(["factorize", graph, "1", "--sequential"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err


def test_factorize_of_a_long_cycle_needs_no_deep_python_stack():
    """k_factors recurses once per vertex (a RecursionError at ~1000 vertices before)."""
    import numpy as np

    from stealsearch.problems.clique.generators import k_factors
    from stealsearch.problems.clique.model import Graph

    n = 3000
    cycle = Graph.from_edges(n, np.array([(i, (i + 1) % n) for i in range(n)]), name="C3000")
    assert len(k_factors(cycle, 2)) == 1 and len(k_factors(cycle, 1)) == 2


@pytest.mark.parametrize("argv, fragment", [
    (["clique", "--gnp", "10", "0.5", "--mode", "decide", "--k", "99999999999999999999",
      "--sequential"], "k must be at most"),                       # numba OverflowError
    (["commclust", "--example", "cg8", "--groups", "99999999999x8"], "--groups: at most"),
    (["commclust", "--example", "cg8", "--groups", "4,99999999999"], "--groups: at most"),
    (["commclust", "sweep", "--example", "cg8", "--tie-seeds", "100000000", "--sequential"],
     "--tie-seeds: at most 10000"),                                # 10^8 items made first
    (["twolevel", "sweep", "--seeds", "100000000", "--sequential"], "--seeds: at most 10000"),
    (["hrel", "sweep", "--seeds", "100000000", "--sequential"], "--seeds at most 10000"),
    (["twolevel", "--random", "100000000"], "--random must be in 1..10,000,000"),
])
def test_huge_numbers_are_one_line_not_a_crash_or_a_hang(capsys, argv, fragment):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err


def test_reproduce_into_a_folder_that_cannot_be_made_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["reproduce", "002", "--quick", "--sequential", "--out",
                 str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot create" in err
    assert main(["reproduce", "002", "--quick", "--sequential", "--out", str(blocker)]) == 2
    assert "it is a file" in capsys.readouterr().err


def test_version_and_python_dash_m():
    """``stealsearch --version`` names the installed distribution's version, and
    ``python -m stealsearch`` is the same command (exit codes included)."""
    import subprocess
    import sys
    from importlib.metadata import version

    want = f"stealsearch {version('stealsearch')}"
    proc = subprocess.run([sys.executable, "-m", "stealsearch", "--version"],
                          capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout.strip(), proc.stderr) == (0, want, "")
    proc = subprocess.run([sys.executable, "-m", "stealsearch", "uts", "--workers", "0"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and proc.stdout == ""


#: The flags every command that runs on the cluster takes ("one CLI").
BACKEND_FLAGS = {"--workers", "--sequential", "--scheduler", "--cluster-config", "--time-limit",
                 "--progress", "--quiet", "--json", "--force", "--connect-timeout",
                 "--wait-workers"}
#: Where a flag is missing on purpose, and why.
NOT_TAKEN = {
    ("demo",): BACKEND_FLAGS - {"--workers", "--force"},     # a tour on its own LocalCluster
    ("reproduce",): {"--time-limit"},     # a report is built from its whole grid
    ("resume",): {"--progress", "--quiet", "--json"},   # the stored command's output flags
    ("check-proof",): BACKEND_FLAGS,      # it reads two files; no search, no cluster
}
#: Commands that generate an instance: each takes --seed.
SEEDED = {("clique",), ("hrel",), ("twolevel",), ("commclust",)}


def test_every_cluster_command_takes_the_same_backend_flags():
    for path, parser in _all_parsers(build_parser()):
        if not path or any(isinstance(a, __import__("argparse")._SubParsersAction)
                           for a in parser._actions):
            continue                                       # the top level, 'liquid'
        opts = {o for a in parser._actions for o in a.option_strings}
        missing = BACKEND_FLAGS - opts - NOT_TAKEN.get(path, set())
        assert missing == set(), (path, sorted(missing))
        if path in SEEDED:
            assert "--seed" in opts, path


def test_reproduce_hands_the_cluster_flags_to_the_cluster(monkeypatch, capsys, tmp_path):
    """reproduce accepted --force, --connect-timeout and --wait-workers and dropped them."""
    import stealsearch.engine.deploy.cluster

    seen = {}

    class Stop(Exception):
        pass

    def fake_client(**kw):
        seen.update(kw)
        raise Stop

    monkeypatch.setattr(stealsearch.engine.deploy.cluster, "dask_client", fake_client)
    with pytest.raises(Stop):
        main(["reproduce", "002", "--quick", "--workers", "3", "--force", "--connect-timeout",
              "7", "--wait-workers", "9", "--out", str(tmp_path)])
    assert seen["workers"] == 3 and seen["force"] is True
    assert seen["connect_timeout"] == 7 and seen["wait_workers"] == 9


@pytest.mark.parametrize("module", ["stealsearch.problems.uts.demo", "stealsearch.problems.clique.demo"])
def test_demo_clocks_start_after_warm_up(monkeypatch, capsys, module):
    """The first `make demo` printed a 4.27x speed-up on 2 workers: the sequential kernel
    was loaded inside its clock.  The tours warm every kernel before the first timed
    search (and stealsearch.engine.app.timing.speedup_text flags a ratio above the worker count)."""
    import importlib

    mod = importlib.import_module(module)
    events = []

    class Stop(Exception):
        pass

    def solve(*a, **k):
        events.append("solve")
        raise Stop

    monkeypatch.setattr(mod, "warm_up", lambda *a, **k: events.append("warm"))
    monkeypatch.setattr(mod, "solve", solve)
    with pytest.raises(Stop):
        mod.tour(object(), 2)
    capsys.readouterr()
    assert events == ["warm", "solve"]
