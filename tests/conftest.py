"""Shared fixtures: a real LocalCluster of worker processes, ended by PID afterwards."""
import os

import pytest

from procutil import _alive, end_processes


@pytest.fixture(scope="session")
def cluster4():
    """A LocalCluster of 4 worker processes (searches use 1-4 of them)."""
    from stealsearch.engine.cluster import dask_client

    with dask_client(workers=4) as client:
        pids = list(client.run(os.getpid).values())
        yield client
    end_processes(pids)
    assert not any(_alive(p) for p in pids), "worker processes survived the cluster"
