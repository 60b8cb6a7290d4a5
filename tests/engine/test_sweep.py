"""The sweep runner (engine/app/sweep.py) with item kinds defined here and a test resolver:
grid expansion and keys, resume (counted through a log the items append to), failing
and stuck items, the table's durability, bad grids, and a run on a LocalCluster with a
small task kind and a big stealstack item checked against brute force."""
import csv
import itertools
import os
import time

import pytest

from stealsearch.engine.core.errors import InputError
from stealsearch.engine.app.sweep import (GridError, SweepTable, load_grid, parse_axis, parse_cell, read_outcomes,
                          run_grid, run_sweep)

from examples.subset_sum import SubsetSum


# ------------------------------------------------------------ the test's item kinds
def square(*, x: int, log: str | None = None) -> dict:
    """Squares x; 13 fails.  Appends x to ``log`` so a test counts executions."""
    if log:
        with open(log, "a") as f:
            f.write(f"{x}\n")
    if x == 13:
        raise ValueError("unlucky 13\nsecond line never shown")
    return {"square": x * x, "pid": os.getpid()}


def sleepy(*, seconds: float, until: str | None = None) -> dict:
    """Does not look at any limit: only the runner's own timeout can stop it.  It ends
    after ``seconds``, or once the file ``until`` exists (the test lets it go)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and not (until and os.path.exists(until)):
        time.sleep(0.01)
    return {"slept": seconds}


def subsets(*, weights: list, capacity: int, solve_kwargs: dict) -> dict:
    """Counts the subsets of ``weights`` with sum <= capacity on the engine."""
    from stealsearch.engine.solve import solve

    r = solve(SubsetSum(weights, capacity), **solve_kwargs)
    return {"count": r.count, "nodes": r.nodes, "backend": r.backend, "search": r.status}


EVENTS = []


def noted(*, x: int) -> dict:
    EVENTS.append(("item", x))
    return {"x_again": x}


noted.warmup = lambda: EVENTS.append(("warmup", os.getpid()))

def echo(*, kind: str, x: int) -> dict:
    """Figures of every shape, some named like a runner column or a parameter."""
    return {"vec": [x, x + 1], "nothing": None, "status": "mine", "x": x + 1,
            "inf": float("inf"), "text": "a, b"}


KINDS = {"square": square, "sleepy": sleepy, "subsets": subsets, "noted": noted, "echo": echo}


def brute_force_subsets(weights, capacity):
    return sum(1 for r in range(len(weights) + 1)
               for c in itertools.combinations(weights, r) if sum(c) <= capacity)


def rows(out, name):
    with open(os.path.join(out, f"{name}.csv"), newline="") as f:
        return list(csv.DictReader(f))


def lines(path):
    with open(path) as f:
        return [int(x) for x in f.read().split()]


# --------------------------------------------------------------------- the grid
def test_expansion_keys_repeats_and_duplicates(tmp_path):
    spec = {"name": "g", "repeats": 2, "items": [
        {"kind": "square", "instance": {"x": [1, 2, 3]}},
        {"kind": "square", "instance": {"x": [3, 4]}, "repeats": 1},   # x=3 rep 0 twice
    ]}
    grid = load_grid(spec, KINDS)
    assert len(grid.items) == 3 * 2 + 1 and grid.duplicates == 1
    keys = [it.key for it in grid.items]
    assert len(set(keys)) == len(keys)
    again = load_grid(spec, KINDS)
    assert [it.key for it in again.items] == keys          # stable across loads
    renamed = load_grid(dict(spec, name="other"), KINDS)
    assert [it.key for it in renamed.items] == keys        # the name is not in the key
    assert {(it.columns["x"], it.repeat) for it in grid.items} == \
        {(x, r) for x in (1, 2, 3) for r in (0, 1)} | {(4, 0)}


def test_files_are_relative_to_the_grid_and_globs_expand(tmp_path):
    (tmp_path / "data").mkdir()
    for name in ("b.txt", "a.txt", "c.dat"):
        (tmp_path / "data" / name).write_text("x")
    grid_file = tmp_path / "g.yaml"
    grid_file.write_text("items:\n  - kind: f\n    instance: {file: 'data/*.txt'}\n")

    def f(*, file: str) -> dict:
        return {}

    grid = load_grid(str(grid_file), {"f": f})
    assert grid.name == "g"
    assert [it.columns["file"] for it in grid.items] == ["data/a.txt", "data/b.txt"]
    assert all(os.path.isabs(it.params["file"]) and os.path.isfile(it.params["file"])
               for it in grid.items)


@pytest.mark.parametrize("spec, message", [
    ([1, 2], "expected a mapping"),
    ({"items": []}, "non-empty list"),
    ({"itms": [{"kind": "square"}]}, "unknown key 'itms'"),
    ({"items": [{"kind": "cube", "instance": {"x": 1}}]}, "unknown item kind 'cube'"),
    ({"items": [{"kind": "square", "instance": {"x": 1}, "colour": 3}]}, "unknown key 'colour'"),
    ({"items": [{"kind": "square", "instance": {"y": 1}}]}, "unknown parameter 'y'"),
    ({"items": [{"kind": "square", "instance": {"x": []}}]}, "empty list"),
    ({"items": [{"kind": "square", "instance": {"x": "seven"}}]}, "should be int"),
    ({"items": [{"kind": "square", "instance": {"x": True}}]}, "should be int"),
    ({"items": [{"kind": "square", "instance": {"x": {"a": 1}}}]}, "expected a value"),
    ({"items": [{"kind": "square"}]}, "'x' is required"),
    ({"items": [{"kind": "square", "instance": {"x": 1}, "size": "huge"}]}, "small or big"),
    ({"items": [{"kind": "square", "instance": {"x": 1}, "repeats": 0}]}, "positive integer"),
    ({"items": [{"kind": "square", "instance": {"x": 1}}], "timeout": -1}, "positive number"),
    ({"items": [{"kind": "square", "instance": {"x": 1}, "settings": {"x": 2}}]}, "both"),
    ({"items": [{"kind": "subsets", "instance": {"weights": [[1]], "capacity": 1},
                 "settings": {"k": 0}}]}, "StealPolicy.k"),
    ({"items": [{"kind": "subsets", "instance": {"weights": [[1]], "capacity": 1},
                 "settings": {"workers": 2}}]}, "size: big"),
    ({"items": [{"kind": "subsets", "instance": {"weights": [[1]], "capacity": 1},
                 "size": "big", "settings": {"backend": "mpi"}}]}, "backend"),
    ({"items": [{"kind": "f", "instance": {"file": "no/such/file.clq"}}]}, "file not found"),
    ({"name": "../up", "items": [{"kind": "square", "instance": {"x": 1}}]}, "plain file name"),
])
def test_bad_grids_are_one_line_input_errors(spec, message):
    with pytest.raises(InputError) as err:
        load_grid(spec, dict(KINDS, f=lambda *, file: {}))
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_bad_yaml_file(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("items: [kind: square\n  - {")
    with pytest.raises(GridError, match="not valid YAML"):
        load_grid(str(p), KINDS)
    with pytest.raises(GridError, match="not found"):
        load_grid(str(tmp_path / "missing.yaml"), KINDS)


# ------------------------------------------------------- running in this process
def test_sequential_sweep_resumes_and_records_failures(tmp_path):
    log = str(tmp_path / "log")
    out = str(tmp_path / "out")
    grid = load_grid({"name": "sq", "items": [
        {"kind": "square", "instance": {"x": [1, 2, 3, 13, 5, 6]}, "settings": {"log": log}}]},
        KINDS)
    first = run_sweep(grid, out, limit=3)                   # stop after 3 rows
    assert (first.ran, first.ok, first.remaining) == (3, 3, 3)
    assert lines(log) == [1, 2, 3]
    second = run_sweep(grid, out)                            # resume: the other three
    assert (second.done_before, second.ran, second.ok, second.failed) == (3, 3, 2, 1)
    assert lines(log) == [1, 2, 3, 13, 5, 6]                 # nothing done is run again
    table = rows(out, "sq")
    assert [int(r["x"]) for r in table] == [1, 2, 3, 13, 5, 6]
    for r in table:
        if r["x"] == "13":
            assert r["status"] == "failed" and r["error"] == "ValueError: unlucky 13"
            assert r["square"] == ""
        else:
            assert r["status"] == "ok" and int(r["square"]) == int(r["x"]) ** 2
            assert r["error"] == ""
        assert r["host"] and r["cpu"] and r["date"] and r["commit"] and r["worker"] == "local"
    third = run_sweep(grid, out)                             # only the failed one again
    assert (third.done_before, third.ran, third.failed) == (5, 1, 1)
    assert lines(log)[-1] == 13 and len(lines(log)) == 7
    assert len(rows(out, "sq")) == 7


def test_search_items_in_process_and_stuck_items_time_out(tmp_path):
    weights = [3, 5, 7, 11, 13, 17, 19, 23]
    grid = load_grid({"name": "mix", "items": [
        {"kind": "subsets", "instance": {"weights": [weights], "capacity": [20, 40]},
         "settings": {"k": [2, 8]}},
        {"kind": "sleepy", "instance": {"seconds": 30}, "timeout": 0.2},
        {"kind": "square", "instance": {"x": 4}}]}, KINDS)
    summary = run_sweep(grid, tmp_path)
    # the 30 s item counted as a timeout: the alarm stopped it (had it run to its end,
    # it would count as ok); a hang is pytest-timeout's to catch
    assert (summary.ok, summary.timeout, summary.failed) == (5, 1, 0)
    table = rows(tmp_path, "mix")
    for r in table:
        if r["kind"] == "subsets":
            assert int(r["count"]) == brute_force_subsets(weights, int(r["capacity"]))
            assert r["backend"] == "sequential"
    stuck = [r for r in table if r["kind"] == "sleepy"][0]
    assert stuck["status"] == "timeout" and "timeout of 0.2 s" in stuck["error"]


def test_warmup_runs_once_per_process_before_the_first_item(tmp_path):
    grid = load_grid({"name": "w", "items": [{"kind": "noted", "instance": {"x": [1, 2, 3]}}]},
                     KINDS)
    run_sweep(grid, tmp_path, limit=2)
    run_sweep(grid, tmp_path)
    assert EVENTS == [("warmup", os.getpid()), ("item", 1), ("item", 2), ("item", 3)]


# ------------------------------------------------------------------- the table
def test_table_widens_repairs_a_torn_row_and_refuses_foreign_files(tmp_path):
    t = SweepTable(tmp_path, "t")
    t.append({"key": "a", "status": "ok", "x": 1, "seconds": 0.5})
    t.append({"key": "b", "status": "ok", "x": 2, "y": "new", "seconds": 0.25})
    t.append({"key": "c", "status": "failed", "x": 3, "seconds": 0.1})
    t.close()
    got = rows(tmp_path, "t")
    assert list(got[0]) == ["key", "status", "x", "y", "seconds"]
    assert [(r["key"], r["x"], r["y"]) for r in got] == [("a", "1", ""), ("b", "2", "new"),
                                                          ("c", "3", "")]
    with open(tmp_path / "t.csv", "a") as f:
        f.write("d,ok,4")                                    # a crash mid-row
    with SweepTable(tmp_path, "t") as again:
        assert again.done_keys() == {"a", "b"}
    assert (tmp_path / "t.csv").read_text().endswith("\n")
    assert [r["key"] for r in rows(tmp_path, "t")] == ["a", "b", "c"]
    (tmp_path / "mine.csv").write_text("name,age\nann,3\n")
    with pytest.raises(InputError, match="not a sweep table"):
        SweepTable(tmp_path, "mine")
    assert (tmp_path / "mine.csv").read_text() == "name,age\nann,3\n"
    assert [parse_cell(c) for c in ("", "3", "2.5", "True", "x")] == [None, 3, 2.5, True, "x"]


def test_one_writer_per_table(tmp_path):
    grid = load_grid({"name": "t", "items": [{"kind": "square", "instance": {"x": 2}}]}, KINDS)
    with SweepTable(tmp_path, "t"):
        with pytest.raises(InputError, match="another sweep is writing"):
            run_sweep(grid, tmp_path)
    assert run_sweep(grid, tmp_path).ok == 1                 # released with the first


def test_parquet_when_pyarrow_is_there(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    grid = load_grid({"name": "p", "items": [{"kind": "square", "instance": {"x": [2, 3]}}]},
                     KINDS)
    summary = run_sweep(grid, tmp_path)
    table = pq.read_table(summary.parquet).to_pydict()
    assert sorted(table["square"]) == [4, 9]


def test_outcomes_read_back_as_the_items_returned_them(tmp_path):
    spec = {"name": "e", "items": [{"kind": "echo", "instance": {"kind": ["a", "b"], "x": [1, 2]}},
                                   {"kind": "square", "instance": {"x": 13}}]}
    run = run_grid(spec, KINDS, out=tmp_path)
    assert len(run.ok) == 4 and [o.item.columns for o in run.failed] == [{"x": 13}]
    assert run.failed[0].error == "ValueError: unlucky 13"
    for o in run.ok:
        c = o.item.columns
        assert o.figures == {"vec": [c["x"], c["x"] + 1], "nothing": None, "status": "mine",
                             "x": c["x"] + 1, "inf": float("inf"), "text": "a, b"}
        assert o.record()["kind"] == c["kind"]          # the parameter, not the runner's kind
    # a grid read against a table that holds only part of it: the rest never ran
    bigger = load_grid({"name": "e", "items": [{"kind": "echo",
                                                "instance": {"kind": "a", "x": [1, 5]}}]}, KINDS)
    assert [o.status for o in read_outcomes(bigger, tmp_path)] == ["ok", ""]
    # without --out: a temporary table, gone afterwards
    again = run_grid(spec, KINDS)
    assert len(again.ok) == 4 and again.summary.table == "" and again.summary.done_before == 0


def test_time_limit_zero_runs_nothing_and_says_so(tmp_path):
    run = run_grid({"name": "t", "items": [{"kind": "square", "instance": {"x": [1, 2]}}]},
                   KINDS, out=tmp_path, time_limit=0)
    assert run.summary.time_limited and run.summary.ran == 0 and len(run.not_run) == 2


def test_parse_axis():
    assert parse_axis(" 8,16, 8 ,", int, "--P") == [8, 16]
    for text, message in (("8,x", "--P: 'x' is not a valid int"), (",", "--P: empty list"),
                          ("inf", "not a finite number")):
        with pytest.raises(GridError, match=message):
            parse_axis(text, float if text == "inf" else int, "--P")


# ------------------------------------------- on a LocalCluster (the shared fixture)
@pytest.fixture
def shared_client(cluster4):
    """The session's LocalCluster; a sweep uses whatever workers a cluster has."""
    yield cluster4
    # leave the shared cluster idle: wait for an abandoned task to come back
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(cluster4.processing().values()):
        time.sleep(0.05)


def test_dask_sweep_small_tasks_and_a_big_stealstack_item(tmp_path, shared_client):
    weights = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]
    log = str(tmp_path / "log")
    grid = load_grid({"name": "d", "items": [
        {"kind": "square", "instance": {"x": [1, 2, 3, 4, 13]}, "settings": {"log": log}},
        {"kind": "subsets", "instance": {"weights": [weights], "capacity": [30, 90]}},
        {"kind": "subsets", "instance": {"weights": [weights], "capacity": 120},
         "size": "big", "settings": {"workers": [1, 2], "k": 2}}]}, KINDS)
    seen = []
    summary = run_sweep(grid, tmp_path, client=shared_client, on_row=seen.append)
    assert (summary.total, summary.ran, summary.ok, summary.failed) == (9, 9, 8, 1)
    table = rows(tmp_path, "d")
    assert [r["key"] for r in table] == [r["key"] for r in seen]
    workers = set(shared_client.scheduler_info()["workers"])
    for r in table:
        if r["kind"] == "square" and r["status"] == "ok":
            assert int(r["square"]) == int(r["x"]) ** 2 and r["worker"] in workers
        if r["kind"] == "subsets":
            assert int(r["count"]) == brute_force_subsets(weights, int(r["capacity"]))
            if r["size"] == "big":
                assert r["backend"] == f"dask[{r['workers']}]" and r["worker"] == "local"
            else:
                assert r["backend"] == "sequential" and r["worker"] in workers
    # the big items ran after every small one
    sizes = [r["size"] for r in table]
    assert sizes == sorted(sizes, key=lambda s: s == "big")
    assert sorted(lines(log)) == [1, 2, 3, 4, 13]
    rerun = run_sweep(grid, tmp_path, client=shared_client)
    assert (rerun.done_before, rerun.ran, rerun.failed) == (8, 1, 1)
    assert sorted(lines(log)) == [1, 2, 3, 4, 13, 13]


def test_dask_stuck_task_is_abandoned_and_the_rest_finish(tmp_path, shared_client):
    # the stuck item runs until the test lets it go, after the sweep (not 2 s that a
    # loaded machine could take to see its 0.2 s timeout)
    release = str(tmp_path / "release")
    grid = load_grid({"name": "s", "items": [
        {"kind": "sleepy", "instance": {"seconds": 120, "until": release}, "timeout": 0.2},
        {"kind": "square", "instance": {"x": [5, 6, 7]}}]}, KINDS)
    try:
        summary = run_sweep(grid, tmp_path, client=shared_client)
    finally:
        open(release, "w").close()
    assert (summary.ok, summary.timeout) == (3, 1)
    stuck = [r for r in rows(tmp_path, "s") if r["kind"] == "sleepy"][0]
    assert stuck["status"] == "timeout" and "abandoned" in stuck["error"]


def test_dask_time_limit_cancels_what_is_in_flight(tmp_path, shared_client):
    """6 items on the 4 one-thread workers, 0.3 s for the sweep: at most the first 4
    were ever started; none started after the limit; what ran in flight is not a row.
    No item can end before the limit: each runs until the test lets it go, after the
    sweep."""
    release = str(tmp_path / "release")
    grid = load_grid({"name": "tl", "items": [
        {"kind": "sleepy", "instance": {"seconds": 120, "until": release}, "repeats": 6}]},
        KINDS)
    try:
        summary = run_sweep(grid, tmp_path, client=shared_client, time_limit=0.3)
    finally:
        open(release, "w").close()
    assert summary.time_limited and summary.remaining >= 2
    assert summary.ran + summary.remaining == 6
    table = tmp_path / "tl.csv"           # written only when a row came before the limit
    assert not table.exists() or all(r["status"] == "ok" for r in rows(tmp_path, "tl"))
