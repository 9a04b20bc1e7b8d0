"""`arena bench server`: the referee's throughput against plain grpc.aio, in one run.

Three measurements, each with its bots in another process (a driver running many
bot streams on one asyncio loop, see `driver_main`):

1. decisions per second: K concurrent matches whose bots answer at once;
2. raw round trips per second: a plain grpc.aio bidi ping-pong server with the same
   number of streams and the same message sizes (the mean request and reply sizes
   seen in step 1);
3. resident memory per connected idle bot, with N bots connected.

CPU time is reported per decision and per round trip, for the server process (every
thread) and for the driver, so that a slow run can be told apart from a saturated
driver: the machine may have few cores, shared by both processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import trio

from ..engine import find_variant
from ..referee.runner import MatchConfig, MatchState, TimeControl
from ..server.app import serve
from ..v1 import arena_pb2 as pb
from ..v1 import arena_pb2_grpc as pb_grpc

RAW_METHOD = "/bench.Raw/PingPong"


@dataclass
class ServerBench:
    matches: int
    seconds: float
    decisions: int
    decisions_per_s: float
    raw_roundtrips_per_s: float
    ratio: float
    request_bytes: int
    reply_bytes: int
    server_cpu_us_per_decision: float
    driver_cpu_us_per_decision: float
    server_cpu_us_per_roundtrip: float
    driver_cpu_us_per_roundtrip: float
    idle_bots: int
    rss_per_idle_bot_kib: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def process_cpu_s(pid: int) -> float:
    """User plus system CPU time of process `pid` (every thread), from /proc."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


# --------------------------------------------------------------------------- the driver (bot side)


async def _bot_stream(
    address: str, token: str, idle: bool, stats: dict[str, int], stop: asyncio.Event
) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.BotServiceStub(channel)  # type: ignore[no-untyped-call]
        call = stub.Play(metadata=[("authorization", f"Bearer {token}")])
        await call.write(pb.BotMessage(hello=pb.Hello(bot_name="bench", protocol_version=1)))
        if idle:
            stats["connected"] += 1
            await stop.wait()
            call.cancel()
            return
        async for message in call:
            kind = message.WhichOneof("kind")
            if kind == "match_end":
                break
            if kind == "request":  # sizes are counted by the server (`_mean_sizes`), not here
                request = message.request
                reply = pb.BotMessage(
                    action=pb.ActionReply(request_id=request.request_id, action=request.legal_actions[0])
                )
                stats["decisions"] += 1
                await call.write(reply)


async def _raw_stream(address: str, request: bytes, seconds: float, stats: dict[str, int]) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        call: Any = channel.stream_stream(RAW_METHOD)()
        deadline = time.monotonic() + seconds
        await call.write(request)
        while time.monotonic() < deadline:
            await call.read()
            stats["roundtrips"] += 1
            await call.write(request)
        await call.done_writing()


async def _driver(spec: dict[str, Any]) -> dict[str, int]:
    stats = {"decisions": 0, "roundtrips": 0, "connected": 0}
    stop = asyncio.Event()
    if spec["mode"] == "raw":
        request = b"x" * spec["reply_bytes"]
        cpu = time.process_time()
        await asyncio.gather(
            *(_raw_stream(spec["address"], request, spec["seconds"], stats) for _ in range(spec["streams"]))
        )
        stats["cpu_us"] = int((time.process_time() - cpu) * 1e6)
        return stats
    idle = spec["mode"] == "idle"
    tasks = [
        asyncio.create_task(_bot_stream(spec["address"], token, idle, stats, stop))
        for token in spec["tokens"]
    ]
    if idle:
        while stats["connected"] < len(tasks):
            await asyncio.sleep(0.05)
        print("connected", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    return stats


def driver_main(spec_path: str) -> None:
    """Entry point of the driver process: `python -m arena.bench.server SPEC.json`."""
    spec = json.loads(Path(spec_path).read_text())
    stats = asyncio.run(_driver(spec))
    print(json.dumps(stats), flush=True)


# --------------------------------------------------------------------------- the raw baseline server


class _RawServer:
    """A plain grpc.aio bidi server answering every message with `size` bytes."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.port = 0
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        answer = b"y" * self.size

        async def ping_pong(requests: Any, context: Any) -> Any:
            async for _ in requests:
                yield answer

        handler = grpc.method_handlers_generic_handler(
            "bench.Raw", {"PingPong": grpc.stream_stream_rpc_method_handler(ping_pong)}
        )
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((handler,))
        self.port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        self._ready.set()
        await self._stop.wait()
        await server.stop(0.5)

    def __enter__(self) -> _RawServer:
        self.thread.start()
        self._ready.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(5)


def _run_driver(spec: dict[str, Any]) -> dict[str, int]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(spec, handle)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "arena.bench.server", handle.name],
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        os.unlink(handle.name)
    result: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --------------------------------------------------------------------------- the benchmark


async def _bench(matches: int, seconds: float, idle_bots: int, variant_name: str) -> ServerBench:
    variant = find_variant(variant_name)
    with tempfile.TemporaryDirectory() as tmp:
        async with trio.open_nursery() as nursery:
            hub, port = await nursery.start(serve, "127.0.0.1", 0, Path(tmp))
            address = f"127.0.0.1:{port}"
            config = MatchConfig(
                variant=variant,
                deals=10_000,  # more than the bench can finish: every match runs the whole time
                seed=1,
                seat_names=tuple(f"bench{i}" for i in range(variant.seats)),
                time_control=TimeControl(per_decision_ms=60_000, bank_ms=0),
            )
            runners = [hub.create_match(config) for _ in range(matches)]
            tokens = [seat.token for runner in runners for seat in runner.seats]
            spec = {"mode": "play", "address": address, "tokens": tokens}
            driver = await trio.lowlevel.open_process(
                [sys.executable, "-m", "arena.bench.server", _write_spec(tmp, spec)], stdout=subprocess.PIPE
            )
            with trio.move_on_after(60):  # the driver starts, connects every bot, and play begins
                while not all(r.state is MatchState.RUNNING for r in runners):
                    await trio.sleep(0.05)
            await trio.sleep(0.5)  # warm up
            before = sum(r.decisions for r in runners)
            cpu_before = process_cpu_s(os.getpid()), process_cpu_s(driver.pid)
            started = trio.current_time()
            await trio.sleep(seconds)
            decisions = sum(r.decisions for r in runners) - before
            elapsed = trio.current_time() - started
            server_cpu = process_cpu_s(os.getpid()) - cpu_before[0]
            driver_cpu = process_cpu_s(driver.pid) - cpu_before[1]
            driver.kill()
            await driver.wait()
            assert driver.stdout is not None
            nursery.cancel_scope.cancel()
    request_bytes, reply_bytes = _mean_sizes(runners)
    raw, raw_server_cpu, raw_driver_cpu = await trio.to_thread.run_sync(
        _raw, len(tokens), seconds, request_bytes, reply_bytes
    )
    rss_per_bot = await _idle_memory(idle_bots, variant_name) if idle_bots else 0.0
    decisions_per_s = decisions / elapsed
    return ServerBench(
        matches=matches,
        seconds=round(elapsed, 3),
        decisions=decisions,
        decisions_per_s=round(decisions_per_s, 1),
        raw_roundtrips_per_s=round(raw, 1),
        ratio=round(decisions_per_s / raw, 3) if raw else 0.0,
        request_bytes=request_bytes,
        reply_bytes=reply_bytes,
        server_cpu_us_per_decision=round(server_cpu * 1e6 / max(decisions, 1), 1),
        driver_cpu_us_per_decision=round(driver_cpu * 1e6 / max(decisions, 1), 1),
        server_cpu_us_per_roundtrip=raw_server_cpu,
        driver_cpu_us_per_roundtrip=raw_driver_cpu,
        idle_bots=idle_bots,
        rss_per_idle_bot_kib=round(rss_per_bot, 1),
    )


def _write_spec(directory: str, spec: dict[str, Any]) -> str:
    path = Path(directory) / f"spec-{spec['mode']}.json"
    path.write_text(json.dumps(spec))
    return str(path)


def _mean_sizes(runners: list[Any]) -> tuple[int, int]:
    """The mean request size seen, and the size of a typical reply."""
    sizes = [size for r in runners for size in r.request_sizes]
    reply = pb.BotMessage(action=pb.ActionReply(request_id=10_000, action=pb.Action(type="play", card="T21")))
    return (int(sum(sizes) / len(sizes)) if sizes else 1000), reply.ByteSize()


def _raw(streams: int, seconds: float, request_bytes: int, reply_bytes: int) -> tuple[float, float, float]:
    """Round trips per second, then server and driver CPU µs per round trip."""
    with _RawServer(request_bytes) as server:
        spec = {
            "mode": "raw",
            "address": f"127.0.0.1:{server.port}",
            "streams": streams,
            "seconds": seconds,
            "reply_bytes": reply_bytes,
        }
        started = time.monotonic()
        cpu = process_cpu_s(os.getpid())  # the raw server is a thread of this otherwise idle process
        stats = _run_driver(spec)
        server_cpu = process_cpu_s(os.getpid()) - cpu
        elapsed = time.monotonic() - started
    roundtrips = max(stats["roundtrips"], 1)
    # The driver's own start-up is outside its timed loop; count only the loop.
    return (
        stats["roundtrips"] / min(elapsed, seconds),
        round(server_cpu * 1e6 / roundtrips, 1),
        round(stats["cpu_us"] / roundtrips, 1),
    )


async def _idle_memory(bots: int, variant_name: str) -> float:
    variant = find_variant(variant_name)
    with tempfile.TemporaryDirectory() as tmp:
        async with trio.open_nursery() as nursery:
            hub, port = await nursery.start(serve, "127.0.0.1", 0, Path(tmp))
            config = MatchConfig(
                variant=variant,
                deals=1,
                seed=1,
                seat_names=tuple(f"idle{i}" for i in range(variant.seats)),
                start_timeout_s=3600,
            )
            # Every match keeps one seat empty, so it waits and its connected bots stay idle.
            runners = [hub.create_match(config) for _ in range(-(-bots // (variant.seats - 1)))]
            tokens = [s.token for r in runners for s in r.seats[1:]][:bots]
            await trio.sleep(0.5)
            baseline = rss_kib()
            spec = {"mode": "idle", "address": f"127.0.0.1:{port}", "tokens": tokens}
            driver = await trio.lowlevel.open_process(
                [sys.executable, "-m", "arena.bench.server", _write_spec(tmp, spec)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            assert driver.stdout is not None and driver.stdin is not None
            line = b""
            while not line.endswith(b"\n"):
                chunk = await driver.stdout.receive_some(1)
                if not chunk:
                    break
                line += chunk
            await trio.sleep(1.0)
            connected = rss_kib()
            await driver.stdin.send_all(b"\n")
            await driver.wait()
            nursery.cancel_scope.cancel()
    return (connected - baseline) / bots


def bench_server(
    matches: int, seconds: float, idle_bots: int = 1000, variant: str = "grosstarock"
) -> ServerBench:
    return trio.run(_bench, matches, seconds, idle_bots, variant)


if __name__ == "__main__":
    driver_main(sys.argv[1])
