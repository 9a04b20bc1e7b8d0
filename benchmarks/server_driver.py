"""The bot side of `python -m benchmarks server`: one process, many streams on one asyncio loop.

    python -m benchmarks.server_driver SPEC.json

The spec's `mode` says what its streams do:

- "play": every seat token's bot is a quick bot (`quick_bot.play`), the tokens listed match by
  match (`seats` per match); the round trips the bots observe are recorded between a "start"
  and a "stop" line on stdin, and after "stop" their median and p99 are printed, with the mean
  size of the requests the bots received (the parent then kills the process);
- "idle": every bot says Hello and waits; once all are connected the driver prints
  "connected", and they leave when a line comes on stdin;
- "raw": `streams` plain grpc.aio ping-pong streams to the raw baseline server for
  `seconds`, each sending `reply_bytes` bytes and waiting for the answer; with `ring` = n, the
  streams go in rings of n that pass one message round in turn (a stream sends, waits for its
  answer, then the next stream of its ring sends), as a match's seats are asked one at a time:
  one round trip in flight per ring.

At the end it prints its counts as one JSON line (round trips, its CPU µs and the round trips'
median and p99 in µs, in raw mode).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

from .common import driver_spec, percentile
from .quick_bot import MatchTiming, play

RAW_METHOD = "/bench.Raw/PingPong"


async def _idle(address: str, token: str, connected: list[str], stop: asyncio.Event) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.BotServiceStub(channel)  # type: ignore[no-untyped-call]
        call = stub.Play(metadata=[("authorization", f"Bearer {token}")])
        await call.write(pb.BotMessage(hello=pb.Hello(bot_name="bench", protocol_version=1)))
        connected.append(token)
        await stop.wait()
        call.cancel()


async def _raw(address: str, request: bytes, seconds: float, samples: list[float]) -> int:
    roundtrips = 0
    clock = time.perf_counter
    async with grpc.aio.insecure_channel(address) as channel:
        call: Any = channel.stream_stream(RAW_METHOD)()
        deadline = time.monotonic() + seconds
        sent = clock()
        await call.write(request)
        while time.monotonic() < deadline:
            await call.read()
            samples.append(clock() - sent)
            roundtrips += 1
            sent = clock()
            await call.write(request)
        await call.done_writing()
    return roundtrips


async def _raw_ring(address: str, request: bytes, seconds: float, samples: list[float], streams: int) -> int:
    """`_raw` for a ring of `streams` streams taking turns: one round trip in flight at a time."""
    roundtrips = 0
    clock = time.perf_counter
    channels = [grpc.aio.insecure_channel(address) for _ in range(streams)]
    try:
        calls: list[Any] = [channel.stream_stream(RAW_METHOD)() for channel in channels]
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for call in calls:
                sent = clock()
                await call.write(request)
                await call.read()
                samples.append(clock() - sent)
                roundtrips += 1
        for call in calls:
            await call.done_writing()
    finally:
        for channel in channels:
            await channel.close()
    return roundtrips


def _us(samples: list[float], p: float) -> int:
    return int(percentile(samples, p) * 1e6)


async def _play(spec: dict[str, Any]) -> dict[str, int]:
    """The quick bots; the observed round trips between the "start" and "stop" lines."""
    address, tokens, seats = spec["address"], spec["tokens"], spec["seats"]
    timings = [MatchTiming() for _ in range(len(tokens) // seats)]
    bots = [
        asyncio.create_task(play(address, token, "bench", timings[i // seats]))
        for i, token in enumerate(tokens)
    ]
    loop = asyncio.get_running_loop()
    for recording in (True, False):  # "start", then "stop"
        if not await loop.run_in_executor(None, sys.stdin.readline):
            break
        for timing in timings:
            timing.recording = recording
    for bot in bots:
        bot.cancel()
    samples = [sample for timing in timings for sample in timing.samples]
    sizes = [size for timing in timings for size in timing.request_bytes]
    return {
        "samples": len(samples),
        "p50_us": _us(samples, 50),
        "p99_us": _us(samples, 99),
        "request_bytes": sum(sizes) // len(sizes) if sizes else 0,
    }


async def _drive(spec: dict[str, Any]) -> dict[str, int]:
    address = spec["address"]
    if spec["mode"] == "raw":
        request = b"x" * spec["reply_bytes"]
        cpu = time.process_time()
        samples: list[float] = []
        ring, seconds, streams = spec.get("ring", 1), spec["seconds"], spec["streams"]
        if ring > 1:
            runs = [_raw_ring(address, request, seconds, samples, ring) for _ in range(streams // ring)]
        else:
            runs = [_raw(address, request, seconds, samples) for _ in range(streams)]
        roundtrips = await asyncio.gather(*runs)
        return {
            "roundtrips": sum(roundtrips),
            "cpu_us": int((time.process_time() - cpu) * 1e6),
            "p50_us": _us(samples, 50),
            "p99_us": _us(samples, 99),
        }
    if spec["mode"] == "play":
        return await _play(spec)
    connected: list[str] = []
    stop = asyncio.Event()
    bots = [asyncio.create_task(_idle(address, token, connected, stop)) for token in spec["tokens"]]
    while len(connected) < len(bots):
        await asyncio.sleep(0.05)
    print("connected", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    stop.set()
    await asyncio.gather(*bots, return_exceptions=True)
    return {"connected": len(connected)}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_drive(driver_spec(sys.argv)))), flush=True)
