"""Worlds drawn from a seat's view, in the OpenSpiel game and the bridge: one sampler, no peeking.

The OpenSpiel game's `resample_from_infostate` and the bridge's OpenSpiel bots draw their worlds
with the search layer's `Sampler`. A world must look the same to the seat (the same information
state, the same legal actions); when none is found the call raises, and never hands back the real
deal's hidden cards. The bridge plays a random legal action then, counts it and logs it. Requests
are made as the referee makes them (`protocol.ViewEncoder`, `protocol.request_message`).

Needs the `rl` extra (``pip install -e '.[rl]'``, as CI installs it).
"""

from __future__ import annotations

import json
import os
import random
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from arena_bot.v1 import arena_pb2 as pb  # noqa: E402
from structlog.testing import capture_logs  # noqa: E402

from arena.engine import Action, DealState, deck_for, find_variant  # noqa: E402
from arena.protocol import ViewEncoder, request_message  # noqa: E402
from arena.research import bridge, openspiel  # noqa: E402
from arena.search import NoConsistentDeal, Sampler  # noqa: E402


def _request(state: DealState, deal: int = 0) -> pb.DecisionRequest:
    seat = state.turn
    assert seat is not None
    view = ViewEncoder(state).view(seat)
    wire = request_message(1, deal, view, state.legal_actions(), 0, 0, [])
    return pb.ServerMessage.FromString(wire).request


def _dealt(game: Any, seed: int) -> Any:
    state = game.new_initial_state()
    for action in openspiel.deck_actions(deck_for(seed, 0)):
        state.apply_action(action)
    return state


def _hidden(state: Any, player: int) -> list[list[int]]:
    """The other seats' hands: what `player` must not learn from a sample."""
    assert state.deal is not None
    return [sorted(int(c) for c in h) for s, h in enumerate(state.deal.hands) if s != player]


def _uniform() -> Any:
    return pyspiel.UniformProbabilitySampler(0.0, 1.0)


# ------------------------------------------------------------------------------ the game's resampling


@pytest.mark.parametrize("variant", ["grosstarock", "german-1754", "danish", "american"])
def test_resampled_worlds_look_the_same_to_the_seat(variant: str) -> None:
    """At every decision of random deals, a resampled world gives the seat the same information
    state (what ISMCTS keys its nodes on) and the same legal actions, and its hidden hands are
    drawn, not copied: they differ from the real ones wherever the seat cannot know them."""
    game = pyspiel.load_game(openspiel.GAME_NAME, {"variant": variant})
    rng = random.Random(5)
    asked = differ = 0
    for seed in range(3):
        state = _dealt(game, seed)
        while not state.is_terminal():
            player = state.current_player()
            world = state.resample_from_infostate(player, _uniform())
            asked += 1
            assert world.information_state_string(player) == state.information_state_string(player)
            assert world.legal_actions() == state.legal_actions()
            assert world is not state
            differ += _hidden(world, player) != _hidden(state, player)
            state.apply_action(rng.choice(state.legal_actions()))
    assert asked > 100
    assert differ > asked * 0.8  # the same hidden hands only late in a deal, when few cards are left


def test_announcement_decisions_are_resampled_without_failure() -> None:
    """Grosstarock's announcement decisions, where the old world drawer failed most often: every
    one gets worlds, each consistent with the seat's information and none the real deal's."""
    game = pyspiel.load_game(openspiel.GAME_NAME, {"variant": "grosstarock"})
    rng = random.Random(11)
    announce = 0
    for seed in range(40):
        state = _dealt(game, seed)
        while not state.is_terminal():
            player = state.current_player()
            if state.deal.phase == "announce":
                announce += 1
                truth = _hidden(state, player)
                for _ in range(3):
                    world = state.resample_from_infostate(player, _uniform())
                    assert world.information_state_string(player) == state.information_state_string(player)
                    assert _hidden(world, player) != truth
            state.apply_action(rng.choice(state.legal_actions()))
    assert announce >= 20


def test_a_failed_resampling_raises_and_never_returns_the_hidden_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When sampling fails (no tries allowed here, as when a view is too hard), the call raises
    `NoConsistentDeal`: the true hands are never handed out as a sample."""
    game = pyspiel.load_game(openspiel.GAME_NAME, {"variant": "danish"})
    state = _dealt(game, 4)
    rng = random.Random(3)
    for _ in range(30):
        state.apply_action(rng.choice(state.legal_actions()))
    player = state.current_player()
    monkeypatch.setattr(openspiel, "SAMPLE_TRIES", 0)
    with pytest.raises(NoConsistentDeal):
        state.resample_from_infostate(player, _uniform())

    def refuse(self: Sampler, rng: random.Random) -> DealState:
        raise NoConsistentDeal("refused")

    monkeypatch.setattr(openspiel, "SAMPLE_TRIES", 20000)
    monkeypatch.setattr(Sampler, "sample", refuse)
    with pytest.raises(NoConsistentDeal):
        state.resample_from_infostate(player, _uniform())


def test_resampling_while_dealing_deals_other_cards() -> None:
    """Before the deck is dealt a seat has seen nothing: a resampled state deals as many cards,
    drawn at random."""
    game = pyspiel.load_game(openspiel.GAME_NAME, {"variant": "grosstarock"})
    state = game.new_initial_state()
    for action in openspiel.deck_actions(deck_for(1, 0))[:40]:
        state.apply_action(action)
    world = state.resample_from_infostate(0, _uniform())
    assert len(world.deck) == 40 and len(set(world.deck)) == 40 and world.deck != state.deck


# ------------------------------------------------------------------------------ the bridge's OpenSpiel bots


def _play(bot: bridge.OpenSpielBot, variant: str, seed: int, seats: set[int]) -> list[str]:
    """One deal with `bot` in `seats` and random play elsewhere; the bot's answers."""
    v = find_variant(variant)
    rng = random.Random(seed)
    state = DealState(v, seed % v.seats, deck_for(seed, 0))
    answers: list[str] = []
    while not state.is_terminal():
        if state.turn in seats:
            answer = bot.decide(_request(state, seed))
            answers.append(answer)
            state.apply(Action.parse(answer))  # raises IllegalActionError on an illegal answer
        else:
            state.apply(rng.choice(state.legal_actions()))
    return answers


def test_the_bridge_counts_and_logs_every_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """With sampling made to fail, every decision with a choice falls back to a random legal
    action: each is counted by reason and logged as `bridge_fallback`; the match's end logs the
    totals."""
    monkeypatch.setattr(openspiel, "SAMPLE_TRIES", 0)
    bot = bridge.OpenSpielBot("ismcts", simulations=4, worlds=2, seed="1")
    with capture_logs() as logs:
        answers = _play(bot, "grosstarock", 2, {0})
        bot.on_match_end(pb.MatchEnd())
    fallbacks = [e for e in logs if e["event"] == "bridge_fallback"]
    assert answers and bot.decisions > 5
    assert bot.fallbacks == {"no_world": bot.decisions}
    assert len(fallbacks) == bot.decisions
    assert all(e["reason"] == "no_world" and e["log_level"] == "warning" for e in fallbacks)
    assert [e["count"] for e in fallbacks] == list(range(1, bot.decisions + 1))
    assert {e["played"] for e in fallbacks} <= set(answers)
    (end,) = [e for e in logs if e["event"] == "bridge_match_end"]
    assert end["fallbacks"] == {"no_world": bot.decisions} and end["decisions"] == bot.decisions
    bot.on_match_start(pb.MatchStart())
    assert not bot.fallbacks and bot.decisions == 0  # counted per match


def test_the_bridge_finds_worlds_without_fallbacks() -> None:
    bot = bridge.OpenSpielBot("ismcts", simulations=4, worlds=2, seed="1")
    with capture_logs() as logs:
        for seed in range(2):
            _play(bot, "grosstarock", seed, {0, 1, 2})
    assert bot.decisions > 50 and not bot.fallbacks
    assert not [e for e in logs if e["event"] == "bridge_fallback"]


def test_the_bridges_search_options_are_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    args, rest = bridge._arguments(
        ["--openspiel", "ismcts", "--simulations", "7", "--worlds", "3", "--uct-c", "2.5", "--rollouts", "4",
         "--seed", "s", "--address", "x:1"]
    )  # fmt: skip
    assert (args.simulations, args.worlds, args.uct_c, args.rollouts, args.seed) == (7, 3, 2.5, 4, "s")
    assert rest == ["--address", "x:1"]
    defaults, _ = bridge._arguments(["--openspiel", "ismcts"])
    assert (defaults.simulations, defaults.worlds, defaults.uct_c, defaults.rollouts) == (100, 16, 20.0, 1)
    assert defaults.seed is None

    bot = bridge.OpenSpielBot("ismcts", simulations=7, worlds=3, uct_c=2.5, rollouts=4, seed="s")
    search = bot._ismcts(pyspiel.load_game(openspiel.GAME_NAME), random.Random(1))
    assert (search._max_simulations, search._max_world_samples, search._uct_c) == (7, 3, 2.5)
    assert search._evaluator.n_rollouts == 4

    # Each decision draws its root world, then at most `worlds` more for the search.
    drawn: list[int] = []
    draw = openspiel.draw_world

    def counting(game: Any, sampler: Sampler, rng: random.Random) -> Any:
        drawn.append(1)
        return draw(game, sampler, rng)

    monkeypatch.setattr(openspiel, "draw_world", counting)
    v = find_variant("grosstarock")
    state = DealState(v, 0, deck_for(1, 0))
    while len(state.legal_actions()) < 3:
        state.apply(state.legal_actions()[0])
    bot.decide(_request(state))
    assert len(drawn) == 1 + 3


@pytest.mark.parametrize(
    "bad", [["--simulations", "0"], ["--worlds", "-1"], ["--uct-c", "-2"], ["--rollouts", "x"]]
)
def test_bad_search_options_are_usage_errors(bad: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        bridge._arguments(["--openspiel", "ismcts", *bad])
    assert exit_.value.code == 2


def test_seeded_bridge_bots_are_reproducible(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same seed plays the same deal the same way, whatever the bot played before (a
    persistent process); the seed comes from ARENA_BOT_SEED unless given, and again at each match."""
    first = _play(bridge.OpenSpielBot("ismcts", simulations=6, worlds=3, seed="42"), "danish", 3, {1})
    used = bridge.OpenSpielBot("ismcts", simulations=6, worlds=3, seed="42")
    _play(used, "danish", 5, {0})
    assert _play(used, "danish", 3, {1}) == first

    monkeypatch.setenv("ARENA_BOT_SEED", "42")
    from_env = bridge.OpenSpielBot("ismcts", simulations=6, worlds=3)
    assert from_env.seed == "42" and _play(from_env, "danish", 3, {1}) == first
    monkeypatch.setenv("ARENA_BOT_SEED", "43")
    from_env.reseed()
    assert from_env.seed == "43"
    fixed = bridge.OpenSpielBot("ismcts", simulations=6, worlds=3, seed="42")
    fixed.reseed()
    assert fixed.seed == "42"  # --seed wins over the environment

    # The random policy honours the seed too.
    mask = np.ones(bridge.spaces.NUM_ACTIONS, dtype=np.int8)
    obs = np.zeros(bridge.spaces.OBS_SIZE, dtype=np.float32)
    picks = [[bridge.load_policy("random", "9")(obs, mask) for _ in range(5)] for _ in range(2)]
    assert picks[0] == picks[1]


def test_seeded_bridge_bots_play_the_same_real_match(tmp_path: Path) -> None:
    """ISMCTS through the bridge plays a real match over gRPC (`arena play`) without a fault; with
    ARENA_BOT_SEED set, two runs play the same actions."""
    actions = []
    for run in range(2):
        command = [
            sys.executable, "-m", "arena", "play", "--variant", "grosstarock", "--deals", "1", "--seed", "4",
            "--replay-dir", str(tmp_path / str(run)), "--json", "--bot",
            f"{shlex.quote(sys.executable)} -m arena.research.bridge --openspiel ismcts --simulations 6 "
            "--worlds 2",
        ]  # fmt: skip
        env = {**os.environ, "ARENA_BOT_SEED": "7"}
        done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        summary = json.loads(done.stdout)
        assert summary["termination"] == "completed" and summary["faults"] == [0, 0, 0]
        assert summary["seats"][0]["bot_name"] == "openspiel-ismcts"
        lines = [json.loads(line) for line in Path(summary["replay"]).read_text().splitlines()]
        actions.append([(e.get("seat"), e.get("action")) for e in lines if e.get("type") == "action"])
    assert actions[0] and actions[0] == actions[1]
