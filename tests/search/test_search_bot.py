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
