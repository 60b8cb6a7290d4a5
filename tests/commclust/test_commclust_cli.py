"""``stealsearch commclust`` in-process, as a real console script, and the Dask sweep."""
import json
import subprocess
import sys

import numpy as np
import pytest

from stealsearch.cli import main
from stealsearch.problems.commclust import paper_table1, write_table_csv, write_trace


def _run(capsys, *argv):
    code = main(["commclust", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_commclust_cli_example_text(capsys):
    code, out, err = _run(capsys, "--example", "cg8", "--tie-seed", "4", "--groups", "4,4")
    assert code == 0 and err == ""
    assert "best partition: 2 clusters (partition 6)" in out
    assert out.count("Partition ") == 8
    assert "mapping to groups 4,4" in out


def test_commclust_cli_json_and_plots(capsys, tmp_path):
    gc_png, d_png = tmp_path / "gc.png", tmp_path / "d.png"
    code, out, _ = _run(capsys, "--example", "cg16", "--json", "--plot", str(gc_png),
                        "--dendrogram-plot", str(d_png))
    assert code == 0
    r = json.loads(out)
    assert len(r["partitions"]) == 16 and r["partitions"][15]["G_c"] is None
    assert r["best"]["n_clusters"] == 4
    assert sorted(map(sorted, r["best"]["clusters"])) == [list(range(s, s + 4)) for s in (0, 4, 8, 12)]
    assert r["wall_seconds"] > 0 and len(r["merges"]) == 15 and len(r["ranking"]) == 16
    gcs = [p["G_c"] for p in r["partitions"][:-1]]
    assert max(gcs) == r["best"]["G_c"]
    for png in (gc_png, d_png):
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and 1000 < len(data) < 200_000


@pytest.mark.parametrize("writer, name", [("csv", "t.csv"), ("trace", "t.trace"), ("npy", "t.npy")])
def test_commclust_cli_reads_files(capsys, tmp_path, writer, name):
    path = tmp_path / name
    t = paper_table1()
    if writer == "csv":
        write_table_csv(t, str(path))
    elif writer == "trace":
        write_trace(t, str(path))
    else:
        np.save(path, t)
    code, out, _ = _run(capsys, str(path), "--json")
    assert code == 0 and json.loads(out)["best"]["n_clusters"] == 2


@pytest.mark.parametrize("content, argv_extra, fragment", [
    ("1,2,3\n4,5,6\n", [], "not square"),
    ("0,1\n-4,0\n", [], "line 2, col 0: negative value -4"),
    ("0,nan\n1,0\n", [], "line 1, col 1: non-finite"),
    ("0,1\n1,0\n", ["--groups", "1"], "capacities add up to 1 < 2"),
    ("0,1\n1,0\n", ["--groups", "a,b"], "--groups"),
    ("0,1\n1,0\n", ["--tie-seed", "-3"], "a seed must be an integer in 0..2^63-1"),
    ("0,1\n1,0\n", ["--seed", "3"], "--seed applies to the generated examples"),
    ("0,1\n1,0\n", ["--example", "cg8"], "give one table"),
    ("0,1\n1,0\n", ["--plot", "/nonexistent/dir/x.png"], "no such directory"),
])
def test_commclust_cli_bad_input_exit_2_one_line(capsys, tmp_path, content, argv_extra, fragment):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    code, out, err = _run(capsys, str(path), *argv_extra)
    assert code == 2 and out == ""
    assert err.startswith("stealsearch") and "error: " in err and err.count("\n") == 1 and fragment in err


@pytest.mark.parametrize("argv, fragment", [
    ([], "give a table FILE"),
    (["--example", "xx9"], "unknown example"),
    (["missing.csv"], "no such file"),
    (["--format", "json", "x"], "invalid choice"),
    (["sweep", "--example", "cg8", "--tie-seeds", "0"], "expected an integer >= 1"),
    (["sweep", "--example", "cg8", "--plot", "x.png"], "unrecognized arguments: --plot"),
])
def test_commclust_cli_usage_errors(capsys, argv, fragment):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and fragment in err and err.count("\n") == 1


def test_commclust_console_script_subprocess():
    ok = subprocess.run([sys.executable, "-m", "stealsearch", "commclust", "--example", "ep16",
                         "--json"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["n_processes"] == 16


def test_commclust_cli_sweep_on_local_cluster(capsys, cluster4):
    """(table, seed) pairs as Dask tasks on the session cluster's 4 workers."""
    code, out, err = _run(capsys, "sweep", "--example", "cg8", "--example", "is16",
                          "--tie-seeds", "6", "--scheduler", cluster4.scheduler.address,
                          "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["tasks"] == 12 and r["workers"] == 4
    by = {s["table"]: s for s in r["sweep"]}
    cg = by["cg8"]
    assert cg["stability"] == 1.0 and cg["distinct_best_partitions"] == 1
    assert cg["modal_best_partition"] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert cg["gc_curve_max_spread"] < 0.01   # tie-breaks change W by 1 message (2532 vs 2533)
    assert by["is16"]["seeds"] == 6
    # the stability computed here, without Dask: the modal best partition's share of seeds
    share, modal = _modal_share("is16", range(6))
    assert by["is16"]["stability"] == share
    assert by["is16"]["modal_best_partition"] == modal


def _modal_share(table, seeds):
    from collections import Counter

    from stealsearch.problems.commclust.algorithms import cluster_table
    from stealsearch.problems.commclust.generators import example_table
    from stealsearch.problems.commclust.model import canonical_partition, validate_table
    from stealsearch.problems.commclust.quality import quality_curve

    t = validate_table(example_table(table))      # the CLI's table (--seed 0); tie seeds vary
    bests = []
    for seed in seeds:
        dend = cluster_table(t, seed=seed, validated=True)
        best = quality_curve(t, dend, validated=True).best_index()
        bests.append(tuple(tuple(c) for c in canonical_partition(dend.partition(best))))
    (modal, n), = Counter(bests).most_common(1)
    return n / len(bests), [list(c) for c in modal]
