"""Why an action is illegal: the rule it breaks, for the message of `IllegalActionError`.

`DealState.verify` calls `explain` only after `can` has rejected an action, so
nothing here decides legality or runs on the hot path: legality is the phases'
(`TrickPlay`, `Phases`, listed by `DealState._compute_legal`), and an explanation
only names the rule that failed, asking the phases' own predicates which one
(`suit_to_play`, `_must_redesignate`, the Fool's timing, the discard's feasibility,
the call ladder).  `state` is a `DealState`, typed as the `Phases` it builds on so
that this module stays below state.py.
"""

from __future__ import annotations

from . import actions as A
from .actions import Action
from .cards import CARDS, FOOL, KINGS, PAGAT
from .deal import (
    AMERICAN_BONUSES,
    ANNOUNCE,
    BID,
    CALL,
    DECLARE,
    DEMAND,
    DESIGNATION_NO,
    DISCARD,
    NO_DESIGNATION,
    PLAY,
    REDEAL,
)
from .options import Family, FoolLead
from .phases import CALLABLE_RANKS, Phases
from .play import suit_to_play

# The rule that makes the dealer lay away cards of his own hand, per family (DK-SKAT-1 otherwise).
_DISCARD_RULE = {Family.DUMMETT: "DUM-DISC-1", Family.GERMAN: "G54-DISC-1"}


def explain(state: Phases, action: Action) -> tuple[str, str]:
    """The reason `action` is illegal for the seat to act, and the rule it breaks."""
    phase = state.phase
    seat = state.turn
    assert seat is not None
    v = state.variant
    if v.contracts and phase != PLAY:
        return _explain_american(state, action)
    expected = {
        PLAY: ("play",),
        DISCARD: ("discard",),
        DECLARE: ("declare", "pass"),
        ANNOUNCE: ("announce", "pass"),
        REDEAL: ("redeal", "pass"),
        DEMAND: ("demand", "pass"),
    }[phase]
    phase_rule = {
        PLAY: "G-TRICK-1",
        DISCARD: _DISCARD_RULE.get(v.family, "DK-SKAT-1"),
        DECLARE: {Family.DUMMETT: "DUM-DECL-1", Family.GERMAN: "G54-DECL-1"}.get(v.family, "DK-DECL-1"),
        ANNOUNCE: "DUM-ANN-3",
        REDEAL: "DK-DEAL-2",
        DEMAND: "DK-FOOL-3",
    }[phase]
    if action.type not in expected:
        return f"the phase is {phase}; expected {' or '.join(expected)}", phase_rule
    hand = state.hands[seat]
    if phase == DISCARD:
        return _explain_discard(state, action)
    if phase == DECLARE:
        return (
            f"seat {seat} does not hold an undeclared {action.name} {action.suit or ''}".strip(),
            phase_rule,
        )
    if phase == ANNOUNCE:
        name = action.name or ""
        rule = "DUM-ANN-1" if name in ("vole", "nolo") else "DUM-ANN-3"
        return f"{name} is not open to seat {seat} before trick {state.trick_no}", rule
    if phase == REDEAL:
        return "only a player holding no tarok may claim a redeal", "DK-DEAL-2"
    if phase == DEMAND:
        return "the holder of the Fool cannot demand it", "DK-FOOL-3"
    card = action.card
    assert card is not None
    if card not in hand:
        return f"{card} is not in the hand of seat {seat}", "G-TRICK-1"
    leading = not state.trick
    if card == FOOL and leading:
        if v.fool_lead is FoolLead.FORBIDDEN:
            return "the Excuse may not be led", "G54-PLAY-1"
        if v.fool_lead is FoolLead.DESIGNATE and action.suit is None:
            return "a led Fool needs a designated suit (S, H, D, C or T)", "G-TRICK-3"
    if state._fool_demanded_now() and FOOL in hand:
        return "the Fool was demanded for trick 23", "DK-FOOL-3"
    if card == FOOL and state._fool_barred():
        return "the Fool may not be played to trick 24", "DK-FOOL-2"
    if FOOL in hand and v.fool_last_trick is not None and not leading:
        if state._fool_overdue(leading):
            return "the Excuse must be played no later than trick 23", "G54-FOOL-2"
        if state._legal_plays(seat) == [A.PLAY[FOOL]]:
            return "a holder without taroks must play the Excuse when void in the led suit", "G54-FOOL-3"
    if state._must_redesignate() and action.suit is None:
        return "nobody can follow the designated suit: name a new suit with the card", "G-TRICK-3"
    if action.suit is not None and not (leading and card == FOOL) and not state._must_redesignate():
        return "only a led Fool or a re-designation names a suit", "G-TRICK-3"
    led = state.led
    if action.suit is not None and not leading:
        led = DESIGNATION_NO[action.suit]
    if state.trischaken and (led is None or card in state._followers(hand, led)):
        if card == PAGAT:
            return "T1 may be led or played only as the player's last tarok", "AM-TRI-4"
        return f"seat {seat} must beat {state._winning_card()} with a card that can", "AM-TRI-3"
    if led is not None and suit_to_play(hand, led) == led:
        return f"seat {seat} must follow {NO_DESIGNATION[led]}", "G-TRICK-4"
    return f"seat {seat} must play a tarok", "G-TRICK-4"


def _explain_american(state: Phases, action: Action) -> tuple[str, str]:
    """The rule an illegal action breaks in the bidding, the call, the talon or the announcements."""
    phase = state.phase
    seat = state.turn
    assert seat is not None
    expected = {
        BID: ("bid", "pass"),
        CALL: ("call",),
        DISCARD: ("discard",),
        ANNOUNCE: ("announce", "declare", "pass"),
    }[phase]
    phase_rule = {BID: "AM-BID-2", CALL: "AM-CALL-1", DISCARD: "AM-TAL-1", ANNOUNCE: "AM-ANN-1"}[phase]
    if action.type not in expected:
        return f"the phase is {phase}; expected {' or '.join(expected)}", phase_rule
    card = action.card
    if phase == BID:
        names = [c.name for c in state.variant.contracts]
        if action.name not in names:
            return f"unknown contract {action.name!r} (one of {', '.join(names)})", "AM-BID-1"
        assert state.contract is not None
        return f"a bid must be higher than {state.contract.name}", "AM-BID-2"
    if phase == CALL:
        assert card is not None
        if card in CALLABLE_RANKS:
            return "a lower rank may be called only when every higher court is in hand", "AM-CALL-1"
        return "only a King, Queen, Cavalier, Jack or T2…T20 can be called", "AM-CALL-1"
    if phase == DISCARD:
        assert card is not None
        if card not in state.hands[state.discarder]:
            return f"{card} is not in the declarer's hand", "AM-TAL-1"
        return "Kings, EX, T1 and T21 are never laid away", "AM-TAL-1"
    if action.type == "declare":
        return (
            f"seat {seat} does not hold an undeclared {action.name} {action.suit or ''}".strip(),
            "AM-COMB-1",
        )
    name = action.name
    if name not in AMERICAN_BONUSES:
        return f"unknown bonus {name!r} (one of {', '.join(AMERICAN_BONUSES)})", "AM-ANN-1"
    if any(a.seat == seat and a.name == name for a in state.announcements):
        return f"seat {seat} has already announced {name}", "AM-ANN-1"
    if name == "capture_called":
        return "only the defenders may announce capture_called, and only in Rufer and Solorufer", "AM-ANN-1"
    return "king_ultimo_called needs a called King, Queen, Cavalier or Jack", "AM-ANN-1"


def _explain_discard(state: Phases, action: Action) -> tuple[str, str]:
    card = action.card
    assert card is not None
    fam = state.variant.family
    if card not in state.hands[state.dealer]:
        return f"{card} is not in the dealer's hand", _DISCARD_RULE.get(fam, "DK-SKAT-1")
    if fam is Family.DUMMETT:
        if card in KINGS or card == CARDS[76]:
            return "a King or T21 is never laid away", "DUM-DISC-2"
        return "taroks and the Sküs may go only with the Pagat and at most two others", "DUM-DISC-3"
    if fam is Family.GERMAN:
        if card in KINGS:
            return "a King is never laid away", "G54-DISC-1"
        return "taroks and the Excuse may not be laid away here", "G54-DISC-2"
    if card in KINGS or card in (PAGAT, CARDS[76], FOOL):
        return "a King, T1, T21 or the Fool is never laid away", "DK-SKAT-2"
    if state._discard_feasible(frozenset(state.skat) | {card}, maximise=False):
        return "the skat must hold as many non-combination cards as possible", "DK-SKAT-4"
    return "middle taroks go into the skat all together, and only if the dealer keeps none", "DK-SKAT-3"
