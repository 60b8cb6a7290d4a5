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


# -- holding the worker processes a command spawns ---------------------------------------------
#: ``sitecustomize`` of :func:`spawn_gate`: a process multiprocessing spawned (a
#: LocalCluster's worker process: ``... spawn_main(...)``) waits at its start until the
#: gate file exists (at most HOLD seconds); every other process starts as usual
_SPAWNED_CODE = '''\
import os
import signal
import time


def _spawned():
    try:
        with open("/proc/self/cmdline", "rb") as f:
            return b"spawn_main" in f.read()
    except OSError:
        return False


'''
_SPAWN_GATE_CODE = _SPAWNED_CODE + '''\
if _spawned():
    _gate = os.environ.get("STEALSEARCH_TEST_SPAWN_GATE", "")
    _until = time.monotonic() + {hold}
    while _gate and not os.path.exists(_gate) and time.monotonic() < _until:
        time.sleep(0.01)
'''


def startup_hook(folder, code: str, **env) -> dict:
    """An environment under which every Python process runs ``code`` as it starts: the
    ``sitecustomize`` module (which Python imports at start-up) in ``folder``, put
    first on PYTHONPATH; ``env``: more variables.  For a test's hook in a command it
    runs as a subprocess."""
    os.makedirs(str(folder), exist_ok=True)
    with open(os.path.join(str(folder), "sitecustomize.py"), "w") as f:
        f.write(code)
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, **env)


class SpawnGate:
    """An environment (``env``) under which the worker processes a command spawns
    (multiprocessing's spawn: a LocalCluster's workers) wait at start-up until
    :meth:`open`: a cluster started under it is certainly still starting when the test
    acts (a Ctrl-C, a SIGTERM), however fast the machine.  A held process goes on by
    itself after ``hold`` seconds, so none waits for ever."""

    def __init__(self, folder, hold: float = 120.0):
        folder = os.path.join(str(folder), "spawn-gate")
        self.path = os.path.join(folder, "open")
        self.env = startup_hook(folder, _SPAWN_GATE_CODE.format(hold=float(hold)),
                                STEALSEARCH_TEST_SPAWN_GATE=self.path)

    def open(self) -> None:
        with open(self.path, "w"):
            pass


#: ``sitecustomize`` of :class:`SpawnStall`: a process multiprocessing spawned stops itself
#: (SIGSTOP) as it starts: every one, or only the first (the one that creates the claim file)
_SPAWN_STALL_CODE = _SPAWNED_CODE + '''\
_claim = os.environ.get("STEALSEARCH_TEST_STALL_CLAIM", "")
if _claim and _spawned():
    try:
        if os.environ.get("STEALSEARCH_TEST_STALL_ALL") != "1":
            os.close(os.open(_claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        os.kill(os.getpid(), signal.SIGSTOP)
    except FileExistsError:
        pass
'''


class SpawnStall:
    """An environment (``env``) under which the first worker process a command spawns
    (``every``: each one) stalls as it starts: a real SIGSTOP it sends itself, so the
    stall is certain however fast the machine.  Nothing resumes it: the command (or the
    test) must end it."""

    def __init__(self, folder, every: bool = False):
        folder = os.path.join(str(folder), "spawn-stall")
        self.env = startup_hook(folder, _SPAWN_STALL_CODE,
                                STEALSEARCH_TEST_STALL_CLAIM=os.path.join(folder, "claimed"),
                                STEALSEARCH_TEST_STALL_ALL="1" if every else "0")


class Lines:
    """The lines of a text stream (a subprocess's stderr), read by a thread as they
    come: :meth:`wait_for` a line that contains a text, :meth:`text` all of them."""

    def __init__(self, stream):
        import threading

        self.lines: list[str] = []
        self._new = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            with self._new:
                self.lines.append(line)
                self._new.notify_all()
        with self._new:
            self.closed = True
            self._new.notify_all()

    closed = False

    def wait_for(self, text: str, timeout: float) -> bool:
        """True once a line containing ``text`` was read; False at the stream's end or
        after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._new:
            while not any(text in line for line in self.lines):
                left = deadline - time.monotonic()
                if self.closed or left <= 0:
                    return False
                self._new.wait(left)
            return True

    def text(self, timeout: float = 30.0) -> str:
        """Everything, once the stream has ended (or after ``timeout`` seconds)."""
        self._thread.join(timeout)
        with self._new:
            return "".join(self.lines)


def signal_taken(pid: int, sig: int, timeout: float) -> bool:
    """Wait until signal ``sig`` sent to process ``pid`` is no longer pending: a thread
    of it has taken it (Python runs its handler in the main thread as the wait that
    the signal interrupts returns).  False after ``timeout`` seconds, or if the process
    has ended meanwhile."""
    bit = 1 << (sig - 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/status") as f:
                pending = sum(int(line.split()[1], 16) & bit for line in f
                              if line.startswith(("SigPnd:", "ShdPnd:")))
        except OSError:
            return False
        if not pending:
            return True
        time.sleep(0.001)
    return False


# -- ports ------------------------------------------------------------------------------------

def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_taken(port) -> bool:
    """Whether something listens on 127.0.0.1:``port``."""
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", int(port))) == 0


def claim_port(port: int):
    """An exclusive claim on ``port`` among the suite's processes (pytest-xdist runs
    several), for a test that starts a service on the port a page names: an open lock
    file to close when the service has ended, or None when another test holds the claim
    or something else listens there (the test then uses :func:`free_port`).  Checking
    the port alone would let two tests both find it free and both start on it."""
    import fcntl
    import tempfile

    lock = open(os.path.join(tempfile.gettempdir(), f"stealsearch-tests-port-{port}.lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return None
    if port_taken(port):
        lock.close()
        return None
    return lock


# -- a process that leads its own session -----------------------------------------------------

def group_alive(pgid: int) -> bool:
    """Whether any process of the process group ``pgid`` is alive."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def communicate_and_end_group(proc, timeout: float, grace: float = 30.0):
    """``proc.communicate(timeout=timeout)`` for a process started with
    ``start_new_session=True`` (SIGKILLed with its group if it overruns); then its group
    (a cluster it started) gets ``grace`` seconds to end with it, and is SIGKILLed after.
    Returns ``(out, err, left)``: ``left`` is whether the group outlived the grace."""
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    deadline = time.monotonic() + grace
    while group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = group_alive(proc.pid)
    if left:
        os.killpg(proc.pid, signal.SIGKILL)
    return out, err, left
