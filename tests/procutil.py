"""Process helpers for tests that start real processes: end them by PID."""
import contextlib
import os
import signal
import time


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


#: processes the test session runs beside the tests (tests/conftest.py's check of the
#: installed wheel): they and their descendants are never a test's leftovers
BACKGROUND: set = set()


def descendants(pid: int | None = None) -> set:
    """PIDs of the living descendants of ``pid`` (default: this process), leaving out the
    session's background processes and theirs."""
    import psutil

    try:
        kids = psutil.Process(pid or os.getpid()).children(recursive=True)
    except psutil.Error:
        return set()
    found = set()
    for kid in kids:
        try:
            if kid.pid in BACKGROUND or any(a.pid in BACKGROUND for a in kid.parents()):
                continue
        except psutil.Error:            # gone meanwhile: not a leftover
            continue
        found.add(kid.pid)
    return found


def end_processes(pids, grace: float = 10.0) -> None:
    """Wait for ``pids`` to exit; SIGKILL whatever is left after ``grace`` seconds."""
    deadline = time.time() + grace
    while time.time() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    for p in pids:
        if _alive(p):
            os.kill(p, signal.SIGKILL)


def worker_pids(client, seen: set) -> dict:
    """Address -> PID of the client's workers, each also added to ``seen`` (the module's
    record of every process it must end)."""
    found = dict(client.run(os.getpid, on_error="ignore"))
    seen.update(found.values())
    return found


def wait_until(predicate, timeout: float, what: str) -> None:
    """Poll ``predicate`` every 50 ms; fail the test (naming ``what``) after ``timeout`` s."""
    import pytest

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting until {what}")
        time.sleep(0.05)


@contextlib.contextmanager
def owned_cluster(workers: int, seen: set, warm=None):
    """A client on a fresh LocalCluster of ``workers`` processes for a test module: every
    worker PID it ever had goes into ``seen``; at the end each is ended by PID and none
    may survive.  ``warm(client)`` runs first (e.g. a tiny search: kernels loaded and
    the plugin registered everywhere)."""
    from stealsearch.engine.deploy.cluster import dask_client

    with dask_client(workers=workers) as client:
        worker_pids(client, seen)
        if warm is not None:
            warm(client)
        yield client
        worker_pids(client, seen)
    end_processes(sorted(seen))
    assert not any(_alive(p) for p in seen), "worker processes survived the cluster"
