"""Numbers beyond 32 and 64 bits: Danish pots double at each failed ultimo (DK-END-3, AMB-07).

A real match on a real server, over gRPC, whose bots fail their ultimos on purpose until the
pots, a deal's delta and the scores pass 2**31: the bots receive exactly what the replay holds,
and the replay verifies. Beyond int64 the referee ends the match, aborted, with its reason,
rather than send a wrapped number (arena/referee/limits.py).
"""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from referee_bots import Bot, config
from referee_bots import play as play_in_memory
from support import BOTS
from support.server import config as server_config
from support.server import read_replay
from support.ultimo import choose_code

from arena.engine import DealState, deck_for, find_variant
from arena.live import Hub
from arena.protocol import INT64_MAX, _encode_varint
from arena.referee.position import PositionRunner
from arena.referee.runner import MatchRunner
from arena.referee.seat import TimeControl
from arena.replay.show import render
from arena.replay.table import public_view, table_state
from arena.replay.verify import verify_bytes, verify_replay
from arena.server.local import play_matches
from arena.standing.results import pending_record
from arena.standing.state import ArenaMatch
from arena.v1 import arena_pb2 as pb

# Found with the engine: with these bots, seed 38 of `danish` passes 2**31 in its pot, in one
# seat's score and in one deal's delta within 54 dealer turns.
SEED, DEALS = 38, 54
INT32_MAX = 2**31 - 1
TC = TimeControl(per_decision_ms=2_000, bank_ms=4_000)


@pytest.fixture(scope="module")
def played(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[dict[str, Any]], list[list[dict[str, Any]]]]:
    tmp = tmp_path_factory.mktemp("int64")
    cfg = server_config("danish", deals=DEALS, seed=SEED)
    records = [tmp / f"seat{seat}.jsonl" for seat in range(3)]
    bot = shlex.quote(sys.executable) + " " + shlex.quote(str(BOTS / "ultimo_bot.py"))
    commands = [f"env RECORD={shlex.quote(str(path))} {bot}" for path in records]
    [result] = trio.run(play_matches, [(cfg, commands)], tmp)
    assert result.runner.replay_path is not None
    seen = [[json.loads(line) for line in path.read_text().splitlines()] for path in records]
    return result.runner.replay_path, read_replay(result.runner.replay_path), seen


def test_pots_scores_and_deltas_beyond_int32_reach_the_bots_exactly_and_the_replay_verifies(
    played: tuple[Path, list[dict[str, Any]], list[list[dict[str, Any]]]],
) -> None:
    path, lines, seen = played
    assert verify_replay(path).ok
    deals = [line for line in lines if line["type"] == "deal"]
    starts = [line for line in lines if line["type"] == "deal_start"]
    end = lines[-1]
    assert end["type"] == "match_end" and end["termination"] == "completed"
    # The numbers did leave int32: a pot, a seat's score, a deal's delta.
    assert max(v for line in starts for v in line["pots"].values()) > INT32_MAX
    assert min(s for line in deals for s in line["scores"]) < -INT32_MAX
    assert max(abs(d) for line in deals for d in line["record"]["result"]["deltas"]) > INT32_MAX
    for records in seen:  # every seat was told every number exactly
        ended = [r for r in records if r["kind"] == "deal_ended"]
        assert [r["scores"] for r in ended] == [line["scores"] for line in deals]
        assert [r["deltas"] for r in ended] == [line["record"]["result"]["deltas"] for line in deals]
        assert [r["pots"] for r in ended] == [line["record"]["result"]["pots"] for line in deals]
        started = [r for r in records if r["kind"] == "deal_started"]
        assert [r["pots"] for r in started] == [line["pots"] for line in starts]
        views = {r["deal"]: r["pots"] for r in records if r["kind"] == "view"}
        assert views and all(views[d] == starts[d]["pots"] for d in views)
        [match_end] = [r for r in records if r["kind"] == "match_end"]
        assert match_end == {
            "kind": "match_end",
            "scores": end["scores"],
            "termination": "completed",
            "reason": "",
        }


def test_verify_refuses_an_aborted_end_when_no_number_left_int64(
    played: tuple[Path, list[dict[str, Any]], list[list[dict[str, Any]]]],
) -> None:
    path, lines, _ = played
    text = path.read_text().splitlines()
    end = dict(lines[-1], termination="aborted", reason="made up")
    replay = verify_bytes(("\n".join([*text[:-1], json.dumps(end)]) + "\n").encode(), "forged.jsonl")
    assert replay.problem is not None and "aborted" in str(replay.problem)


def _failing_ultimos(request: pb.DecisionRequest, n: int) -> list[pb.Action]:
    legal = list(request.legal_actions)
    return [legal[choose_code([a.type for a in legal], [a.card for a in legal], list(request.view.hand))]]


def test_a_match_whose_numbers_leave_int64_ends_aborted_and_its_replay_verifies(tmp_path: Path) -> None:
    """Found with the engine: seed 32 of `danish` leaves int64 after deal 138 with these bots."""
    bots = [Bot(answers=_failing_ultimos) for _ in range(3)]
    played = play_in_memory(tmp_path, config(TC, variant="danish", deals=200, seed=32), bots)
    runner = played.runner
    assert runner.termination == "aborted" and runner.abort_reason.startswith("after deal 138, ")
    replay = verify_replay(runner.replay_path, collect=True)  # type: ignore[arg-type]
    assert replay.ok, replay.problem
    shown = io.StringIO()
    render(replay, shown, deal=138)
    render(replay, shown)  # `arena replay show`: the reason at the end, no pot split
    assert shown.getvalue().endswith(
        f"match aborted\n  {runner.abort_reason}\n  final scores {' '.join(map(str, played.end['scores']))}\n"
    )
    deals = played.of_type("deal")
    assert len(deals) == 139 and played.end["reason"] == runner.abort_reason
    last = [
        *deals[-1]["scores"],
        *deals[-1]["record"]["result"]["deltas"],
        *deals[-1]["record"]["result"]["pots"].values(),
    ]
    assert max(abs(v) for v in last) > INT64_MAX
    for bot in bots:  # every deal that fit was told, exactly; the last was not
        ended = [
            e.deal_ended for m in bot.link.of_kind("events") for e in m.events if e.HasField("deal_ended")
        ]
        ended += [e.deal_ended for r in bot.requests for e in r.events if e.HasField("deal_ended")]
        assert sorted(list(e.scores) for e in ended) == sorted(line["scores"] for line in deals[:-1])
        [end] = bot.link.of_kind("match_end")
        assert (end.termination, end.reason, list(end.scores)) == ("aborted", runner.abort_reason, [])


def test_a_pot_beyond_int64_ends_the_match_aborted_with_its_reason_never_wrapped(tmp_path: Path) -> None:
    def huge_pots(runner: MatchRunner) -> None:
        for pot in runner.match.pots:  # one dealer's stake more and the pot no longer fits
            runner.match.pots[pot] = INT64_MAX - 1

    played = play_in_memory(tmp_path, config(TC, variant="danish", deals=3), [Bot(), Bot(), Bot()], huge_pots)
    runner = played.runner
    assert runner.termination == "aborted" and runner.state.value == "finished"
    reason = runner.abort_reason
    assert reason.startswith("after deal 0, the ") and "beyond int64" in reason
    # Deal 0 is kept in the replay, exact; no further deal started.
    [deal] = played.of_type("deal")
    assert max(deal["record"]["result"]["pots"].values()) + INT64_MAX - 1 > INT64_MAX
    assert [line["deal"] for line in played.of_type("deal_start")] == [0]
    end = played.end
    assert end["termination"] == "aborted" and end["reason"] == reason
    assert end["pot_split"] is None and end["scores"] == deal["scores"]
    for bot in played.bots:
        [message] = bot.link.of_kind("match_end")
        assert (message.termination, message.reason, list(message.scores)) == ("aborted", reason, [])
        events = [e for m in bot.link.of_kind("events") for e in m.events]
        events += [e for r in bot.requests for e in r.events]
        assert any(e.HasField("deal_started") for e in events)
        assert not any(e.HasField("deal_ended") for e in events)  # its numbers did not fit
    hub = Hub(tmp_path, None)  # type: ignore[arg-type] (ListMatches needs no nursery)
    hub.matches[runner.match_id] = runner
    [info] = hub.list_matches()
    assert (info.state, list(info.scores)) == ("finished", [])


@pytest.mark.parametrize("value", [INT64_MAX + 1, -(2**63) - 1, 2**64])
def test_the_hand_built_encoder_refuses_a_number_beyond_int64(value: int) -> None:
    with pytest.raises(ValueError, match="does not fit a protobuf int64"):
        _encode_varint(value)
    assert _encode_varint(INT64_MAX) == b"\xff" * 8 + b"\x7f"
    assert _encode_varint(-1) == b"\xff" * 9 + b"\x01"


def test_the_pages_get_numbers_beyond_2_53_as_decimal_strings() -> None:
    """JavaScript numbers round above 2**53: the table state writes such a score or pot as text."""
    variant = find_variant("danish")
    pots = {"king": 2**53, "pagat": 2**53 - 1}
    state = DealState(variant, 0, deck_for(1, 0), pots=pots)
    table = table_state(public_view(state), ["a", "b", "c"], scores=[-(2**60), 5, 2**53 - 1])
    assert [seat["score"] for seat in table["seats"]] == [str(-(2**60)), 5, 2**53 - 1]
    assert {p["name"]: p["amount"] for p in table["pots"]} == {"king": str(2**53), "pagat": 2**53 - 1}


def test_the_standing_arena_records_such_a_match_aborted_with_its_reason(tmp_path: Path) -> None:
    def huge_pots(runner: MatchRunner) -> None:
        runner.match.pots["king"] = runner.match.pots["pagat"] = INT64_MAX - 1

    played = play_in_memory(tmp_path, config(TC, variant="danish"), [Bot(), Bot(), Bot()], huge_pots)
    record = pending_record(ArenaMatch(played.runner, ["a", "b", "c"], []), 1)
    assert (record.kind, record.reason) == ("abort", played.runner.abort_reason)
    assert "beyond int64" in record.reason


def test_a_position_with_a_pot_beyond_int64_is_refused_with_a_clear_error() -> None:
    variant = find_variant("danish")
    fits = DealState(variant, 0, deck_for(1, 0), pots={"king": INT64_MAX, "pagat": 0})
    PositionRunner(variant, fits.current_player, [fits])  # the largest int64 is sent as it is
    state = DealState(variant, 0, deck_for(1, 0), pots={"king": INT64_MAX + 1, "pagat": 0})
    with pytest.raises(ValueError, match=f"position 0: pots beyond int64: king {INT64_MAX + 1}"):
        PositionRunner(variant, state.current_player, [state])
