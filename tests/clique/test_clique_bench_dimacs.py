"""bench_dimacs's table from raw records: the ratio, the totals over the graphs a
peer solved, and a graph ours did not run (``--peers-first``: no peer finished it).  No
solver runs here: the records are written by hand, the figures they imply are checked."""
import json

from stealsearch.benchmarks import bench_dimacs


def _rec(name, ours, momc, glasgow):
    def run(status, cpu, nodes=0, omega=0):
        return {"status": status, "why": "cpu", "seconds": cpu, "cpu": cpu, "nodes": nodes,
                "omega": omega}
    r = {"instance": name, "family": "dimacs", "n": 10, "m": 20, "density": 0.44, "load": 1.0,
         "limit": 120.0, "date": "2026-11-26 19:00", "commit": "abc1234",
         "momc": dict(run(*momc), commit="m"), "glasgow": dict(run(*glasgow), commit="g")}
    if ours == "not run":
        r["ours"] = {"status": "not run", "why": "no peer finished", "cpu": 0.0, "seconds": 0.0,
                     "nodes": 0, "omega": 0}
    else:
        r["ours"] = dict(run(*ours), initial=5, initial_seconds=0.01, root_bound=7,
                         resolved="colour")
    return r


def test_report_ratios_totals_and_graphs_ours_did_not_run(tmp_path):
    raw = tmp_path / "raw.jsonl"
    recs = [_rec("solved", ("optimal", 3.0, 100, 6), ("optimal", 6.0, 50, 6), ("limit", 120.0)),
            _rec("missed", ("limit", 120.0), ("optimal", 40.0, 70, 9), ("limit", 120.0)),
            _rec("open", "not run", ("limit", 120.0), ("limit", 120.0))]
    recs[0]["ours"]["branched"] = 40          # older records have no branched count
    raw.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = tmp_path / "table.md"
    lines = bench_dimacs.main(["--report", "--raw", str(raw), "--out", str(out),
                               "--title-suffix", ", 120 s"])
    text = out.read_text()
    assert text.startswith("## Maximum clique: the DIMACS set and BHOSLIB against glasgow and "
                           "MoMC (issue 23), 120 s")  # the RESULTS.md section it replaces
    row = {ln.split(" | ")[0].strip("| "): ln.split(" | ") for ln in lines if ln.startswith("| ")}
    assert row["solved"][12] == "0.50"                 # 3.0 / 6.0
    assert row["missed"][12] == "> 3.0"                # the limit / MoMC's 40 s
    assert row["solved"][6] == "40" and row["missed"][6] == "—"
    assert row["open"][4] == "not run" and row["open"][8] == "—"
    assert "ours 1, glasgow 0, MoMC 2 of 3 graphs" in text
    # the totals: the two graphs a peer solved; an unfinished run counts the limit
    assert ("over the 2 graphs a peer solved (a solver's limit where it did not finish): "
            "ours 123.0 s, glasgow 240.0 s, MoMC 46.0 s; ours / the better peer's total 2.67"
            in text)
    assert "solved by a peer, not by us within the limit: missed" in text
    assert "not run*: no peer finished" in text and "Ours: commit abc1234" in text


def test_report_over_two_stages_counts_each_records_own_limit(tmp_path):
    """--also: a 10 s stage read first, the 120 s stage's record of a graph replaces its
    10 s record, and an unfinished run counts its own record's limit (10, not 120)."""
    short, long_ = tmp_path / "s10.jsonl", tmp_path / "s120.jsonl"
    quick = _rec("quick", ("optimal", 1.0, 10, 4), ("optimal", 2.0, 5, 4), ("limit", 10.0))
    quick["limit"] = 10.0
    hard10 = _rec("hard", "not run", ("limit", 10.0), ("limit", 10.0))
    hard10["limit"] = 10.0
    hard120 = _rec("hard", ("optimal", 30.0, 900, 7), ("optimal", 60.0, 80, 7), ("limit", 120.0))
    short.write_text(json.dumps(quick) + "\n" + json.dumps(hard10) + "\n")
    long_.write_text(json.dumps(hard120) + "\n")
    out = tmp_path / "table.md"
    lines = bench_dimacs.main(["--report", "--raw", str(long_), "--also", str(short),
                               "--out", str(out)])
    text = out.read_text()
    row = {ln.split(" | ")[0].strip("| "): ln.split(" | ") for ln in lines if ln.startswith("| ")}
    assert set(row) - {"graph"} == {"quick", "hard"}      # ("graph": the heading row)
    assert row["hard"][12] == "0.50" and row["quick"][12] == "0.50"
    # glasgow: 10 (its 10 s limit on "quick") + 120 (its limit on "hard")
    assert ("ours 31.0 s, glasgow 130.0 s, MoMC 62.0 s; ours / the better peer's total 0.50"
            in text)
    assert "limit 10 or 120 CPU s (each record's own" in text
    assert "(s10.jsonl, s120.jsonl)" in text


def test_known_omega_from_the_table_the_folder_and_a_bhoslib_name(tmp_path):
    (tmp_path / "omega.tsv").write_text("instance\tn\tm\tomega\nkeller5\t776\t225990\t99\n")
    assert bench_dimacs.known_omega("keller5") == 27
    assert bench_dimacs.known_omega("keller5", tmp_path) == 99      # the folder's own list
    assert bench_dimacs.known_omega("frb45-21-3") == 45
    assert bench_dimacs.known_omega("unheard_of", tmp_path) is None


def _tiny_set(tmp_path, omega, isolated=0):
    """A folder with one graph, a 4-clique, a pendant vertex and ``isolated`` more
    vertices, and an omega.tsv."""
    edges = [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4), (4, 5)]
    (tmp_path / "tiny.clq").write_text(f"p edge {5 + isolated} 7\n"
                                       + "".join(f"e {a} {b}\n" for a, b in edges))
    (tmp_path / "omega.tsv").write_text(f"instance\tn\tm\tomega\ntiny\t5\t7\t{omega}\n")
    return ["--dimacs", str(tmp_path), "--skip", "glasgow", "momc", "--limit", "30",
            "--raw", str(tmp_path / "raw.jsonl")]


def test_run_records_each_extra_bound_once_and_checks_the_published_omega(tmp_path,
                                                                          monkeypatch):
    import stealsearch.problems.clique.problem as problem_module

    # density 0.2: auto keeps the degeneracy order and picks colour
    bench_dimacs.main(_tiny_set(tmp_path, 4, isolated=5) + ["--bounds", "colour", "incmaxsat"])
    (rec,) = [json.loads(x) for x in (tmp_path / "raw.jsonl").read_text().splitlines()]
    assert rec["ours"]["omega"] == 4 and rec["ours"]["resolved"] == "colour"
    assert rec["ours"]["order"] == "degeneracy"
    # colour is auto's own choice here: not run twice
    assert set(rec["bounds"]) == {"incmaxsat"} and rec["bounds"]["incmaxsat"]["omega"] == 4
    assert "momc" not in rec and "glasgow" not in rec
    # density 0.7, a partition at omega (the size threshold lifted): auto's filtsat runs
    # in the maxiset order, so an explicit filtsat (degeneracy order) is another run
    monkeypatch.setattr(problem_module, "AUTO_MAXISET_MIN_N", 0)
    (tmp_path / "raw.jsonl").unlink()
    bench_dimacs.main(_tiny_set(tmp_path, 4) + ["--bounds", "filtsat"])
    (rec,) = [json.loads(x) for x in (tmp_path / "raw.jsonl").read_text().splitlines()]
    assert (rec["ours"]["resolved"], rec["ours"]["order"]) == ("filtsat", "maxiset")
    assert set(rec["bounds"]) == {"filtsat"} and rec["bounds"]["filtsat"]["omega"] == 4


def test_run_aborts_when_the_omega_found_is_not_the_published_one(tmp_path):
    import pytest
    with pytest.raises(AssertionError, match="disagree"):
        bench_dimacs.main(_tiny_set(tmp_path, 5))
