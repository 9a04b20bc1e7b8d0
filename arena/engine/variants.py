"""Variants as data plus a few hooks.

A `Variant` reads like a row of RULES §8: seats, direction, ranking, Fool rules,
declarations, pots, contracts, scoring parameters.  The hooks are plain functions
chosen per family: `discard_plans` (which skats are legal), `combinations` (what a
hand may declare) and `score` (the end of the deal, in `scoring.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Final

from . import combos
from .cards import FOOL, KINGS, MOND, PAGAT, TAROKS, Card
from .errors import ConfigError
from .options import (
    Counting,
    Family,
    FoolLead,
    Ladons,
    NoloCancels,
    Redeal,
    TrischakenLeader,
    TrischakenScoring,
)

SkatPlan = tuple[frozenset[Card], frozenset[Card]]
"""(cards that must all be laid away, cards that may fill the remaining places)."""

MIDDLE_TAROKS = frozenset(t for t in TAROKS if t not in (PAGAT, MOND))


@dataclass(frozen=True)
class PotRules:
    """DK-POT-2/3: pot payments (§4.1)."""

    ante: int
    refill: int
    dealer_stake: int
    stake_into_every_pot: bool  # `danish-pots`: the dealer pays into refilled pots too


@dataclass(frozen=True)
class DanishScoring:
    """The scoring switches of §4.1."""

    pagat_win_pays: bool  # DK-INPLAY-2
    tout: int  # DK-END-5
    nolo_skips_failed_ultimo: bool  # DK-END-3, AMB-11
    failed_ultimo_doubles_pot: bool  # DK-END-3, AMB-07
    counting: Counting  # DK-END-7


@dataclass(frozen=True)
class Contract:
    """AM-BID-1: an `american` contract, lowest first in `Variant.contracts`."""

    name: str
    multiplier: int
    calls: bool  # AM-CALL-1: the declarer calls a card (Rufer, Solorufer)
    exchange: bool  # AM-TAL-1: the talon is shown and exchanged (Rufer, Dreier); else AM-TAL-2


AMERICAN_CONTRACTS = (
    Contract("rufer", 1, calls=True, exchange=True),
    Contract("solorufer", 2, calls=True, exchange=False),
    Contract("dreier", 4, calls=False, exchange=True),
    Contract("solodreier", 8, calls=False, exchange=False),
)


@dataclass(frozen=True)
class Variant:
    """One variant with its options resolved.

    `options` is the mapping of option names to the strings they were given, as views and replays
    publish it; the rules read the typed fields each option sets (`find_variant` checks and
    converts them), never `options`.
    """

    name: str
    options: Mapping[str, str]
    family: Family  # picks the discard, combination and scoring hooks
    seats: int = 3
    players: int = 3  # active players in one deal (G54-TAB-2: a fourth seat sits out)
    clockwise: bool = False
    red_pips_reversed: bool = True
    fool_lead: FoolLead = FoolLead.NEXT_CARD  # G-TRICK-3
    fool_captured_from: int | None = None  # first trick in which a played Fool is captured
    fool_forbidden_trick: int | None = None  # DK-FOOL-2: trick 24
    fool_last_trick: int | None = None  # G54-FOOL-2: must be played by trick 23
    fool_when_void: bool = False  # G54-FOOL-3
    fool_demand: bool = False  # DK-FOOL-3
    fool_owner_without_tricks_gives_fool: bool = False  # DK-FOOL-6
    declarations: str = "optional"  # or "compulsory" (made by the engine)
    announcements: bool = False  # DUM-ANN: Vole and Nolo
    redeal: Redeal | None = None  # DK-DEAL-2
    pots: PotRules | None = None
    danish: DanishScoring | None = None
    trick_count: int = 25
    contracts: tuple[Contract, ...] = ()  # AM-BID-1: a bidding round when not empty
    talon_size: int = 0  # AM-DEAL-1: cards dealt to the talon (G-DEAL-2)
    discard_count: int = 3  # cards laid away: the skat, or the American talon exchange (AM-TAL-1)
    fool_wins_slam_lead: bool = False  # AM-FOOL-3
    ladons: Ladons = Ladons.PIPS  # option `ladons` (DUM-DECL-3, AMB-16)
    nolo_cancels: NoloCancels = NoloCancels.ALL  # option `nolo_cancels` (DUM-BON-6)
    trischaken_leader: TrischakenLeader = TrischakenLeader.DEALER  # option (AM-TRI-2)
    trischaken_scoring: TrischakenScoring = TrischakenScoring.PAIRWISE  # option (AM-TRI-6)
    description: str = field(default="", compare=False)

    @property
    def pot_names(self) -> tuple[str, ...]:
        return ("king", "pagat") if self.pots else ()

    def combinations(self, hand: Collection[Card]) -> list[combos.Combination]:
        return _FINDERS[self.family](hand, self.ladons)

    def discard_plans(self, hand: Collection[Card]) -> list[SkatPlan]:
        return _DISCARD[self.family](self, hand)

    @property
    def maximise_free_skat_cards(self) -> bool:
        """DK-SKAT-4: the skat holds as many non-combination cards as possible."""
        return self.family is _DANISH

    # A variant is immutable and fully named by its id and options: a copy is the variant itself,
    # and a pickle rebuilds it by name (a compiled class cannot be rebuilt field by field).
    def __deepcopy__(self, memo: dict[int, object]) -> Variant:
        return self

    def __reduce__(self) -> tuple[Callable[..., Variant], tuple[str, dict[str, str]]]:
        return find_variant, (self.name, dict(self.options))


_DANISH: Final = Family.DANISH  # a static of the compiled module: an Enum member's look-up is slow

_FINDERS: dict[Family, combos.Finder] = {
    Family.DUMMETT: combos.dummett,
    Family.GERMAN: combos.german,
    Family.DANISH: combos.danish,
    Family.AMERICAN: combos.american,
}


def _with_fallback(pool: set[Card], hand: Collection[Card]) -> frozenset[Card]:
    """DUM-DISC-4, G54-DISC-3: with fewer than 3 legal cards, T2…T20 become legal."""
    if len(pool) < 3:
        pool |= {c for c in hand if c in MIDDLE_TAROKS}
    return frozenset(pool)


def _dummett_plans(variant: Variant, hand: Collection[Card]) -> list[SkatPlan]:
    tarok_class = [c for c in hand if c in TAROKS or c == FOOL]
    # DUM-DISC-3 (AMB-15): with the Pagat and at most two other tarok-class cards, all but T21 may go.
    taroks_free = PAGAT in hand and len(tarok_class) <= 3
    pool = {
        c
        for c in hand
        if c not in KINGS and c != MOND and (taroks_free or not (c in TAROKS or c == FOOL))  # DUM-DISC-2
    }
    return [(frozenset(), _with_fallback(pool, hand))]


def _german_plans(variant: Variant, hand: Collection[Card]) -> list[SkatPlan]:
    taroks = {c for c in hand if c in TAROKS}
    pool = {c for c in hand if c not in KINGS and c not in taroks and c != FOOL}  # G54-DISC-1/2
    if PAGAT in taroks and len(taroks) == 3:  # G54-DISC-2 (a)
        pool |= taroks
    if PAGAT in taroks and FOOL in hand and len(taroks) == 2:  # G54-DISC-2 (b)
        pool |= taroks | {FOOL}
    return [(frozenset(), _with_fallback(pool, hand))]


def _danish_plans(variant: Variant, hand: Collection[Card]) -> list[SkatPlan]:
    taroks = frozenset(c for c in hand if c in TAROKS)
    pool = frozenset(c for c in hand if c not in KINGS and c not in TAROKS and c != FOOL)  # DK-SKAT-2
    plans: list[SkatPlan] = [(frozenset(), pool)] if len(pool) >= 3 else []
    # DK-SKAT-3: middle taroks only if the dealer thereby keeps no tarok at all.
    if taroks and taroks <= MIDDLE_TAROKS and len(taroks) <= 3 and len(pool) >= 3 - len(taroks):
        plans.append((taroks, pool))
    if not plans:  # DK-SKAT-5 (AMB-52): only when DK-SKAT-2/3 admit no skat at all
        plans.append((frozenset(), pool | (taroks & MIDDLE_TAROKS)))
    return plans


def _american_plans(variant: Variant, hand: Collection[Card]) -> list[SkatPlan]:
    """AM-TAL-1: never laid away: Kings, EX, T1, T21 (at least 17 of 24 cards always remain)."""
    return [(frozenset(), frozenset(c for c in hand if c not in KINGS and c not in (FOOL, PAGAT, MOND)))]


_DISCARD: dict[Family, Callable[[Variant, Collection[Card]], list[SkatPlan]]] = {
    Family.DUMMETT: _dummett_plans,
    Family.GERMAN: _german_plans,
    Family.DANISH: _danish_plans,
    Family.AMERICAN: _american_plans,
}


@dataclass(frozen=True)
class OptionSpec:
    choices: tuple[str, ...]  # the first is the default
    doc: str


def _choices(values: type[StrEnum]) -> tuple[str, ...]:
    """An option's choices, the default first: the values of its enum, as plain strings."""
    return tuple(member.value for member in values)


OPTIONS: dict[str, dict[str, OptionSpec]] = {
    "grosstarock": {
        "ladons": OptionSpec(_choices(Ladons), "what counts as a Ladon (G-PACK-5, AMB-16)"),
        "nolo_cancels": OptionSpec(_choices(NoloCancels), "what a successful Nolo cancels (DUM-BON-6)"),
    },
    "german-1754": {
        "players": OptionSpec(("3", "4"), "a fourth seat that sits out in turn (G54-TAB-2)"),
    },
    "danish": {
        "redeal": OptionSpec(_choices(Redeal), "redeal of a hand without tarok (DK-DEAL-2)"),
    },
    "danish-pots": {
        "red_pips": OptionSpec(("reversed", "straight"), "red pip order (G-RANK-3, AMB-01)"),
        "counting": OptionSpec(_choices(Counting), "card counting (DK-END-7, G-CP-5)"),
    },
    "american": {
        "trischaken_leader": OptionSpec(
            _choices(TrischakenLeader), "who leads trick 1 of Trischaken (AM-TRI-2)"
        ),
        "trischaken_scoring": OptionSpec(_choices(TrischakenScoring), "Trischaken settlement (AM-TRI-6)"),
    },
}

VARIANT_NAMES: tuple[str, ...] = tuple(OPTIONS)


def find_variant(name: str, options: Mapping[str, str] | None = None) -> Variant:
    """The variant `name` with `options` (missing ones take their default)."""
    if name not in OPTIONS:
        raise ConfigError(f"unknown variant {name!r} (known: {', '.join(VARIANT_NAMES)})")
    specs = OPTIONS[name]
    given = dict(options or {})
    resolved: dict[str, str] = {}
    for key, spec in specs.items():
        value = str(given.pop(key, spec.choices[0]))
        if value not in spec.choices:
            raise ConfigError(f"option {key}={value!r} for {name}: expected one of {', '.join(spec.choices)}")
        resolved[key] = value
    if given:
        known = ", ".join(specs) or "none"
        raise ConfigError(f"unknown option(s) {', '.join(sorted(given))} for {name} (known: {known})")
    return _PRESETS[name](MappingProxyType(resolved))


def _grosstarock(options: Mapping[str, str]) -> Variant:
    return Variant(
        name="grosstarock",
        options=options,
        family=Family.DUMMETT,
        clockwise=True,  # DUM-TAB-1
        fool_lead=FoolLead.NEXT_CARD,  # DUM-PLAY-1
        fool_captured_from=23,  # DUM-PLAY-2
        declarations="optional",  # DUM-DECL-1
        announcements=True,  # DUM-ANN
        ladons=Ladons(options["ladons"]),
        nolo_cancels=NoloCancels(options["nolo_cancels"]),
        description="Dummett's classical Grosstarock",
    )


def _german(options: Mapping[str, str]) -> Variant:
    return Variant(
        name="german-1754",
        options=options,
        family=Family.GERMAN,
        seats=int(options["players"]),  # G54-TAB-2
        fool_lead=FoolLead.FORBIDDEN,  # G54-PLAY-1
        fool_last_trick=23,  # G54-FOOL-2
        fool_when_void=True,  # G54-FOOL-3
        declarations="optional",  # G54-DECL-1
        description="Early German Taroc (1754)",
    )


def _danish(options: Mapping[str, str]) -> Variant:
    return Variant(
        name="danish",
        options=options,
        family=Family.DANISH,
        fool_lead=FoolLead.DESIGNATE,
        fool_captured_from=25,  # DK-FOOL-2
        fool_forbidden_trick=24,
        fool_demand=True,  # DK-FOOL-3
        declarations="compulsory",  # DK-DECL-1
        redeal=Redeal(options["redeal"]),  # DK-DEAL-2
        pots=PotRules(ante=20, refill=20, dealer_stake=5, stake_into_every_pot=False),
        danish=DanishScoring(
            pagat_win_pays=True,
            tout=80,
            nolo_skips_failed_ultimo=False,
            failed_ultimo_doubles_pot=True,
            counting=Counting.P78,
        ),
        description="Danish Tarok (Dansk Tarokforbund, 2011)",
    )


def _danish_pots(options: Mapping[str, str]) -> Variant:
    return Variant(
        name="danish-pots",
        options=options,
        family=Family.DANISH,
        red_pips_reversed=options["red_pips"] == "reversed",
        fool_lead=FoolLead.DESIGNATE,
        fool_owner_without_tricks_gives_fool=True,  # DK-FOOL-6
        declarations="compulsory",
        pots=PotRules(ante=40, refill=40, dealer_stake=5, stake_into_every_pot=True),
        danish=DanishScoring(
            pagat_win_pays=False,
            tout=85,
            nolo_skips_failed_ultimo=True,
            failed_ultimo_doubles_pot=False,
            counting=Counting(options["counting"]),
        ),
        description="Danish pot game of the blogs",
    )


def _american(options: Mapping[str, str]) -> Variant:
    return Variant(
        name="american",
        options=options,
        family=Family.AMERICAN,
        seats=4,  # AM-TAB-1
        players=4,
        red_pips_reversed=False,  # AM-TAB-2
        fool_lead=FoolLead.NEXT_CARD,  # AM-PLAY-1
        trick_count=18,  # G-TRICK-1
        contracts=AMERICAN_CONTRACTS,
        talon_size=6,  # AM-DEAL-1
        discard_count=6,  # AM-TAL-1
        fool_wins_slam_lead=True,  # AM-FOOL-3
        trischaken_leader=TrischakenLeader(options["trischaken_leader"]),
        trischaken_scoring=TrischakenScoring(options["trischaken_scoring"]),
        description="American Grosstarock (Omnibus Tarot)",
    )


_PRESETS: dict[str, Callable[[Mapping[str, str]], Variant]] = {
    "grosstarock": _grosstarock,
    "german-1754": _german,
    "danish": _danish,
    "danish-pots": _danish_pots,
    "american": _american,
}
