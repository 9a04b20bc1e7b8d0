"""CPU clocks (arena/referee/cpuclock.py) on trio's mock clock: a seat with a CPU meter is charged
the CPU its bot used, not the wall time, with a wall-clock backstop; the replay records and
`replay verify` checks it. The meter here is simulated: the bot uses CPU at a chosen rate while it
thinks (the real one, a sandbox's cgroup, is tested in tests/sandbox)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import trio
from referee_bots import Bot, Played, config, play

from arena.referee.cpuclock import backstop_ms
from arena.referee.runner import MatchRunner
from arena.referee.seat import TimeControl
from arena.replay.verify import verify_bytes, verify_replay
from arena.v1 import arena_pb2 as pb


@dataclass
class CpuBot(Bot):
    """Thinks `think(n)` seconds of wall time, using `rate` cores of CPU meanwhile."""

    rate: float = 1.0
    used: float = 0.0  # CPU seconds of the decisions finished
    since: float | None = None  # when the decision in progress began

    def meter(self) -> float:
        running = 0.0 if self.since is None else (trio.current_time() - self.since) * self.rate
        return self.used + running

    async def decide(self, runner: MatchRunner, seat: int, request: pb.DecisionRequest) -> None:
        self.since = trio.current_time()
        try:
            await super().decide(runner, seat, request)
        finally:
            self.used, self.since = self.meter(), None


def metered(bot: CpuBot, seat: int = 1) -> object:
    return lambda runner: runner.clock_cpu(seat, bot.meter)


def played_with(tmp_path: Path, tc: TimeControl, bot: CpuBot) -> Played:
    return play(tmp_path, config(tc), [Bot(), bot, Bot()], prepare=metered(bot))  # type: ignore[arg-type]


def test_a_slow_machine_costs_a_cpu_clocked_bot_nothing(tmp_path: Path) -> None:
    """2 s of wall time per decision against a 1 s limit, but 0.25 s of CPU: no fault, no bank used."""
    bot = CpuBot(think=lambda n: 2.0, rate=0.125)
    played = played_with(tmp_path, TimeControl(per_decision_ms=1_000, bank_ms=500), bot)
    assert played.faults() == []
    mine = played.actions(seat=1)
    assert mine and all(line["cpu_ms"] == 250 and line["think_ms"] == 2_000 for line in mine)
    assert all("cpu_ms" not in line for line in played.actions() if line["seat"] != 1)
    assert played.runner.seats[1].bank_ms == 500
    assert played.lines[0]["cpu_clock"] == {"seats": [1], "backstop": {"factor": 3, "extra_ms": 1000}}
    assert played.runner.replay_path is not None
    replay = verify_replay(played.runner.replay_path, collect=True)
    assert replay.problem is None
    assert {d.cpu_ms for deal in replay.deals for d in deal.decisions if d.seat == 1} == {250}


def test_cpu_over_the_per_decision_limit_comes_off_the_bank_and_threads_all_count(tmp_path: Path) -> None:
    """Two threads for 0.75 s of wall time: 1.5 s of CPU per decision, 0.5 s of it over the limit."""
    bot = CpuBot(think=lambda n: 0.75, rate=2.0)
    played = played_with(tmp_path, TimeControl(per_decision_ms=1_000, bank_ms=1_200), bot)
    banks = [r.bank_ms for r in bot.requests]
    assert banks[:3] == [1_200, 700, 200]
    lines = played.actions(seat=1)
    assert [line["cpu_ms"] for line in lines[:2]] == [1_500, 1_500]
    # The third: 1.2 s of CPU allowed, used up after 0.6 s of wall time, when the referee looks.
    assert lines[2]["fault"]["kind"] == "timeout"
    assert lines[2]["fault"]["detail"] == "no answer within 1200 ms of CPU"
    assert 1_200 <= lines[2]["cpu_ms"] <= 1_400 and lines[2]["think_ms"] < 750
    assert played.runner.replay_path is not None
    assert verify_replay(played.runner.replay_path).problem is None


def test_a_bot_that_uses_no_cpu_is_stopped_by_the_wall_clock_backstop(tmp_path: Path) -> None:
    tc = TimeControl(per_decision_ms=500, bank_ms=0)
    bot = CpuBot(think=lambda n: 6.0 if n == 0 else 0.0, rate=0.0)  # sleeps through its first decision
    played = played_with(tmp_path, tc, bot)
    lines = played.actions(seat=1)
    assert lines[0]["fault"]["kind"] == "timeout"
    assert lines[0]["think_ms"] == backstop_ms(500) == 2_500
    assert lines[0]["cpu_ms"] == 0
    assert "wall-clock backstop" in lines[0]["fault"]["detail"]
    assert played.runner.replay_path is not None
    assert verify_replay(played.runner.replay_path).problem is None


def test_verify_checks_the_cpu_times_against_the_clock(tmp_path: Path) -> None:
    bot = CpuBot(think=lambda n: 0.5, rate=1.0)
    played = played_with(tmp_path, TimeControl(per_decision_ms=1_000, bank_ms=0), bot)
    assert played.faults() == [] and played.runner.replay_path is not None
    text = played.runner.replay_path.read_text()
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if '"seat":1,' in line and '"cpu_ms"' in line)

    def problem(changed: dict[str, object] | None, drop: str = "") -> str:
        edited = list(lines)
        line = json.loads(edited[first])
        line.pop(drop, None)
        line.update(changed or {})
        edited[first] = json.dumps(line, separators=(",", ":"))
        found = verify_bytes(("\n".join(edited) + "\n").encode(), "edited.jsonl").problem
        assert found is not None
        return found.message

    assert "over the limit of 1000 ms, without a timeout" in problem({"cpu_ms": 1_001})
    assert "needs a cpu_ms" in problem(None, drop="cpu_ms")
    assert "needs a cpu_ms" in problem({"cpu_ms": -1})
    # Another seat's line with a cpu_ms, and a header naming a seat that does not exist.
    other = next(i for i, line in enumerate(lines) if '"seat":0,' in line and '"type":"action"' in line)
    edited = list(lines)
    edited[other] = edited[other][:-1] + ',"cpu_ms":3}'
    found = verify_bytes(("\n".join(edited) + "\n").encode(), "edited.jsonl").problem
    assert found is not None and "seat 0 is not on a CPU clock" in found.message
    header = json.loads(lines[0])
    header["cpu_clock"]["seats"] = [7]
    edited = [json.dumps(header), *lines[1:]]
    found = verify_bytes(("\n".join(edited) + "\n").encode(), "edited.jsonl").problem
    assert found is not None and "cpu_clock" in found.message
