"""Real processes for deployment tests: a ``dask scheduler`` and ``dask worker``s,
each started here as a subprocess on 127.0.0.1 and ended by PID afterwards.

``dask_processes`` is a factory fixture::

    def test_x(dask_processes):
        addr = dask_processes.scheduler()            # tcp://127.0.0.1:PORT, listening
        dask_processes.workers(addr, n=2)            # one `dask worker --nworkers 2`
        ... run stealsearch --scheduler addr ...
        dask_processes.kill(proc)                    # e.g. to test a death

On teardown every process it started, and every descendant they spawned (a
``dask worker --nworkers 2`` is one CLI process, two nannies' worker processes),
is sent SIGTERM, then SIGKILL after a grace period, by PID; the test then fails if
any of them is still alive.  Nothing is ended by name.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from procutil import _alive  # tests/ is on sys.path (tests/conftest.py uses it too)

DASK = str(Path(sys.executable).with_name("dask"))
STEALSEARCH = str(Path(sys.executable).with_name("stealsearch"))
REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    """Wait until something accepts TCP connections on 127.0.0.1:port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process {proc.pid} exited with {proc.returncode} before listening")
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout} s")


def descendants(pid: int) -> list[int]:
    try:
        return [c.pid for c in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def wait_gone(pids, timeout: float) -> list[int]:
    """Wait up to ``timeout`` s for ``pids`` to exit by themselves; return those alive."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


def end_pids(pids, grace: float = 10.0) -> list[int]:
    """SIGTERM each PID, wait up to ``grace`` s, SIGKILL survivors; return any left alive."""
    for pid in pids:
        if _alive(pid):
            with _ignore_gone():
                os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    for pid in pids:
        if _alive(pid):
            with _ignore_gone():
                os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


class _ignore_gone:
    def __enter__(self):
        return self

    def __exit__(self, typ, exc, tb):
        return typ is ProcessLookupError


class DaskProcesses:
    """Schedulers and workers started as real processes; every PID is remembered."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.procs: list[subprocess.Popen] = []
        self.seen: set[int] = set()   # every PID observed, descendants included
        self.logs: list[Path] = []

    def _start(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = self.workdir / f"{name}-{len(self.procs)}.log"
        self.logs.append(log)
        with open(log, "wb") as out:
            # a session of its own: a Ctrl-C in the terminal running pytest does not
            # reach it half-way; teardown ends it by PID instead
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, cwd=self.workdir,
                                    start_new_session=True)
        self.procs.append(proc)
        self.seen.add(proc.pid)
        return proc

    def scheduler(self, timeout: float = 60.0) -> str:
        """Start ``dask scheduler`` on a free port; return its address once listening."""
        port = free_port()
        proc = self._start("scheduler", [DASK, "scheduler", "--host", "127.0.0.1",
                                         "--port", str(port), "--no-dashboard"])
        wait_listening(port, proc, timeout)
        self.last_scheduler = proc
        return f"tcp://127.0.0.1:{port}"

    def workers(self, address: str, n: int = 2) -> subprocess.Popen:
        """Start ``dask worker ADDRESS --nworkers n --nthreads 1`` (returns at once)."""
        return self._start("worker", [DASK, "worker", address, "--nworkers", str(n),
                                      "--nthreads", "1", "--no-dashboard",
                                      "--host", "127.0.0.1",
                                      "--local-directory", str(self.workdir)])

    def track(self) -> None:
        """Remember the current descendants of every process started here."""
        for p in self.procs:
            self.seen.update(descendants(p.pid))

    def kill(self, proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
        self.track()
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)

    def end(self) -> list[int]:
        self.track()
        pids = sorted(self.seen)
        left = end_pids(pids)
        for p in self.procs:
            if p.poll() is None:
                p.wait(timeout=5)
        return left

    def log_text(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                         for p in self.logs if p.exists())


@pytest.fixture
def dask_processes(tmp_path):
    procs = DaskProcesses(tmp_path)
    try:
        yield procs
    finally:
        left = procs.end()
    assert not left, f"processes survived teardown: {left}\n{procs.log_text()}"


def run_cli(*args: str, timeout: float = 120.0, env_extra: dict | None = None):
    """``stealsearch ARGS`` as a subprocess (ended by PID on timeout)."""
    env = dict(os.environ)
    env.update(env_extra or {})
    proc = subprocess.Popen([STEALSEARCH, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO, env=env,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kids = descendants(proc.pid)
        end_pids([proc.pid, *kids])
        out, err = proc.communicate(timeout=10)
        raise AssertionError(f"stealsearch {' '.join(args)} ran past {timeout} s\n{err[-3000:]}")
    return proc.returncode, out, err


SSHD = Path("/usr/sbin/sshd")


class LocalSshd:
    """What a test needs of the sshd: where it listens, the key it accepts, and the
    PIDs of the sessions it forked (recorded by ``track()`` while they live)."""

    def __init__(self, proc: subprocess.Popen, port: int, key: Path, user: str):
        self.proc, self.port, self.key, self.user = proc, port, key, user
        self.seen: set[int] = set()

    def track(self) -> None:
        self.seen.update(descendants(self.proc.pid))

    def sessions(self) -> list[int]:
        self.track()
        return sorted(self.seen)


@pytest.fixture
def local_sshd(tmp_path):
    """An sshd of our own on 127.0.0.1:PORT: generated host key, one authorized client
    key, no passwords, no PAM; ended by PID with every session it forked.

    Skips where there is no sshd binary (``make test`` installs Debian's
    openssh-server when run as root).
    """
    import getpass
    import shutil

    if not SSHD.exists() or shutil.which("ssh-keygen") is None:
        pytest.skip("no /usr/sbin/sshd (make test installs openssh-server when run as root)")
    d = tmp_path / "sshd"
    d.mkdir()
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / name)],
                       check=True, timeout=30, stdout=subprocess.DEVNULL)
    (d / "authorized_keys").write_text((d / "client_key.pub").read_text())
    os.chmod(d / "authorized_keys", 0o600)
    if os.geteuid() == 0:
        # sshd run as root insists on its privilege-separation directory
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    port = free_port()
    (d / "sshd_config").write_text("\n".join([
        f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {d / 'host_key'}",
        f"AuthorizedKeysFile {d / 'authorized_keys'}", f"PidFile {d / 'sshd.pid'}",
        "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
        "StrictModes no", "PermitRootLogin prohibit-password", "LogLevel ERROR", ""]))
    log = open(d / "sshd.log", "wb")
    proc = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(d / "sshd_config")],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    sshd = LocalSshd(proc, port, d / "client_key", getpass.getuser())
    try:
        wait_listening(port, proc, timeout=30)
        yield sshd
    finally:
        left = end_pids([proc.pid, *sshd.sessions()])
        proc.wait(timeout=10)
        log.close()
    assert not left, f"processes under sshd survived: {left}"
