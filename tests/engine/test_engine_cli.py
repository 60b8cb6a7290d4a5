"""The ``stealsearch`` command: JSON output, one-line errors with exit 2, and runs on a
LocalCluster and on a scheduler + workers started with the ``dask`` commands."""
import json
import os
import socket
import subprocess
import sys

import pytest

from stealsearch.cli import main

from procutil import end_processes

PY = sys.executable
BIN = os.path.dirname(PY)


def test_uts_json_sequential(capsys):
    assert main(["uts", "--tree", "default", "--sequential", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["count"], out["depth"], out["leaves"]) == (1732, 6, 1050)
    assert out["status"] == "exhausted" and out["backend"] == "sequential"
    assert out["matches_published"] is True
    for key in ("nodes", "wall_seconds", "workers"):
        assert key in out


def test_uts_custom_options(capsys):
    # balanced tree, branching 3, depth 4: 1 + 3 + 9 + 27 + 81 nodes, 81 leaves
    assert main(["uts", "--options", "-t 3 -d 4 -b 3", "--sequential", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["count"], out["depth"], out["leaves"]) == (121, 4, 81)
    assert out["published"] is None


@pytest.mark.parametrize("argv", [
    ["uts", "--tree", "T9", "--sequential"],
    ["uts", "--options", "-t 7", "--sequential"],
    ["uts", "--workers", "0"],
    ["uts", "--bogus"],
    ["uts", "--sequential", "--steal-k", "0"],
    ["uts", "--sequential", "--time-limit", "-3"],
    ["uts", "--sequential", "--workers", "2"],
    ["nosuchcommand"],
])
def test_bad_arguments_give_one_line_and_exit_2(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("stealsearch") and " error: " in err, err
    assert "Traceback" not in err


def test_console_script_on_local_cluster():
    proc = subprocess.run([os.path.join(BIN, "stealsearch"), "uts", "--tree", "default",
                           "--workers", "2", "--no-ramp-up", "--json"], capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["count"] == 1732 and out["backend"] == "dask[2]" and len(out["workers"]) == 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_scheduler_address_with_dask_cli_processes(tmp_path):
    port = free_port()
    addr = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")
    log = open(tmp_path / "cluster.log", "w")
    procs = [subprocess.Popen([os.path.join(BIN, "dask"), "scheduler", "--host", "127.0.0.1",
                               "--port", str(port), "--dashboard-address", ":0"],
                              stdout=log, stderr=log, env=env)]
    try:
        for _ in range(2):
            procs.append(subprocess.Popen(
                [os.path.join(BIN, "dask"), "worker", addr, "--nthreads", "1",
                 "--no-nanny", "--host", "127.0.0.1", "--dashboard-address", ":0"],
                stdout=log, stderr=log, env=env))
        from distributed import Client
        with Client(addr, timeout="30s") as c:
            c.wait_for_workers(2, timeout=60)
        proc = subprocess.run([os.path.join(BIN, "stealsearch"), "uts", "--tree", "default",
                               "--scheduler", addr, "--json"], capture_output=True, text=True,
                              timeout=180)
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["count"] == 1732 and out["backend"] == "dask[2]"
        assert out["conservation"]["holds"]
    finally:
        for p in procs:
            p.terminate()
        end_processes([p.pid for p in procs])
        for p in procs:
            p.wait(timeout=10)
        log.close()
    assert all(p.poll() is not None for p in procs)


def test_unreachable_scheduler_is_one_line(capsys, monkeypatch):
    monkeypatch.setenv("STEALSEARCH_CONNECT_TIMEOUT", "1s")
    assert main(["uts", "--scheduler", f"tcp://127.0.0.1:{free_port()}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot reach scheduler" in err


def test_progress_goes_to_stderr_not_stdout(capsys):
    assert main(["uts", "--tree", "T3", "--sequential", "--json", "--progress",
                 "--budget", "2000"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["count"] == 4112897
    assert "node" in captured.err
