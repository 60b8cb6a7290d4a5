"""Failure paths: a worker killed mid-search, cluster config files."""
import os
import signal
import threading
import time

import pytest

from engine import InputError, SearchFailed, solve
from engine.cluster import dask_client
from problems.uts import UTSProblem
from procutil import end_processes


def test_killed_worker_fails_the_search_instead_of_hanging():
    with dask_client(workers=2) as client:
        pids = client.run(os.getpid)
        victim = sorted(pids)[1]

        def kill_once_searching():
            # wait until both search loops run, then kill one worker mid-search
            deadline = time.time() + 120
            while time.time() < deadline:
                busy = client.processing()
                if sum(any(str(k).startswith("stealsearch-") for k in v)
                       for v in busy.values()) == 2:
                    break
                time.sleep(0.2)
            time.sleep(1.0)
            os.kill(pids[victim], signal.SIGKILL)

        threading.Thread(target=kill_once_searching, daemon=True).start()
        t0 = time.time()
        with pytest.raises(SearchFailed, match="left the cluster"):
            solve(UTSProblem.preset("T1L"), client=client)     # ~20 s of work
        assert time.time() - t0 < 120
        survivors = list(client.run(os.getpid).values())
    end_processes(list(pids.values()) + survivors)


def test_local_cluster_config(tmp_path):
    with dask_client(config="cluster_configs/local.yaml") as client:
        pids = list(client.run(os.getpid).values())
        r = solve(UTSProblem.preset("default"), client=client)
        assert r.count == 1732 and r.backend == "dask[2]"
    end_processes(pids)


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
