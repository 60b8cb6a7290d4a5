"""bench_latency must skip, with its reason, where it cannot build namespaces; the delay
proxy forwards every byte, in order, and holds a cut machine's bytes until it is healed."""
import os
import shutil

from stealsearch.benchmarks import bench_latency


def test_skips_when_not_root(monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert bench_latency.skip_reason().startswith("not root")
    assert bench_latency.main([]) == 0
    assert "skipped: not root" in capsys.readouterr().out


def test_skips_without_ip(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert "not installed" in bench_latency.skip_reason()


def test_delay_proxy_forwards_every_byte_in_order():
    import socket
    import subprocess
    import sys
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def echo():
        conn, _ = srv.accept()
        with conn:
            while True:
                data = conn.recv(1 << 16)
                if not data:
                    break
                conn.sendall(data)

    threading.Thread(target=echo, daemon=True).start()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proxy = subprocess.Popen([sys.executable, "-m", "stealsearch.benchmarks.delay_proxy", "--delay", "0.001",
                              f"127.0.0.1:{port}=127.0.0.1:{srv.getsockname()[1]}"],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert proxy.stdout.readline().strip() == "ready"
        payload = bytes(range(256)) * 4096          # 1 MiB
        got = bytearray()
        with socket.create_connection(("127.0.0.1", port)) as c:
            sender = threading.Thread(target=c.sendall, args=(payload,))
            sender.start()
            while len(got) < len(payload):
                chunk = c.recv(1 << 16)
                assert chunk, "proxy closed early"
                got += chunk
            sender.join()
        assert bytes(got) == payload
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
        srv.close()


def test_delay_proxy_holds_a_cut_machine_until_healed():
    """``cut m0`` holds every byte of machine m0's connections (none is lost: a TCP
    link across a partition delivers late); ``heal m0`` delivers them, in order."""
    import socket
    import subprocess
    import sys
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def echo():
        conn, _ = srv.accept()
        with conn:
            while data := conn.recv(1 << 16):
                conn.sendall(data)

    threading.Thread(target=echo, daemon=True).start()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proxy = subprocess.Popen([sys.executable, "-m", "stealsearch.benchmarks.delay_proxy",
                              "--delay", "0", "--control",
                              f"127.0.0.1:{port}=127.0.0.1:{srv.getsockname()[1]}@m0"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def command(line):
        proxy.stdin.write(line + "\n")
        proxy.stdin.flush()
        return proxy.stdout.readline().strip()

    try:
        assert proxy.stdout.readline().strip() == "ready"
        with socket.create_connection(("127.0.0.1", port)) as c:
            c.sendall(b"before")
            got = b""
            while len(got) < 6:
                got += c.recv(64)
            assert got == b"before"
            assert command("cut m0") == "ok cut m0"
            c.sendall(b"during the cut")
            c.settimeout(0.3)
            try:
                held = c.recv(64)
            except socket.timeout:
                held = b""
            assert held == b"", "a cut machine's bytes went through"
            assert command("heal m0") == "ok heal m0"
            c.settimeout(60)
            got = b""
            while len(got) < 14:
                got += c.recv(64)
            assert got == b"during the cut"
        assert command("bogus m0").startswith("error")
    finally:
        proxy.stdin.close()              # its stdin closed: the proxy ends
        proxy.wait(timeout=10)
        srv.close()
