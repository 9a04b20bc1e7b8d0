"""`python -m benchmarks web`: does watching slow the referee? Decisions/s with 0 and N live viewers.

One process runs the referee server and the web site in one trio loop, as `arena serve
--http` does. K matches of quick bots (`server_driver.py`, another process) play the whole
time, as in `python -m benchmarks server`. The run alternates windows without viewers and windows
with `viewers` live-table streams connected (`web_viewers.py`, a third process, spreading
them over the K matches; each is sent an update a frame: `frame_s`, or longer when N is more
than the site's budget of `updates_per_s` allows, `viewer_frame_s`), in the order 0, N, N, 0
(repeated `rounds` times) so that a drift of the machine's speed falls on both sides alike.
Reported:

- `decisions_per_s_0` and `decisions_per_s_n`: the referee's decisions per second in the
  windows without and with viewers, and their ratio (`slowdown` is 1 − ratio); `round_ratios`,
  each round's own ratio, show how much it moved within the run (on a shared machine, a lot);
- `server_cpu_us_per_decision_*`: the server process's CPU time per decision on each side,
  and `server_threads_cpu_us_per_decision_*` the same by thread: `trio` (the referee, the
  bridge's trio side, the site), `grpc-io` (the aio loop) and `other` (gRPC's own threads and
  trio's worker threads);
- `viewers_process_cpu_share`: the CPU the viewers' own process used (seconds per second):
  on a machine with few cores it competes with the server for them;
- `rss_per_viewer_kib`: the server's resident memory with every viewer connected, less
  before they connected, per viewer (the first N window);
- what the viewers received: bytes and `update` events (the fewest any one viewer got), to
  show that they were live the whole window.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import tempfile
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import trio

from arena.engine import find_variant
from arena.live import Hub
from arena.referee.runner import MatchRunner
from arena.server.app import serve
from arena.standing.store import Store
from arena.web.app import Site, serve_site
from arena.web.feed import FRAME_S, UPDATES_PER_S, viewer_frame

from .common import Window, driver_command, ratio, rss_kib
from .server import start_quick_matches

VIEWERS = "benchmarks.web_viewers"


@dataclass
class WebBench:
    matches: int
    viewers: int
    frame_s: float
    updates_per_s: float
    viewer_frame_s: float
    seconds_per_window: float
    windows: int
    decisions_per_s_0: float
    decisions_per_s_n: float
    ratio: float
    slowdown: float
    round_ratios: list[float]
    server_cpu_us_per_decision_0: float
    server_cpu_us_per_decision_n: float
    server_threads_cpu_us_per_decision_0: dict[str, float]
    server_threads_cpu_us_per_decision_n: dict[str, float]
    rss_per_viewer_kib: float
    viewers_process_cpu_share: float
    viewer_bytes_per_s: float
    viewer_updates_min: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def bench_web(
    matches: int = 4,
    viewers: int = 200,
    seconds: float = 10,
    rounds: int = 1,
    frame_s: float = FRAME_S,
    updates_per_s: float = UPDATES_PER_S,
) -> WebBench:
    if matches < 1 or viewers < 1 or seconds <= 0 or rounds < 1 or frame_s <= 0 or updates_per_s <= 0:
        raise ValueError("matches, viewers, seconds, rounds, the frame and the budget must be positive")
    return trio.run(_bench, matches, viewers, seconds, rounds, frame_s, updates_per_s)


async def _bench(
    matches: int, viewers: int, seconds: float, rounds: int, frame_s: float, updates_per_s: float
) -> WebBench:
    def make_site(hub: Hub, store: Store) -> Site:
        return Site(hub, store, frame_s=frame_s, updates_per_s=updates_per_s)

    async with site_with_matches(matches, make_site, "arena-bench-web-") as (runners, http_port, tmp):
        await trio.sleep(0.5)  # warm up
        paths = [f"/api/matches/{runners[i % matches].match_id}/live" for i in range(viewers)]
        result = await _windows(runners, paths, http_port, seconds, rounds, tmp)
    return WebBench(
        matches=matches,
        viewers=viewers,
        frame_s=frame_s,
        updates_per_s=updates_per_s,
        viewer_frame_s=viewer_frame(frame_s, viewers, updates_per_s),
        **result,
    )


@asynccontextmanager
async def site_with_matches(
    matches: int, make_site: Callable[[Hub, Store], Site], prefix: str
) -> AsyncIterator[tuple[list[MatchRunner], int, Path]]:
    """A referee server and its site (`make_site`) in this process on loopback ports, playing
    `matches` grosstarock matches of quick bots (in one other process) until the block ends:
    (the matches' runners, the site's port, a scratch directory)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        store = Store(str(Path(tmp) / "arena.db"))
        try:
            async with trio.open_nursery() as nursery:
                hub, port = await nursery.start(serve, "127.0.0.1", 0, Path(tmp))
                http_port = await nursery.start(serve_site, make_site(hub, store), "127.0.0.1", 0)
                # Its stdin stays open (and unwritten) for the whole run: at its end the bots stop.
                runners, players = await start_quick_matches(
                    hub, port, matches, find_variant("grosstarock"), Path(tmp)
                )
                try:
                    yield runners, http_port, Path(tmp)
                finally:
                    players.kill()
                    await players.wait()
                    nursery.cancel_scope.cancel()
        finally:
            store.close()


async def start_viewers(http_port: int, paths: list[str], tmp: Path) -> tuple[trio.Process, _Lines]:
    """The viewers' process (`VIEWERS`), once it says that every viewer is connected: the process,
    and its output's lines (each window's counts come back on it after a `stop` line)."""
    spec = {"host": "127.0.0.1", "port": http_port, "paths": paths}
    process = await trio.lowlevel.open_process(
        driver_command(VIEWERS, spec, tmp / "spec-view.json"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    lines = _Lines(process.stdout)
    with trio.fail_after(90):
        line = await lines.next()
    if not line.startswith("connected"):
        raise RuntimeError(f"the viewers did not connect: {line!r}")
    return process, lines


async def _windows(
    runners: list[MatchRunner], paths: list[str], http_port: int, seconds: float, rounds: int, tmp: Path
) -> dict[str, Any]:
    count = lambda: sum(r.decisions for r in runners)  # noqa: E731
    sides: dict[int, list[Window]] = {0: [], 1: []}
    rss_per_viewer = 0.0
    received: list[dict[str, Any]] = []
    threads: dict[int, dict[str, float]] = {0: {}, 1: {}}
    for order in [0, 1, 1, 0] * rounds:
        if not order:
            gc.collect()  # as before a window with viewers (below)
            before_threads = threads_cpu_s()
            with Window(count, [os.getpid()]) as window:
                await trio.sleep(seconds)
            _add_threads(threads[0], before_threads)
            sides[0].append(window)
            continue
        before = rss_kib()
        viewers, lines = await start_viewers(http_port, paths, tmp)
        assert viewers.stdin is not None
        if not rss_per_viewer:
            rss_per_viewer = (rss_kib() - before) / len(paths)
        # The viewers' connections leave some 40 000 objects that outlive two collections: enough
        # to start a full collection of the whole heap (tens of ms) soon after, in their window.
        # That is connecting's cost, not keeping up to date: each window starts after one.
        gc.collect()
        before_threads = threads_cpu_s()
        with Window(count, [os.getpid(), viewers.pid]) as window:
            await trio.sleep(seconds)
        _add_threads(threads[1], before_threads)
        sides[1].append(window)
        await viewers.stdin.send_all(b"stop\n")
        with trio.fail_after(30):
            received.append(json.loads(await lines.next()) | {"seconds": window.seconds})
        await viewers.wait()
        await trio.sleep(0.5)  # the server closes the viewers' streams
    rate = {side: _rate(ws) for side, ws in sides.items()}
    # Each round's own n / 0 (its two windows of each side): how much the ratio moved in the run.
    round_ratios = [
        ratio(_rate(sides[1][2 * r : 2 * r + 2]), _rate(sides[0][2 * r : 2 * r + 2])) for r in range(rounds)
    ]
    cpu = {
        side: sum(w.cpu_s[0] for w in ws) * 1e6 / max(1, sum(w.count for w in ws))
        for side, ws in sides.items()
    }
    decided = {side: max(1, sum(w.count for w in ws)) for side, ws in sides.items()}
    by_thread = {
        side: {name: round(s * 1e6 / decided[side], 1) for name, s in cpu_s.items()}
        for side, cpu_s in threads.items()
    }
    viewer_cpu = sum(w.cpu_s[1] for w in sides[1]) / sum(w.seconds for w in sides[1])
    return {
        "seconds_per_window": seconds,
        "windows": len(sides[0]) + len(sides[1]),
        "decisions_per_s_0": round(rate[0], 1),
        "decisions_per_s_n": round(rate[1], 1),
        "ratio": ratio(rate[1], rate[0]),
        "slowdown": round(1 - rate[1] / rate[0], 3),
        "round_ratios": round_ratios,
        "server_cpu_us_per_decision_0": round(cpu[0], 1),
        "server_cpu_us_per_decision_n": round(cpu[1], 1),
        "server_threads_cpu_us_per_decision_0": by_thread[0],
        "server_threads_cpu_us_per_decision_n": by_thread[1],
        "rss_per_viewer_kib": round(rss_per_viewer, 1),
        "viewers_process_cpu_share": round(viewer_cpu, 3),
        "viewer_bytes_per_s": round(sum(r["bytes"] / r["seconds"] for r in received) / len(received)),
        "viewer_updates_min": min(r["updates_min"] for r in received),
    }


def threads_cpu_s() -> dict[str, float]:
    """This process's CPU time (user plus system) by thread, from /proc: `trio` (the main
    thread), `grpc-io` (the gRPC server's aio loop) and `other` (every other thread)."""
    names = {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}
    main = threading.main_thread().native_id
    tick = os.sysconf("SC_CLK_TCK")
    cpu = {"trio": 0.0, "grpc-io": 0.0, "other": 0.0}
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        tid = int(task)
        name = "trio" if tid == main else "grpc-io" if names.get(tid) == "grpc-io" else "other"
        cpu[name] += (int(fields[11]) + int(fields[12])) / tick
    return cpu


def _add_threads(total: dict[str, float], before: dict[str, float]) -> None:
    for name, seconds in threads_cpu_s().items():
        total[name] = total.get(name, 0.0) + seconds - before[name]


def _rate(windows: list[Window]) -> float:
    return sum(w.count for w in windows) / sum(w.seconds for w in windows)


class _Lines:
    """Lines of a process's output, read as they come."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buffer = b""

    async def next(self) -> str:
        while b"\n" not in self.buffer:
            chunk = await self.stream.receive_some()
            if not chunk:
                raise RuntimeError("the viewers' process ended early")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()
