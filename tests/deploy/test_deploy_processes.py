"""The plain connection path with real processes: ``dask scheduler`` and ``dask worker``
started here, ``stealsearch ... --scheduler ADDR`` as a subprocess, every process ended
by PID (see conftest.py)."""
import json
import logging
import os
import signal
import subprocess
import time

import psutil
import pytest

from stealsearch.engine import SearchFailed
from stealsearch.engine.deploy.cluster import dask_client
from stealsearch.cli import main

from conftest import STEALSEARCH, REPO, descendants, end_pids, free_port, wait_gone
from procutil import Lines, SpawnGate, signal_taken

KELLER4 = "tests/clique/data/keller4.clq"


def test_uts_and_clique_on_a_scheduler_with_two_worker_processes(dask_processes, capsys):
    address = dask_processes.scheduler()
    dask_processes.workers(address, n=2)
    # the command runs in this process (its own start-up would only add seconds; the
    # subprocess path is exercised below); scheduler and workers are real processes.
    # The first run waits for a worker; the UTS count is exact whatever joins when.
    assert main(["uts", "--tree", "T1", "--scheduler", address, "--json"]) == 0
    uts = json.loads(capsys.readouterr().out)
    assert uts["count"] == 4130071 and uts["status"] == "exhausted"
    assert uts["nodes"] == 4130071 and uts["conservation"]["holds"]
    assert uts["workers"] and all(w["worker"].startswith("tcp://127.0.0.1:") for w in uts["workers"])

    assert main(["clique", str(REPO / KELLER4), "--scheduler", address, "--json"]) == 0
    clique = json.loads(capsys.readouterr().out)
    assert clique["status"] == "optimal" and clique["objective"] == 11
    assert clique["backend"] == "dask[2]"
    # check the clique here rather than trust the run's own verifier
    edges = set()
    with open(REPO / KELLER4) as f:
        for line in f:
            if line.startswith("e "):
                _, a, b = line.split()
                edges.add((int(a), int(b)))
                edges.add((int(b), int(a)))
    members = clique["solution"]                # DIMACS ids, as in the file
    assert len(set(members)) == 11 and all(1 <= v <= 171 for v in members)
    assert all((a, b) in edges for a in members for b in members if a != b)


def test_scheduler_without_workers_waits_then_fails_or_runs(dask_processes, caplog, capsys):
    address = dask_processes.scheduler()

    # nobody comes: the notice, then one line and exit 2 after --wait-workers
    # (in this process: the command's own start-up would only add seconds)
    with caplog.at_level(logging.WARNING, logger="stealsearch.engine.deploy.cluster"):
        code = main(["uts", "--scheduler", address, "--wait-workers", "1", "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert caplog.messages == [f"waiting for 1 worker at {address} "
                               "(up to 1 s; see --wait-workers) ..."]
    assert err.count("\n") == 1 and "has 0 of 1 worker after 1 s" in err
    caplog.clear()

    # a worker starts once the run says it waits for one (not after 2 s: a run that took
    # longer to get there found it already there): it waits and finishes
    class StartAWorkerOnTheWait(logging.Handler):
        def emit(self, record):
            if record.getMessage().startswith("waiting for") and not started:
                started.append(dask_processes.workers(address, n=1))

    started = []
    cluster_log = logging.getLogger("stealsearch.engine.deploy.cluster")
    trigger = StartAWorkerOnTheWait(logging.WARNING)
    cluster_log.addHandler(trigger)
    try:
        with caplog.at_level(logging.WARNING, logger="stealsearch.engine.deploy.cluster"):
            code = main(["uts", "--scheduler", address, "--wait-workers", "300", "--json"])
    finally:
        cluster_log.removeHandler(trigger)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert started and json.loads(out)["count"] == 1732
    assert caplog.messages[0].startswith(f"waiting for 1 worker at {address}")
    caplog.clear()

    # asked for 2 (API), 1 there: after the wait, go on with the one, and say so
    with caplog.at_level(logging.WARNING, logger="stealsearch.engine.deploy.cluster"):
        with dask_client(scheduler=address, workers=2, wait_workers=1) as client:
            assert len(client.scheduler_info()["workers"]) == 1
    assert "going on with 1 of 2 workers" in caplog.text


def test_scheduler_death_while_waiting_or_working_is_one_line(dask_processes):
    address = dask_processes.scheduler()
    proc = subprocess.Popen([STEALSEARCH, "uts", "--scheduler", address, "--connect-timeout", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=REPO)
    try:
        with pytest.raises(SearchFailed, match=f"lost the scheduler {address}") as lost:
            with dask_client(scheduler=address, wait=False, connect_timeout=2) as client:
                assert client.run(os.getpid) == {}
                first = proc.stderr.readline()          # the run is connected and waiting
                assert first.startswith("waiting for 1 worker"), first
                dask_processes.kill(dask_processes.last_scheduler)
                # a client in use when the scheduler dies: distributed raises from its
                # closed connection pool; the door turns that into one line
                client.run(os.getpid)
        out, err = proc.communicate(timeout=60)
    finally:
        end_pids([proc.pid, *descendants(proc.pid)])
    assert "\n" not in str(lost.value)
    assert proc.returncode == 2 and out == ""
    assert err.count("\n") == 1 and f"lost the scheduler {address}" in err, err


@pytest.mark.timeout(120)       # a hang fails here; no speed figure is asserted
def test_unreachable_scheduler_fails_within_the_connect_timeout(capsys):
    port = free_port()
    assert main(["uts", "--scheduler", f"tcp://127.0.0.1:{port}", "--connect-timeout", "1",
                 "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert f"cannot reach scheduler tcp://127.0.0.1:{port} within 1 s" in err


def test_ctrl_c_during_local_cluster_start_exits_130_and_leaves_nothing(tmp_path):
    """SIGINT to the command's whole process group (what a terminal's Ctrl-C does) while
    the LocalCluster starts: its worker processes are held at their start (a spawn gate,
    tests/procutil.py) until the command has taken the signal, so the signal lands in
    the start on any machine; the start then goes on, and the command stops after it."""
    # --no-ramp-up: the cluster from the first node (with the default ramp-up the search
    # runs here meanwhile and Ctrl-C prints its interrupted result: test_engine_rampup.py)
    gate = SpawnGate(tmp_path)
    proc = subprocess.Popen([STEALSEARCH, "uts", "--tree", "T1", "--workers", "2", "--no-ramp-up",
                             "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=REPO, env=gate.env)
    errors = Lines(proc.stderr)
    seen: set[int] = set()
    left = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            kids = descendants(proc.pid)
            seen.update(kids)
            # a worker process (not only multiprocessing's resource tracker) is starting
            if any("spawn_main" in " ".join(_cmdline(k)) for k in kids):
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the command ended before its cluster started"
        os.killpg(proc.pid, signal.SIGINT)      # its own session: only what it started
        held = signal_taken(proc.pid, signal.SIGINT, timeout=60)
        gate.open()                             # the start goes on, then the command stops
        while proc.poll() is None and time.monotonic() < deadline:
            seen.update(descendants(proc.pid))
            time.sleep(0.05)
        out = proc.stdout.read()
        err = errors.text()
        # every process it started must end on its own, without our help
        left = wait_gone(seen, timeout=15)
    finally:
        gate.open()
        end_pids([proc.pid, *seen, *descendants(proc.pid)])   # guards the rest of the suite
    assert held, errors.text()
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "stealsearch: interrupted"
    assert "Traceback" not in err and "AssertionError" not in err, err
    assert out == ""
    assert seen and not left, f"left behind: {left}"


def _cmdline(pid):
    try:
        return psutil.Process(pid).cmdline()
    except psutil.Error:
        return []
