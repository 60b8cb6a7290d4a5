"""bench_latency must skip, with its reason, where it cannot build namespaces."""
import os

from stealsearch.benchmarks import bench_latency


def test_skips_when_not_root(monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert bench_latency.skip_reason().startswith("not root")
    assert bench_latency.main([]) == 0
    assert "skipped: not root" in capsys.readouterr().out


def test_skips_without_ip(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(bench_latency.shutil, "which", lambda name: None)
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
