"""A TCP forwarder that delays every byte by a fixed time in each direction.

Stand-in for ``tc qdisc ... netem delay D`` where the kernel has no netem (this
machine's kernel is built without CONFIG_NET_SCH_NETEM and has no modules to load;
``tc`` answers "Specified qdisc kind is unknown").  Bytes read from one side are
written to the other ``delay`` seconds after they arrived, in order, so a request /
reply pair pays ``2 * delay`` more round trip, as with netem on the egress of both
veth ends; bandwidth is not limited (nor is it by netem without ``rate``).

Threads and ``time.sleep`` rather than asyncio: asyncio's epoll timeouts are rounded
up to whole milliseconds, so a 0.1 ms delay became ~1 ms (measured: a steal round trip
of 5.0 ms at "0.1 ms" against 4.6 ms at 1 ms).

    python -m stealsearch.benchmarks.delay_proxy --delay 0.001 LISTEN_HOST:PORT=TARGET_HOST:PORT ...
"""
from __future__ import annotations

import argparse
import queue
import signal
import socket
import threading
import time


def _pump(src: socket.socket, dst: socket.socket, delay: float) -> None:
    q: queue.Queue = queue.Queue()

    def sender():
        while True:
            due, data = q.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            try:
                dst.sendall(data)
            except OSError:
                break
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    t = threading.Thread(target=sender, daemon=True)
    t.start()
    try:
        while True:
            data = src.recv(1 << 16)
            if not data:
                break
            q.put((time.monotonic() + delay, data))
    except OSError:
        pass
    q.put((0.0, None))
    t.join()


def _serve_route(listen: str, target: str, delay: float, ready: threading.Event) -> None:
    lh, lp = listen.rsplit(":", 1)
    th, tp = target.rsplit(":", 1)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((lh, int(lp)))
    srv.listen(64)
    ready.set()
    while True:
        conn, _ = srv.accept()
        try:
            up = socket.create_connection((th, int(tp)))
        except OSError:
            conn.close()
            continue
        for s in (conn, up):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_pump, args=(conn, up, delay), daemon=True).start()
        threading.Thread(target=_pump, args=(up, conn, delay), daemon=True).start()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, required=True, help="seconds, each direction")
    ap.add_argument("routes", nargs="+", help="LISTEN_HOST:PORT=TARGET_HOST:PORT")
    args = ap.parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    for route in args.routes:
        listen, target = route.split("=", 1)
        ready = threading.Event()
        threading.Thread(target=_serve_route, args=(listen, target, args.delay, ready),
                         daemon=True).start()
        ready.wait(10)
    print("ready", flush=True)
    stop.wait()


if __name__ == "__main__":
    main()
