"""The named values a variant is built from: its family, its Fool's lead, and each option's choices.

Every member is a `StrEnum` whose value is the word the rules, the command line and the replays
use (``danish``, ``all_blanks``), so a member prints, compares and serialises as that word and a
variant's published `options` stay the plain strings they always were.  `find_variant` turns each
option string into its member once, where the variant is built; the rules read the typed fields
of `Variant` and never the strings.
"""

from __future__ import annotations

from enum import StrEnum


class Family(StrEnum):
    """Which hooks a variant uses: the discard, the combinations and the scoring (RULES §8)."""

    DUMMETT = "dummett"
    GERMAN = "german"
    DANISH = "danish"
    AMERICAN = "american"


class FoolLead(StrEnum):
    """G-TRICK-3: what a led Fool does to the trick."""

    NEXT_CARD = "next_card"  # the next card played sets the suit
    DESIGNATE = "designate"  # the leader names the suit with the Fool
    FORBIDDEN = "forbidden"  # G54-PLAY-1: the Fool may not be led


class Redeal(StrEnum):
    """DK-DEAL-2: a hand without tarok."""

    CLAIM = "claim"  # its holder may claim a redeal
    AUTO = "auto"  # the deal is annulled without asking


class Counting(StrEnum):
    """DK-END-7: how the Danish card settlement counts."""

    P78 = "p78"  # G-CP-1
    P001 = "p001"  # G-CP-5


class Ladons(StrEnum):
    """G-PACK-5, AMB-16: what counts towards the Ladons combination (DUM-DECL-3)."""

    PIPS = "pips"  # the suit pips A…10
    ALL_BLANKS = "all_blanks"  # the pips and the blank taroks T2…T20


class NoloCancels(StrEnum):
    """DUM-BON-6: what a successful Nolo cancels."""

    ALL = "all"  # the card settlement and the bonuses DUM-BON-1…4
    CARDS_ONLY = "cards_only"  # the card settlement alone


class TrischakenLeader(StrEnum):
    """AM-TRI-2 (AMB-27): who leads trick 1 of Trischaken."""

    DEALER = "dealer"
    FOREHAND = "forehand"


class TrischakenScoring(StrEnum):
    """AM-TRI-6: how Trischaken settles."""

    PAIRWISE = "pairwise"  # each pair settles the difference of its card points
    LITERAL = "literal"  # each player pays his card points to nobody (not zero-sum)
