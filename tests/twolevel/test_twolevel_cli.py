"""`stealsearch twolevel`: files, random DAGs, errors, Gantt chart, sweep (Dask)."""
import json
import subprocess
import sys

from stealsearch.cli import main
from stealsearch.problems.twolevel.generators import table1_instance
from stealsearch.problems.twolevel.io import write_csv, write_json


def run(capsys, *argv):
    code = main(["twolevel", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_twolevel_cli_table1_json(capsys):
    code, out, err = run(capsys, "--table1", "--json")
    assert code == 0, err
    data = json.loads(out)
    for key in ("makespan", "lower_bound", "clusters", "processors", "copies", "messages",
                "verified", "wall_seconds"):
        assert key in data
    assert (data["makespan"], data["lower_bound"], data["clusters"]) == (20, 20, 2)
    assert data["processors_per_cluster"] == [3, 3] and data["copies"] == 20
    assert data["verified"] is True and data["at_lower_bound"] is True


def test_twolevel_cli_files_and_outputs(capsys, tmp_path):
    inst = table1_instance()
    write_json(inst, tmp_path / "t1.json")
    write_csv(inst, tmp_path / "tasks.csv", tmp_path / "arcs.csv")
    code, out, err = run(capsys, str(tmp_path / "t1.json"), "--gantt", str(tmp_path / "g.png"),
                         "--schedule-out", str(tmp_path / "s.json"))
    assert code == 0, err
    assert "makespan     20  (lower bound 20)" in out and "verified     yes" in out
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sched = json.loads((tmp_path / "s.json").read_text())
    assert len(sched["copies"]) == 20 and sched["processor_cluster"] == [0, 0, 0, 1, 1, 1]
    code, out, err = run(capsys, str(tmp_path / "tasks.csv"), "--arcs",
                         str(tmp_path / "arcs.csv"), "--json", "--full")
    assert code == 0, err
    data = json.loads(out)
    assert data["makespan"] == 20 and len(data["schedule"]["messages"]) == data["messages"]


def test_twolevel_cli_random_and_one_cluster(capsys, tmp_path):
    code, out, err = run(capsys, "--random", "300", "--kind", "sp", "--seed", "4", "--json",
                         "--save-instance", str(tmp_path / "r.json"))
    assert code == 0, err
    opt = json.loads(out)
    code, out, err = run(capsys, str(tmp_path / "r.json"), "--one-cluster", "--json")
    assert code == 0, err
    triv = json.loads(out)
    assert triv["clusters"] == 1 and triv["processors"] == opt["processors"]
    assert triv["makespan"] == opt["makespan"] == opt["lower_bound"]


def test_twolevel_cli_errors_are_one_line(capsys, tmp_path):
    (tmp_path / "cyc.json").write_text(json.dumps({
        "tasks": [{"id": "a", "p": 1}, {"id": "b", "p": 1}],
        "arcs": [{"from": "a", "to": "b", "c1": 1, "c2": 1},
                 {"from": "b", "to": "a", "c1": 1, "c2": 1}]}))
    (tmp_path / "c3.json").write_text(json.dumps({
        "tasks": [{"id": "i", "p": 5}, {"id": "k", "p": 1}, {"id": "j", "p": 4}],
        "arcs": [{"from": "i", "to": "k", "c1": 1, "c2": 1},
                 {"from": "i", "to": "j", "c1": 1, "c2": 3}]}))
    (tmp_path / "t.csv").write_text("task,p\n1,2\n")
    cases = [
        ([str(tmp_path / "cyc.json")], "cycle"),
        ([str(tmp_path / "c3.json")], "condition (3) violated at task 'i'"),
        ([str(tmp_path / "t.csv")], "needs its arcs file"),
        ([str(tmp_path / "missing.json")], "no such file"),
        ([str(tmp_path)], "is a directory"),
        ([], "give exactly one of"),
        (["--random", "10", "--table1"], "give exactly one of"),
        (["--random", "0"], "--random must be in 1..10,000,000"),
        (["--random", "100000000"], "--random must be in 1..10,000,000"),
        (["--random", "500", "--gantt", str(tmp_path / "x.png")], "Gantt chart"),
        (["--table1", "--gantt", str(tmp_path / "x.txt")], "give a file name ending in .png"),
        (["--table1", "--out", str(tmp_path / "no" / "s.json")], "no such directory"),
        (["--table1", "--save-instance", str(tmp_path)], "is a directory"),
        (["--table1", "--full"], "give --json"),
        (["--table1", "--workers", "2"], "apply to 'twolevel sweep'"),
        (["--random", "10", "--seed", "-1"], "a seed must be"),
        (["sweep", "--sizes", "ten"], "--sizes"),
        (["sweep", "--kinds", "tree"], "unknown kind"),
        (["--kind", "tree"], "invalid choice"),
    ]
    for argv, words in cases:
        code, out, err = run(capsys, *argv)
        assert code == 2, (argv, err)
        assert err.startswith("stealsearch") and "error: " in err and err.count("\n") == 1, err
        assert words in err, (argv, err)


def test_twolevel_cli_console_script_subprocess():
    proc = subprocess.run([sys.executable, "-m", "stealsearch", "twolevel", "--random", "500",
                           "--kind", "forkjoin", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["tasks"] == 500 and data["verified"] and data["makespan"] == data["lower_bound"]


def test_twolevel_cli_sweep_runs_dask_tasks(capsys, cluster4):
    code, out, err = run(capsys, "sweep", "--kinds", "layered,sp", "--sizes", "40,80",
                         "--seeds", "2", "--scheduler", cluster4.scheduler.address, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert len(data["runs"]) == 8 and len(data["table"]) == 4
    assert data["all_verified_at_lower_bound"] is True
    for row in data["table"]:
        assert row["verified"] == row["runs"] == row["at_lower_bound"] == 2
        assert row["procs_per_cluster_max"] <= row["trivial_procs_per_cluster"]
        assert row["makespan"] == row["trivial_makespan"]


def test_twolevel_cli_check_verifies_a_schedule_file(capsys, tmp_path):
    code, out, err = run(capsys, "--table1", "--schedule-out", str(tmp_path / "s.json"))
    assert code == 0, err
    code, out, err = run(capsys, "--table1", "--check", str(tmp_path / "s.json"), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["verified"] and data["optimal"] and data["makespan"] == 20
    sched = json.loads((tmp_path / "s.json").read_text())
    sched["messages"][0]["start"] += 3          # a late message
    (tmp_path / "late.json").write_text(json.dumps(sched))
    code, out, err = run(capsys, "--table1", "--check", str(tmp_path / "late.json"))
    assert code == 1 and "feasible     NO" in out and "GPC violated" in out
    sched["copies"][0]["task"] = 99
    (tmp_path / "bad.json").write_text(json.dumps(sched))
    code, out, err = run(capsys, "--table1", "--check", str(tmp_path / "bad.json"))
    assert code == 2 and "copies[0]: unknown task 99" in err
