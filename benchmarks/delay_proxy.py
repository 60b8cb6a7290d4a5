"""A TCP forwarder that delays every byte by a fixed time in each direction.

Stand-in for ``tc qdisc ... netem delay D`` where the kernel has no netem (this
machine's kernel is built without CONFIG_NET_SCH_NETEM and has no modules to load;
``tc`` answers "Specified qdisc kind is unknown").  Bytes read from one side are
written to the other ``delay`` seconds after they arrived, in order, so a request /
reply pair pays ``2 * delay`` more round trip, as with netem on the egress of both
veth ends; bandwidth is not limited (nor is it by netem without ``rate``).

    python -m benchmarks.delay_proxy --delay 0.001 LISTEN_HOST:PORT=TARGET_HOST:PORT ...
"""
from __future__ import annotations

import argparse
import asyncio
import signal
import time


async def _pump(reader, writer, delay):
    q: asyncio.Queue = asyncio.Queue()

    async def sender():
        while True:
            due, data = await q.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()

    task = asyncio.create_task(sender())
    try:
        while True:
            data = await reader.read(1 << 16)
            if not data:
                break
            q.put_nowait((time.monotonic() + delay, data))
    except (ConnectionError, OSError):
        pass
    q.put_nowait((0.0, None))
    try:
        await task
    except (ConnectionError, OSError):
        pass
    try:
        writer.close()
    except Exception:  # noqa: BLE001 - closing a dead socket
        pass


def _handler(target_host, target_port, delay):
    async def handle(reader, writer):
        try:
            t_reader, t_writer = await asyncio.open_connection(target_host, target_port)
        except OSError:
            writer.close()
            return
        for sock_writer in (writer, t_writer):
            sock = sock_writer.get_extra_info("socket")
            if sock is not None:
                import socket
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(_pump(reader, t_writer, delay), _pump(t_reader, writer, delay))

    return handle


async def serve(routes, delay):
    servers = []
    for listen, target in routes:
        lh, lp = listen.rsplit(":", 1)
        th, tp = target.rsplit(":", 1)
        servers.append(await asyncio.start_server(_handler(th, int(tp), delay), lh, int(lp)))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print("ready", flush=True)
    await stop.wait()
    for s in servers:
        s.close()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, required=True, help="seconds, each direction")
    ap.add_argument("routes", nargs="+", help="LISTEN_HOST:PORT=TARGET_HOST:PORT")
    args = ap.parse_args(argv)
    asyncio.run(serve([r.split("=", 1) for r in args.routes], args.delay))


if __name__ == "__main__":
    main()
