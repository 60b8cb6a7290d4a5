"""A TCP forwarder that delays every byte by a fixed time in each direction, and can
cut a machine off.

Stand-in for ``tc qdisc ... netem delay D`` where the kernel has no netem (this
machine's kernel is built without CONFIG_NET_SCH_NETEM and has no modules to load;
``tc`` answers "Specified qdisc kind is unknown").  Bytes read from one side are
written to the other ``delay`` seconds after they arrived, in order, so a request /
reply pair pays ``2 * delay`` more round trip, as with netem on the egress of both
veth ends; bandwidth is not limited (nor is it by netem without ``rate``).

Machines (``--machine TAG=IP``, and ``LISTEN=TARGET@TAG`` on a route): a connection
belongs to the machine its route leads to and to the machine whose address it came
from.  ``--control`` reads commands on stdin, one a line, each answered by a line
``ok ...`` on stdout:

* ``delay SECONDS``: the delay of every byte read from now on;
* ``cut TAG``: every byte of that machine's connections, both ways, is held: nothing
  reaches it, nothing leaves it (a network partition of that machine);
* ``heal TAG``: the held bytes go out at once, in order, and the link works again.
  That is what TCP does across a partition shorter than its retransmission limit:
  the packets sent meanwhile are lost on the wire and sent again, so the peers see
  the bytes late, not lost (a dropped byte in the middle of a stream would be a
  corrupted stream, which no real network produces).  So a cut machine's messages
  arrive late, after the reconnection: the case a search must survive.

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
import sys
import threading
import time

#: each connection costs four threads (a reader and a writer each way); a small stack
#: keeps a fully connected emulated cluster's thousands of them cheap
THREAD_STACK = 256 * 1024


class Links:
    """The proxy's shared state: the delay, the machines cut off, the source addresses
    of the machines, and a condition that the writers of held bytes wait on."""

    def __init__(self, delay: float, machines: dict[str, str] | None = None):
        self.delay = delay
        self.by_ip = {ip: tag for tag, ip in (machines or {}).items()}
        self.cut: set[str] = set()
        self.changed = threading.Condition()

    def held(self, tags) -> bool:
        return any(t in self.cut for t in tags)

    def wait_while_cut(self, tags) -> None:
        with self.changed:
            while self.held(tags):
                self.changed.wait()

    def command(self, line: str) -> str:
        words = line.split()
        if len(words) != 2 or words[0] not in ("delay", "cut", "heal"):
            return f"error: unknown command {line.strip()!r}"
        verb, arg = words
        with self.changed:
            if verb == "delay":
                self.delay = float(arg)
            elif verb == "cut":
                self.cut.add(arg)
            else:
                self.cut.discard(arg)
            self.changed.notify_all()
        return f"ok {verb} {arg}"


def _pump(src: socket.socket, dst: socket.socket, links: Links, tags: tuple) -> None:
    q: queue.Queue = queue.Queue()

    def sender():
        while True:
            due, data = q.get()
            if data is None:
                break
            while True:          # until due, and not cut (held bytes go out late, in order)
                if tags:
                    links.wait_while_cut(tags)
                wait = due - time.monotonic()
                if wait <= 0:
                    break
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
            q.put((time.monotonic() + links.delay, data))
    except OSError:
        pass
    q.put((0.0, None))
    t.join()


def _serve_route(listen: str, target: str, tag: str | None, links: Links,
                 ready: threading.Event) -> None:
    lh, lp = listen.rsplit(":", 1)
    th, tp = target.rsplit(":", 1)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((lh, int(lp)))
    srv.listen(256)
    ready.set()
    while True:
        conn, (peer_ip, _) = srv.accept()
        tags = tuple(t for t in (tag, links.by_ip.get(peer_ip)) if t is not None)
        try:
            up = socket.create_connection((th, int(tp)))
        except OSError:
            conn.close()
            continue
        for s in (conn, up):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_pump, args=(conn, up, links, tags), daemon=True).start()
        threading.Thread(target=_pump, args=(up, conn, links, tags), daemon=True).start()


def parse_route(route: str) -> tuple[str, str, str | None]:
    """``LISTEN=TARGET`` or ``LISTEN=TARGET@TAG`` -> (listen, target, tag)."""
    listen, target = route.split("=", 1)
    tag = None
    if "@" in target:
        target, tag = target.split("@", 1)
    return listen, target, tag


def main(argv=None):
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, required=True, help="seconds, each direction")
    ap.add_argument("--machine", action="append", default=[], metavar="TAG=IP",
                    help="connections from IP belong to machine TAG (for cut and heal)")
    ap.add_argument("--control", action="store_true",
                    help="read delay / cut / heal commands on stdin (see the module doc)")
    ap.add_argument("routes", nargs="+", help="LISTEN_HOST:PORT=TARGET_HOST:PORT[@TAG]")
    args = ap.parse_args(argv)
    threading.stack_size(THREAD_STACK)
    links = Links(args.delay, dict(m.split("=", 1) for m in args.machine))
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    for route in args.routes:
        listen, target, tag = parse_route(route)
        ready = threading.Event()
        threading.Thread(target=_serve_route, args=(listen, target, tag, links, ready),
                         daemon=True).start()
        ready.wait(10)
    print("ready", flush=True)
    if args.control:
        def control():
            for line in sys.stdin:
                if line.strip():
                    print(links.command(line), flush=True)
            stop.set()          # stdin closed: the emulator is gone
        threading.Thread(target=control, daemon=True).start()
    stop.wait()


if __name__ == "__main__":
    main()
