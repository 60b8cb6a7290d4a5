"""``stealsearch hrel``: in-process calls, the console script, and one real sweep."""
import json
import subprocess
import sys

import numpy as np

from stealsearch.cli import main
from stealsearch.problems.hrelation import Schedule, verify_schedule, write_messages


def run_cli(capsys, *argv):
    code = main(["hrel", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_random_json_has_the_required_keys(capsys):
    code, out, err = run_cli(capsys, "--random", "8", "12", "--seed", "3", "--json")
    assert code == 0, err
    obj = json.loads(out)
    for key in ("P", "h", "algorithm", "length", "bound", "verified", "wall_seconds"):
        assert key in obj
    assert obj["P"] == 8 and obj["h"] == 12 and obj["algorithm"] == "forwarding"
    assert obj["verified"] is True and obj["length"] <= obj["bound"] + 1e-9


def test_file_all_algorithms_and_out(capsys, tmp_path):
    m = np.array([[0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0],
                  [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1], [0, 0, 0, 1, 0, 0]])
    f = tmp_path / "fig1.csv"
    write_messages(m, f)
    out_path = tmp_path / "s.json"
    code, out, err = run_cli(capsys, str(f), "--algorithm", "all", "--json", "--out", str(out_path))
    assert code == 0, err
    obj = json.loads(out)
    assert obj["algorithm"] == "all" and obj["length"] == 2.4 and obj["verified"] is True
    assert {r["algorithm"] for r in obj["results"]} == {"direct", "forwarding", "regular",
                                                         "weighted", "naive", "two-phase"}
    sched = Schedule.from_json_obj(json.loads(out_path.read_text()))
    assert verify_schedule(sched, m).ok and sched.length == 2.4


def test_text_output(capsys):
    code, out, _ = run_cli(capsys, "--random", "5", "7", "--algorithm", "direct")
    assert code == 0 and "direct" in out and "yes" in out


def test_bad_inputs_are_one_line_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("0,1\n-1,0\n")
    code, _, err = run_cli(capsys, str(bad))
    assert code == 2 and err.count("\n") == 1 and "row 1, col 0: negative" in err
    code, _, err = run_cli(capsys, str(tmp_path / "missing.csv"))
    assert code == 2 and "no such file" in err
    code, _, err = run_cli(capsys)
    assert code == 2 and "--random" in err
    code, _, err = run_cli(capsys, "--random", "5", "7", "--algorithm", "fastest")
    assert code == 2 and err.startswith("stealsearch") and err.count("\n") == 1
    code, _, err = run_cli(capsys, "sweep", "--P", "8,x")
    assert code == 2 and "--P: 'x' is not a valid int" in err
    code, _, err = run_cli(capsys, "sweep", "--algorithms", "quick")
    assert code == 2 and "unknown algorithm" in err


def test_console_script_subprocess(tmp_path):
    f = tmp_path / "m.json"
    f.write_text(json.dumps({"messages": [[0, 3, 1], [2, 0, 2], [1, 1, 0]]}))
    proc = subprocess.run([sys.executable, "-m", "stealsearch", "hrel", str(f), "--algorithm",
                           "weighted", "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    obj = json.loads(proc.stdout)
    assert obj["verified"] is True and obj["P"] == 3 and obj["h"] == 8


def test_sweep_runs_dask_tasks_and_plots(capsys, tmp_path):
    """The one test that starts a real LocalCluster (closed by dask_client on exit)."""
    png = tmp_path / "sweep.png"
    code, out, err = run_cli(capsys, "sweep", "--P", "6,7", "--h", "8", "--skews", "0,1",
                             "--seeds", "1", "--algorithms", "direct,forwarding,naive",
                             "--workers", "2", "--plot", str(png), "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["tasks"] == 2 * 1 * 2 * 1 and obj["records"] == 12 and obj["verified"] is True
    assert png.stat().st_size > 1000 and png.read_bytes()[:4] == b"\x89PNG"
    algos = {s["algorithm"] for s in obj["summary"]}
    assert algos == {"direct", "forwarding", "naive"}
    for s in obj["summary"]:
        assert s["mean_length_over_h"] >= 1.0 - 1e-9
