"""The SDK's search bot (clients/python/arena_bot/search_bot.py): legal, seeded, seated by `arena play`.

Its requests are made exactly as the referee makes them (`protocol.ViewEncoder`,
`protocol.request_message`: the wire bytes), so the bot sees what a seat is sent and nothing
else; the engine then applies its answer, which raises on an illegal action.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "clients" / "python"))

import pytest
from arena_bot.match import action_text
from arena_bot.search_bot import SearchBot, observation
from arena_bot.v1 import arena_pb2 as pb

from arena.engine import VARIANT_NAMES, Action, DealState, deck_for, find_variant
from arena.engine import observation as engine_observation
from arena.protocol import ViewEncoder, request_message

# CI plays 40 deals a variant; ARENA_SEARCH_LEGAL_DEALS=1000 is the long run the docs cite.
DEALS_PER_VARIANT = int(os.environ.get("ARENA_SEARCH_LEGAL_DEALS", "40"))


def _request(state: DealState, seat: int, deal: int = 0, time_limit_ms: int = 0) -> pb.DecisionRequest:
    view = ViewEncoder(state).view(seat)
    wire = request_message(1, deal, view, state.legal_actions(), time_limit_ms, 0, [])
    return pb.ServerMessage.FromString(wire).request


def _play(variant: str, seed: int, bot: SearchBot, seats: set[int]) -> list[int]:
    """One deal with the bot in `seats` and random play elsewhere; the deltas."""
    v = find_variant(variant)
    rng = random.Random(seed)
    state = DealState(v, seed % v.seats, deck_for(seed, 0))
    while not state.is_terminal():
        seat = state.turn
        assert seat is not None
        if seat in seats:
            answer = action_text(bot.decide(_request(state, seat, seed)))
            state.apply(Action.parse(answer))  # raises IllegalActionError on an illegal answer
        else:
            state.apply(rng.choice(state.legal_actions()))
    return list(state.result().deltas)


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_the_bot_only_plays_legal_actions(variant: str) -> None:
    bot = SearchBot(iterations=1, seed="legal")
    for seed in range(DEALS_PER_VARIANT):
        _play(variant, seed, bot, {seed % find_variant(variant).seats})
    assert bot.fallbacks == 0  # every decision was searched on sampled deals, none fell back


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_the_request_becomes_the_seats_observation(variant: str) -> None:
    v = find_variant(variant)
    rng = random.Random(4)
    state = DealState(v, 1 % v.seats, deck_for(4, 0))
    while not state.is_terminal():
        seat = state.turn
        assert seat is not None
        expected = engine_observation(state, seat)
        assert observation(_request(state, seat)) == expected
        state.apply(rng.choice(state.legal_actions()))


def test_the_same_seed_plays_the_same_deal() -> None:
    deltas = [_play("grosstarock", 5, SearchBot(iterations=2, seed="x"), {0, 1, 2}) for _ in range(2)]
    assert deltas[0] == deltas[1]


def test_the_budget_follows_the_clock() -> None:
    bot = SearchBot(think_ms=1000)
    request = pb.DecisionRequest(time_limit_ms=0)
    assert bot.budget_ms(request) == 1000  # no clock: the bot's own budget
    request = pb.DecisionRequest(time_limit_ms=10_000 + 60_000, bank_ms=60_000)
    assert bot.budget_ms(request) == 1000  # plenty of time
    request = pb.DecisionRequest(time_limit_ms=500, bank_ms=0)
    assert bot.budget_ms(request) < 500 * 0.6  # a short clock: a margin is kept
    request = pb.DecisionRequest(time_limit_ms=3_000, bank_ms=3_000)
    assert bot.budget_ms(request) < 3_000 / 10  # only the bank left: spread over the decisions ahead
    assert bot.budget_ms(request) == 1.0  # 3000 / 30 is less than the margin: the least there is
    bot.on_match_start(pb.MatchStart(time_control=pb.TimeControl(increment_ms=500)))
    assert bot.budget_ms(request) == 3_000 / 30 + 0.8 * 500 - 150  # the increment comes back each answer


def test_arena_play_seats_the_search_bot(tmp_path: Path) -> None:
    bots = ["--bot", "search", "--bot", "heuristic", "--bot", "random"]
    match = ["--variant", "danish", "--deals", "1", "--seed", "3", "--per-decision-ms", "3000"]
    out = subprocess.run(
        [sys.executable, "-m", "arena", "play", *match, *bots, "--replay-dir", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "ARENA_THINK_MS": "100"},
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["termination"] == "completed"
    assert result["seats"][0]["bot_name"] == "search"
    assert result["faults"] == [0, 0, 0]
    assert all(seat["rejected"] == 0 for seat in result["seats"])


def test_bench_bot_prints_its_rates() -> None:
    bench = ["bench", "bot", "--variant", "german-1754", "--seconds", "0.2", "--think-ms", "20", "--json"]
    out = subprocess.run(
        [sys.executable, "-m", "arena", *bench],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    measured = json.loads(out.stdout)
    assert measured["build"] in ("compiled", "pure")
    (row,) = measured["variants"]
    assert row["variant"] == "german-1754"
    for key in ("samples_per_s", "copies_per_s", "rollouts_per_s", "decisions_per_s"):
        assert row[key] > 0
    assert row["samples_per_decision"] >= 1


def test_bench_strength_pairs_the_bots_by_complete_deal_set(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from arena.ladder.store import MatchRecord, Store
    from arena.replay.summary import DealRow

    bots = [SimpleNamespace(name=n, remote=False, command=n) for n in ("search", "heuristic", "random")]
    store = Store.open(tmp_path / "s.sqlite", "s", {"variant": "danish"}, bots)
    # Two arrangements per deal set; search's edge over heuristic is 10, 20, 30 per deal.
    plan = {0: 10, 1: 20, 2: 30, 3: 1000}
    for deal_set, edge in plan.items():
        arrangements = [("search", "heuristic", "random"), ("heuristic", "random", "search")]
        for k, seats in enumerate(arrangements[: 1 if deal_set == 3 else 2]):  # deal set 3 is incomplete
            points = [{"search": edge, "heuristic": 0, "random": -edge}[bot] for bot in seats]
            store.record(
                MatchRecord(
                    key=f"{deal_set}:{k}",
                    deal_set=deal_set,
                    table=0,
                    arrangement=k,
                    seed=deal_set,
                    seats=list(seats),
                    match_id=f"{deal_set:08d}{k:08d}",
                    termination="completed",
                    forfeited=None,
                    scores=points,
                    decisions=3,
                    started=0.0,
                    finished=1.0,
                    replay=None,
                    deals=[DealRow(0, points, [26, 26, 26], False, [True] * 3)],
                    exits=[(0, False)] * 3,
                ),
                {},
            )
    store.close()
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text("search: 10 decisions searched, 100 ms mean, 400 ms max\n")
    (logs / "b.log").write_text("noise\nsearch: 30 decisions searched, 200 ms mean, 900 ms max\n")
    bench = ["bench", "strength", str(tmp_path / "s.sqlite"), "--logs", str(logs), "--json"]
    out = subprocess.run(
        [sys.executable, "-m", "arena", *bench],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)
    assert row["variant"] == "danish" and row["deal_sets"] == 3 and row["deals"] == 6
    assert row["diff_per_deal"] == 20.0
    assert row["ci95"] == round(4.303 * 10 / 3**0.5, 2)  # t(2) · sd 10 / √3
    assert row["points_per_deal"] == {"heuristic": 0.0, "random": -20.0, "search": 20.0}
    assert row["decisions_searched"] == 40 and row["ms_per_decision_mean"] == 175.0
    assert row["ms_per_decision_max"] == 900.0
