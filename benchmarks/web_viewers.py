"""The viewers of `python -m benchmarks web`: many live-table streams from one process.

    python -m benchmarks.web_viewers SPEC.json

The spec gives `host`, `port` and `paths`: one HTTP connection per path, each a plain
`GET` of a live table's event stream (`/api/matches/ID/live`), its bytes read and counted as
they come. Once every stream has sent its current position the process prints "connected N";
a line on stdin closes them all; it then prints one JSON line: the bytes and the `update`
events each stream received.

The process shares the machine's cores with the server it measures, so it is kept lean: plain
non-blocking sockets on one `selectors` loop (epoll), no event-loop framework, one `recv` per
readable socket. It reads the server's real HTTP answer over loopback all the same.
"""

from __future__ import annotations

import json
import selectors
import socket
import sys
import time
from dataclasses import dataclass
from typing import Any

from .common import driver_spec

POSITION = b"event: position"
UPDATE = b"event: update"
CONNECT_TIMEOUT_S = 60.0


@dataclass
class _Stream:
    sock: socket.socket
    received: int = 0
    updates: int = 0
    positioned: bool = False
    tail: bytes = b""  # the last bytes of the previous read: a marker may straddle two reads

    def take(self, chunk: bytes) -> None:
        self.received += len(chunk)
        text = self.tail + chunk
        self.updates += text.count(UPDATE)
        self.positioned = self.positioned or POSITION in text
        self.tail = text[-(len(UPDATE) - 1) :]


def _open(host: str, port: int, path: str) -> _Stream:
    sock = socket.create_connection((host, port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n".encode())
    sock.setblocking(False)
    return _Stream(sock)


def _drive(spec: dict[str, Any]) -> dict[str, Any]:
    streams = [_open(spec["host"], spec["port"], path) for path in spec["paths"]]
    selector = selectors.DefaultSelector()
    for opened in streams:
        selector.register(opened.sock, selectors.EVENT_READ, opened)
    waiting = len(streams)  # for their position
    deadline = time.monotonic() + CONNECT_TIMEOUT_S
    stop = False
    while not stop:
        if waiting and time.monotonic() > deadline:
            raise TimeoutError(f"{waiting} streams sent no position in {CONNECT_TIMEOUT_S:.0f} s")
        for key, _mask in selector.select(timeout=1.0):
            if key.data is None:  # stdin: the line that stops the run
                sys.stdin.readline()
                stop = True
                continue
            stream: _Stream = key.data
            try:
                chunk = stream.sock.recv(65536)
            except BlockingIOError:
                continue
            if not chunk:  # the server closed it (its match ended)
                selector.unregister(stream.sock)
                continue
            was = stream.positioned
            stream.take(chunk)
            if stream.positioned and not was:
                waiting -= 1
                if not waiting:
                    print(f"connected {len(streams)}", flush=True)
                    selector.register(sys.stdin, selectors.EVENT_READ, None)
    selector.close()
    for opened in streams:
        opened.sock.close()
    return {
        "viewers": len(streams),
        "bytes": sum(s.received for s in streams),
        "updates_min": min(s.updates for s in streams),
        "updates_total": sum(s.updates for s in streams),
    }


if __name__ == "__main__":
    print(json.dumps(_drive(driver_spec(sys.argv))), flush=True)
