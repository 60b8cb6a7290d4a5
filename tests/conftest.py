"""Shared fixtures: a real LocalCluster of worker processes, ended by PID afterwards."""
import os
import signal
import time

import pytest


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie child is dead for our purposes
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def end_processes(pids, grace: float = 10.0) -> None:
    """Wait for ``pids`` to exit; SIGKILL whatever is left after ``grace`` seconds."""
    deadline = time.time() + grace
    while time.time() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    for p in pids:
        if _alive(p):
            os.kill(p, signal.SIGKILL)


@pytest.fixture(scope="session")
def cluster4():
    """A LocalCluster of 4 worker processes (searches use 1-4 of them)."""
    from engine.cluster import dask_client

    with dask_client(workers=4) as client:
        pids = list(client.run(os.getpid).values())
        yield client
    end_processes(pids)
    assert not any(_alive(p) for p in pids), "worker processes survived the cluster"
