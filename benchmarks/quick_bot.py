"""A bot that answers every request at once with its first legal action, on one grpc.aio stream.

The bots of `python -m benchmarks server`'s driver (`server_driver.py`), and a process of its own:
`python -m benchmarks ladder` runs a ladder of these to measure what the ladder itself costs over the
referee.

    ARENA_ADDRESS=host:port ARENA_TOKEN=… python -m benchmarks.quick_bot
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

REQUEST_SIZES = 200  # requests measured per match: enough for a mean over a deal's phases


@dataclass
class MatchTiming:
    """The round trips one match's bots observe (`python -m benchmarks server`), shared by its seats' bots:
    from one bot handing over its answer to the next request reaching any bot of the match; and the
    sizes of the match's first requests as encoded on the wire (the raw baseline sends as many bytes)."""

    recording: bool = False
    last_answer: float | None = None
    samples: list[float] = field(default_factory=list)  # seconds
    request_bytes: list[int] = field(default_factory=list)  # the first REQUEST_SIZES requests'


async def play(address: str, token: str, name: str = "quick", timing: MatchTiming | None = None) -> int:
    """Play the match of seat `token` to its end; the decisions answered."""
    decisions = 0
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.BotServiceStub(channel)  # type: ignore[no-untyped-call]
        call = stub.Play(metadata=[("authorization", f"Bearer {token}")])
        await call.write(pb.BotMessage(hello=pb.Hello(bot_name=name, protocol_version=1)))
        async for message in call:
            kind = message.WhichOneof("kind")
            if kind == "match_end":
                break
            if kind == "request":
                request = message.request
                if timing is not None:
                    now = time.perf_counter()
                    if timing.recording and timing.last_answer is not None:
                        timing.samples.append(now - timing.last_answer)
                    if len(timing.request_bytes) < REQUEST_SIZES:
                        timing.request_bytes.append(message.ByteSize())
                reply = pb.ActionReply(request_id=request.request_id, action=request.legal_actions[0])
                if timing is not None:
                    timing.last_answer = time.perf_counter()
                await call.write(pb.BotMessage(action=reply))
                decisions += 1
        await call.done_writing()
    return decisions


if __name__ == "__main__":
    asyncio.run(play(os.environ["ARENA_ADDRESS"], os.environ["ARENA_TOKEN"]))
