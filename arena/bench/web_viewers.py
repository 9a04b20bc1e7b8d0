"""The viewers of `arena bench web`: many live-table streams from one process.

    python -m arena.bench.web_viewers SPEC.json

The spec gives `host`, `port` and `paths`: one HTTP connection per path, each a plain
`GET` of a live table's event stream (`/api/matches/ID/live`), read and counted as it comes.
Once every stream has sent its first bytes (the current position) the process prints
"connected N"; a line on stdin closes them all; it then prints one JSON line: the bytes and
the `update` events each stream received.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from .common import driver_spec


async def _view(host: str, port: int, path: str, counts: dict[str, int], first: asyncio.Event) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        while chunk := await reader.read(65536):
            if not counts["bytes"]:
                first.set()
            counts["bytes"] += len(chunk)
            counts["updates"] += chunk.count(b"event: update")
    finally:
        writer.close()


async def _drive(spec: dict[str, Any]) -> dict[str, Any]:
    paths: list[str] = spec["paths"]
    counts = [{"bytes": 0, "updates": 0} for _ in paths]
    firsts = [asyncio.Event() for _ in paths]
    tasks = [
        asyncio.create_task(_view(spec["host"], spec["port"], path, count, first))
        for path, count, first in zip(paths, counts, firsts, strict=True)
    ]
    await asyncio.wait_for(asyncio.gather(*(first.wait() for first in firsts)), 60)
    print(f"connected {len(paths)}", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "viewers": len(paths),
        "bytes": sum(c["bytes"] for c in counts),
        "updates_min": min(c["updates"] for c in counts),
        "updates_total": sum(c["updates"] for c in counts),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_drive(driver_spec(sys.argv)))), flush=True)
