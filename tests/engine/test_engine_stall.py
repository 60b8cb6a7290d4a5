"""A worker stalled mid-search (a real SIGSTOP, sent by PID) costs the search one peer
timeout: the client's watchdog declares it stalled once, in the epoch it stalled, and
no call of the search waits on it after that (the wind-down's stop and the teardown
reach it in the background; the next epochs are dealt to the others).  The peer timeout
is shortened for the test; what is asserted is counted, never timed."""
import os
import signal

import pytest

from stealsearch.engine import StealPolicy, solve
from stealsearch.engine.deploy.cluster import dask_client
from stealsearch.engine.transports.dask import calls, epoch_watch, timeouts
from stealsearch.problems.uts import UTSProblem
from forced import Gate, HookedUTS, stop_in_first_epoch
from procutil import end_processes

T1 = 4130071


@pytest.fixture
def waits(monkeypatch):
    """The client's waits on workers, in order: ``("waited", op, addresses)`` for every
    call that waits for replies (:func:`calls.ask_all`: the stops, the teardown, the
    hand-overs), and ``("declared", addresses)`` once the watchdog declares a stall."""
    log = []
    ask_all, watchdog = calls.ask_all, epoch_watch.EpochWatch._watchdog

    def logged_ask_all(client, addrs, op, timeout, **kwargs):
        log.append(("waited", op, tuple(addrs)))
        return ask_all(client, addrs, op, timeout, **kwargs)

    def logged_watchdog(self):
        why = watchdog(self)
        declared = tuple(self.peers[r] for r in self.stalled)
        if declared and ("declared", declared) not in log:
            log.append(("declared", declared))
        return why

    monkeypatch.setattr(calls, "ask_all", logged_ask_all)
    monkeypatch.setattr(epoch_watch, "ask_all", logged_ask_all)
    monkeypatch.setattr(epoch_watch.EpochWatch, "_watchdog", logged_watchdog)
    monkeypatch.setattr(timeouts, "PEER_TIMEOUT", 1.5)
    return log


def test_a_stalled_worker_costs_one_peer_timeout(waits, tmp_path):
    """Rank 1 of 2 is SIGSTOPped inside the first epoch (a gate holds the search until
    then: tests/engine/forced.py) and left stopped.  Stealing is off, so that only the
    client's watchdog can notice the stall (no steal of rank 0's times out first).  The
    count is exact, the stall is declared once, in epoch 1, the one rollback deals
    everything to rank 0, and no call waits on the stopped worker after the declaration:
    solve() returns while it is still stopped."""
    with dask_client(workers=2) as client:
        pids = dict(client.run(os.getpid))
        survivor, victim = sorted(pids)
        solve(UTSProblem.preset("default"), client=client)   # kernels loaded, plugin there
        gate = Gate(tmp_path)
        freezer = stop_in_first_epoch(client, pids[victim], gate)
        try:
            r = solve(HookedUTS.preset("T1").hook(tmp_path, gate=gate), client=client,
                      policy=StealPolicy(stealing=False), checkpoint_every=5.0)
            freezer.join(10)
            with open(f"/proc/{pids[victim]}/stat") as f:
                still_stopped = f.read().split()[2] == "T"
        finally:
            os.kill(pids[victim], signal.SIGCONT)
    end_processes(list(pids.values()))
    assert r.count == T1 and r.conservation()["holds"]
    assert r.recoveries == 1
    assert r.info["stalls"] == [[1, victim]]
    assert r.info["last_epoch_workers"] == [survivor]
    assert [w.worker for w in r.workers] == [survivor]
    declared = waits.index(("declared", (victim,)))
    after = [w for w in waits[declared + 1:] if victim in w[2]]
    assert not after, f"waited on the stalled worker after it was declared: {after}"
    assert still_stopped, "the run waited for the stalled worker to wake up"
