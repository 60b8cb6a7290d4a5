"""Shared fixtures: a real LocalCluster of worker processes, ended by PID afterwards."""
import os
import tempfile

import pytest

from procutil import BACKGROUND, _alive, end_processes

# checkpoints are signed with a per-user key under $XDG_CONFIG_HOME (engine/core/checkpoint.py):
# the suite and the processes it starts use a key of their own, never the user's
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="stealsearch-tests-config-")


@pytest.fixture(scope="session")
def cluster4():
    """A LocalCluster of 4 worker processes (searches use 1-4 of them)."""
    from stealsearch.engine.deploy.cluster import dask_client

    with dask_client(workers=4) as client:
        pids = list(client.run(os.getpid).values())
        yield client
    end_processes(pids)
    assert not any(_alive(p) for p in pids), "worker processes survived the cluster"


# -- the installed package (tests/package/test_wheel.py) ---------------------------------------
# The wheel is built, installed into fresh virtual environments and exercised by a
# background process started as soon as collection ends, beside the rest of the suite;
# test_wheel.py's tests read its report.  Started only when those tests were collected.
WHEEL_CHECK = os.path.join(os.path.dirname(__file__), "package", "wheel_check.py")


def pytest_collection_finish(session):
    _start_wheel_check(session)
    # every kernel compiled once, here, before the first test (tests/warm_kernels.py:
    # on a fresh clone, worker processes of the first cluster tests compiled the same
    # kernels at once); with numba's cache warm this only loads them (~2 s)
    if session.items and not session.config.option.collectonly:
        import warm_kernels

        warm_kernels.warm()


def _start_wheel_check(session):
    import subprocess
    import sys
    import tempfile

    if not any(item.nodeid.split("::")[0].endswith("package/test_wheel.py")
               for item in session.items):
        return
    folder = tempfile.mkdtemp(prefix="stealsearch-wheel-report-")
    report = os.path.join(folder, "report.json")
    log = open(os.path.join(folder, "log.txt"), "w")
    proc = subprocess.Popen([sys.executable, WHEEL_CHECK, "--report", report],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    BACKGROUND.add(proc.pid)
    session.config.stealsearch_wheel_check = (proc, report, folder, log)


def pytest_sessionfinish(session):
    import shutil
    import signal

    started = getattr(session.config, "stealsearch_wheel_check", None)
    if started is None:
        return
    proc, _, folder, log = started
    if proc.poll() is None:                 # the session ended first (-x, Ctrl-C): end it
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except Exception:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    log.close()
    shutil.rmtree(folder, ignore_errors=True)

