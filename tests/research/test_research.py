"""The research extra: the PettingZoo environment, the OpenSpiel game and the bridge, against the engine.

Needs the `rl` extra (``pip install -e '.[rl]'``, as CI installs it).
"""

from __future__ import annotations

import itertools
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

pytest.importorskip("pettingzoo")
pyspiel = pytest.importorskip("pyspiel")

from pettingzoo.test import api_test, seed_test  # noqa: E402

from arena.engine import OPTIONS, DealState, Match, deck_for, find_variant, observation  # noqa: E402
from arena.research import openspiel, spaces  # noqa: E402
from arena.research.pettingzoo import env, raw_env  # noqa: E402

VARIANTS = list(OPTIONS)
EVERY_OPTION_SET = [
    (name, dict(zip(specs, values, strict=True)))
    for name, specs in OPTIONS.items()
    for values in itertools.product(*(spec.choices for spec in specs.values()))
]
SET_IDS = [f"{name}-{'-'.join(opts.values())}" for name, opts in EVERY_OPTION_SET]


# ------------------------------------------------------------------------------ PettingZoo


# PettingZoo's advice for dict observations (its own classic games have them too).
@pytest.mark.filterwarnings("ignore::UserWarning:pettingzoo.test.api_test")
@pytest.mark.parametrize(("variant", "options"), EVERY_OPTION_SET, ids=SET_IDS)
def test_pettingzoo_api_and_seed_tests_pass(variant: str, options: dict[str, str]) -> None:
    api_test(env(variant, **options), num_cycles=200)
    seed_test(lambda: env(variant, **options), num_cycles=200)


# PettingZoo's advice for dict observations (its own classic games have them too).
@pytest.mark.filterwarnings("ignore::UserWarning:pettingzoo.test.api_test")
def test_pettingzoo_api_test_passes_over_a_match_with_match_rewards() -> None:
    api_test(env("danish", deals=3, reward="match"), num_cycles=400)


def test_match_rewards_are_the_engines_match_scores() -> None:
    game = raw_env("danish", deals=3, reward="match")
    game.reset(seed=5)
    totals = dict.fromkeys(game.possible_agents, 0.0)
    rng = random.Random(1)
    for _agent in game.agent_iter():
        obs, _reward, terminated, truncated, _info = game.last()
        game.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        for name, value in game.rewards.items():
            totals[name] += value
    assert game.match is not None and game.match.is_over()
    assert [totals[a] for a in game.possible_agents] == [float(s) for s in game.match.scores]


def test_seeded_reset_deals_the_engines_deck() -> None:
    for variant in VARIANTS:
        game = raw_env(variant)
        game.reset(seed=11)
        expected = Match(find_variant(variant), 11, 1).start_deal()
        assert game.state is not None and game.state.deck == expected.deck
        assert [sorted(h) for h in game.state.hands] == [sorted(h) for h in expected.hands]


def test_render_is_text() -> None:
    game = raw_env("american", render_mode="ansi")
    game.reset(seed=2)
    text = game.render()
    assert isinstance(text, str) and text.startswith("american") and "seat 3" in text


def test_unknown_option_is_a_clear_error() -> None:
    with pytest.raises(Exception, match="unknown option"):
        raw_env("danish", colour="red")


def test_observation_shows_only_what_the_seat_may_see() -> None:
    """Deals that differ only in the cards of seats 1 and 2 look the same to seat 0 before play."""
    variant = find_variant("grosstarock")
    deck = deck_for(4, 0)
    first = DealState(variant, 0, deck)
    one, two = first.hands[1][0], first.hands[2][0]
    swapped = [two if c == one else one if c == two else c for c in deck]
    second = DealState(variant, 0, swapped)
    tensor = spaces.encode_observation(observation(first, 0))
    assert np.array_equal(tensor, spaces.encode_observation(observation(second, 0)))
    assert not np.array_equal(
        spaces.encode_observation(observation(first, 1)), spaces.encode_observation(observation(second, 1))
    )


def test_actions_outside_the_space_are_a_clear_error() -> None:
    game = raw_env("grosstarock")
    game.reset(seed=1)
    for action in (-1, spaces.NUM_ACTIONS):
        with pytest.raises(ValueError, match="outside the action space"):
            game.step(action)
    with pytest.raises(ValueError, match="not an index"):
        game.step(1.5)  # type: ignore[arg-type]
    legal = np.flatnonzero(game.observe(game.agent_selection)["action_mask"])
    game.step(np.int32(legal[0]))  # a numpy integer is an index


def test_wrapped_environment_enforces_the_order() -> None:
    game = env("grosstarock")
    with pytest.raises(AttributeError, match="cannot be accessed before reset"):
        _ = game.agent_selection
    with pytest.raises(AttributeError, match="cannot be accessed before reset"):
        _ = game.terminations
    with pytest.raises(AttributeError, match="cannot be accessed before reset"):
        game.last()
    with pytest.raises(AssertionError, match="before agent_iter"):
        game.agent_iter()
    with pytest.raises(AssertionError, match="before step"):
        game.step(0)
    game.reset(seed=3)
    assert game.agent_selection == game.unwrapped.agent_selection
    assert game.rewards is game.unwrapped.rewards and game.infos is game.unwrapped.infos
    agents = iter(game.agent_iter())
    assert next(agents) == game.agent_selection
    with pytest.raises(AssertionError, match="need to call step"):
        next(agents)  # the loop did not step
    obs, _, _, _, _ = game.last()
    game.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert next(agents) == game.agent_selection


def test_a_deal_over_as_it_is_dealt() -> None:
    """American seed 1425: a petit sec annuls the first deal at once (AM-DEAL-2)."""
    assert Match(find_variant("american"), 1425, 1).start_deal().is_terminal()
    game = env("american")
    game.reset(seed=1425)
    assert all(game.terminations.values())  # one dealer turn: the match is over at reset
    assert game.infos["seat_0"]["deal_result"]["annulled"]
    for _agent in game.agent_iter():
        assert game.last()[2]
        game.step(None)
    assert game.agents == []
    game = env("american", deals=2)
    game.reset(seed=1425)
    assert not any(game.terminations.values())
    assert game.unwrapped.state.turn is not None
    assert game.agent_selection == f"seat_{game.unwrapped.state.turn}"
    assert game.infos["seat_0"]["deal_result"]["annulled"]


def test_unseeded_resets_follow_the_last_seed() -> None:
    """After `reset(seed=S)`, unseeded resets draw their seeds from a generator seeded with S."""
    game = raw_env("grosstarock")
    game.reset(seed=5)
    drawn = []
    for _ in range(3):
        game.reset()
        drawn.append(game.seed_value)
    generator = np.random.default_rng(5)
    assert drawn == [int(generator.integers(2**31)) for _ in range(3)]
    game.reset(seed=5)
    game.reset()
    assert game.seed_value == drawn[0]


def walk(variant: str, options: dict[str, str], seed: int, observe_every: int) -> int:
    """One random deal: the tensors kept by `DealObservations` against `encode_observation` of the
    seat's view, for every seat, every `observe_every`-th decision (1: at each one; more: each
    tensor catches up over several steps); the masks at each decision."""
    state = Match(find_variant(variant, options), seed, 1).start_deal()
    tensors = spaces.deal_observations(state)
    rng = random.Random(seed)
    decisions = 0
    while True:
        if decisions % observe_every == 0 or state.is_terminal():
            for seat in range(state.seats):
                expected = spaces.encode_observation(observation(state, seat))
                assert np.array_equal(tensors.observation(seat), expected), (variant, seed, decisions, seat)
        if state.is_terminal():
            return decisions
        legal = state.legal_actions()
        for seat in range(state.seats):
            mask = tensors.mask(seat)
            assert np.flatnonzero(mask).tolist() == (
                sorted(spaces.action_index(a) for a in legal) if seat == state.turn else []
            )
            observed = tensors.observe(seat)  # the environment's `last()`: both, fresh arrays
            assert np.array_equal(observed["action_mask"], mask)
            assert np.array_equal(observed["observation"], tensors.row(seat))
            observed["observation"][:] = np.nan  # a caller changing it leaves the kept row alone
            assert not np.isnan(tensors.row(seat)).any()
        state.apply(rng.choice(legal))
        decisions += 1


@pytest.mark.parametrize(("variant", "options"), EVERY_OPTION_SET, ids=SET_IDS)
def test_kept_tensors_equal_the_encoded_views_at_each_decision(variant: str, options: dict[str, str]) -> None:
    decisions = sum(walk(variant, options, seed, 1) for seed in range(4))
    decisions += sum(walk(variant, options, seed, 1 + seed % 5) for seed in range(4, 12))
    assert decisions > 12 * 20


BUILD_DIGEST = """
import hashlib, random, sys
import arena.engine
from arena.research.pettingzoo import raw_env
digest = hashlib.sha256()
for variant in sys.argv[1:]:
    game = raw_env(variant)
    rng = random.Random(variant)
    for seed in range(6):
        game.reset(seed=seed)
        for agent in game.agent_iter():
            obs, reward, terminated, truncated, info = game.last()
            digest.update(obs["observation"].tobytes() + obs["action_mask"].tobytes())
            done = terminated or truncated
            game.step(None if done else rng.choice(obs["action_mask"].nonzero()[0].tolist()))
print(arena.engine.BUILD, digest.hexdigest())
"""


def test_compiled_and_pure_tensors_agree() -> None:
    """The tensors are compiled with the engine (setup.py): both builds give the same bytes."""
    runs = []
    for pure in (False, True):
        environment = {k: v for k, v in os.environ.items() if k != "ARENA_PURE_PYTHON"}
        if pure:
            environment["ARENA_PURE_PYTHON"] = "1"
        done = subprocess.run(
            [sys.executable, "-c", BUILD_DIGEST, *VARIANTS],
            env=environment, capture_output=True, text=True, timeout=300, check=True,
        )  # fmt: skip
        runs.append(done.stdout.split())
    (compiled_build, compiled), (pure_build, pure) = runs
    assert pure_build == "pure"
    if compiled_build != "compiled":
        assert os.environ.get("CI") != "true", "CI installed the pure engine: the mypyc build failed"
        pytest.skip("no compiled build installed")
    assert compiled == pure


# ------------------------------------------------------------------------------ OpenSpiel


@pytest.mark.parametrize("variant", VARIANTS)
def test_openspiel_random_simulation_with_serialization(variant: str) -> None:
    game = pyspiel.load_game(openspiel.GAME_NAME, {"variant": variant})
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_openspiel_options_are_string_parameters() -> None:
    game = pyspiel.load_game(openspiel.GAME_NAME, {"variant": "german-1754", "players": "4"})
    assert game.num_players() == 4
    assert game.num_distinct_actions() == spaces.NUM_ACTIONS
    with pytest.raises(Exception, match="do not belong"):
        pyspiel.load_game(openspiel.GAME_NAME, {"variant": "danish", "players": "4"})


def test_openspiel_serialization_and_information_states() -> None:
    game = pyspiel.load_game(openspiel.GAME_NAME, {"variant": "danish-pots"})
    state = game.new_initial_state()
    for action in openspiel.deck_actions(deck_for(9, 0)):
        state.apply_action(action)
    rng = random.Random(3)
    for _ in range(30):
        state.apply_action(rng.choice(state.legal_actions()))
    text = pyspiel.serialize_game_and_state(game, state)
    _game, copy = pyspiel.deserialize_game_and_state(text)
    assert copy.history() == state.history() and str(copy) == str(state)
    players = range(game.num_players())
    assert len({state.information_state_string(p) for p in players}) == game.num_players()
    for p in players:
        assert copy.information_state_string(p) == state.information_state_string(p)
        assert np.array_equal(copy.information_state_tensor(p), state.information_state_tensor(p))
        assert len(state.observation_tensor(p)) == spaces.OBS_SIZE


def test_openspiel_information_state_hides_other_hands() -> None:
    game = pyspiel.load_game(openspiel.GAME_NAME, {"variant": "grosstarock"})
    deck = deck_for(4, 0)
    first = DealState(find_variant("grosstarock"), 0, deck)
    one, two = first.hands[1][0], first.hands[2][0]
    swapped = [two if c == one else one if c == two else c for c in deck]
    states = []
    for cards in (deck, swapped):
        state = game.new_initial_state()
        for action in openspiel.deck_actions(cards):
            state.apply_action(action)
        states.append(state)
    assert states[0].information_state_string(0) == states[1].information_state_string(0)
    assert states[0].information_state_string(1) != states[1].information_state_string(1)


# ------------------------------------------------------------------------------ all three agree


def agree(variant: str, options: dict[str, str], seed: int, rng: random.Random) -> int:
    """Play one random deal through the engine, the environment and the OpenSpiel game in step."""
    engine = Match(find_variant(variant, options), seed, 1).start_deal()
    game = raw_env(variant, **options)
    game.reset(seed=seed)
    spiel = pyspiel.load_game(openspiel.GAME_NAME, {"variant": variant, **options}).new_initial_state()
    for action in openspiel.deck_actions(deck_for(seed, 0)):
        spiel.apply_action(action)
    assert game.state is not None and spiel.deal is not None
    assert [sorted(h) for h in game.state.hands] == [sorted(h) for h in engine.hands]
    assert [sorted(h) for h in spiel.deal.hands] == [sorted(h) for h in engine.hands]
    steps = 0
    while not engine.is_terminal():
        seat = engine.current_player
        assert seat is not None and spiel.current_player() == seat
        assert game.agent_selection == f"seat_{seat}"
        legal = sorted(spaces.action_index(a) for a in engine.legal_actions())
        observed = game.observe(game.agent_selection)
        assert np.flatnonzero(observed["action_mask"]).tolist() == legal
        assert spiel.legal_actions() == legal
        if steps % 7 == 0:  # the tensors are the costly part: every seventh decision, every seat
            for s in range(engine.seats):
                tensor = spaces.encode_observation(observation(engine, s))
                assert np.array_equal(game.observe(f"seat_{s}")["observation"], tensor)
                assert np.array_equal(np.asarray(spiel.observation_tensor(s), np.float32), tensor)
        action = rng.choice(legal)
        engine.apply(spaces.ACTIONS[action])
        game.step(action)
        spiel.apply_action(action)
        steps += 1
    deltas = [float(d) for d in engine.result().deltas]
    assert spiel.is_terminal() and spiel.returns() == deltas
    assert [game._cumulative_rewards[a] for a in game.possible_agents] == deltas
    assert all(game.terminations.values())
    return steps


@pytest.mark.parametrize(("variant", "options"), EVERY_OPTION_SET, ids=SET_IDS)
def test_environment_openspiel_and_engine_agree(variant: str, options: dict[str, str]) -> None:
    rng = random.Random(f"{variant}{options}")
    deals = 125  # 16 option sets: 2000 deals in all
    steps = sum(agree(variant, options, seed, rng) for seed in range(deals))
    assert steps > deals * 20


# ------------------------------------------------------------------------------ the bridge


def replay_actions(path: Path) -> dict[int, list[tuple[int, dict[str, Any]]]]:
    deals: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    for line in path.read_text().splitlines():
        item = json.loads(line)
        if item["type"] == "action":
            deals.setdefault(item["deal"], []).append((item["seat"], item["action"]))
    return deals


@pytest.mark.parametrize(
    ("variant", "options"),
    [
        ("grosstarock", {}),
        ("german-1754", {"players": "4"}),
        ("danish", {}),
        ("danish-pots", {}),
        ("american", {}),
    ],
)
def test_bridge_observations_equal_the_environments(
    tmp_path: Path, variant: str, options: dict[str, str]
) -> None:
    """A real match with the bridge in every seat: each decision's tensor and mask, built from the
    protocol's View, equals the environment's at the same point of the same seeded match."""
    seats = find_variant(variant, options).seats
    deals, seed = 2, 17
    records = [tmp_path / f"seat{s}.jsonl" for s in range(seats)]
    command = [
        sys.executable,
        "-m",
        "arena",
        "play",
        "--variant",
        variant,
        "--deals",
        str(deals),
        "--seed",
        str(seed),
        "--replay-dir",
        str(tmp_path / "replays"),
        "--json",
    ]
    for key, value in options.items():
        command += ["--option", f"{key}={value}"]
    for record in records:
        command += [
            "--bot",
            f"{shlex.quote(sys.executable)} -m arena.research.bridge --policy random "
            f"--record {shlex.quote(str(record))}",
        ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["termination"] == "completed" and all(f == 0 for f in summary["faults"])
    decisions = sorted(
        (json.loads(line) for r in records for line in r.read_text().splitlines()),
        key=lambda d: d["deal"],
    )
    actions = replay_actions(Path(summary["replay"]))
    game = raw_env(variant, deals=deals, **options)
    game.reset(seed=seed)
    checked = 0
    by_deal: dict[int, list[dict[str, Any]]] = {}
    for d in decisions:
        by_deal.setdefault(d["deal"], []).append(d)
    for deal in sorted(actions):
        mine = iter(by_deal[deal])  # in each file, in the order decided; merged below by seat
        per_seat: dict[int, list[dict[str, Any]]] = {}
        for d in mine:
            per_seat.setdefault(d["seat"], []).append(d)
        for seat, action in actions[deal]:
            assert game.agent_selection == f"seat_{seat}"
            expected = per_seat[seat].pop(0)
            observed = game.observe(f"seat_{seat}")
            assert expected["observation"] == [
                [int(i), float(observed["observation"][i])] for i in np.flatnonzero(observed["observation"])
            ]
            assert expected["legal"] == np.flatnonzero(observed["action_mask"]).tolist()
            index = spaces.index_of_text(
                " ".join(
                    str(v)
                    for v in (action["type"], action.get("card"), action.get("name"), action.get("suit"))
                    if v
                )
            )
            assert index == expected["action"]
            game.step(index)
            checked += 1
        assert not any(per_seat.values())
    assert all(game.terminations.values())
    assert checked > 50


# ------------------------------------------------------------------------------ worlds and ISMCTS


# Worlds drawn from a view (the game's resampling, the bridge's sampler), and ISMCTS through the
# bridge in a real match (seeded, played twice): test_bridge_sampler.py.


def test_bridge_without_an_agent_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena.research.bridge", "--policy", "no_such_module:act"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("bridge: cannot load policy 'no_such_module:act'")
