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

from arena.engine import CARDS, Action, Card, DealState, Match, find_variant, observation
from arena.engine import OPTIONS as VARIANT_OPTIONS

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
        """A world `player` cannot tell from this one (`determinize`), for ISMCTS and other samplers."""
        seed = probability_sampler() if callable(probability_sampler) else None
        rng = random.Random(seed if seed is None else int(seed * 2**31))
        world = determinize(self.get_game(), self.view(player), rng)
        return world if world is not None else self.clone()

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


def determinize(
    game: GrosstarockGame, view: dict[str, Any], rng: random.Random, tries: int = 300
) -> GrosstarockState | None:
    """A state of `game` that `view`'s seat cannot tell from the real one, or None if none was found.

    The cards the seat has not seen are dealt at random to the places it cannot see (the other
    hands, a hidden discard or talon), keeping what the view shows: the cards each seat played or
    showed, the suits it showed itself void in, the size of a Taroks declaration, the taroks of a
    published discard. The public actions are then replayed in the engine's order; a world in
    which one of them is illegal, or that ends in another position, is drawn again.
    """
    if view["variant"] != game.variant.name or view["dealer"] != game.dealer:
        raise ValueError("the view belongs to another game (variant or dealer)")
    for _ in range(tries):
        state = _world(game, view, rng)
        if state is not None:
            return state
    return None


_EXCHANGE = ("rufer", "dreier")  # AM-TAL-1: the declarer takes the talon


def _world(game: GrosstarockGame, view: dict[str, Any], rng: random.Random) -> GrosstarockState | None:
    variant = game.variant
    seat: int = view["seat"]
    layout = DealState(variant, game.dealer, CARDS, pots=game.pots)  # deck position = card index
    places = [list(layout.hands[s]) for s in range(variant.seats)]
    talon_places = list(layout.talon)
    parse = Card.parse
    contract = view.get("contract")
    declarer = view.get("declarer")
    talon = {parse(c) for c in view.get("talon", ())}
    exchanged = bool(talon) and contract in _EXCHANGE
    discarder = declarer if variant.contracts else game.dealer
    if variant.contracts and contract not in _EXCHANGE:
        discarder = None

    plays: list[tuple[int, Card, str | None]] = []
    for trick in [*view["tricks"], *([view["trick"]] if "trick" in view else [])]:
        for k, (s, code) in enumerate(trick["cards"]):
            suit = trick.get("designation") if k == 0 else trick.get("redesignation") if k == 1 else None
            plays.append((s, parse(code), suit))
    known: list[set[Card]] = [set() for _ in range(variant.seats)]
    for s, card, _suit in plays:
        known[s].add(card)
    for d in view["declarations"]:
        known[d["seat"]].update(parse(c) for c in d.get("cards", ()))
    shown_skat = {parse(c) for c in view.get("skat_public", {}).get("shown", ())}
    if discarder is not None:
        known[discarder] |= shown_skat
    known[seat] |= {parse(c) for c in view["hand"]} | {parse(c) for c in view.get("skat", ())}
    if exchanged and declarer is not None:
        known[declarer] -= talon
    taken = set().union(*known) | talon
    pool = [c for c in CARDS if c not in taken]
    voids = _voids(view, variant.seats)
    targets = {d["seat"]: d["size"] for d in view["declarations"] if d["name"] in ("taroks", "trumps")}
    skat_taroks = view.get("skat_public", {}).get("taroks", 0)

    dealt: list[list[Card]] = [sorted(known[s]) for s in range(variant.seats)]
    rng.shuffle(pool)
    others = [s for s in range(variant.seats) if s != seat and places[s]]
    rng.shuffle(others)
    for s in others:
        need = len(places[s]) - len(dealt[s])
        if need < 0:
            return None
        fits = [c for c in pool if SUIT_KEY[c] not in voids[s]]
        if s in targets:
            trumps_needed = (
                targets[s]
                + (skat_taroks if s == discarder else 0)
                - sum(1 for c in dealt[s] if c.is_tarok or c.is_fool)
            )
            trumps = [c for c in fits if c.is_tarok or c.is_fool][: max(trumps_needed, 0)]
            rest = [c for c in fits if not (c.is_tarok or c.is_fool)][: need - len(trumps)]
            chosen = trumps + rest
        else:
            chosen = fits[:need]
        if len(chosen) != need:
            return None
        dealt[s] += chosen
        chosen_set = set(chosen)
        pool = [c for c in pool if c not in chosen_set]
    if len(dealt[seat]) != len(places[seat]):
        return None
    hidden_talon = sorted(talon) if talon else pool
    if len(hidden_talon) != len(talon_places) or (talon and pool):
        return None
    deck: list[Card] = [CARDS[0]] * 78
    for s in range(variant.seats):
        for place, card in zip(places[s], dealt[s], strict=True):
            deck[place] = card
    for place, card in zip(talon_places, hidden_talon, strict=True):
        deck[place] = card
    state = game.new_initial_state()
    for card in deck:
        state.apply_action(int(card))
    try:
        if not _replay(state, view, plays, discarder, known, rng):
            return None
    except Exception:
        return None
    return state if _same_position(state, view) else None


SUIT_KEY = tuple(c.suit or "EX" for c in CARDS)


def _voids(view: dict[str, Any], seats: int) -> list[set[str]]:
    """Suits each seat showed it lacks: a plain suit not followed; taroks when neither followed
    nor trumped."""
    voids: list[set[str]] = [set() for _ in range(seats)]
    for trick in [*view["tricks"], *([view["trick"]] if "trick" in view else [])]:
        cards = [(s, Card.parse(c)) for s, c in trick["cards"]]
        if not cards or cards[0][1].is_fool:
            continue
        led = cards[0][1].suit
        for s, card in cards[1:]:
            if card.is_fool or card.suit == led:
                continue
            voids[s].add(led)
            if led != "T" and not card.is_tarok:
                voids[s].add("T")
    for answer in view.get("round_answers", ()):
        if answer["round"] == "redeal" and answer["answer"] == "redeal":
            voids[answer["seat"]].add("T")  # DK-DEAL-2: a hand without a tarok
    return voids


def _replay(
    state: GrosstarockState,
    view: dict[str, Any],
    plays: list[tuple[int, Card, str | None]],
    discarder: int | None,
    known: list[set[Card]],
    rng: random.Random,
) -> bool:
    """Replay the view's public actions in the engine's order, until it is the seat's turn with
    nothing left to replay; False if the world cannot have led to the view."""
    seat: int = view["seat"]
    answers = [(a["round"], a["seat"], a["answer"]) for a in view.get("round_answers", ())]
    declarations: dict[int, list[tuple[str, str | None]]] = {}
    for d in view["declarations"]:
        declarations.setdefault(d["seat"], []).append((d["name"], d.get("suit")))
    announcements = [(a["seat"], a["name"], a["trick"]) for a in view.get("announcements", ())]
    my_skat = [Card.parse(c) for c in view.get("skat", ())]
    called = view.get("called")
    skat_taroks = view.get("skat_public", {}).get("taroks", 0)
    shown_skat = {Card.parse(c) for c in view.get("skat_public", {}).get("shown", ())}
    discarded: list[Card] = []
    deal = state.deal
    assert deal is not None
    compulsory = deal.variant.declarations == "compulsory"

    def nothing_left() -> bool:
        own = declarations.get(seat, [])
        return not (answers or plays or announcements or own or my_skat) and (
            not called or deal.called is not None
        )

    while not deal.is_terminal():
        s = deal.turn
        assert s is not None
        if s == seat and nothing_left():
            return True
        phase = deal.phase
        legal = deal.legal_actions()
        action: Action | None = None
        if phase in ("redeal", "demand", "bid"):
            if not answers or answers[0][1] != s:
                return False
            _round, _s, answer = answers.pop(0)
            action = Action("bid", name=answer) if phase == "bid" and answer != "pass" else Action(answer)
        elif phase == "call":
            if not called:
                return False
            action = Action("call", Card.parse(called))
        elif phase == "discard":
            if s == seat:
                if not my_skat:
                    return False
                action = Action("discard", my_skat.pop(0))
            else:
                action = _hidden_discard(legal, known[s], shown_skat, skat_taroks, discarded, rng)
                if action is None:
                    return False
                assert action.card is not None
                discarded.append(action.card)
        elif phase == "declare" or (phase == "announce" and deal.variant.contracts):
            own_announcements = [a for a in announcements if a[0] == s]
            if phase == "announce" and own_announcements:
                announcements.remove(own_announcements[0])
                action = Action("announce", name=own_announcements[0][1])
            elif declarations.get(s) and not compulsory:
                name, suit = declarations[s].pop(0)
                action = Action("declare", None, suit, name)
            else:
                action = Action("pass")
        elif phase == "announce":
            mine = [a for a in announcements if a[0] == s and a[2] == deal.trick_no]
            if mine:
                announcements.remove(mine[0])
                action = Action("announce", name=mine[0][1])
            else:
                action = Action("pass")
        elif phase == "play":
            if not plays or plays[0][0] != s:
                return False
            _s, card, suit = plays.pop(0)
            options = [a for a in legal if a.type == "play" and a.card == card]
            if not options:
                return False
            action = next((a for a in options if a.suit == suit), options[0])
        if action is None or action not in legal:
            return False
        state.apply_action(spaces.action_index(action))
    return False


def _hidden_discard(
    legal: list[Action],
    keep: set[Card],
    shown: set[Card],
    taroks: int,
    done: list[Card],
    rng: random.Random,
) -> Action | None:
    """A discard of a seat whose discard is hidden: the shown cards first, then as many taroks as
    published, then any card it does not play or show later."""
    cards = [a for a in legal if a.card is not None and a.card not in keep]
    for action in cards:
        if action.card in shown and action.card not in done:
            return action
    laid_taroks = sum(1 for c in done if c.is_tarok)
    wanted = [a for a in cards if a.card is not None and a.card.is_tarok == (laid_taroks < taroks)]
    pick = wanted or cards
    return rng.choice(pick) if pick else None


def _same_position(state: GrosstarockState, view: dict[str, Any]) -> bool:
    deal = state.deal
    if deal is None or deal.is_terminal():
        return False
    mine = observation(deal, view["seat"])
    return (
        mine["phase"] == view["phase"]
        and mine["hand"] == list(view["hand"])
        and mine["hand_sizes"] == list(view["hand_sizes"])
        and _public(mine["declarations"]) == _public(view["declarations"])
        and mine.get("skat_public", {}).get("taroks", 0) == view.get("skat_public", {}).get("taroks", 0)
    )


def _public(declarations: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(d, sort_keys=True) for d in declarations)
