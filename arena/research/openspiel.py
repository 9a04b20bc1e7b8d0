"""The game as an OpenSpiel Python game: importing this module registers ``grosstarock_arena``.

    import pyspiel
    import arena.research.openspiel  # noqa: F401 - registers the game
    game = pyspiel.load_game("grosstarock_arena", {"variant": "danish", "redeal": "auto"})

One game is one deal; by default the first deal of a match (dealer seat 0, the pots holding the
antes), else as the parameters ``dealer``, ``king_pot``, ``pagat_pot`` and ``stakes`` say. The deck
is dealt by 78 chance nodes, one card each, so chance outcome k is card index k and the deck order
is the order of the outcomes; `deck_actions(deck)` turns an engine deck (e.g.
`arena.engine.deck_for(seed, 0)`) into them. Player actions are the indices of
`arena.research.spaces.ACTIONS`; returns are the deal's points (`DealResult.deltas`). Observation
strings and tensors are a seat's view (`arena.engine.observation`, `spaces.encode_observation`); the
information state adds the seat's dealt hand and its own actions so far, which makes it perfect
recall.
"""

from __future__ import annotations

import copyreg
import json
import random
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt
import pyspiel

from arena.engine import CARDS, Card, DealState, Match, find_variant, observation
from arena.engine import OPTIONS as VARIANT_OPTIONS
from arena.search import Sampler

from . import spaces

GAME_NAME = "grosstarock_arena"
OPTION_KEYS = sorted({key for specs in VARIANT_OPTIONS.values() for key in specs})
"""Every variant option; as a game parameter an empty string means the variant's default."""
MAX_UTILITY = 10000.0  # a safe bound on one deal's points in any variant, not a tight one
MAX_GAME_LENGTH = 78 + 400

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Grosstarock Arena (every variant of the arena's engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,  # Danish pots and literal Trischaken are not zero-sum
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=3,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={
        "variant": "grosstarock",
        **dict.fromkeys(OPTION_KEYS, ""),
        "dealer": 0,
        "king_pot": -1,  # pots before the deal's stakes; -1: as in the first deal of a match
        "pagat_pot": -1,
        "stakes": True,
    },
)


def deck_actions(deck: Sequence[int]) -> list[int]:
    """The chance outcomes that deal `deck`: one per card, in deck order."""
    return [int(card) for card in deck]


class GrosstarockGame(pyspiel.Game):  # type: ignore[misc]
    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        name = str(params.get("variant", "grosstarock"))
        given = {key: str(params[key]) for key in OPTION_KEYS if params.get(key)}
        known = VARIANT_OPTIONS.get(name, {})
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise ValueError(f"option(s) {', '.join(unknown)} do not belong to variant {name!r}")
        self.variant = find_variant(name, given)
        self.dealer = int(params.get("dealer", 0))
        if not 0 <= self.dealer < self.variant.seats:
            raise ValueError(f"dealer {self.dealer} is not a seat of {name}")
        first = Match(self.variant, 0, 1).pots  # the antes paid at the start of a match
        self.pots = {
            pot: int(params.get(f"{pot}_pot", -1)) if int(params.get(f"{pot}_pot", -1)) >= 0 else first[pot]
            for pot in self.variant.pot_names
        }
        self.stakes = bool(params.get("stakes", True))
        # The sampler of the view last resampled (`resample_from_infostate`), kept for the next call.
        self.last_sampler: tuple[tuple[int, str], Sampler] | None = None
        info = pyspiel.GameInfo(
            num_distinct_actions=spaces.NUM_ACTIONS,
            max_chance_outcomes=78,
            num_players=self.variant.seats,
            min_utility=-MAX_UTILITY,
            max_utility=MAX_UTILITY,
            max_game_length=MAX_GAME_LENGTH,
        )
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> GrosstarockState:
        return GrosstarockState(self)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> GrosstarockObserver:
        if params:
            raise ValueError(f"observation parameters are not supported: {params}")
        perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return GrosstarockObserver(perfect_recall)


class GrosstarockState(pyspiel.State):  # type: ignore[misc]
    def __init__(self, game: GrosstarockGame) -> None:
        super().__init__(game)
        self.variant = game.variant
        self.dealer: int = game.dealer
        self.pots: dict[str, int] = game.pots
        self.stakes: bool = game.stakes
        self.deck: list[Card] = []
        self.deal: DealState | None = None
        self.own_actions: list[list[int]] = [[] for _ in range(self.variant.seats)]
        self.moves = 0

    def _new_deal(self) -> DealState:
        return DealState(self.variant, self.dealer, self.deck, pots=self.pots, stakes=self.stakes)

    def current_player(self) -> int:
        if self.deal is None:
            return int(pyspiel.PlayerId.CHANCE)
        seat = self.deal.current_player
        return int(pyspiel.PlayerId.TERMINAL) if seat is None else seat

    def is_terminal(self) -> bool:
        return self.deal is not None and self.deal.is_terminal()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        dealt = set(self.deck)
        left = [c for c in range(78) if c not in dealt]
        return [(c, 1.0 / len(left)) for c in left]

    def _legal_actions(self, player: int) -> list[int]:
        assert self.deal is not None and player == self.deal.current_player
        return sorted(spaces.action_index(a) for a in self.deal.legal_actions())

    def _apply_action(self, action: int) -> None:
        if self.deal is None:
            if action in self.deck:
                raise ValueError(f"card {CARDS[action]} is already dealt")
            self.deck.append(CARDS[action])
            if len(self.deck) == 78:
                self.deal = self._new_deal()
            return
        seat = self.deal.current_player
        assert seat is not None
        self.deal.apply(spaces.ACTIONS[action])
        self.own_actions[seat].append(action)
        self.moves += 1

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {CARDS[action]}"
        return str(spaces.ACTIONS[action])

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self.variant.seats
        assert self.deal is not None
        return [float(d) for d in self.deal.result().deltas]

    def resample_from_infostate(self, player: int, probability_sampler: Any = None) -> GrosstarockState:
        """A world `player` cannot tell from this one, drawn by the search layer's `Sampler`, for
        ISMCTS and other samplers. Raises `arena.search.NoConsistentDeal` when no world is found:
        it never returns this state's hidden cards in place of a sample."""
        seed = probability_sampler() if callable(probability_sampler) else None
        rng = random.Random(seed if seed is None else int(seed * 2**31))
        game: GrosstarockGame = self.get_game()
        if self.deal is None:  # while dealing, a seat has seen nothing: any cards will do
            world = game.new_initial_state()
            for card in rng.sample(range(78), len(self.deck)):
                world.apply_action(card)
            return world
        view = seat_view(self, player)
        key = (player, json.dumps(view, sort_keys=True))
        if game.last_sampler is None or game.last_sampler[0] != key:  # ISMCTS asks again and again
            game.last_sampler = (key, world_sampler(game, view))
        return draw_world(game, game.last_sampler[1], rng)

    def view(self, player: int) -> dict[str, Any]:
        """The seat's observation dict without its legal actions (they are the mask's business)."""
        if self.deal is None:
            return {"seat": player, "dealing": len(self.deck)}
        view = observation(self.deal, player)
        view.pop("legal_actions", None)
        return view

    def dealt_hand(self, player: int) -> list[int]:
        """The cards dealt to `player`: the engine's deal, read back from the state's hands at the start."""
        return [int(c) for c in self.dealt_hands[player]] if self.deal is not None else []

    @property
    def dealt_hands(self) -> list[tuple[Card, ...]]:
        cached: list[tuple[Card, ...]] | None = getattr(self, "_dealt_hands", None)
        if cached is None and self.deal is not None:
            fresh = self._new_deal()
            cached = [tuple(sorted(fresh.hands[s])) for s in range(self.variant.seats)]
            self._dealt_hands = cached
        return cached or []

    def information_state_string(self, player: int | None = None) -> str:
        player = self.current_player() if player is None else player
        return json.dumps(
            {
                "view": self.view(player),
                "dealt": [str(CARDS[c]) for c in self.dealt_hand(player)],
                "mine": [str(spaces.ACTIONS[a]) for a in self.own_actions[player]],
                "moves": self.moves,
            },
            sort_keys=True,
        )

    def observation_string(self, player: int | None = None) -> str:
        player = self.current_player() if player is None else player
        return json.dumps(self.view(player), sort_keys=True)

    def __str__(self) -> str:
        if self.deal is None:
            return f"dealing: {' '.join(str(c) for c in self.deck)}"
        hands = " | ".join(" ".join(str(c) for c in sorted(h)) for h in self.deal.hands)
        return f"{self.variant.name} phase {self.deal.phase} turn {self.deal.turn}: {hands}"


class GrosstarockObserver:
    """PyObserver: `tensor` is `spaces.encode_observation` of the seat's view (kept up to date by
    `spaces.DealObservations`); with perfect recall also the seat's dealt hand (78) and its own
    actions (a count per action index)."""

    def __init__(self, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        # The tensors of the last deal observed, kept up to date (spaces.DealObservations): a game
        # played forward asks for them at each move; a state of another deal starts them afresh.
        self._observations: spaces.DealObservations | None = None
        size = spaces.OBS_SIZE + (78 + spaces.NUM_ACTIONS if perfect_recall else 0)
        self.tensor: npt.NDArray[np.float32] = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor[: spaces.OBS_SIZE]}
        if perfect_recall:
            self.dict["dealt"] = self.tensor[spaces.OBS_SIZE : spaces.OBS_SIZE + 78]
            self.dict["own_actions"] = self.tensor[spaces.OBS_SIZE + 78 :]

    def set_from(self, state: GrosstarockState, player: int) -> None:
        self.tensor.fill(0)
        if state.deal is None:
            return
        observations = self._observations
        if observations is None or observations.state is not state.deal:
            observations = self._observations = spaces.deal_observations(state.deal)
        self.tensor[: spaces.OBS_SIZE] = observations.row(player)  # copied here: no fresh array
        if self.perfect_recall:
            for card in state.dealt_hand(player):
                self.dict["dealt"][card] = 1
            for action in state.own_actions[player]:
                self.dict["own_actions"][action] += 1

    def string_from(self, state: GrosstarockState, player: int) -> str:
        if self.perfect_recall:
            return str(state.information_state_string(player))
        return str(state.observation_string(player))


# OpenSpiel clones a Python state with `copy.deepcopy`; a variant's options are a read-only
# mapping, which deepcopy cannot pickle, so it is copied as a fresh read-only mapping.
def _read_only(items: dict[str, str]) -> MappingProxyType[str, str]:
    return MappingProxyType(items)


copyreg.pickle(MappingProxyType, lambda proxy: (_read_only, (dict(proxy),)))
pyspiel.register_game(_GAME_TYPE, GrosstarockGame)


# ----------------------------------------------------------------------------- worlds from one seat's view

SAMPLE_TRIES = 20000
"""Placements `Sampler` tries before it gives up on a view (`NoConsistentDeal`)."""


def seat_view(state: GrosstarockState, player: int) -> dict[str, Any]:
    """What `player` knows of `state`, as the server sends it: `arena.engine.observation`, legal
    actions included (a world must offer the same ones)."""
    if state.deal is None:
        raise ValueError("the deck is still being dealt: a seat has no view yet")
    return observation(state.deal, player)


def world_sampler(game: GrosstarockGame, view: dict[str, Any]) -> Sampler:
    """The search layer's `Sampler` of `view`, checked against `game`: the bridge, the game's
    `resample_from_infostate` and the search bot draw their worlds with the same sampler."""
    if view["variant"] != game.variant.name or view["dealer"] != game.dealer:
        raise ValueError("the view belongs to another game (variant or dealer)")
    return Sampler(view, max_tries=SAMPLE_TRIES)


def draw_world(game: GrosstarockGame, sampler: Sampler, rng: random.Random) -> GrosstarockState:
    """A state of `game` that the sampler's seat cannot tell from the real one: a deal drawn by
    `sampler`, dealt through the chance nodes, its history replayed through `apply_action` (so the
    information state, own actions and move count included, is the seat's own). Raises
    `NoConsistentDeal` when none is found; never falls back to the real deal."""
    deal = sampler.sample(rng)
    state = game.new_initial_state()
    for card in deal.deck:
        state.apply_action(int(card))
    for _seat, action in deal.history:
        state.apply_action(spaces.action_index(action))
    return state
