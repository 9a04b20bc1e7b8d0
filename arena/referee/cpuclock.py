"""Clocks that charge CPU time instead of wall time, for seats whose bot runs where the server can
measure its CPU (a sandbox of arena.sandbox: its cgroup's CPU time).

A seat with a CPU meter (`Seat.cpu_meter`: a callable returning the seconds of CPU its bot has used
so far) is charged, for each decision, the CPU its bot used between the request and the answer,
against the same per-decision limit, bank and increment as a wall clock. A busy machine or a noisy
neighbour then costs the bot nothing, and a bot that thinks on several threads pays for all of them.
A bot that does not use CPU (it sleeps, or waits on something) is still ended by a wall-clock
backstop: `BACKSTOP_FACTOR` times the decision's CPU limit, plus `BACKSTOP_EXTRA_MS`.

The referee cannot be told when the CPU limit passes, so it looks: first when the limit would be
reached at one full core, then again at most every `RECHECK_S` (a quota of more than one core can
use the rest sooner). An answer that arrives with its CPU over the limit is a timeout too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

BACKSTOP_FACTOR = 3
BACKSTOP_EXTRA_MS = 1000
RECHECK_S = 0.1
MIN_RECHECK_S = 0.002

CpuMeter = Callable[[], float]
"""The CPU time, in seconds, that a seat's bot has used so far (any origin: only differences count)."""


def backstop_ms(limit_ms: int) -> int:
    """The wall time after which a CPU-clocked decision times out whatever CPU it used."""
    return BACKSTOP_FACTOR * limit_ms + BACKSTOP_EXTRA_MS


class CpuClock:
    """One decision's CPU clock: started when the request is sent."""

    __slots__ = ("backstop", "limit_s", "meter", "start")

    def __init__(self, meter: CpuMeter, limit_ms: int, wall_start: float) -> None:
        self.meter = meter
        self.limit_s = limit_ms / 1000
        self.start = meter()
        self.backstop = wall_start + backstop_ms(limit_ms) / 1000

    def used_s(self) -> float:
        return self.meter() - self.start

    def used_ms(self) -> int:
        """The CPU used so far, in whole ms (rounded down, as wall think times are); never below 0
        (a meter replaced in the middle, a bot's new process, starts again from its own 0)."""
        return max(0, int(self.used_s() * 1000))

    def over(self, now: float) -> bool:
        """Whether the decision has used up its CPU limit or reached the wall-clock backstop."""
        return now >= self.backstop or self.used_s() >= self.limit_s

    def next_look(self, now: float) -> float:
        """When to look at the meter again (trio time)."""
        left = self.limit_s - self.used_s()
        return min(self.backstop, now + min(max(left, MIN_RECHECK_S), RECHECK_S))


def cpu_clock_header(seats: list[int]) -> dict[str, Any]:
    """The replay header's `cpu_clock` (replays/FORMAT.md), only when some seat is on a CPU clock."""
    if not seats:
        return {}
    return {
        "cpu_clock": {"seats": seats, "backstop": {"factor": BACKSTOP_FACTOR, "extra_ms": BACKSTOP_EXTRA_MS}}
    }


def late_detail(limit_ms: int, clock: CpuClock | None, now: float) -> str:
    """A timeout fault's detail."""
    if clock is None:
        return f"no answer within {limit_ms} ms"
    if now >= clock.backstop:
        return f"no answer within {limit_ms} ms of CPU, nor within the wall-clock backstop"
    return f"no answer within {limit_ms} ms of CPU"
