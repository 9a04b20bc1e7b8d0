"""`arena serve` with its web site, as a process: started on free ports, its addresses read from
its log, stopped at the end, and failed if it logged a traceback."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class ServedSite:
    url: str  # the web site, without a trailing slash
    grpc: str  # HOST:PORT of the gRPC server
    process: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)  # every line it printed so far


@contextlib.contextmanager
def served_site(directory: Path, *options: str, timeout: float = 30) -> Iterator[ServedSite]:
    """`arena serve --port 0 --http 127.0.0.1:0 OPTIONS…` with its store (arena.db) and replays in
    `directory`, yielded once both its servers listen."""
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "arena", "serve", "--port", "0", "--http", "127.0.0.1:0"),
            *("--store", str(directory / "arena.db"), "--replay-dir", str(directory / "replays")),
            *options,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    log: list[str] = []

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            log.append(line)
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    try:
        url = grpc = ""
        deadline = time.monotonic() + timeout
        while not (url and grpc):
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                said = "".join(log)
                raise AssertionError(f"arena serve did not listen within {timeout} s:\n{said}") from None
            record = json.loads(line) if line.startswith("{") else {}
            if record.get("event") == "web site listening":
                url = record["url"].rstrip("/")
            elif record.get("event") == "server listening":
                grpc = f"127.0.0.1:{record['port']}"
        yield ServedSite(url, grpc, process, log)
    finally:
        process.terminate()
        process.wait(30)
        if process.stdout is not None:
            process.stdout.close()
    assert not any("Traceback" in line for line in log), "".join(log)


def call_json(
    url: str, method: str, path: str, body: Any = None, token: str | None = None
) -> tuple[int, Any]:
    """One JSON request to the site at `url` (with the seat's token, if given): status and answer."""
    headers = {"content-type": "application/json"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())
