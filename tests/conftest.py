"""Shared fixtures: a real LocalCluster of worker processes, ended by PID afterwards."""
import json
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
# background process started before the first test, beside the rest of the suite;
# test_wheel.py's tests read its report.  Started only when those tests are selected.
#
# Under pytest-xdist (`make test` runs two workers) the controller starts it, once, and
# compiles the kernels before its workers start; the workers find the check through
# STEALSEARCH_WHEEL_CHECK (its PID and report) and ask the process table whether it ended.
WHEEL_CHECK = os.path.join(os.path.dirname(__file__), "package", "wheel_check.py")
WHEEL_TEST = os.path.join(os.path.dirname(__file__), "package", "test_wheel.py")
#: the test files that read the check's report (through the ``wheel_check`` fixture)
WHEEL_READERS = (WHEEL_TEST, os.path.join(os.path.dirname(__file__), "test_readme.py"))
SHARED_WHEEL_CHECK = "STEALSEARCH_WHEEL_CHECK"


def _xdist_controller(config) -> bool:
    """True in the process that hands the tests to pytest-xdist's workers."""
    return config.pluginmanager.hasplugin("dsession")


def _xdist_worker(config) -> bool:
    return hasattr(config, "workerinput")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    # before xdist's own hook starts the workers, so they inherit both
    config = session.config
    if not _xdist_controller(config) or config.option.collectonly:
        return
    if _wheel_test_selected(config):
        _start_wheel_check(config)
        proc, report = config.stealsearch_wheel_check[:2]
        os.environ[SHARED_WHEEL_CHECK] = json.dumps({"pid": proc.pid, "report": report})
    import warm_kernels
    warm_kernels.warm()


def _wheel_test_selected(config) -> bool:
    """Whether a command-line argument names a file of WHEEL_READERS or a folder above
    one (what ``-k`` or ``-m`` then leave out is not known here: the check runs and is
    ended)."""
    args = config.args or [str(config.rootpath)]
    for arg in args:
        path = os.path.abspath(os.path.join(str(config.invocation_params.dir),
                                            arg.split("::")[0]))
        if any(reader == path or reader.startswith(path.rstrip(os.sep) + os.sep)
               for reader in WHEEL_READERS):
            return True
    return False


def _reads_wheel_check(item) -> bool:
    return "wheel_check" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(items):
    # last, whole files (pytest-xdist hands a file to one process): their tests wait for
    # the background check, which meanwhile runs beside the rest
    waiting = {item.nodeid.split("::")[0] for item in items if _reads_wheel_check(item)}
    items.sort(key=lambda item: item.nodeid.split("::")[0] in waiting)


def pytest_collection_finish(session):
    if _xdist_worker(session.config):
        return                              # the controller started the check and compiled
    if any(_reads_wheel_check(item) for item in session.items):
        _start_wheel_check(session.config)
    # every kernel compiled once, here, before the first test (tests/warm_kernels.py:
    # on a fresh clone, worker processes of the first cluster tests compiled the same
    # kernels at once); with numba's cache warm this only loads them (~2 s)
    if session.items and not session.config.option.collectonly:
        import warm_kernels

        warm_kernels.warm()


def _start_wheel_check(config):
    import subprocess
    import sys
    import tempfile

    folder = tempfile.mkdtemp(prefix="stealsearch-wheel-report-")
    report = os.path.join(folder, "report.json")
    log = open(os.path.join(folder, "log.txt"), "w")
    proc = subprocess.Popen([sys.executable, WHEEL_CHECK, "--report", report],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    BACKGROUND.add(proc.pid)
    config.stealsearch_wheel_check = (proc, report, folder, log)


@pytest.fixture
def wheel_check(request):
    """The running wheel check as ``(ended, report)``: ``ended()`` says whether its
    process has exited (read it before the report, so its last record is read)."""
    started = getattr(request.config, "stealsearch_wheel_check", None)
    if started is not None:
        proc, report = started[:2]
        return (lambda: proc.poll() is not None), report
    shared = os.environ.get(SHARED_WHEEL_CHECK)
    if shared is None:
        pytest.fail("the wheel check was not started (tests/conftest.py starts it when "
                    "test_wheel.py is selected)")
    shared = json.loads(shared)
    return (lambda: not _alive(shared["pid"])), shared["report"]


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
