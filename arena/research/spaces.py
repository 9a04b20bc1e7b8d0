"""The fixed action space and the observation tensor shared by the environment, the game and the bridge.

Both are functions of what one seat may see, nothing more: the observation tensor is computed
from `arena.engine.observation(state, seat)` (the dict the server sends a bot, as a `View`), so
the bridge can build the very same tensor from a `View` it receives over gRPC.

Action space (the same for every variant; docs/RESEARCH.md has the table):

==========  ===============================================================
index       action
==========  ===============================================================
0…77        ``play C`` for card index C (canonical order, SA=0 … EX=77)
78…467      ``play C D``: card C with designation D, 78 + 5·C + D (D: S H D C T)
468…545     ``discard C``: 468 + C
546…623     ``call C``: 546 + C
624…626     ``pass``, ``redeal``, ``demand``
627…630     ``bid rufer``, ``bid solorufer``, ``bid dreier``, ``bid solodreier``
631…639     ``announce N`` for N in `ANNOUNCE_NAMES`
640…        ``declare N [S]``: 640 + 5·k + s, N = `DECLARE_NAMES[k]`, s = 0 (no suit) or 1…4 (S H D C)
==========  ===============================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from arena.engine import CARDS, Action, Card, DealState
from arena.engine.deal import AMERICAN_BONUSES
from arena.engine.views import known_partner

SUITS = ("S", "H", "D", "C")
DESIGNATIONS = ("S", "H", "D", "C", "T")
BIDS = ("rufer", "solorufer", "dreier", "solodreier")
ANNOUNCE_NAMES = ("vole", "nolo", *AMERICAN_BONUSES)
DECLARE_NAMES = (
    "taroks",
    "trumps",
    "matadors",
    "kings",
    "four_kings",
    "three_kings",
    "full_kings",
    "overfull_kings",
    "half_kings",
    "abundant_kings",
    "four_queens",
    "four_cavaliers",
    "four_jacks",
    "ladons",
    "cavallerie",
    "half_cavallerie",
    "full_cavallerie",
    "abundant_cavallerie",
    "whole_cavalry",
    "half_cavalry",
    "full",
    "overfull",
    "half",
)
PLAY_DESIGNATED = 78
DISCARD = PLAY_DESIGNATED + 78 * 5
CALL = DISCARD + 78
PASS = CALL + 78
REDEAL = PASS + 1
DEMAND = PASS + 2
BID = PASS + 3
ANNOUNCE = BID + len(BIDS)
DECLARE = ANNOUNCE + len(ANNOUNCE_NAMES)
NUM_ACTIONS = DECLARE + 5 * len(DECLARE_NAMES)


def _action_table() -> tuple[Action, ...]:
    table: list[Action] = [Action("play", CARDS[c]) for c in range(78)]
    table += [Action("play", CARDS[c], d) for c in range(78) for d in DESIGNATIONS]
    table += [Action("discard", CARDS[c]) for c in range(78)]
    table += [Action("call", CARDS[c]) for c in range(78)]
    table += [Action("pass"), Action("redeal"), Action("demand")]
    table += [Action("bid", name=b) for b in BIDS]
    table += [Action("announce", name=n) for n in ANNOUNCE_NAMES]
    table += [Action("declare", None, s, n) for n in DECLARE_NAMES for s in (None, *SUITS)]
    return tuple(table)


ACTIONS: tuple[Action, ...] = _action_table()
"""`ACTIONS[i]` is the engine action of index i."""
_INDEX: dict[Action, int] = {a: i for i, a in enumerate(ACTIONS)}
assert len(ACTIONS) == NUM_ACTIONS


def action_index(action: Action) -> int:
    """The index of an engine action; a `KeyError` naming it if the space lacks it."""
    try:
        return _INDEX[action]
    except KeyError:
        raise KeyError(f"action {action} has no index in the research action space") from None


def index_of_text(text: str) -> int:
    return action_index(Action.parse(text))


def legal_mask(legal: Sequence[Action] | Sequence[str]) -> npt.NDArray[np.int8]:
    mask = np.zeros(NUM_ACTIONS, np.int8)
    try:
        mask[[_INDEX[a] if isinstance(a, Action) else index_of_text(a) for a in legal]] = 1
    except KeyError as error:
        missing = next(a for a in legal if isinstance(a, Action) and a not in _INDEX)
        raise KeyError(f"action {missing} has no index in the research action space") from error
    return mask


# ----------------------------------------------------------------------------- observation

PHASES = ("redeal", "bid", "call", "discard", "declare", "announce", "demand", "play", "end")
CONTRACTS = (*BIDS, "trischaken")
SEATS = 4  # room for the largest table; a 3-seat variant leaves the fourth seat's slots zero
POTS = ("king", "pagat")

# (name, size) of each block of the flat tensor, in order.
BLOCKS: tuple[tuple[str, int], ...] = (
    ("seat", SEATS),
    ("dealer", SEATS),
    ("forehand", SEATS),
    ("to_act", SEATS),
    ("sitting_out", SEATS),
    ("phase", len(PHASES)),
    ("trick_number", 1),
    ("hand", 78),
    ("own_skat", 78),
    ("played_by", SEATS * 78),
    ("trick_cards", SEATS * 78),
    ("trick_leader", SEATS),
    ("trick_designation", 5),
    ("trick_redesignation", 5),
    ("hand_sizes", SEATS),
    ("tricks_won", SEATS),
    ("declared", SEATS * len(DECLARE_NAMES) * 5),
    ("shown_cards", 78),
    ("skat_public_taroks", 1),
    ("skat_public_shown", 78),
    ("announced", SEATS * len(ANNOUNCE_NAMES)),
    ("round_answers", SEATS * 3),
    ("bids", SEATS * len(CONTRACTS)),
    ("pots_start", len(POTS)),
    ("contract", len(CONTRACTS)),
    ("declarer", SEATS),
    ("called", 78),
    ("partner", SEATS + 1),
    ("talon", 78),
    ("petit_sec", SEATS),
)
OFFSETS: dict[str, int] = {}
_at = 0
for _name, _size in BLOCKS:
    OFFSETS[_name] = _at
    _at += _size
OBS_SIZE = _at
CARD_INDEX = {str(c): int(c) for c in CARDS}


def observation_bounds() -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Lower and upper bounds of the tensor: 0…1, except the pots, which are unbounded."""
    low = np.zeros(OBS_SIZE, np.float32)
    high = np.ones(OBS_SIZE, np.float32)
    pots = slice(OFFSETS["pots_start"], OFFSETS["pots_start"] + len(POTS))
    low[pots], high[pots] = -np.inf, np.inf
    return low, high


def _card(code: str) -> int:
    return CARD_INDEX[code]


def encode_observation(view: Mapping[str, Any]) -> npt.NDArray[np.float32]:
    """The flat observation tensor of one seat from its observation dict (`arena.engine.observation`).

    Counts (trick number, hand sizes, tricks won, taroks in a published skat) are scaled by 1/78, pots
    by 1/100 (they are the only entries that may exceed 1); every other entry is 0 or 1. Only keys of the
    seat's view are read, so the tensor shows what the seat may see.
    """
    out = np.zeros(OBS_SIZE, np.float32)

    def one(block: str, index: int, value: float = 1.0) -> None:
        out[OFFSETS[block] + index] = value

    one("seat", view["seat"])
    one("dealer", view["dealer"])
    one("forehand", view["forehand"])
    to_act = view.get("to_act")
    if to_act is not None and to_act >= 0:
        one("to_act", to_act)
    sitting_out = view.get("sitting_out")
    if sitting_out is not None and sitting_out >= 0:
        one("sitting_out", sitting_out)
    one("phase", PHASES.index(view["phase"]))
    one("trick_number", 0, view["trick_number"] / 78)
    for code in view["hand"]:
        one("hand", _card(code))
    for code in view.get("skat", ()):
        one("own_skat", _card(code))
    for trick in view["tricks"]:
        for seat, code in trick["cards"]:
            one("played_by", seat * 78 + _card(code))
    trick = view.get("trick")
    if trick is not None and trick["cards"]:
        one("trick_leader", trick["leader"])
        for seat, code in trick["cards"]:
            one("trick_cards", seat * 78 + _card(code))
        if trick.get("designation"):
            one("trick_designation", DESIGNATIONS.index(trick["designation"]))
        if trick.get("redesignation"):
            one("trick_redesignation", DESIGNATIONS.index(trick["redesignation"]))
    for seat, size in enumerate(view["hand_sizes"]):
        one("hand_sizes", seat, size / 78)
    for seat, won in enumerate(view["tricks_won"]):
        one("tricks_won", seat, won / 78)
    for declaration in view["declarations"]:
        suit = declaration.get("suit") or None
        k = DECLARE_NAMES.index(declaration["name"])
        s = 0 if suit is None else 1 + SUITS.index(suit)
        one("declared", (declaration["seat"] * len(DECLARE_NAMES) + k) * 5 + s)
        for code in declaration.get("cards", ()):
            one("shown_cards", _card(code))
    skat_public = view.get("skat_public")
    if skat_public:
        one("skat_public_taroks", 0, skat_public.get("taroks", 0) / 78)
        for code in skat_public.get("shown", ()):
            one("skat_public_shown", _card(code))
    for announcement in view.get("announcements", ()):
        one(
            "announced",
            announcement["seat"] * len(ANNOUNCE_NAMES) + ANNOUNCE_NAMES.index(announcement["name"]),
        )
    for answer in view.get("round_answers", ()):
        seat, kind, said = answer["seat"], answer["round"], answer["answer"]
        if kind == "bid":
            if said in CONTRACTS:
                one("bids", seat * len(CONTRACTS) + CONTRACTS.index(said))
        elif said != "pass":
            one("round_answers", seat * 3 + ("redeal", "demand").index(said))
        else:
            one("round_answers", seat * 3 + 2)
    for pot, value in view.get("pots_start", {}).items():
        one("pots_start", POTS.index(pot), value / 100)
    contract = view.get("contract")
    if contract:
        one("contract", CONTRACTS.index(contract))
    declarer = view.get("declarer")
    if declarer is not None and declarer >= 0:
        one("declarer", declarer)
    called = view.get("called")
    if called:
        one("called", _card(called))
    partner = view.get("partner")
    if partner is not None:
        one("partner", partner + 1)  # 0: the declarer plays alone
    for code in view.get("talon", ()):
        one("talon", _card(code))
    petit_sec = view.get("petit_sec")
    if petit_sec is not None and petit_sec >= 0:
        one("petit_sec", petit_sec)
    return out


def card_name(index: int) -> str:
    return str(Card(index))


# ----------------------------------------------------------------------------- the fast path from a state

_PHASE_INDEX = {p: i for i, p in enumerate(PHASES)}
_ROUND_SLOT = {"redeal": 0, "demand": 1, "pass": 2}
_CONTRACT_INDEX = {c: i for i, c in enumerate(CONTRACTS)}
_ANNOUNCE_INDEX = {n: i for i, n in enumerate(ANNOUNCE_NAMES)}
_DECLARE_INDEX = {n: i for i, n in enumerate(DECLARE_NAMES)}


class StateEncoder:
    """`encode_observation(observation(state, seat))` read straight from one deal's state, for speed.

    It reads exactly the fields `arena.engine.observation` puts in the seat's view (the tests hold
    the two equal decision by decision); the environment uses it, the bridge the other. What is
    public and only grows (finished tricks, declarations, announcements, round answers) is kept
    in one base tensor between calls; each call copies it and adds the rest.
    """

    def __init__(self, state: DealState) -> None:
        self.state = state
        self._public = np.zeros(OBS_SIZE, np.float32)
        self._seen = [0, 0, 0, 0]  # tricks, declarations, announcements, round answers
        self._legal: list[Action] | None = None
        self._mask = np.zeros(NUM_ACTIONS, np.int8)

    def mask(self) -> npt.NDArray[np.int8]:
        """The legal-action mask of the seat to act (a copy; kept while the state's legal list stays)."""
        legal = self.state.legal_actions()
        if legal is not self._legal:  # the state keeps its list until the next action
            self._legal, self._mask = legal, legal_mask(legal)
        return self._mask.copy()

    def _grow_public(self) -> None:
        state = self.state
        o = OFFSETS
        seen = self._seen
        ones: list[int] = []
        tricks = state.tricks
        if len(tricks) > seen[0]:
            at = o["played_by"]
            ones += [at + s * 78 + c for trick in tricks[seen[0] :] for s, c in trick.plays]
            seen[0] = len(tricks)
        declarations = state.declarations
        if len(declarations) > seen[1]:
            for declaration in declarations[seen[1] :]:
                public = declaration.public()
                suit = public.get("suit") or None
                k = _DECLARE_INDEX[str(public["name"])]
                slot = 0 if suit is None else 1 + SUITS.index(str(suit))
                ones.append(o["declared"] + (declaration.seat * len(DECLARE_NAMES) + k) * 5 + slot)
                cards: Sequence[str] = public.get("cards", ())  # type: ignore[assignment]
                ones += [o["shown_cards"] + CARD_INDEX[code] for code in cards]
            seen[1] = len(declarations)
        announcements = state.announcements
        if len(announcements) > seen[2]:
            at = o["announced"]
            ones += [
                at + a.seat * len(ANNOUNCE_NAMES) + _ANNOUNCE_INDEX[a.name] for a in announcements[seen[2] :]
            ]
            seen[2] = len(announcements)
        answers = state.round_answers
        if len(answers) > seen[3]:
            for kind, s, said in answers[seen[3] :]:
                if kind != "bid":
                    ones.append(o["round_answers"] + s * 3 + _ROUND_SLOT[said])
                elif said in _CONTRACT_INDEX:
                    ones.append(o["bids"] + s * len(CONTRACTS) + _CONTRACT_INDEX[said])
            seen[3] = len(answers)
        if ones:
            self._public[ones] = 1

    def encode(self, seat: int) -> npt.NDArray[np.float32]:
        state = self.state
        o = OFFSETS
        self._grow_public()
        out = self._public.copy()
        hands = state.hands
        ones = [o["hand"] + c for c in hands[seat]]
        ones += (
            o["seat"] + seat,
            o["dealer"] + state.dealer,
            o["forehand"] + state.forehand,
            o["phase"] + _PHASE_INDEX[state.phase],
        )
        if state.turn is not None:
            ones.append(o["to_act"] + state.turn)
        if state.sitting_out is not None:
            ones.append(o["sitting_out"] + state.sitting_out)
        if seat == state.discarder and state.skat:
            ones += [o["own_skat"] + c for c in state.skat]
        if state.trick:
            ones.append(o["trick_leader"] + state.trick[0][0])
            ones += [o["trick_cards"] + s * 78 + c for s, c in state.trick]
            if state.designation:
                ones.append(o["trick_designation"] + DESIGNATIONS.index(state.designation))
            if state.redesignation:
                ones.append(o["trick_redesignation"] + DESIGNATIONS.index(state.redesignation))
        skat_public = state.skat_public
        if skat_public:
            shown: Sequence[Any] = skat_public.get("shown", ())  # type: ignore[assignment]
            ones += [o["skat_public_shown"] + CARD_INDEX[str(code)] for code in shown]
        if state.variant.contracts:
            ones += self._american(seat)
        out[ones] = 1
        out[o["trick_number"]] = state.trick_no / 78
        players = len(hands)
        out[o["hand_sizes"] : o["hand_sizes"] + players] = [len(h) / 78 for h in hands]
        out[o["tricks_won"] : o["tricks_won"] + players] = [w / 78 for w in state.tricks_won]
        if skat_public:
            out[o["skat_public_taroks"]] = int(skat_public.get("taroks", 0)) / 78  # type: ignore[call-overload]
        if state.variant.pots is not None:
            for pot, value in state.pots_start.items():
                out[o["pots_start"] + POTS.index(pot)] = value / 100
        return out

    def _american(self, seat: int) -> list[int]:
        state = self.state
        o = OFFSETS
        ones: list[int] = []
        contract = "trischaken" if state.trischaken else None
        if contract is None and state.contract is not None and state.phase != "bid":
            contract = state.contract.name
            if state.declarer is not None and state.declarer >= 0:
                ones.append(o["declarer"] + state.declarer)
        if contract:
            ones.append(o["contract"] + _CONTRACT_INDEX[contract])
        if state.called is not None:
            ones.append(o["called"] + state.called)
        if state.talon_visible:
            ones += [o["talon"] + c for c in state.talon]
        partner = known_partner(state, seat)
        if partner is not None:
            ones.append(o["partner"] + partner + 1)
        if state.petit_sec is not None and state.petit_sec >= 0:
            ones.append(o["petit_sec"] + state.petit_sec)
        return ones
