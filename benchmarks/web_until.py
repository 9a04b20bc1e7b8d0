"""A fixed amount of the referee's work with and without live viewers, for an instruction counter:

    valgrind --tool=callgrind --separate-threads=yes --instr-atstart=no \\
        python -m benchmarks.web_until VIEWERS DECISIONS [EVENTS_PER_TICK]

serves 4 matches to the quick bots of `python -m benchmarks server` and the web site, as `python -m benchmarks
web` does (the bots' driver and the viewers' process run outside the counter), and counts three
windows of DECISIONS decisions each: without viewers, with VIEWERS live-table streams
connected, and without them again. The viewers' clock is driven by the work, not by time (under
the counter a decision takes some fifty times as long): the next group of viewers ticks after
every EVENTS_PER_TICK events of the matches (195 by default: 3125 decisions a second, the quick
bots' rate on a quiet machine, make about 3900 events, and the ten groups tick 20 times a
second). Around each window the counter is switched on, then dumped (`callgrind_control`,
named zero1, viewers, zero2); the instructions of a dump divided by its window's decisions are
the server's instructions per decision, thread by thread. Prints each window's decisions,
events, ticks and what the viewers received, as JSON. Without valgrind it runs the same work
uncounted.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
from typing import Any

import trio

from arena.live import Hub
from arena.logs import configure
from arena.standing.store import Store
from arena.v1 import arena_pb2 as pb
from arena.web.app import Site
from arena.web.feed import ViewerClock

from .web import site_with_matches, start_viewers

MATCHES = 4
EVENTS_PER_TICK = 195


class WorkClock(ViewerClock):
    """A `ViewerClock` whose groups tick when `step` is called, not as time passes."""

    def __init__(self) -> None:
        super().__init__()
        self.ticks = 0

    async def run(self) -> None:
        await trio.sleep_forever()

    def step(self) -> None:
        self.ticks += 1
        group = self.ticks % self.groups
        # A tick's name is its time as the real clock would have it (ten groups, 0.5 s frames),
        # which is what the feed compares with its own intervals (`TABLE_S`).
        self._ticks[group] = self.ticks * self.frame_s / self.groups
        self._lots[group].unpark_all()


class Ticker:
    """One more spectator of each match (after the site's feed): every `every` events of all
    the matches, the next group of viewers ticks."""

    open = True

    def __init__(self, clock: WorkClock, every: int) -> None:
        self.clock = clock
        self.every = every
        self.events = 0

    def send(self, message: Any) -> None:
        if isinstance(message, pb.Event):
            self.events += 1
            if self.events % self.every == 0:
                self.clock.step()

    def close(self, code: Any = None, details: str = "") -> None:
        pass


async def _callgrind(*args: str) -> None:
    """Tell this process's callgrind (if it runs under one) to do something; else nothing."""
    with contextlib.suppress(FileNotFoundError):  # valgrind is not installed
        await trio.run_process(
            ["callgrind_control", *args, str(os.getpid())],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )


async def web_until(viewers: int, decisions: int, every: int = EVENTS_PER_TICK) -> list[dict[str, Any]]:
    clock = WorkClock()
    ticker = Ticker(clock, every)

    def make_site(hub: Hub, store: Store) -> Site:
        site = Site(hub, store, ping_s=1e9)  # no keep-alives: the matches never wait
        site.clock = clock
        hub.match_watchers.append(lambda runner: runner.spectators.append(ticker))
        return site

    async with site_with_matches(MATCHES, make_site, "arena-web-until-") as (runners, http_port, tmp):

        def made() -> int:
            return sum(r.decisions for r in runners)

        async def window(label: str) -> dict[str, Any]:
            start = made()
            while made() < start + decisions // 10:  # warm up, uncounted
                await trio.sleep(0.02)
            await _callgrind("-i", "on")
            first, events, ticks = made(), ticker.events, clock.ticks
            while made() < first + decisions:
                await trio.sleep(0.02)  # rarely: a count of work, not of waiting
            await _callgrind("-d", label)
            await _callgrind("-i", "off")
            done = {"decisions": made() - first, "events": ticker.events - events}
            return {"window": label, **done, "ticks": clock.ticks - ticks}

        windows = [await window("zero1")]
        paths = [f"/api/matches/{runners[i % MATCHES].match_id}/live" for i in range(viewers)]
        process, lines = await start_viewers(http_port, paths, tmp)
        assert process.stdin is not None
        windows.append(await window("viewers"))
        await process.stdin.send_all(b"stop\n")
        windows[-1]["received"] = json.loads(await lines.next())
        await process.wait()
        windows.append(await window("zero2"))
    return windows


if __name__ == "__main__":
    configure(logging.WARNING)
    every = int(sys.argv[3]) if len(sys.argv) > 3 else EVENTS_PER_TICK
    print(json.dumps(trio.run(web_until, int(sys.argv[1]), int(sys.argv[2]), every)))
