"""The action space and the observation tensor shared by the environment, the game and the bridge.

Both are functions of what one seat may see, nothing more: the observation tensor is defined as
`encode_observation(arena.engine.observation(state, seat))` (the dict the server sends a bot, as a
`View`), so the bridge builds the very same tensor from a `View` it receives over gRPC. The
environment and the OpenSpiel game keep every seat's tensor of a deal up to date instead
(`DealObservations`, on `tensors.SeatTensor`), which the tests hold equal to it decision by decision.

The action space and the block layout are in `layout` (docs/RESEARCH.md has both tables); this
module re-exports them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from arena.engine import Action, Card, DealState

from .layout import (
    ACTION_INDEX,
    ACTIONS,
    ANNOUNCE,
    ANNOUNCE_NAMES,
    BID,
    BIDS,
    BLOCKS,
    CALL,
    CONTRACTS,
    DECLARE,
    DECLARE_NAMES,
    DEMAND,
    DESIGNATIONS,
    DISCARD,
    NUM_ACTIONS,
    OBS_SIZE,
    OFFSETS,
    PASS,
    PHASES,
    PLAY_DESIGNATED,
    POTS,
    REDEAL,
    SEATS,
    SUITS,
    action_index,
)
from .tensors import DealObservations

__all__ = [
    "ACTIONS",
    "ACTION_INDEX",
    "ANNOUNCE",
    "ANNOUNCE_NAMES",
    "BID",
    "BIDS",
    "BLOCKS",
    "CALL",
    "CONTRACTS",
    "DECLARE",
    "DECLARE_NAMES",
    "DEMAND",
    "DESIGNATIONS",
    "DISCARD",
    "NUM_ACTIONS",
    "OBS_SIZE",
    "OFFSETS",
    "PASS",
    "PHASES",
    "PLAY_DESIGNATED",
    "POTS",
    "REDEAL",
    "SEATS",
    "SUITS",
    "DealObservations",
    "action_index",
    "deal_observations",
    "encode_observation",
    "index_of_text",
    "legal_mask",
    "observation_bounds",
]


def index_of_text(text: str) -> int:
    return action_index(Action.parse(text))


def legal_mask(legal: Sequence[Action] | Sequence[str]) -> npt.NDArray[np.int8]:
    """The mask of a list of legal actions (engine actions or their text); a `KeyError` naming one
    the space lacks."""
    mask = np.zeros(NUM_ACTIONS, np.int8)
    mask[[action_index(a) if isinstance(a, Action) else index_of_text(a) for a in legal]] = 1
    return mask


# ----------------------------------------------------------------------------- observation

CARD_INDEX = {str(c): int(c) for c in (Card(i) for i in range(78))}


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


def deal_observations(state: DealState) -> DealObservations:
    """Every seat's kept observation tensor of `state`'s deal and the mask of the seat to act
    (`tensors.DealObservations`), as numpy arrays: float32 rows of `OBS_SIZE`, int8 masks of
    `NUM_ACTIONS`."""
    return DealObservations(
        state, partial(np.zeros, OBS_SIZE, np.float32), partial(np.zeros, NUM_ACTIONS, np.int8)
    )
