"""Failure paths with real processes: a stalled (SIGSTOPped) worker, `dask scheduler` +
`dask worker` processes (a worker added and one killed
mid-run, an orphaned search whose client was killed, the scheduler dying), and the
cluster config files.  Every process a test starts is ended by PID."""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from stealsearch.engine import InputError, SearchFailed, solve
from stealsearch.engine.core import stop_request
from stealsearch.engine.deploy.cluster import dask_client
from stealsearch.engine.transports.dask import calls
from stealsearch.engine.transports.dask.tables import running_searches
from stealsearch.problems.uts import UTSProblem
from forced import ENDLESS, Gate, HookedUTS, hooked_uts, stop_in_first_epoch
from procutil import _alive, end_processes, wait_until

BIN = os.path.dirname(sys.executable)
T1 = 4130071


@pytest.fixture
def short_timeouts(monkeypatch):
    import stealsearch.engine.transports.dask.timeouts as timeouts
    monkeypatch.setattr(timeouts, "PEER_TIMEOUT", 1.5)
    monkeypatch.setattr(timeouts, "ABORT_GRACE", 1.5)


def worker_pids(client):
    return dict(client.run(os.getpid, on_error="ignore"))


def test_sigstopped_worker_does_not_hang_the_run(short_timeouts, tmp_path):
    """The hang: a worker SIGSTOPped mid-search and left stopped.
    The client's watchdog declares it lost after PEER_TIMEOUT, the epoch rolls back, the
    other finishes the search exactly, and the end of the run (the stop broadcast, the
    teardown on every worker) does not wait for it: solve() returns while it is still
    stopped.  SIGCONT then brings it back.  The search expands nothing until the victim
    is stopped (a gate, tests/engine/forced.py): it is stopped inside the first epoch."""
    with dask_client(workers=2) as client:
        pids = worker_pids(client)
        victim = pids[sorted(pids)[1]]
        solve(UTSProblem.preset("default"), client=client)    # kernels loaded, plugin there
        stopped = threading.Event()
        gate = Gate(tmp_path)

        def safety():                   # never leave a stopped process behind a failure
            time.sleep(240)
            try:
                os.kill(victim, signal.SIGCONT)
            except ProcessLookupError:  # the cluster ended first: nothing left stopped
                pass

        threading.Thread(target=safety, daemon=True).start()
        t = stop_in_first_epoch(client, victim, gate, stopped)
        try:
            r = solve(HookedUTS.preset("T1").hook(tmp_path, gate=gate), client=client,
                      checkpoint_every=5.0)
            t.join(10)
            with open(f"/proc/{victim}/stat") as f:
                still_stopped = f.read().split()[2] == "T"
        finally:
            os.kill(victim, signal.SIGCONT)
        assert stopped.is_set()
        assert still_stopped, "the run waited for the paused worker to wake up"
        assert r.count == T1 and r.recoveries >= 1
        assert r.conservation()["holds"]
        back = solve(UTSProblem.preset("default"), client=client, workers=2)
        assert back.count == 1732 and len(back.workers) == 2
        all_pids = list(pids.values()) + list(worker_pids(client).values())
    end_processes(all_pids)


# -- real `dask scheduler` + `dask worker` processes -----------------------------------------
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DaskProcesses:
    def __init__(self, tmp):
        self.port = free_port()
        self.addr = f"tcp://127.0.0.1:{self.port}"
        self.env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")
        self.log = open(os.path.join(tmp, "cluster.log"), "w")
        self.procs = []
        self.scheduler = self._start(["scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                                      "--dashboard-address", ":0"])
        self._wait_for_scheduler()

    def _wait_for_scheduler(self, limit=120.0):
        """Until the scheduler listens (its start takes seconds on a loaded machine; a
        client would give up after its 30 s connect timeout)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.scheduler.poll() is not None:
                self.close()
                pytest.fail(f"`dask scheduler` exited with {self.scheduler.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        self.close()
        pytest.fail("`dask scheduler` did not listen within 120 s")

    def _start(self, args):
        p = subprocess.Popen([os.path.join(BIN, "dask")] + args, stdout=self.log,
                             stderr=self.log, env=self.env)
        self.procs.append(p)
        return p

    def add_worker(self):
        return self._start(["worker", self.addr, "--nthreads", "1", "--no-nanny",
                            "--host", "127.0.0.1", "--dashboard-address", ":0"])

    def client(self, n):
        from distributed import Client
        c = Client(self.addr, timeout="30s")
        c.wait_for_workers(n, timeout=60)
        return c

    def close(self):
        # workers first (a worker whose scheduler went away first keeps retrying it),
        # then the scheduler; whatever has not ended after a few seconds is SIGKILLed
        workers = [p for p in self.procs if p is not self.scheduler]
        for group in (workers, [self.scheduler]):
            for p in group:
                if p.poll() is None:
                    p.terminate()
            end_processes([p.pid for p in group], grace=5.0)
            for p in group:
                p.wait(timeout=10)
        self.log.close()
        assert all(p.poll() is not None for p in self.procs)


@pytest.fixture(scope="module")
def dask_procs(tmp_path_factory):
    d = DaskProcesses(str(tmp_path_factory.mktemp("dask")))
    try:
        d.add_worker()
        d.add_worker()
        yield d
    finally:
        d.close()


def test_scheduler_workers_1_uses_one_worker(dask_procs):
    with dask_procs.client(2):
        pass
    r = solve(UTSProblem.preset("default"), scheduler=dask_procs.addr, workers=1)
    assert r.count == 1732 and r.backend == "dask[1]"


def test_worker_joins_and_worker_killed_through_scheduler(dask_procs, tmp_path):
    """A `dask worker` started mid-run gets rows (its node count > 0); one killed
    mid-run costs a rollback, not the answer.  Forced: the first search (of a tree
    nothing finishes) is stopped once the joiner has expanded a node (it marks a file,
    tests/engine/forced.py); in the second the joiner kills itself inside a chunk."""
    with dask_procs.client(2) as c:
        before_pids = set(c.run(os.getpid).values())
        before = set(c.run(os.getpid))
        solve(UTSProblem.preset("default"), client=c)          # kernels loaded
        joiner = dask_procs.add_worker()
        mark = str(tmp_path / "joined")
        endless = hooked_uts(ENDLESS, tmp_path, mark=mark, known=before_pids)
        done = threading.Event()
        stop = threading.Thread(target=stop_once_exists, args=(mark, done), daemon=True)
        stop.start()
        try:        # (the time limit only bounds a failure: the joiner never came)
            r = solve(endless, client=c, checkpoint_every=0.5, time_limit=240)
        finally:
            done.set()
            stop.join(10)
            stop_request.reset()
        assert r.stop_reason == "interrupted", "the joiner never expanded a node"
        joined = [w for w in r.workers if w.worker not in before]
        assert joined and all(w.nodes > 0 for w in joined), [(w.worker, w.nodes) for w in r.workers]
        assert r.conservation()["holds"]

        joiner_pid = next(p for p in c.run(os.getpid).values() if p not in before_pids)
        # it dies in its first chunk: every worker of the first epoch is dealt a row
        tree = HookedUTS.preset("T1").hook(tmp_path, kill_after=1, victims=[joiner_pid])
        r = solve(tree, client=c, checkpoint_every=0.3)
        assert joiner.wait(timeout=30) is not None          # it died
        assert r.count == T1 and r.conservation()["holds"]
        assert tree.killed() == 1 and r.recoveries >= 1


def stop_once_exists(path, done: threading.Event):
    """Record a stop request (as a first Ctrl-C does) once ``path`` exists, unless
    ``done`` is set first: the running search stops cleanly, its last epoch committed."""
    while not done.is_set():
        if os.path.exists(path):
            stop_request.record(signal.SIGINT)
            return
        done.wait(0.01)


def wait_until_searching(d):
    with d.client(1) as c:
        deadline = time.time() + 90
        while time.time() < deadline:     # wait until the search runs on the workers
            if sum(c.run(running_searches).values()):
                return
            time.sleep(0.2)
    pytest.fail("the search never started")


def test_orphaned_search_stops_when_its_client_is_killed(dask_procs, tmp_path):
    """kill -9 of the CLI mid-search: every worker drops the search within seconds
    (each epoch ends by itself; nothing starts the next one)."""
    with dask_procs.client(2) as c:
        cli = subprocess.Popen([os.path.join(BIN, "stealsearch"), "uts", "--options", ENDLESS,
                                "--scheduler", dask_procs.addr, "--checkpoint-every", "1"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until_searching(dask_procs)
            cli.kill()
            cli.wait(timeout=10)
            deadline = time.time() + 15
            while time.time() < deadline:
                if not sum(c.run(running_searches).values()):
                    break
                time.sleep(0.2)
            else:
                pytest.fail("the orphaned search kept running on the workers")
        finally:
            if cli.poll() is None:
                cli.kill()
                cli.wait(timeout=10)


@pytest.mark.parametrize("nanny", [True, False], ids=["nanny", "no-nanny"])
def test_sigterm_of_a_worker_mid_search_keeps_the_count_exact(dask_procs, nanny, tmp_path):
    """SIGTERM of a `dask worker` process while its epoch runs (a scale-down, a
    preemption notice).  With a nanny (the default), the nanny closes the worker: its
    plugin ends the epoch as a cut and hands its rows to a peer (no rollback).  Without
    one, `dask worker --no-nanny` just stops its event loop (distributed 2026.8: the
    signal handler closes only nannies), which the client sees as a lost worker: that
    epoch rolls back.  Either way the count stays exact and the processes end.  The
    search expands nothing until the signal is sent (a gate): it lands in the epoch."""
    with dask_procs.client(2) as c:
        before = set(c.run(os.getpid).values())
        args = ["worker", dask_procs.addr, "--nthreads", "1", "--host", "127.0.0.1",
                "--dashboard-address", ":0"] + ([] if nanny else ["--no-nanny"])
        proc = dask_procs._start(args)
        c.wait_for_workers(3, timeout=60)
        joined = {a: p for a, p in c.run(os.getpid).items() if p not in before}
        assert len(joined) == 1
        (victim, worker_pid), = joined.items()
        solve(UTSProblem.preset("default"), client=c)        # the joiner's kernels loaded
        sent = []
        gate = Gate(tmp_path)

        def term_once_searching():
            try:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    if c.run(running_searches, workers=[victim], on_error="ignore").get(victim):
                        proc.send_signal(signal.SIGTERM)
                        sent.append(time.monotonic())
                        return
                    time.sleep(0.005)
            finally:
                gate.open()

        t = threading.Thread(target=term_once_searching, daemon=True)
        t.start()
        # an epoch of an hour: it ends by the signal's hand-over or loss, not by its clock
        r = solve(HookedUTS.preset("T1").hook(tmp_path, gate=gate), client=c,
                  checkpoint_every=3600)
        t.join(60)
        assert sent, "the worker never ran the search"
        assert proc.wait(timeout=30) is not None        # the process ended by itself
        end_processes([worker_pid], grace=10.0)
        assert not _alive(worker_pid)
        assert r.count == T1 and r.conservation()["holds"]
        handed = [who for _, who in r.info["handovers"] if victim in who]
        if nanny:
            assert handed and r.recoveries == 0, (r.info["handovers"], r.recoveries)
        else:
            assert not handed and r.recoveries >= 1, (r.info["handovers"], r.recoveries)
        assert victim not in calls.live_workers(c)


def test_scheduler_death_is_one_line_and_exit_1(tmp_path):
    """The scheduler killed once a cut was committed: one line, exit 1, and the line says
    where the search can be resumed from."""
    d = DaskProcesses(str(tmp_path))
    ck = tmp_path / "ck"
    try:
        d.add_worker()
        cli = subprocess.Popen([os.path.join(BIN, "stealsearch"), "uts", "--options", ENDLESS,
                                "--scheduler", d.addr, "--checkpoint-every", "1",
                                "--checkpoint", str(ck)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_until_searching(d)
        wait_until(lambda: committed_cut(ck), 60, "a cut is committed")
        d.scheduler.kill()
        out, err = cli.communicate(timeout=120)
        assert cli.returncode == 1, (out, err)
        # one line of failure (a "waiting for workers" note may come first, when the
        # worker registers after the CLI connects)
        lines = [l for l in err.strip().splitlines() if not l.startswith("waiting for")]
        assert len(lines) == 1 and "search failed" in lines[0], err
        assert f"resume it from there (stealsearch resume {ck})" in lines[0], err
        assert "Traceback" not in err
    finally:
        d.close()


def committed_cut(directory) -> bool:
    try:
        return json.loads((directory / "manifest.json").read_text()).get("epochs", 0) >= 1
    except (OSError, ValueError):
        return False


# -- cluster configs ---------------------------------------------------------------------------
def test_local_cluster_config(tmp_path):
    with dask_client(config="cluster_configs/local.yaml") as client:
        pids = list(client.run(os.getpid).values())
        r = solve(UTSProblem.preset("default"), client=client)
        assert r.count == 1732 and r.backend == "dask[2]"
    end_processes(pids)
    assert not any(_alive(p) for p in pids)


@pytest.mark.parametrize("text, message", [
    ("kind: [unclosed", "not valid YAML"),
    ("workers: 2", "'kind'"),
    ("kind: moon", "unknown cluster kind"),
    ("kind: scheduler", "needs an 'address'"),
])
def test_bad_cluster_configs(tmp_path, text, message):
    p = tmp_path / "c.yaml"
    p.write_text(text)
    with pytest.raises(InputError, match=message):
        with dask_client(config=str(p)):
            pass


def test_missing_config_file():
    with pytest.raises(InputError, match="not found"):
        with dask_client(config="no/such/file.yaml"):
            pass


def test_wrong_policy_type_is_an_input_error():
    with pytest.raises(InputError, match="StealPolicy"):
        solve(UTSProblem.preset("default"), backend="sequential", policy={"k": 3})


def test_search_failed_is_a_runtime_error():
    assert issubclass(SearchFailed, RuntimeError)
