"""`python -m benchmarks server`: the referee's throughput against plain grpc.aio, in one run.

Four measurements, each with its bots in another process (`server_driver.py`: many bot
streams on one asyncio loop):

1. decisions per second: K concurrent matches whose bots answer at once;
2. raw round trips per second (the ratio's): a plain grpc.aio bidi ping-pong server with the
   same streams (one per seat), the same message sizes (the mean size of the requests the
   bots received in step 1, and a reply's) and the same round trips in flight: the streams go
   in rings of one match's seats, each ring passing one message round in turn, as a match asks
   its seats one at a time;
3. raw round trips per second unpaced (`raw_unpaced_roundtrips_per_s`, `ratio_unpaced`): the
   same streams each pinging on its own, so a seat per match in flight at once, which no match
   can do (the ratio this bench gave before the rings; RESULTS.md, "A fair baseline");
4. the referee's transport with no referee (`bridge_roundtrips_per_s`): the rings of step 2
   against a server built as the referee is (grpc.aio on its own thread, each stream a reader
   and a writer task, `server.bridge` to trio and back, a trio task per stream woken through a
   channel) whose trio side answers each message at once: `bridge_ratio` (to the rings) is
   the most the referee's design allows, `ratio_to_bridge` (the referee's decisions to it)
   what the referee's own work leaves of it;
5. resident memory per connected idle bot, with N bots connected.

And the latency the referee adds to a decision: the round trip its bots observe (from a bot
handing over its answer to the next request reaching a bot of the match) against a raw
round trip of step 2, both as median and p99; `added_latency_*` is the difference.

CPU time is reported per decision and per round trip, for the server process (every
thread) and for the driver, so that a slow run can be told apart from a saturated
driver: the machine may have few cores, shared by both processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import trio

from arena.engine import Variant, find_variant
from arena.live import Hub
from arena.referee.runner import MatchConfig, MatchRunner, MatchState
from arena.referee.seat import TimeControl
from arena.server.app import serve
from arena.server.bridge import OUTBOX_LIMIT, BotLink, Bridge, Close
from arena.v1 import arena_pb2 as pb

from .common import Window, driver_command, pauses, ratio, rss_kib

DRIVER = "benchmarks.server_driver"


@dataclass
class ServerBench:
    matches: int
    seconds: float
    decisions: int
    decisions_per_s: float
    raw_roundtrips_per_s: float  # the rings: as many round trips in flight as matches
    ratio: float
    raw_unpaced_roundtrips_per_s: float  # every stream pinging at once
    ratio_unpaced: float
    bridge_roundtrips_per_s: float  # the rings against the referee's transport, no referee
    bridge_ratio: float  # bridge / raw rings: the ceiling of the design
    ratio_to_bridge: float  # decisions / bridge: what the referee's own work leaves
    request_bytes: int
    reply_bytes: int
    server_cpu_us_per_decision: float
    driver_cpu_us_per_decision: float
    server_cpu_us_per_roundtrip: float
    driver_cpu_us_per_roundtrip: float
    server_cpu_us_per_bridge_roundtrip: float
    decision_rt_p50_us: int  # bot-observed, from an answer to the next request
    decision_rt_p99_us: int
    raw_rt_p50_us: int  # raw grpc.aio in rings: as many round trips in flight
    raw_rt_p99_us: int
    added_latency_p50_us: int  # what the referee adds to a decision's round trip
    added_latency_p99_us: int
    idle_bots: int
    rss_per_idle_bot_kib: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def bench_server(
    matches: int,
    seconds: float,
    idle_bots: int = 1000,
    variant: str = "grosstarock",
    bar: str | None = None,
) -> ServerBench:
    """Run the three measurements; with `bar`, a progress bar so labelled shows the first's window."""
    return trio.run(_bench, matches, seconds, idle_bots, variant, bar)


def decisions_per_s(
    matches: int, seconds: float, variant: str = "grosstarock", bar: str | None = None
) -> float:
    """The first measurement alone: the referee's decisions per second with K matches of quick
    bots (`python -m benchmarks ladder` compares ladders with it and needs none of the baselines)."""
    window, _, _ = trio.run(_play, matches, seconds, variant, bar)
    return window.rate


async def _bench(
    matches: int, seconds: float, idle_bots: int, variant_name: str, bar: str | None
) -> ServerBench:
    window, runners, observed = await _play(matches, seconds, variant_name, bar)
    decisions = window.count
    server_cpu, driver_cpu = window.cpu_s
    request_bytes, reply_bytes = _sizes(observed)
    seats = len(runners[0].seats)
    streams = seats * len(runners)
    raw, raw_server_cpu, raw_driver_cpu, raw_latency = await trio.to_thread.run_sync(
        _raw, streams, seconds, request_bytes, reply_bytes, seats
    )
    unpaced, *_ = await trio.to_thread.run_sync(_raw, streams, seconds, request_bytes, reply_bytes)
    bridged, bridged_server_cpu = await _bridged(streams, seconds, request_bytes, reply_bytes, seats)
    rss_per_bot = await _idle_memory(idle_bots, variant_name) if idle_bots else 0.0
    return ServerBench(
        matches=matches,
        seconds=round(window.seconds, 3),
        decisions=decisions,
        decisions_per_s=round(window.rate, 1),
        raw_roundtrips_per_s=round(raw, 1),
        ratio=ratio(window.rate, raw),
        raw_unpaced_roundtrips_per_s=round(unpaced, 1),
        ratio_unpaced=ratio(window.rate, unpaced),
        bridge_roundtrips_per_s=round(bridged, 1),
        bridge_ratio=ratio(bridged, raw),
        ratio_to_bridge=ratio(window.rate, bridged),
        request_bytes=request_bytes,
        reply_bytes=reply_bytes,
        server_cpu_us_per_decision=round(server_cpu * 1e6 / max(decisions, 1), 1),
        driver_cpu_us_per_decision=round(driver_cpu * 1e6 / max(decisions, 1), 1),
        server_cpu_us_per_roundtrip=raw_server_cpu,
        driver_cpu_us_per_roundtrip=raw_driver_cpu,
        server_cpu_us_per_bridge_roundtrip=bridged_server_cpu,
        decision_rt_p50_us=observed["p50_us"],
        decision_rt_p99_us=observed["p99_us"],
        raw_rt_p50_us=raw_latency["p50_us"],
        raw_rt_p99_us=raw_latency["p99_us"],
        added_latency_p50_us=observed["p50_us"] - raw_latency["p50_us"],
        added_latency_p99_us=observed["p99_us"] - raw_latency["p99_us"],
        idle_bots=idle_bots,
        rss_per_idle_bot_kib=round(rss_per_bot, 1),
    )


async def _play(
    matches: int, seconds: float, variant_name: str, bar: str | None
) -> tuple[Window, list[MatchRunner], dict[str, int]]:
    """K matches of quick bots: decisions counted by the referee in the window, both processes'
    CPU time, and the round trips the bots observed in the window (median and p99, µs)."""
    variant = find_variant(variant_name)
    with tempfile.TemporaryDirectory() as tmp:
        async with trio.open_nursery() as nursery:
            hub, port = await nursery.start(serve, "127.0.0.1", 0, Path(tmp))
            runners, driver = await start_quick_matches(hub, port, matches, variant, Path(tmp))
            assert driver.stdin is not None and driver.stdout is not None
            await trio.sleep(0.5)  # warm up
            with Window(lambda: sum(r.decisions for r in runners), (os.getpid(), driver.pid)) as window:
                await driver.stdin.send_all(b"start\n")
                for pause in pauses(seconds, bar):
                    await trio.sleep(pause)
                await driver.stdin.send_all(b"stop\n")
            output = b""
            with trio.move_on_after(30):
                while not output.endswith(b"\n") and (chunk := await driver.stdout.receive_some()):
                    output += chunk
            driver.kill()
            await driver.wait()
            nursery.cancel_scope.cancel()
    observed: dict[str, int] = (
        json.loads(output) if output.strip() else {"p50_us": 0, "p99_us": 0, "request_bytes": 0}
    )
    return window, runners, observed


async def start_quick_matches(
    hub: Hub, port: int, matches: int, variant: Variant, tmp: Path
) -> tuple[list[MatchRunner], trio.Process]:
    """K matches on `hub` longer than any bench, and the quick bots' driver playing all their
    seats (its stdin a pipe: `start`/`stop` mark a window; closed, the bots stop), returned once
    every match runs."""
    config = MatchConfig(
        variant=variant,
        deals=10_000,  # more than the bench can finish: every match runs the whole time
        seed=1,
        seat_names=tuple(f"bench{i}" for i in range(variant.seats)),
        time_control=TimeControl(per_decision_ms=60_000, bank_ms=0),
    )
    runners = [hub.create_match(config) for _ in range(matches)]
    spec = {
        "mode": "play",
        "address": f"127.0.0.1:{port}",
        "tokens": [seat.token for runner in runners for seat in runner.seats],
        "seats": variant.seats,
    }
    driver = await trio.lowlevel.open_process(
        driver_command(DRIVER, spec, tmp / "spec-play.json"), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    with trio.move_on_after(60):  # the driver starts, connects every bot, and play begins
        while not all(r.state is MatchState.RUNNING for r in runners):
            await trio.sleep(0.05)
    if not all(r.state is MatchState.RUNNING for r in runners):
        driver.kill()
        raise RuntimeError("the quick bots did not start their matches in 60 s")
    return runners, driver


def _sizes(observed: dict[str, int]) -> tuple[int, int]:
    """The mean size of the requests the quick bots received, and the size of a typical reply."""
    reply = pb.BotMessage(action=pb.ActionReply(request_id=10_000, action=pb.Action(type="play", card="T21")))
    return observed.get("request_bytes") or 1000, reply.ByteSize()


# --------------------------------------------------------------------------- the raw baseline


class _RawServer:
    """A plain grpc.aio bidi server answering every message with `size` bytes."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.port = 0
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)

    def _ping_pong(self) -> Any:
        answer = b"y" * self.size

        async def ping_pong(requests: Any, context: Any) -> Any:
            async for _ in requests:
                yield answer

        return ping_pong

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        handler = grpc.method_handlers_generic_handler(
            "bench.Raw", {"PingPong": grpc.stream_stream_rpc_method_handler(self._ping_pong())}
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


class _BridgedServer(_RawServer):
    """The raw server's method served as the referee serves a bot's stream, with no referee.

    The aio side is `BotServicer.Play`'s: a reader task handing each message to trio through the
    `Bridge`, a writer task taking the answers from the stream's `Outbox`. The trio side is a
    task per stream waiting on a channel, as a match waits on its seat's inbox, that sends the
    answer back through the `BotLink` at once.
    """

    def __init__(self, size: int, nursery: trio.Nursery) -> None:
        super().__init__(size)
        self.nursery = nursery
        self.trio_token = trio.lowlevel.current_trio_token()
        self.thread.name = "grpc-io"
        self.channels: dict[int, trio.MemorySendChannel[bytes]] = {}

    def _open(self, link: BotLink) -> None:  # trio thread
        send, receive = trio.open_memory_channel[bytes](OUTBOX_LIMIT)
        self.channels[link.id] = send
        self.nursery.start_soon(self._answer, link, receive)

    async def _answer(self, link: BotLink, messages: trio.MemoryReceiveChannel[bytes]) -> None:
        answer = b"y" * self.size
        async for _ in messages:
            link.send(answer)

    def _deliver(self, link: BotLink, message: bytes) -> None:  # trio thread
        self.channels[link.id].send_nowait(message)

    def _close(self, link: BotLink) -> None:  # trio thread
        self.channels.pop(link.id).close()

    def _ping_pong(self) -> Any:
        async def ping_pong(requests: Any, context: Any) -> None:
            bridge = self.bridge
            link = BotLink(bridge, context.peer())
            bridge.to_trio(self._open, link)

            async def read() -> None:
                try:
                    while (message := await context.read()) is not grpc.aio.EOF:
                        bridge.to_trio(self._deliver, link, message)
                except (grpc.RpcError, asyncio.CancelledError):
                    pass
                finally:
                    link.outbox.put_nowait(Close())

            reader = asyncio.create_task(read())
            try:
                while not isinstance(item := await link.outbox.get(), Close):
                    await context.write(item)
            finally:
                reader.cancel()
                bridge.to_trio(self._close, link)

        return ping_pong

    async def _serve(self) -> None:
        self.bridge = Bridge(self.trio_token, asyncio.get_running_loop())
        await super()._serve()


async def _bridged(
    streams: int, seconds: float, request_bytes: int, reply_bytes: int, ring: int
) -> tuple[float, float]:
    """Round trips per second of the rings against `_BridgedServer`, and this process's CPU µs
    per round trip (its trio side runs here while a worker thread waits for the driver)."""
    async with trio.open_nursery() as nursery:
        server = _BridgedServer(request_bytes, nursery)
        await trio.to_thread.run_sync(server.__enter__)
        try:
            stats, window = await trio.to_thread.run_sync(
                _drive_rings, server.port, streams, seconds, reply_bytes, ring
            )
        finally:
            await trio.to_thread.run_sync(server.__exit__, None, None, None)
        nursery.cancel_scope.cancel()
    roundtrips = max(stats["roundtrips"], 1)
    return stats["roundtrips"] / min(window.seconds, seconds), round(window.cpu_s[0] * 1e6 / roundtrips, 1)


def _raw(
    streams: int, seconds: float, request_bytes: int, reply_bytes: int, ring: int = 1
) -> tuple[float, float, float, dict[str, int]]:
    """Round trips per second, server and driver CPU µs per round trip, and the round trips'
    median and p99 (µs); with `ring` > 1 the streams take turns in rings of `ring`."""
    with _RawServer(request_bytes) as server:
        stats, window = _drive_rings(server.port, streams, seconds, reply_bytes, ring)
    roundtrips = max(stats["roundtrips"], 1)
    # The driver's own start-up is outside its timed loop; count only the loop.
    return (
        stats["roundtrips"] / min(window.seconds, seconds),
        round(window.cpu_s[0] * 1e6 / roundtrips, 1),
        round(stats["cpu_us"] / roundtrips, 1),
        {"p50_us": stats["p50_us"], "p99_us": stats["p99_us"]},
    )


def _drive_rings(
    port: int, streams: int, seconds: float, reply_bytes: int, ring: int
) -> tuple[dict[str, Any], Window]:
    """The driver's ping-pong against the server on `port` (a thread of this process): its
    statistics, and the window around it with this process's CPU time."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = {
            "mode": "raw",
            "address": f"127.0.0.1:{port}",
            "streams": streams,
            "seconds": seconds,
            "reply_bytes": reply_bytes,
            "ring": ring,
        }
        command = driver_command(DRIVER, spec, Path(tmp) / "spec-raw.json")
        with Window(pids=[os.getpid()]) as window:
            done = subprocess.run(command, capture_output=True, text=True, check=True)
    stats: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return stats, window


# --------------------------------------------------------------------------- memory per idle bot


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
                driver_command(DRIVER, spec, Path(tmp) / "spec-idle.json"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            assert driver.stdout is not None and driver.stdin is not None
            line = b""
            while not line.endswith(b"\n"):  # "connected"
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
