"""The fixed action space and the layout of the observation tensor (docs/RESEARCH.md has both tables).

Plain Python, no numpy: mypyc compiles this module and `tensors` (setup.py's COMPILED list) in a
build that has no numpy. `spaces` re-exports all of it beside the numpy functions.

Action space (the same for every variant):

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

from typing import Final

from arena.engine import CARDS, Action
from arena.engine.actions import make
from arena.engine.deal import AMERICAN_BONUSES

SUITS: Final = ("S", "H", "D", "C")
DESIGNATIONS: Final = ("S", "H", "D", "C", "T")
BIDS: Final = ("rufer", "solorufer", "dreier", "solodreier")
ANNOUNCE_NAMES: Final = ("vole", "nolo", *AMERICAN_BONUSES)
DECLARE_NAMES: Final = (
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
PLAY_DESIGNATED: Final = 78
DISCARD: Final = PLAY_DESIGNATED + 78 * 5
CALL: Final = DISCARD + 78
PASS: Final = CALL + 78
REDEAL: Final = PASS + 1
DEMAND: Final = PASS + 2
BID: Final = PASS + 3
ANNOUNCE: Final = BID + len(BIDS)
DECLARE: Final = ANNOUNCE + len(ANNOUNCE_NAMES)
NUM_ACTIONS: Final = DECLARE + 5 * len(DECLARE_NAMES)


def _action_table() -> tuple[Action, ...]:
    # The engine's interned actions, made with the same arguments as the engine makes them
    # (`actions.make` caches by its arguments): a legal action found by identity is found fastest.
    table: list[Action] = [make("play", CARDS[c]) for c in range(78)]
    table += [make("play", CARDS[c], d) for c in range(78) for d in DESIGNATIONS]
    table += [make("discard", CARDS[c]) for c in range(78)]
    table += [make("call", CARDS[c]) for c in range(78)]
    table += [make("pass"), make("redeal"), make("demand")]
    table += [make("bid", name=b) for b in BIDS]
    table += [make("announce", name=n) for n in ANNOUNCE_NAMES]
    table += [make("declare", None, s, n) for n in DECLARE_NAMES for s in (None, *SUITS)]
    return tuple(table)


ACTIONS: Final = _action_table()
"""`ACTIONS[i]` is the engine action of index i."""
ACTION_INDEX: Final[dict[Action, int]] = {a: i for i, a in enumerate(ACTIONS)}
_BY_ID: Final[dict[int, int]] = {id(a): i for i, a in enumerate(ACTIONS)}  # ACTIONS holds them all
assert len(ACTIONS) == NUM_ACTIONS == len(ACTION_INDEX)


def action_index(action: Action) -> int:
    """The index of an engine action; a `KeyError` naming it if the space lacks it."""
    index = _BY_ID.get(id(action), -1)  # no hashing of the tuple for the engine's own actions
    if index >= 0:
        return index
    try:
        return ACTION_INDEX[action]
    except KeyError:
        raise KeyError(f"action {action} has no index in the research action space") from None


# ----------------------------------------------------------------------------- observation

PHASES: Final = ("redeal", "bid", "call", "discard", "declare", "announce", "demand", "play", "end")
CONTRACTS: Final = (*BIDS, "trischaken")
SEATS: Final = 4  # room for the largest table; a 3-seat variant leaves the fourth seat's slots zero
POTS: Final = ("king", "pagat")

# (name, size) of each block of the flat tensor, in order.
BLOCKS: Final[tuple[tuple[str, int], ...]] = (
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


def _offsets() -> dict[str, int]:
    offsets: dict[str, int] = {}
    at = 0
    for name, size in BLOCKS:
        offsets[name] = at
        at += size
    offsets[""] = at  # the end: OBS_SIZE
    return offsets


OFFSETS: Final[dict[str, int]] = _offsets()
OBS_SIZE: Final = OFFSETS.pop("")
