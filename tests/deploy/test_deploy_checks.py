"""The door to a cluster refuses bad input in one line, before starting anything:
scheduler addresses, worker counts, timeouts, config keys, peers that are no scheduler."""
import logging
import socket
import sys
import threading

import pytest

from stealsearch.engine.deploy.cluster import (ClusterUnavailable, InputError, check_scheduler_address,
                            check_worker_count, dask_client, probe_scheduler,
                            read_cluster_config)
import stealsearch.engine.deploy.cluster as cluster
from stealsearch.cli import main


@pytest.mark.parametrize("address, normal", [
    ("tcp://127.0.0.1:8786", "tcp://127.0.0.1:8786"),
    ("127.0.0.1:8786", "tcp://127.0.0.1:8786"),
    ("headnode.example.org:8786", "tcp://headnode.example.org:8786"),
    ("tls://10.0.0.1:8786", "tls://10.0.0.1:8786"),
    ("ws://node-1:8786", "ws://node-1:8786"),
    ("wss://node-1:443", "wss://node-1:443"),
    ("tcp://[::1]:8786", "tcp://[::1]:8786"),
])
def test_scheduler_addresses_accepted(address, normal):
    assert check_scheduler_address(address) == normal


@pytest.mark.parametrize("address, message", [
    ("foo", "has no port"),
    ("tcp://host", "has no port"),
    ("http://127.0.0.1:8786", "unsupported protocol 'http'"),
    ("inproc://x", "unsupported protocol 'inproc'"),
    ("tcp://127.0.0.1:0", "not in 1..65535"),
    ("tcp://127.0.0.1:70000", "not in 1..65535"),
    ("tcp://127.0.0.1:abc", "malformed"),
    ("garbage::", "malformed"),
    ("tcp://a b:1", "white space"),
    ("tcp://no/such:1", "not a host name"),
    ("", "PROTOCOL://HOST:PORT"),
])
def test_bad_scheduler_addresses_are_one_line_exit_2(address, message, capsys):
    with pytest.raises(InputError, match=message):
        check_scheduler_address(address)
    with pytest.raises(InputError, match=message):
        with dask_client(scheduler=address):
            pass
    assert main(["uts", "--scheduler", address, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err


@pytest.mark.parametrize("workers", [0, -1, True, 2.5, "2"])
def test_worker_counts_below_one_or_not_whole_are_refused(workers):
    # 0 used to mean "the default" (`workers or 2`)
    with pytest.raises(InputError, match="workers"):
        with dask_client(workers=workers):
            pass
    with pytest.raises(InputError, match="workers"):
        with dask_client(workers=workers, scheduler="tcp://127.0.0.1:1"):
            pass


def test_worker_counts_against_cores_and_memory(monkeypatch, caplog):
    monkeypatch.setattr(cluster, "usable_cores", lambda: 2)
    monkeypatch.setattr(cluster, "available_memory", lambda: 64 * 2**30)
    assert check_worker_count(2) == 2
    with caplog.at_level(logging.WARNING, logger="stealsearch.engine.deploy.cluster"):
        assert check_worker_count(8) == 8          # 4 per core: allowed, with a note
    assert "8 worker processes on 2 cores" in caplog.text
    with pytest.raises(InputError, match="--workers 9: more than 4 .* add --force"):
        check_worker_count(9)
    assert check_worker_count(9, force=True) == 9
    monkeypatch.setattr(cluster, "available_memory", lambda: 500 * 2**20)
    assert check_worker_count(1) == 1
    with pytest.raises(InputError, match="500 MB of memory available, less than 300 MB"):
        check_worker_count(2)
    assert check_worker_count(2, force=True) == 2


def test_cli_refuses_absurd_worker_counts_before_starting_anything(capsys):
    absurd = 4 * cluster.usable_cores() + 1
    assert main(["uts", "--workers", str(absurd), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "add --force" in err
    assert main(["uts", "--workers", "0"]) == 2
    assert "must be >= 1" in capsys.readouterr().err


@pytest.mark.parametrize("flag, value", [("--connect-timeout", "0"), ("--connect-timeout", "-1"),
                                         ("--wait-workers", "0")])
def test_timeouts_must_be_positive(flag, value, capsys):
    assert main(["uts", "--scheduler", "tcp://127.0.0.1:1", flag, value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and flag in err and "> 0" in err


def test_connect_timeout_from_the_environment_is_checked(monkeypatch):
    monkeypatch.setenv("STEALSEARCH_CONNECT_TIMEOUT", "soon")
    with pytest.raises(InputError, match="STEALSEARCH_CONNECT_TIMEOUT"):
        with dask_client(scheduler="tcp://127.0.0.1:1"):
            pass


class FakePeer:
    """A TCP listener on 127.0.0.1 that is not a scheduler: it closes every
    connection, answers garbage, or accepts and never says a word."""

    def __init__(self, behaviour: str):
        self.behaviour = behaviour
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(0.1)      # accept() wakes up to see close()
        self.closed = False
        self.held = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            if self.behaviour == "close":
                conn.close()
            elif self.behaviour == "garbage":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" * 8)
                conn.close()
            else:
                self.held.append(conn)

    def close(self):
        self.closed = True
        self.thread.join(timeout=5)
        self.sock.close()
        for c in self.held:
            c.close()


@pytest.mark.parametrize("behaviour, message", [
    ("close", "cannot reach scheduler"),
    ("garbage", "does not speak the Dask protocol"),
    ("silent", "cannot reach scheduler .* within 1 s \\(no answer\\)"),
])
@pytest.mark.timeout(120)       # a hang fails here; no speed figure is asserted
def test_a_peer_that_is_no_scheduler_fails_within_the_connect_timeout(behaviour, message):
    # a silent peer used to hang Client() for ever; garbage made it allocate exabytes
    peer = FakePeer(behaviour)
    try:
        with pytest.raises(ClusterUnavailable, match=message):
            with dask_client(scheduler=f"tcp://127.0.0.1:{peer.port}", connect_timeout=1):
                pass
    finally:
        peer.close()


def test_probe_of_an_unused_port_fails_in_one_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ClusterUnavailable, match="cannot reach scheduler") as info:
        probe_scheduler(f"tcp://127.0.0.1:{port}", 0.5)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- configs

def _config(tmp_path, text):
    p = tmp_path / "cluster.yaml"
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize("text, message", [
    ("kind: local\nworkers: 2\nbogus: 1\n", "(kind 'local'): unknown key 'bogus'"),
    ("kind: local\nn_workers: 2\n", "unknown key 'n_workers'"),
    ("kind: scheduler\naddress: tcp://127.0.0.1:8786\nport: 1\n", "unknown key 'port'"),
    ("kind: scheduler\naddress: nohost\n", "has no port"),
    ("kind: ssh\nhosts: [a, b]\nworker_options: {nthread: 1}\n",
     "worker_options: unknown key 'nthread'"),
    ("kind: ssh\nhosts: [a, b]\nscheduler_options: {prot: 1}\n",
     "scheduler_options: unknown key 'prot'"),
    ("kind: ssh\nhosts: [a]\nhostz: [b]\n", "unknown key 'hostz'"),
    ("kind: ssh\n", "needs 'hosts'"),
    ("kind: slurm\ncores: 4\nmemory: 4GB\nqueueue: normal\n", "(kind 'slurm'): unknown key 'queueue'"),
    ("kind: pbs\ncores: 4\nmemory: 4GB\njobs: 0\n", "'jobs' must be a whole number >= 1"),
    ("kind: moon\n", "unknown cluster kind 'moon'"),
])
def test_config_keys_are_checked_before_anything_starts(tmp_path, text, message, capsys):
    path = _config(tmp_path, text)
    with pytest.raises(InputError, match=None) as info:
        read_cluster_config(path)
    assert message in str(info.value) and path in str(info.value)
    assert main(["uts", "--cluster-config", path]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize("kind, module, extra", [
    ("ssh", "asyncssh", "ssh"), ("slurm", "dask_jobqueue", "jobqueue"),
    ("kubernetes", "dask_kubernetes", "kubernetes"),
])
def test_a_missing_extra_is_named(tmp_path, monkeypatch, kind, module, extra):
    monkeypatch.setitem(sys.modules, module, None)      # import fails as if not installed
    path = _config(tmp_path, f"kind: {kind}\nhosts: [a]\n")
    with pytest.raises(InputError, match=rf"needs {module}: pip install 'stealsearch\[{extra}\]'"):
        read_cluster_config(path)
