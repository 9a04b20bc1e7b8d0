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

from arena.engine import CARDS, Action, Card

SUITS = ("S", "H", "D", "C")
DESIGNATIONS = ("S", "H", "D", "C", "T")
BIDS = ("rufer", "solorufer", "dreier", "solodreier")
ANNOUNCE_NAMES = (
    "vole",
    "nolo",
    "trull",
    "four_kings",
    "capture_called",
    "petit_ultimo",
    "king_ultimo_called",
    "king_ultimo_other",
    "slam",
)
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
    for action in legal:
        mask[action_index(action) if isinstance(action, Action) else index_of_text(action)] = 1
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
    by 1/100 (they are the only entries that may exceed 1); every other entry is 0 or 1. Only keys of the seat's view are read, so the tensor shows what the seat may see.
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
        one("announced", announcement["seat"] * len(ANNOUNCE_NAMES) + ANNOUNCE_NAMES.index(announcement["name"]))
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
