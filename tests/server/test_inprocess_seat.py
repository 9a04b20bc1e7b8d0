"""In-process seats against bot processes: a bot of the Python SDK that raises, exits, answers
wrongly or overruns its clock leaves the same fault and replay lines in the referee's process as
the same bot does as a process over gRPC (a real server on 127.0.0.1, real bot processes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from support import BOTS
from support.inprocess import normalised

from arena.engine import find_variant
from arena.referee.runner import YIELD_AFTER_S, MatchConfig, MatchRunner
from arena.referee.seat import TimeControl
from arena.server.inprocess import InProcessError, load_bot, seat_inprocess
from arena.server.local import EXAMPLE_BOTS, play_match
from arena.v1 import arena_pb2 as pb

FAULTY = BOTS / "sdk_faults_bot.py"
HEURISTIC = EXAMPLE_BOTS["heuristic"]


def play(bots: list[str], directory: Path) -> tuple[list[Any], list[int | None]]:
    config = MatchConfig(
        find_variant("grosstarock"),
        deals=1,
        seed=21,
        seat_names=("faulty", "heuristic", "heuristic-2"),
        time_control=TimeControl(per_decision_ms=1000, bank_ms=0),
    )
    played = trio.run(play_match, config, bots, directory)
    assert played.runner.replay_path is not None
    return normalised(played.runner.replay_path), played.exit_codes


@pytest.mark.parametrize("behaviour", ["Raise", "Exit", "Wrong", "WrongOnce", "Overrun"])
def test_an_inprocess_bot_faults_as_its_process_does(behaviour: str, tmp_path: Path) -> None:
    process = f"{HEURISTIC.split()[0]} {FAULTY} {behaviour}"  # this Python, the SDK's bot script
    over_grpc, codes = play([process, HEURISTIC, HEURISTIC], tmp_path / "grpc")
    inprocess, in_codes = play(
        [f"inprocess:{FAULTY}:{behaviour}", "inprocess:heuristic", "inprocess:heuristic"], tmp_path / "in"
    )
    assert inprocess == over_grpc
    assert in_codes == codes
    actions = [a for line in inprocess if line["type"] == "deal" for a in line["record"]["actions"]]
    kinds = {a["fault"]["kind"] for a in actions if "fault" in a}
    expected = {"Raise": {"crash"}, "Exit": {"crash"}, "Wrong": {"illegal"}, "Overrun": {"timeout"}}
    assert kinds == expected.get(behaviour, set())
    crashed = [line for line in inprocess if line["type"] == "connection" and line["event"] == "crashed"]
    if behaviour in ("Raise", "Exit"):
        status = 1 if behaviour == "Raise" else 3
        assert [line["detail"] for line in crashed] == [f"the bot process exited with status {status}"]
        logs = "".join(p.read_text() for p in (tmp_path / "in" / "bot-logs").iterdir())
        assert ("RuntimeError: a bug in the bot" in logs) == (behaviour == "Raise")  # its traceback
    else:
        assert crashed == []


def test_a_spec_names_an_example_a_class_or_fails_in_one_line() -> None:
    bot = load_bot("inprocess:heuristic")
    assert bot.hello_name == "heuristic"
    assert load_bot(f"inprocess:{FAULTY}:Raise").hello_name == "faulty"
    with pytest.raises(InProcessError, match="no 'Nothing'"):
        load_bot(f"inprocess:{FAULTY}:Nothing")
    with pytest.raises(InProcessError, match="cannot import"):
        load_bot("inprocess:no_such_bot_module")


def test_a_match_of_in_process_bots_lets_the_other_tasks_of_its_process_run(tmp_path: Path) -> None:
    """Its decisions never wait (the answer is there when the referee looks), so the match yields
    on its own once `YIELD_AFTER_S` has passed: with bots slower than that, a task beside it
    runs between its decisions, as other matches and the server of the referee process must."""
    slow = load_bot(f"inprocess:{FAULTY}:Slow")
    assert sys.modules[slow.target.__module__].SLOW_S > YIELD_AFTER_S
    config = MatchConfig(
        find_variant("grosstarock"),
        deals=1,
        seed=21,
        seat_names=("a", "b", "c"),
        time_control=TimeControl(per_decision_ms=1000, bank_ms=0),
    )

    async def main() -> tuple[set[int], int]:
        runner = MatchRunner("yielding", config, tmp_path)
        for seat in range(3):
            seat_inprocess(runner, seat, slow, "")
        seen: set[int] = set()  # the match's decision counts the task beside it saw

        async def beside() -> None:
            while True:
                seen.add(runner.decisions)
                await trio.lowlevel.checkpoint()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(beside)
            await runner.run()
            nursery.cancel_scope.cancel()
        return seen, runner.decisions

    seen, decisions = trio.run(main)
    assert decisions > 50
    # It ran at every yield, once a decision; trio runs the two in either order each time, so
    # it saw at least every other count (without the yields: the first and the last).
    assert len(seen) >= decisions // 2


HUGE_BOT = """
from arena_bot.v1 import arena_pb2

class Huge:
    def decide(self, request):
        return arena_pb2.Action(type="play", card="S" * 20_000)
"""


def test_an_oversized_answer_of_an_in_process_bot_is_judged_as_its_message_would_be(tmp_path: Path) -> None:
    """An answer too large for a bot's message is the same protocol fault as the `BotMessage`
    carrying it (its size counted with the request id and the nesting), and the seat's link ends."""
    (tmp_path / "huge.py").write_text(HUGE_BOT)
    huge, other = load_bot("inprocess:huge.py:Huge", tmp_path), load_bot("inprocess:random")
    config = MatchConfig(
        find_variant("grosstarock"),
        deals=1,
        seed=5,
        seat_names=("huge", "b", "c"),
        time_control=TimeControl(per_decision_ms=1000, bank_ms=0),
        reconnect_grace_s=0.0,
    )

    async def main() -> MatchRunner:
        runner = MatchRunner("huge", config, tmp_path)
        for seat, bot in enumerate((huge, other, other)):
            seat_inprocess(runner, seat, bot, "")
        await runner.run()
        return runner

    runner = trio.run(main)
    assert runner.replay_path is not None
    lines = [json.loads(text) for text in runner.replay_path.read_text().splitlines()]
    message = pb.BotMessage()
    message.action.request_id = 1  # an early request's id: one byte, as the huge bot's first one
    message.action.action.CopyFrom(pb.Action(type="play", card="S" * 20_000))
    faults = [line for line in lines if line["type"] == "fault"]
    assert faults[0]["seat"] == 0 and faults[0]["kind"] == "protocol"
    assert faults[0]["detail"] == f"a message of {message.ByteSize()} bytes (the limit is 16384)"
    assert runner.seats[0].link is None  # its stream ended
