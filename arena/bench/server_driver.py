"""The bot side of `arena bench server`: one process, many streams on one asyncio loop.

    python -m arena.bench.server_driver SPEC.json

The spec's `mode` says what its streams do:

- "play": every seat token's bot is a quick bot (`quick_bot.play`); the parent kills the
  process when it has measured;
- "idle": every bot says Hello and waits; once all are connected the driver prints
  "connected", and they leave when a line comes on stdin;
- "raw": `streams` plain grpc.aio ping-pong streams to the raw baseline server for
  `seconds`, each sending `reply_bytes` bytes and waiting for the answer.

At the end it prints its counts as one JSON line (round trips and its CPU µs, in raw mode).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import grpc

from ..v1 import arena_pb2 as pb
from ..v1 import arena_pb2_grpc as pb_grpc
from .common import driver_spec
from .quick_bot import play

RAW_METHOD = "/bench.Raw/PingPong"


async def _idle(address: str, token: str, connected: list[str], stop: asyncio.Event) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.BotServiceStub(channel)  # type: ignore[no-untyped-call]
        call = stub.Play(metadata=[("authorization", f"Bearer {token}")])
        await call.write(pb.BotMessage(hello=pb.Hello(bot_name="bench", protocol_version=1)))
        connected.append(token)
        await stop.wait()
        call.cancel()


async def _raw(address: str, request: bytes, seconds: float) -> int:
    roundtrips = 0
    async with grpc.aio.insecure_channel(address) as channel:
        call: Any = channel.stream_stream(RAW_METHOD)()
        deadline = time.monotonic() + seconds
        await call.write(request)
        while time.monotonic() < deadline:
            await call.read()
            roundtrips += 1
            await call.write(request)
        await call.done_writing()
    return roundtrips


async def _drive(spec: dict[str, Any]) -> dict[str, int]:
    address = spec["address"]
    if spec["mode"] == "raw":
        request = b"x" * spec["reply_bytes"]
        cpu = time.process_time()
        roundtrips = await asyncio.gather(
            *(_raw(address, request, spec["seconds"]) for _ in range(spec["streams"]))
        )
        return {"roundtrips": sum(roundtrips), "cpu_us": int((time.process_time() - cpu) * 1e6)}
    if spec["mode"] == "play":
        decisions = await asyncio.gather(
            *(play(address, token, "bench") for token in spec["tokens"]), return_exceptions=True
        )
        return {"decisions": sum(d for d in decisions if isinstance(d, int))}
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
