"""The check of CPU clocks in a replay (replays/FORMAT.md, "CPU clocks").

A header with `cpu_clock` names the seats whose clocks charged CPU instead of wall time. Every
action line of those seats carries `cpu_ms`, and no other line does. The check replays those
seats' clocks from the header's time control: an answer accepted without a fault used no more
CPU than its limit (the per-decision time plus the bank), and a timeout came when the CPU limit
or the wall-clock backstop (`factor` × limit + `extra_ms`) had passed; the bank then follows
the referee's rules (what exceeds the per-decision time comes off the bank, the increment is
added, a timeout empties it).
"""

from __future__ import annotations

from typing import Any

from .read import is_int, stop_damage


class CpuCheck:
    """The CPU-clocked seats of one replay and their banks as the check replays them."""

    def __init__(self, header: dict[str, Any], seats: int) -> None:
        clock, tc = header.get("cpu_clock"), header["time_control"]
        backstop = clock.get("backstop") if isinstance(clock, dict) else None
        named = clock.get("seats") if isinstance(clock, dict) else None
        if not (
            isinstance(named, list)
            and named
            and all(is_int(s) and 0 <= s < seats for s in named)
            and len(set(named)) == len(named)
            and isinstance(backstop, dict)
            and all(is_int(backstop.get(k)) and backstop[k] >= 0 for k in ("factor", "extra_ms"))
        ):
            stop_damage(
                1, "has a cpu_clock that is not {seats: [distinct seats], backstop: {factor, extra_ms}}"
            )
        self.seats = frozenset(named)
        self.factor, self.extra_ms = backstop["factor"], backstop["extra_ms"]
        self.per_decision_ms, self.increment_ms = tc["per_decision_ms"], tc["increment_ms"]
        self.banks = {seat: int(tc["bank_ms"]) for seat in named}

    def problem(self, seat: int, think: int, cpu: Any, fault: dict[str, str] | None) -> str | None:
        """What is wrong with a decision's `cpu_ms` (`cpu`, None when absent), or None; the seat's
        bank moves on as the referee's did."""
        if seat not in self.seats:
            return None if cpu is None else f"has cpu_ms, but seat {seat} is not on a CPU clock"
        if not is_int(cpu) or cpu < 0:
            return f"needs a cpu_ms of 0 or more: seat {seat} is on a CPU clock"
        bank = self.banks[seat]
        limit = self.per_decision_ms + bank
        if fault is None:
            if cpu > limit:
                return f"charged {cpu} ms of CPU, over the limit of {limit} ms, without a timeout"
            over = cpu - self.per_decision_ms
            self.banks[seat] = (max(0, bank - over) if over > 0 else bank) + self.increment_ms
        elif fault.get("kind") == "timeout":
            backstop = self.factor * limit + self.extra_ms
            if cpu < limit and think < backstop:
                return (
                    f"timed out after {cpu} ms of CPU and {think} ms of wall time, within both its CPU "
                    f"limit of {limit} ms and its wall-clock backstop of {backstop} ms"
                )
            self.banks[seat] = 0
        return None
