"""The bot side of `python -m benchmarks arena`: a share of the lobby bots, in one process.

    python -m benchmarks.arena_driver SPEC.json

The spec gives the server's address (or several servers' `addresses`: an arena of several
servers sharing one PostgreSQL store), the bots (index and bot token), the variants to join and
the places per bot, how long to wait for the connections, how long the matches in flight may
take to finish, and the file to write the counts to. Each bot has its own channel and TCP
connection, waits in `LobbyService.Join`, and on every `Seated` plays the match on its own
`BotService.Play` stream with a random legal action for each request, at once. The parent
steers the run with lines on stdin (see `_drive`); the driver counts what the bots saw.

With several addresses a bot first joins the lobby of its own server (bot `i` the `i % n`-th
address, so the bots spread evenly), and after that stream ends, on a channel balanced over all
of them with gRPC's `round_robin`, which skips a server that is down: a bot whose server dies
joins another one. (Balanced from the start, the bots would not spread: `round_robin` sends a
channel's first call to whichever server it reached first, the same server for most bots that
start together.) Each match is played on the server its `Seated.address` names.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import resource
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
from arena_bot.match import OWN_CONNECTION

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

from .common import driver_spec


def lobby_targets(addresses: list[str], index: int) -> list[tuple[str, tuple[tuple[str, Any], ...]]]:
    """The targets and options of bot `index`'s lobby channels, in the order it joins on them: one
    address as it is; with several (IPv4 literals, host:port), its own server's, then all of them
    as one `ipv4:` target balanced by `round_robin`."""
    if len(addresses) == 1:
        return [(addresses[0], OWN_CONNECTION)]
    balanced = "ipv4:" + ",".join(addresses)
    own = addresses[index % len(addresses)]
    return [(own, OWN_CONNECTION), (balanced, (*OWN_CONNECTION, ("grpc.lb_policy_name", "round_robin")))]


class _Driver:
    """One driver process's bots, on one asyncio loop."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.addresses: list[str] = spec.get("addresses") or [spec["address"]]
        self.variants: list[str] = spec["variants"]
        self.max_matches: int = spec["max_matches"]
        self.measuring = False
        self.stopping = asyncio.Event()
        self.connected = 0
        self.decisions = 0
        self.window_decisions = 0
        self.decide_ns: list[int] = []
        self.ended: dict[str, tuple[str, float]] = {}  # match id -> (termination, wall time)
        self.errors: Counter[str] = Counter()
        self.rejected = 0
        self.plays: set[asyncio.Task[None]] = set()
        self.open_seats: Counter[int] = Counter()  # by bot: Seated, and no MatchEnd yet
        self.seated: list[tuple[str, int, float]] = []  # (match id, seat, wall time) of every Seated
        self.hosts: Counter[str] = Counter()  # Seated.address of every Seated ('' = the lobby's server)
        self.play_channels: dict[tuple[int, str], Any] = {}  # (bot, address) -> channel

    def play_stub(self, index: int, lobby_channel: Any, address: str) -> Any:
        """The BotService stub for a match on `address` ('' or the only server: the lobby's channel)."""
        if not address or len(self.addresses) == 1:
            return pb_grpc.BotServiceStub(lobby_channel)  # type: ignore[no-untyped-call]
        channel = self.play_channels.get((index, address))
        if channel is None:
            channel = grpc.aio.insecure_channel(address, options=OWN_CONNECTION)
            self.play_channels[(index, address)] = channel
        return pb_grpc.BotServiceStub(channel)  # type: ignore[no-untyped-call]

    async def lobby(self, channels: list[Any], index: int, token: str) -> None:
        """Wait in the lobby, starting a match for every Seated, until cancelled or, once
        stopping, until a Seated fills the bot's last free place. The first stream goes on the
        first of `channels`, every later one on the last (`lobby_targets`).

        A bot cannot leave the lobby between two messages: a Seated the server sent as the
        bot cancels its stream would be lost, and its match would wait for a bot that never
        comes (until `start_timeout_s`, then the fault policy plays the seat). Right after a
        Seated that fills its places the server cannot seat it again until that match has
        been played and recorded: leaving then loses nothing.
        """
        rng = random.Random(index)
        welcomed = False
        places = self.max_matches
        join = pb.LobbyJoin(variants=self.variants, max_matches=self.max_matches, bot_version="bench")
        streams = 0
        while not self.stopping.is_set():
            channel = channels[min(streams, len(channels) - 1)]
            streams += 1
            stub = pb_grpc.LobbyServiceStub(channel)  # type: ignore[no-untyped-call]
            retry_s = 0.5
            call = stub.Join(join, metadata=(("authorization", f"Bearer {token}"),))
            try:
                async for message in call:
                    kind = message.WhichOneof("kind")
                    if kind == "welcome":
                        places = message.welcome.max_matches
                        if not welcomed:
                            welcomed = True
                            self.connected += 1
                    elif kind == "seated":
                        self.open_seats[index] += 1
                        seated = message.seated
                        self.seated.append((seated.match_id, seated.seat, time.time()))
                        self.hosts[seated.address] += 1
                        play_stub = self.play_stub(index, channel, seated.address)
                        task = asyncio.create_task(self.play(play_stub, seated, rng, index))
                        self.plays.add(task)
                        task.add_done_callback(self.plays.discard)
                        if self.stopping.is_set() and self.open_seats[index] >= places:
                            return
                    elif kind == "paused":
                        self.errors["lobby paused"] += 1
                self.errors["lobby ended by the server"] += 1
            except grpc.aio.AioRpcError as error:
                self.errors[f"lobby {error.code().name}"] += 1
                for key, value in error.trailing_metadata() or ():
                    if key == "retry-after-ms":
                        retry_s = min(int(value) / 1000, 5.0)
            finally:
                call.cancel()
            await asyncio.sleep(retry_s)

    async def play(self, stub: Any, seated: Any, rng: random.Random, index: int) -> None:
        """Play one seat: a random legal action for every request, at once."""
        call = stub.Play(metadata=(("authorization", f"Bearer {seated.seat_token}"),))
        seat_open = True
        try:
            await call.write(pb.BotMessage(hello=pb.Hello(bot_name=f"bench{index:03d}", protocol_version=1)))
            async for message in call:
                kind = message.WhichOneof("kind")
                if kind == "request":
                    received = time.perf_counter_ns()
                    request = message.request
                    action = rng.choice(request.legal_actions)
                    reply = pb.ActionReply(request_id=request.request_id, action=action)
                    await call.write(pb.BotMessage(action=reply))
                    took = time.perf_counter_ns() - received
                    self.decisions += 1
                    if self.measuring:
                        self.window_decisions += 1
                        self.decide_ns.append(took)
                elif kind == "rejected":
                    self.rejected += 1
                elif kind == "match_end":
                    self.ended.setdefault(seated.match_id, (message.match_end.termination, time.time()))
                    self.open_seats[index] -= 1
                    seat_open = False
                    await call.done_writing()
        except grpc.aio.AioRpcError as error:
            self.errors[f"play {error.code().name}"] += 1
        finally:
            if seat_open:
                self.open_seats[index] -= 1

    def stats(self, unfinished: int) -> dict[str, Any]:
        return {
            "connected": self.connected,
            "decisions": self.decisions,
            "window_decisions": self.window_decisions,
            "decide_us": [ns // 1000 for ns in self.decide_ns],
            "ended": self.ended,
            "seated": self.seated,
            "hosts": dict(self.hosts),
            "errors": dict(self.errors),
            "rejected": self.rejected,
            "unfinished": unfinished,
        }


def _raise_file_limit() -> None:
    """Every bot holds a TCP connection: allow as many descriptors as the hard limit does."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max(soft, 65536) if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


async def _drive(spec: dict[str, Any]) -> dict[str, Any]:
    """The driver's side of the run, driven by the parent's commands on stdin (see `arena.py`):

    - connect every bot, then print "connected N";
    - "start": the window begins; "stop": it ends, and every bot leaves the lobby right after
      its next Seated (see `_Driver.lobby`);
    - "status R": print "status R <matches in flight> <bots still in the lobby>";
    - "leave": the arena is quiet (no match running, and too few bots left in the lobby to
      fill a table): leave, finish the matches in flight, write the result, print "done".
    """
    driver = _Driver(spec)
    loop = asyncio.get_running_loop()

    async def command() -> str:
        line: str = await loop.run_in_executor(None, sys.stdin.readline)
        return line.strip() or "leave"  # end of input: the parent is gone

    by_bot = [
        [grpc.aio.insecure_channel(*target) for target in lobby_targets(driver.addresses, index)]
        for index, _ in spec["tokens"]
    ]
    channels = [channel for own in by_bot for channel in own]
    lobbies = [
        asyncio.create_task(driver.lobby(own, index, token))
        for own, (index, token) in zip(by_bot, spec["tokens"], strict=True)
    ]
    try:
        deadline = time.monotonic() + spec["connect_timeout_s"]
        while driver.connected < len(lobbies) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        print(f"connected {driver.connected}", flush=True)
        if await command() == "start":
            driver.measuring = True
            await command()  # "stop"
        driver.measuring = False
        driver.stopping.set()
        while (line := await command()).startswith("status"):
            in_lobby = sum(not task.done() for task in lobbies)
            print(f"{line} {len(driver.plays)} {in_lobby}", flush=True)
        for task in lobbies:
            task.cancel()
        await asyncio.gather(*lobbies, return_exceptions=True)
        deadline = time.monotonic() + spec["drain_s"]
        while driver.plays and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        unfinished = len(driver.plays)
        for play in list(driver.plays):
            play.cancel()
        await asyncio.gather(*list(driver.plays), return_exceptions=True)
        return driver.stats(unfinished)
    finally:
        for task in lobbies:
            task.cancel()
        await asyncio.gather(*lobbies, return_exceptions=True)
        for channel in [*channels, *driver.play_channels.values()]:
            await channel.close()


def main(argv: list[str]) -> None:
    """Entry point of a driver process: `python -m benchmarks.arena_driver SPEC.json`."""
    _raise_file_limit()
    spec = driver_spec(argv)
    stats = asyncio.run(_drive(spec))
    Path(spec["result"]).write_text(json.dumps(stats))
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv)
