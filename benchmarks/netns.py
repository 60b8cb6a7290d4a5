"""Machines on one machine: network namespaces, veth pairs, ``dask worker`` processes
and the delay proxy between them (the testbed of bench_latency.py and emulate_cluster.py).

:class:`NamespaceCluster` builds, for M machines:

* M network namespaces, each joined to the root namespace by a veth pair
  (10.<net>.<i+1>.1 on the root side, .2 inside; the namespace's default route is the
  root side).  IP forwarding is left as it is, so two namespaces cannot reach each
  other directly: every byte between machines goes through the root namespace;
* a ``dask scheduler`` in the root namespace (the client too);
* ``workers_per_machine`` ``dask worker`` processes (one thread each, no nanny) in each
  namespace, each listening on its namespace address and advertising an address of the
  delay proxy in the root namespace (``--contact-address``);
* the delay proxy (:mod:`stealsearch.benchmarks.delay_proxy`) holding every byte sent to a
  worker ``delay`` seconds each way, so every message between machines (steals,
  credit, reports, incumbents, stops, the client's calls) pays ``2 delay`` more per round
  trip.  With ``scheduler_via_proxy`` the workers reach the scheduler through the proxy
  as well (one route per machine), so that :meth:`cut` isolates a machine completely.

Namespace names carry this process's id (``<prefix>-<pid>-<serial>m<i>``):
:func:`cleanup_leftovers` removes only those whose process is gone (a veth pair goes
with its namespace).  Everything is removed on :meth:`close` (also when the set-up fails
half-way), and every process is started in a session of its own and ended by its
process group.
"""
from __future__ import annotations

import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

PY = sys.executable
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def skip_reason() -> str | None:
    """Why namespaces cannot be built here, or None."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "not root: network namespaces and veth pairs need CAP_NET_ADMIN"
    if shutil.which("ip") is None:
        return "iproute2's `ip` is not installed"
    if subprocess.run(["ip", "netns", "list"], capture_output=True).returncode != 0:
        return "`ip netns` is unavailable"
    return None


def sh(*args, check=True):
    r = subprocess.run(list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {r.stderr.strip()}")
    return r


def netem_available() -> bool:
    if shutil.which("tc") is None:
        return False
    r = sh("tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "0ms", check=False)
    if r.returncode == 0:
        sh("tc", "qdisc", "del", "dev", "lo", "root", check=False)
        return True
    return False


def free_port(host="127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_for_scheduler(host: str, port: int, proc, timeout: float = 60) -> None:
    """Until the scheduler process ``proc`` listens on ``host:port``; RuntimeError if it
    exits first or does not listen within ``timeout`` seconds."""
    t = time.monotonic()
    while time.monotonic() - t < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"scheduler exited with status {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex((host, port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError("scheduler did not start")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cleanup_leftovers(prefix: str) -> list[str]:
    """Delete the namespaces (``<prefix>-<pid>-...``) of runs whose process is gone (an
    interrupted run), and with them their veth pairs; a live run's are left alone."""
    gone = []
    for line in sh("ip", "netns", "list", check=False).stdout.splitlines():
        name = line.split()[0] if line.strip() else ""
        head = name[len(prefix) + 1:].split("-", 1)[0] if name.startswith(prefix + "-") else ""
        if head.isdigit() and not _alive(int(head)):
            sh("ip", "netns", "del", name, check=False)
            gone.append(name)
    return gone


_SERIALS = itertools.count()


def _free_link_tag(tag: str) -> str:
    """``tag``, or ``tag`` with a letter added, such that no interface name starts with it."""
    links = sh("ip", "-o", "link", "show", check=False).stdout
    for extra in [""] + list("abcdefghij"):
        if f": {tag}{extra}x" not in links:
            return tag + extra
    raise RuntimeError(f"no free interface names for {tag}")


def _free_net() -> int:
    """A second octet N such that no address of 10.N.0.0/16 is in use here."""
    used = sh("ip", "-o", "addr", check=False).stdout
    start = 16 + os.getpid() % 200
    for k in range(240):
        net = 16 + (start - 16 + k) % 240
        if f" 10.{net}." not in used:
            return net
    raise RuntimeError("no free 10.N.0.0/16 network for the namespaces")


class NamespaceCluster:
    """M machines (namespaces) of ``workers_per_machine`` Dask workers, a scheduler and
    the delay proxy (see the module docstring).  A context manager: everything it made
    is removed on exit."""

    def __init__(self, machines: int, *, delay: float = 0.0, prefix: str = "ssemu",
                 workers_per_machine: int = 1, scheduler_via_proxy: bool = True,
                 use_netem: bool = False, start_timeout: float = 300.0):
        if machines > 250:
            raise ValueError("at most 250 machines (one /24 each in 10.N.0.0/16)")
        self.machines = machines
        self.delay = delay
        self.prefix = prefix
        self.per_machine = workers_per_machine
        self.scheduler_via_proxy = scheduler_via_proxy
        self.use_netem = use_netem
        self.start_timeout = start_timeout
        pid = os.getpid()
        serial = next(_SERIALS)
        self.ns = [f"{prefix}-{pid}-{serial}m{i}" for i in range(machines)]
        # interface names are at most 15 characters: this process's id modulo 10^5
        tag = _free_link_tag(f"se{pid % 100000}{serial}")
        self.veth = [(f"{tag}x{i}", f"{tag}y{i}") for i in range(machines)]
        self.logs: dict[str, str] = {}
        self.net = None
        self.root_ip: list[str] = []
        self.ns_ip: list[str] = []
        self.procs: list[subprocess.Popen] = []
        #: per machine, its worker processes
        self.workers: list[list[subprocess.Popen]] = [[] for _ in range(machines)]
        #: per machine, its workers' addresses (the proxy's, which the cluster knows)
        self.worker_addrs: list[list[str]] = [[] for _ in range(machines)]
        self.made_ns: list[str] = []
        self.made_links: list[str] = []
        self.scheduler = None
        self.proxy = None
        self.scratch = None

    # -- set-up ---------------------------------------------------------------------------
    def __enter__(self):
        try:
            self._up()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def _spawn(self, args, ns=None, capture=False, stdin=False, log=None):
        """Start a process (in namespace ``ns``); ``capture``: its stdout is a pipe;
        ``log``: its stderr goes to that file of the scratch folder (:meth:`log`)."""
        cmd = (["ip", "netns", "exec", ns] if ns else []) + args
        env = dict(os.environ)
        env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        err = subprocess.DEVNULL
        if log is not None:
            self.logs[log] = os.path.join(self.scratch, log + ".log")
            err = open(self.logs[log], "w")
        try:
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                                 stderr=err, stdin=subprocess.PIPE if stdin else
                                 subprocess.DEVNULL, text=True, start_new_session=True,
                                 env=env, cwd=self.scratch)
        finally:
            if log is not None:
                err.close()
        self.procs.append(p)
        return p

    def log(self, name: str) -> str:
        """What process ``name`` ("scheduler", "m<i>w<j>") wrote on stderr so far."""
        try:
            with open(self.logs[name]) as f:
                return f.read()
        except (KeyError, OSError):
            return ""

    def _links(self):
        self.net = _free_net()
        self.root_ip = [f"10.{self.net}.{i + 1}.1" for i in range(self.machines)]
        self.ns_ip = [f"10.{self.net}.{i + 1}.2" for i in range(self.machines)]
        for i in range(self.machines):
            ns, (outer, inner) = self.ns[i], self.veth[i]
            sh("ip", "netns", "add", ns)
            self.made_ns.append(ns)
            sh("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
            self.made_links.append(outer)
            sh("ip", "link", "set", inner, "netns", ns)
            sh("ip", "addr", "add", f"{self.root_ip[i]}/24", "dev", outer)
            sh("ip", "link", "set", outer, "up")
            inside = ["ip", "netns", "exec", ns]
            sh(*inside, "ip", "addr", "add", f"{self.ns_ip[i]}/24", "dev", inner)
            sh(*inside, "ip", "link", "set", inner, "up")
            sh(*inside, "ip", "link", "set", "lo", "up")
            sh(*inside, "ip", "route", "add", "default", "via", self.root_ip[i])
            if self.use_netem and self.delay > 0:
                sh(*inside, "tc", "qdisc", "add", "dev", inner, "root", "netem",
                   "delay", f"{self.delay * 1e3}ms")

    def _up(self):
        self.scratch = tempfile.mkdtemp(prefix=f"{self.prefix}-{os.getpid()}-")
        self._links()
        bindir = os.path.dirname(PY)
        host = self.root_ip[0]
        port = free_port(host)
        self.scheduler = f"tcp://{host}:{port}"
        sched = self._spawn([os.path.join(bindir, "dask"), "scheduler", "--host", host,
                             "--port", str(port), "--no-dashboard"], log="scheduler")
        wait_for_scheduler(host, port, sched)
        routes, machines, plan = [], [], []
        for i in range(self.machines):
            tag = f"m{i}"
            machines += ["--machine", f"{tag}={self.ns_ip[i]}"]
            sched_addr = self.scheduler
            if self.scheduler_via_proxy:
                sport = free_port(self.root_ip[i])
                routes.append(f"{self.root_ip[i]}:{sport}={host}:{port}@{tag}")
                sched_addr = f"tcp://{self.root_ip[i]}:{sport}"
            for j in range(self.per_machine):
                listen = free_port(self.root_ip[i])     # any free number; the ns is empty
                contact = free_port(self.root_ip[i])
                routes.append(f"{self.root_ip[i]}:{contact}={self.ns_ip[i]}:{listen}@{tag}")
                self.worker_addrs[i].append(f"tcp://{self.root_ip[i]}:{contact}")
                plan.append((i, j, sched_addr, listen, contact))
        proxy_delay = 0.0 if self.use_netem else self.delay
        # nice -15: on a loaded machine a sleeping proxy thread otherwise wakes several ms
        # late (measured: 1 ms each way gave a 5.4 ms round trip at load 10; 2.2 ms at
        # nice -15).  It uses little CPU: it only copies the messages between machines.
        self.proxy = self._spawn(["nice", "-n", "-15", PY, "-m", "stealsearch.benchmarks.delay_proxy",
                                  "--delay", str(proxy_delay), "--control", *machines, *routes],
                                 capture=True, stdin=True, log="proxy")
        line = self.proxy.stdout.readline()
        if "ready" not in line:
            raise RuntimeError(f"delay proxy did not start: {line!r}")
        for i, j, sched_addr, listen, contact in plan:
            p = self._spawn([os.path.join(bindir, "dask"), "worker", sched_addr, "--no-nanny",
                             "--nthreads", "1", "--memory-limit", "0",
                             "--listen-address", f"tcp://{self.ns_ip[i]}:{listen}",
                             "--contact-address", f"tcp://{self.root_ip[i]}:{contact}",
                             "--local-directory", self.scratch, "--death-timeout", "60",
                             "--no-dashboard", "--name", f"m{i}w{j}"], ns=self.ns[i],
                            log=f"m{i}w{j}")
            self.workers[i].append(p)

    def client(self):
        """A client of the cluster, once every worker has joined (a context manager)."""
        from distributed import Client

        from stealsearch.engine.deploy.quiet_logs import quiet_distributed_logs

        quiet_distributed_logs()
        c = Client(self.scheduler, timeout=60)
        try:
            c.wait_for_workers(self.machines * self.per_machine, timeout=self.start_timeout)
        except BaseException:
            c.close()
            raise
        return c

    # -- faults and the link ---------------------------------------------------------------
    def _control(self, line: str) -> str:
        self.proxy.stdin.write(line + "\n")
        self.proxy.stdin.flush()
        reply = self.proxy.stdout.readline().strip()
        if not reply.startswith("ok"):
            raise RuntimeError(f"delay proxy: {line!r} -> {reply!r}")
        return reply

    def set_delay(self, delay: float) -> None:
        """Every byte read from now on is held ``delay`` seconds each way."""
        self.delay = delay
        self._control(f"delay {delay!r}")

    def cut(self, machine: int) -> None:
        """Machine ``machine`` is cut off: nothing reaches it or leaves it (held)."""
        self._control(f"cut m{machine}")

    def heal(self, machine: int) -> None:
        """Machine ``machine`` is reconnected: what was held arrives, late."""
        self._control(f"heal m{machine}")

    def kill(self, machine: int) -> list[int]:
        """SIGKILL every process of machine ``machine`` (its namespace's); their pids."""
        pids = self.pids(machine)
        for p in self.workers[machine]:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for p in self.workers[machine]:
            p.wait(timeout=30)
        return pids

    def pids(self, machine: int) -> list[int]:
        """The processes running in machine ``machine``'s namespace."""
        out = sh("ip", "netns", "pids", self.ns[machine], check=False).stdout
        return [int(x) for x in out.split()]

    # -- tear-down ----------------------------------------------------------------------------
    def close(self):
        if self.proxy is not None and self.proxy.stdin is not None:
            try:
                self.proxy.stdin.close()
            except OSError:
                pass
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)   # its own session: only its children
                except ProcessLookupError:
                    pass
        for p in reversed(self.procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=5)
            if p.stdout is not None:
                p.stdout.close()
        self.procs = []
        for i, ns in enumerate(self.made_ns):      # anything still inside (it should not be)
            for pid in self.pids(i):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for link in self.made_links:
            sh("ip", "link", "del", link, check=False)
        for ns in self.made_ns:
            sh("ip", "netns", "del", ns, check=False)
        self.made_links, self.made_ns = [], []
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None
