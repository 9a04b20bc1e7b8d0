"""The kit's positions: engine states reached by playing chosen decks, one per case.

A case is data: a `Spec` names the position it wants (`where`, a predicate on a deal state
with a seat to act), the variants it applies to (`applies`, a predicate on the `Variant`, so a
spec can follow a rule rather than a variant name), optionally the cards some seats must hold
(`hands`, by role F, M, D: forehand, middlehand, dealer) and how the seats play until the
position comes (`steer`). `build_cases` plays deal after deal from seeded decks with the
engine until `where` holds; it never writes a view by hand.

Besides the specs, every variant gets one case per decision kind (a phase and an action type
legal in it) that random play meets and no spec covers, so a variant the kit does not know yet
(its bids, calls or talon exchange) is still asked about every decision kind it has. To cover a
new variant's edge cases, add `Spec`s with an `applies` that picks it (e.g.
``lambda v: v.name == "american"``).

`Case`, `Spec`, `Steer` and the deck builder are in `spec.py`; the `where` predicates in `where.py`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from functools import cache

from ..engine import DealState, Variant, find_variant
from ..referee.position import Position, Probe
from .spec import Case, Spec, Steer, deck_for
from .where import (
    bid_over,
    declarations_in_view,
    declare_again,
    discard_nth,
    discard_tarok,
    follow_designation,
    follow_taroks,
    fool_by_last_trick,
    fool_demanded,
    fool_forbidden,
    fool_late,
    fool_lead_designates,
    fool_led,
    fool_not_led,
    fool_when_void,
    free_card,
    last_trick,
    lead_trick,
    must_beat,
    must_follow,
    must_trump,
    only_pass,
    phase_with,
    redesignation,
    seat_out,
    second_to_play,
)

SEARCH_DEALS = 300
"""Deals tried per case before the kit gives up (a spec that is never met is a bug in the kit)."""
SWEEP_DEALS = 40
"""Random deals in which the kit looks for decision kinds that no spec covers."""
BIG_REQUEST_ID = 2**63 + 1  # above 2**53 (a double rounds it) and 2**63 (a signed int64 overflows)

# ---------------------------------------------------------------------- the specs

KNOWN_FAMILIES = frozenset({"dummett", "german", "danish"})
PLAIN_26 = "S2..S10 H2..H10 D2..D9"  # 26 blanks: no King, no tarok, no Fool


def _discard_taroks_hand(v: Variant) -> Mapping[str, str]:
    """A dealer whose taroks may go into the skat: DUM-DISC-3, G54-DISC-2 (a), DK-SKAT-3."""
    if v.family == "dummett":
        return {"D": f"T1 T5 {PLAIN_26}"}
    if v.family == "german":
        return {"D": "T1 T5 T6 S2..S10 H2..H10 D2..D8"}  # the Pagat and exactly three taroks
    return {"D": f"T5 T6 {PLAIN_26}"}


SPECS: tuple[Spec, ...] = (
    # discard (the dealer lays away three cards)
    Spec(
        "discard",
        "first card laid away; Kings (and honours) may not go",
        discard_nth(0),
        applies=lambda v: v.family in KNOWN_FAMILIES,
    ),
    Spec(
        "discard-third", "third card laid away", discard_nth(2), applies=lambda v: v.family in KNOWN_FAMILIES
    ),
    Spec(
        "discard-taroks",
        "taroks that may be laid away (DUM-DISC-3, G54-DISC-2, DK-SKAT-3)",
        discard_tarok,
        applies=lambda v: v.family in KNOWN_FAMILIES,
        hands=_discard_taroks_hand,
    ),
    Spec(
        "discard-fallback",
        "fewer than three blanks: middle taroks become legal (DUM-DISC-4, G54-DISC-3, DK-SKAT-5)",
        discard_tarok,
        applies=lambda v: v.family in KNOWN_FAMILIES,
        hands={"D": "SK HK DK CK S2 S3 T1..T21 EX"},
    ),
    # rounds
    Spec(
        "redeal-claim",
        "a hand without a tarok may claim a redeal (DK-DEAL-2)",
        phase_with("redeal", "redeal", "pass"),
        applies=lambda v: v.redeal == "claim",
        hands={"M": "SA..SK HA..HJ"},
    ),
    Spec(
        "redeal-pass",
        "the redeal round with a tarok in hand: pass is the only answer",
        only_pass("redeal"),
        applies=lambda v: v.redeal == "claim",
    ),
    Spec(
        "declare",
        "a declaration: matadors, kings (optional declarations)",
        phase_with("declare", "declare", "pass"),
        applies=lambda v: v.declarations == "optional" and v.family in KNOWN_FAMILIES,
        hands={"D": "T1 EX T21 T20 T19 SK HK DK CK"},
    ),
    Spec(
        "declare-again",
        "a second combination after a first declaration",
        declare_again,
        applies=lambda v: v.declarations == "optional" and v.family in KNOWN_FAMILIES,
        hands={"D": "T1 EX T21 T20 T19 SK HK DK CK"},
        steer=Steer(declare=True),
    ),
    Spec(
        "declarations-in-view",
        "public declarations in the view (Taroks with its published flags, a per-suit combination)",
        declarations_in_view,
        applies=lambda v: v.family in KNOWN_FAMILIES,
        hands={"F": "T1..T12 SJ SC SQ SK", "M": "T13..T21 EX HJ HC HQ HK"},
        steer=Steer(declare=True),
    ),
    Spec(
        "announce",
        "an announcement round before the first trick: vole, nolo or pass (DUM-ANN)",
        phase_with("announce", "announce", "pass"),
        applies=lambda v: v.announcements,
    ),
    Spec(
        "demand",
        "the demand round for the Fool before trick 23 (DK-FOOL-3)",
        phase_with("demand", "demand", "pass"),
        applies=lambda v: v.fool_demand,
        steer=Steer(keep_fool=True),
    ),
    Spec(
        "bid",
        "the first bid: a contract or pass (AM-BID)",
        phase_with("bid", "bid", "pass"),
        applies=lambda v: v.name == "american",
    ),
    Spec(
        "bid-over",
        "a bid over an earlier one: only higher contracts or pass (AM-BID-2)",
        bid_over,
        applies=lambda v: v.name == "american",
    ),
    Spec(
        "call",
        "the declarer calls a card (AM-CALL-1)",
        phase_with("call", "call"),
        applies=lambda v: v.name == "american",
    ),
    Spec(
        "talon-exchange",
        "the declarer lays away talon-exchange cards (AM-TAL-1)",
        discard_nth(0),
        applies=lambda v: v.name == "american",
    ),
    Spec(
        "announce-bonus",
        "bonuses and combinations announced for one's side (AM-ANN-1)",
        phase_with("announce", "announce", "pass"),
        applies=lambda v: v.name == "american",
    ),
    Spec(
        "trischaken-must-beat",
        "everyone passed (Trischaken): a card that beats the trick if one can (AM-TRI-3)",
        must_beat,
        applies=lambda v: v.name == "american",
        steer=Steer(passes=frozenset({"bid"})),
    ),
    # trick play
    Spec("lead", "leads a trick (trick 5)", lead_trick(5)),
    Spec("second", "second to play", second_to_play),
    Spec("must-follow", "must follow the suit led (G-TRICK-4)", must_follow),
    Spec("must-trump", "void in the suit led: must play a tarok (G-TRICK-4)", must_trump),
    Spec("follow-taroks", "taroks led: must follow with a tarok", follow_taroks),
    Spec("free-card", "void in the suit led and in taroks: any card", free_card),
    Spec("last-trick", "the last trick", last_trick),
    Spec(
        "fool-led",
        "after a led Fool (the next card decides the suit, or the designation does)",
        fool_led,
        applies=lambda v: v.fool_lead != "forbidden",
        steer=Steer(lead_fool=""),
    ),
    Spec(
        "fool-late",
        "holds the Fool in the last tricks (captured there in some variants)",
        fool_late,
        applies=lambda v: v.fool_last_trick is None,
        steer=Steer(keep_fool=True),
    ),
    Spec(
        "fool-designate",
        "leads with the Fool in hand: a led Fool names a suit (G-TRICK-3)",
        fool_lead_designates,
        applies=lambda v: v.fool_lead == "designate",
    ),
    Spec(
        "fool-designated-suit",
        "must follow the suit the led Fool designated",
        follow_designation,
        applies=lambda v: v.fool_lead == "designate",
        steer=Steer(lead_fool="S"),
    ),
    Spec(
        "fool-redesignate",
        "nobody holds the designated suit: re-designate with the card (G-TRICK-3, AMB-12)",
        redesignation,
        applies=lambda v: v.fool_lead == "designate",
        hands={"F": "SA..SK EX"},
        steer=Steer(lead_fool="S"),
    ),
    Spec(
        "fool-not-led",
        "the Excuse may not be led (G54-PLAY-1)",
        fool_not_led,
        applies=lambda v: v.fool_lead == "forbidden",
    ),
    Spec(
        "fool-by-23",
        "the Excuse must be played by trick 23 (G54-FOOL-2)",
        fool_by_last_trick,
        applies=lambda v: v.fool_last_trick is not None,
        steer=Steer(keep_fool=True),
    ),
    Spec(
        "fool-when-void",
        "void in the suit led and without taroks: must play the Excuse (G54-FOOL-3)",
        fool_when_void,
        applies=lambda v: v.fool_when_void,
        hands={"M": "EX HA..HK DA..D10"},
        steer=Steer(keep_fool=True),
    ),
    Spec(
        "fool-trick-24",
        "the Fool may not be played to trick 24 (DK-FOOL-2)",
        fool_forbidden,
        applies=lambda v: v.fool_forbidden_trick is not None,
        steer=Steer(keep_fool=True),
    ),
    Spec(
        "fool-demanded",
        "the Fool was demanded: it must go to trick 23 (DK-FOOL-3)",
        fool_demanded,
        applies=lambda v: v.fool_demand,
        steer=Steer(keep_fool=True, demand=True),
    ),
    Spec(
        "four-seats",
        "four seats, one sitting out (G54-TAB-2)",
        seat_out,
        applies=lambda v: v.name == "german-1754",
        options={"players": "4"},
    ),
    # the protocol
    Spec(
        "reconnect",
        "the stream breaks after the request: dial again, answer it",
        lead_trick(2),
        probes=frozenset({Probe.DROP}),
    ),
    Spec(
        "unknown-fields",
        "a message of an unknown kind, unknown fields at every level: ignore them",
        second_to_play,
        probes=frozenset({Probe.UNKNOWN_FIELDS}),
    ),
    Spec(
        "stray-rejection",
        "an ActionRejected for a request never sent: ignore it",
        lead_trick(3),
        probes=frozenset({Probe.STRAY_REJECTION}),
    ),
    Spec(
        "request-id-2^63+1",
        "a request id above 2^53 and 2^63, echoed exactly",
        lead_trick(4),
        request_id=BIG_REQUEST_ID,
    ),
)


def _find(spec: Spec, variant: Variant) -> DealState:
    hands = spec.hands(variant) if callable(spec.hands) else spec.hands
    for deal in range(SEARCH_DEALS):
        rng = random.Random(f"conformance:{variant.name}:{spec.name}:{deal}")
        state = DealState(variant, spec.dealer, deck_for(variant, spec.dealer, hands, rng))
        while not state.is_terminal():
            if spec.where(state):
                return state
            state.apply(spec.steer.choose(state, rng))
    raise LookupError(f"{variant.name}: no deal in {SEARCH_DEALS} reaches case {spec.name!r}")


def _kind_sweep(variant: Variant, covered: set[tuple[str, str]]) -> list[Case]:
    """A position for every decision kind (phase, action type) that random play meets and no spec
    covers: the first state of a few random deals where that kind is legal."""
    found: list[Case] = []
    steer = Steer()
    for deal in range(SWEEP_DEALS):
        rng = random.Random(f"conformance:{variant.name}:kinds:{deal}")
        state = DealState(variant, 0, deck_for(variant, 0, {}, rng))
        while not state.is_terminal():
            kinds = {(state.phase, a.type) for a in state.legal_actions()} - covered
            if kinds:
                phase, kind = min(kinds)
                title = f"a {kind} action in the {phase} phase"
                found.append(Case(variant.name, f"{phase}-{kind}", title, Position(state)))
                covered |= kinds
                state = _copy_play(state)  # the case keeps its state; play goes on in a copy
            state.apply(steer.choose(state, rng))
    return found


def _copy_play(state: DealState) -> DealState:
    """The same deal replayed to the same point."""
    copy = DealState(state.variant, state.dealer, state.deck, state.pots_start, state.stakes)
    for _, action in state.history:
        copy.apply(action)
    return copy


@cache
def build_cases(variant_name: str) -> tuple[Case, ...]:
    """Every case of one variant (deterministic; cached). Raises LookupError for a spec never met."""
    base = find_variant(variant_name)
    cases: list[Case] = []
    for spec in SPECS:
        if not spec.applies(base):
            continue
        variant = find_variant(variant_name, dict(spec.options)) if spec.options else base
        state = _find(spec, variant)
        position = Position(state, spec.probes, spec.request_id)
        cases.append(Case(variant_name, spec.name, spec.title, position, dict(spec.options)))
    covered = {(c.state.phase, a.type) for c in cases if not c.options for a in c.state.legal_actions()}
    cases.extend(_kind_sweep(base, covered))
    return tuple(cases)


def cases_for(variants: Sequence[str]) -> list[Case]:
    return [case for name in variants for case in build_cases(name)]
