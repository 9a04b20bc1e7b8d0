"""A TCP proxy on 127.0.0.1 that delays every byte by a fixed time in each direction: a distant
network for a real bot process and the real server (tests/server/test_latency.py).

Each direction keeps its order and its throughput; only the latency grows, as on a long link.

    python tests/delay_proxy.py UPSTREAM_PORT DELAY_MS   # prints the port it listens on
"""

from __future__ import annotations

import math
import sys

import trio


async def _pump(source: trio.SocketStream, sink: trio.SocketStream, delay_s: float) -> None:
    """Forward `source` to `sink`, each chunk `delay_s` after it arrived."""
    send, receive = trio.open_memory_channel[tuple[float, bytes]](math.inf)

    async def deliver() -> None:
        async for due, data in receive:
            await trio.sleep_until(due)
            await sink.send_all(data)
        await sink.send_eof()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(deliver)
        async with send:
            while data := await source.receive_some(65536):
                send.send_nowait((trio.current_time() + delay_s, data))


async def _connection(client: trio.SocketStream, upstream_port: int, delay_s: float) -> None:
    try:
        server = await trio.open_tcp_stream("127.0.0.1", upstream_port)
        async with client, server, trio.open_nursery() as nursery:
            nursery.start_soon(_pump, client, server, delay_s)
            nursery.start_soon(_pump, server, client, delay_s)
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        pass  # either side hung up: the connection is over


async def delay_proxy(
    upstream_port: int, delay_ms: float, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve until cancelled; `task_status.started(port)` once it listens on 127.0.0.1."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]

    async def handler(client: trio.SocketStream) -> None:
        await _connection(client, upstream_port, delay_ms / 1000)

    async with trio.open_nursery() as nursery:
        await nursery.start(trio.serve_listeners, handler, listeners)
        task_status.started(port)


async def _main(upstream_port: int, delay_ms: float) -> None:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(delay_proxy, upstream_port, delay_ms)
        print(port, flush=True)


if __name__ == "__main__":
    trio.run(_main, int(sys.argv[1]), float(sys.argv[2]))
