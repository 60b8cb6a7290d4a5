"""A worker process that stalls while the LocalCluster starts (a real SIGSTOP, sent by the
worker process to itself as it starts: tests/procutil.py's SpawnStall, so the stall is
certain whatever the machine's speed): the start is bounded by ``--wait-workers``, the
stalled worker is ended and the run goes on with the others (one note line), none up is
exit 1 in one line, and a SIGTERM to the command alone acts during the start."""
import json
import os
import signal
import subprocess
import sys
import time

import psutil

from procutil import SpawnStall, _alive, end_processes

BIN = os.path.dirname(sys.executable)


def spawned(pid: int) -> list:
    """The worker processes (multiprocessing's spawn) among ``pid``'s descendants."""
    found = []
    for k in psutil.Process(pid).children(recursive=True):
        try:
            if "spawn_main" in " ".join(k.cmdline()):
                found.append(k)
        except psutil.Error:
            pass
    return found


def run_cli(argv, env, act=None):
    """Run ``stealsearch argv`` under ``env``; ``act(proc, family)`` meanwhile.  Every
    process it started is ended by PID afterwards, and none may be left."""
    proc = subprocess.Popen([os.path.join(BIN, "stealsearch")] + argv, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, env=env)
    family = set()
    try:
        if act is not None:
            act(proc, family)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        end_processes(sorted(family))
    assert not any(_alive(p) for p in family), "a process of the run was left"
    return proc.returncode, out, err


def watch(proc, family, until):
    """Record ``proc``'s descendants until ``until(stopped workers)`` holds (90 s at most)."""
    deadline = time.monotonic() + 90
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            kids = psutil.Process(proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return
        family.update(k.pid for k in kids)
        stopped = []
        for k in spawned(proc.pid):
            try:
                if k.status() == psutil.STATUS_STOPPED:
                    stopped.append(k)
            except psutil.Error:
                pass
        if until(stopped):
            return
        time.sleep(0.02)


def test_a_worker_stalled_at_start_is_dropped_and_the_count_is_exact(tmp_path):
    """One of two worker processes stops itself as it starts: after ``--wait-workers``
    seconds it is ended (SIGKILL, by PID), one note line says so, and the search runs on
    the other worker with the exact count.  The healthy worker must come up within the
    timeout: 20 s leaves room for a worker that starts slowly on a busy machine."""
    rc, out, err = run_cli(["uts", "--tree", "default", "--workers", "2", "--no-ramp-up",
                            "--wait-workers", "20", "--json"], SpawnStall(tmp_path).env,
                           act=lambda proc, family: watch(proc, family, lambda s: False))
    assert rc == 0, err
    res = json.loads(out)
    assert (res["count"], res["status"], res["backend"]) == (1732, "exhausted", "dask[1]")
    assert res["conservation"]["holds"]
    notes = [line for line in err.splitlines() if "did not start" in line]
    assert len(notes) == 1 and "still starting after 20 s, ended" in notes[0], err
    assert "going on with 1" in notes[0] and "Traceback" not in err, err


def test_no_worker_up_is_one_line_and_a_sigterm_acts_during_the_start(tmp_path):
    """Every worker process stops itself as it starts.  Within the start timeout: exit 1,
    one line.  With the default timeout (a minute), a SIGTERM to the command alone (as
    ``kill PID``, ``docker stop``) ends the start at once: the "again to abandon" line,
    exit 143, nothing left running."""
    env = SpawnStall(tmp_path, every=True).env
    rc, out, err = run_cli(["uts", "--tree", "default", "--workers", "2", "--no-ramp-up",
                            "--wait-workers", "1", "--json"], env,
                           act=lambda proc, family: watch(proc, family, lambda s: False))
    assert rc == 1 and out == "", err
    assert err.count("\n") == 1 and err.startswith("stealsearch: search failed: none of the 2 "
                                                   "worker processes"), err

    def sigterm_once_both_stalled(proc, family):
        watch(proc, family, lambda stopped: len(stopped) == 2)
        os.kill(proc.pid, signal.SIGTERM)

    rc, out, err = run_cli(["uts", "--tree", "default", "--workers", "2", "--no-ramp-up",
                            "--json"], env, act=sigterm_once_both_stalled)
    assert rc == 143, err
    assert "again to abandon" in err and "stealsearch: interrupted" in err, err
    assert "Traceback" not in err, err
