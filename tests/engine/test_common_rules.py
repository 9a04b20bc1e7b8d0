"""Unit tests of the common rules: RULES.md §1 (pack, seats, ranking, card points, ledger,
dealing, trick play) and §6 (card notation).

Each test names the rule it checks.  Expected values come from RULES.md, written out here
independently of the engine (code tables, rankings, card values, legal-card sets).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

import pytest
from support import act, legal, new_deal
from support.rules import CODES, FACE_LETTERS, SUIT_LETTERS, card_value, codes, full_hands, reference_piles

from arena.engine import (
    CARDS,
    Action,
    ActionError,
    Card,
    CardError,
    DealState,
    EngineError,
    Match,
    deck_for,
    find_variant,
)
from arena.engine.cards import canonical_deck, format_cards, is_counting
from arena.engine.scoring import p001_points, p78_points, settle_fool

# ---------------------------------------------------------------------------- spec tables (§6, §1)

TAROK_CODES = [f"T{n}" for n in range(1, 22)]
KING_CODES = ["SK", "HK", "DK", "CK"]

# G-RANK-2/3, low → high.
BLACK_ORDER = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "C", "Q", "K"]
RED_REVERSED_ORDER = ["10", "9", "8", "7", "6", "5", "4", "3", "2", "A", "J", "C", "Q", "K"]



def suit_of(code: str) -> str:
    """'S', 'H', 'D', 'C', 'T', or '' for the Fool."""
    return "" if code == "EX" else code[0]


def rank_key(code: str, red_reversed: bool) -> int:
    """Trick strength within the led suit; taroks above every suit card (G-RANK-1…3)."""
    if code.startswith("T"):
        return 100 + int(code[1:])
    order = RED_REVERSED_ORDER if red_reversed and code[0] in "HD" else BLACK_ORDER
    return order.index(code[1:])


def ref_winner(plays: list[tuple[int, str]], red_reversed: bool) -> int:
    """G-TRICK-3/5 (next_card): highest tarok, else highest card of the led suit."""
    cards = [c for _, c in plays]
    led = suit_of(cards[0]) if cards[0] != "EX" else suit_of(cards[1])
    taroks = [(rank_key(c, red_reversed), s) for s, c in plays if c.startswith("T")]
    if taroks:
        return max(taroks)[1]
    return max((rank_key(c, red_reversed), s) for s, c in plays if suit_of(c) == led)[1]


def ref_legal_next_card(hand: list[str], trick: list[str]) -> set[str]:
    """G-TRICK-3 (`next_card`) and G-TRICK-4: the cards a player may play."""
    if not trick or (trick[0] == "EX" and len(trick) == 1):
        return set(hand)
    led = suit_of(trick[1]) if trick[0] == "EX" else suit_of(trick[0])
    follow = {c for c in hand if suit_of(c) == led}
    if not follow:
        follow = {c for c in hand if c.startswith("T")}
    if not follow:
        return set(hand)
    return follow | ({"EX"} & set(hand))



def parse(pile: Iterable[str]) -> list[Card]:
    return [Card.parse(c) for c in pile]


# ---------------------------------------------------------------------------- helpers



def to_trick_one(state: DealState, discard: Iterable[str] = ()) -> DealState:
    """Lay away `discard`, then answer every declaration/announcement/redeal question with pass."""
    pending = list(discard)
    while state.phase != "play":
        if state.phase == "discard":
            act(state, f"discard {pending.pop(0)}" if pending else str(state.legal_actions()[0]))
        else:
            act(state, "pass")
    return state


def play(state: DealState, *cards: str) -> None:
    """Play the cards in turn, passing every announcement round met on the way."""
    for card in cards:
        while state.phase != "play":
            act(state, "pass")
        act(state, f"play {card}")


def random_deal(
    name: str, seed: int, options: dict[str, str] | None = None, check: Callable | None = None
) -> DealState:
    """A seeded deal played by uniformly random legal actions; `check(state)` before each action."""
    variant = find_variant(name, options or {})
    rng = random.Random(seed)
    state = DealState(variant, seed % 3, deck_for(seed, 1))
    while not state.is_terminal():
        if check is not None:
            check(state)
        state.apply(rng.choice(state.legal_actions()))
    return state


def rule_balance(result, rule: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for t in result.ledger:
        if t.rule == rule:
            out[t.target] = out.get(t.target, 0) + t.amount
            out[t.source] = out.get(t.source, 0) - t.amount
    return {k: v for k, v in out.items() if v}


def one_trick(name: str, lead: str, second: str, options: dict[str, str] | None = None, dealer: int = 0):
    """Trick 1 of a deal: forehand leads `lead`, middlehand plays `second`, the dealer (void in
    the led suit and holding no tarok) throws the King of another suit.  Returns (state, F, M, D).
    """
    led = suit_of(lead)
    held = [s for s in SUIT_LETTERS if s not in (led, suit_of(second))][:2]
    d_hand = [s + f for s in held for f in FACE_LETTERS]
    rest = [c for c in CODES if c not in d_hand and c not in (lead, second)]
    # When `second` is of another suit, middlehand must be void in the led suit.
    f_first = [c for c in rest if suit_of(c) == led] if suit_of(second) != led else []
    f_fill = [c for c in rest if c not in f_first]
    f_hand = [lead, *f_first, *f_fill][:25]
    m_hand = [second, *[c for c in rest if c not in f_hand]]
    state = full_hands(name, dealer, {"F": f_hand, "M": m_hand, "D": d_hand}, options)
    f, m, d = state.order
    to_trick_one(state, discard=[held[0] + "2", held[0] + "3", held[0] + "4"])
    play(state, lead, second, held[1] + "K")
    return state, f, m, d


# ---------------------------------------------------------------------------- §6 card notation


def test_g_code_1_every_code_round_trips() -> None:
    """G-CODE-1: all 78 canonical codes parse and print back unchanged; repr round-trips too."""
    assert len(CODES) == 78 == len(set(CODES))
    for code in CODES:
        card = Card.parse(code)
        assert str(card) == code
        assert card.code == code
        assert Card.parse(str(card)) == card
        assert eval(repr(card), {"Card": Card}) == card


@pytest.mark.parametrize(
    ("code", "index"),
    [
        ("SK", 13),
        ("HC", 25),
        ("D10", 37),
        ("CA", 42),
        ("CC", 53),
        ("CK", 55),
        ("T1", 56),
        ("T21", 76),
        ("EX", 77),
    ],
)
def test_g_code_1_examples(code: str, index: int) -> None:
    """G-CODE-1: the examples SK, HC, D10, CA, CC (Cavalier of Clubs), CK, T1, T21, EX."""
    assert Card.parse(code) == index
    assert str(Card(index)) == code


def test_g_code_1_lowercase_accepted_printed_uppercase() -> None:
    """G-CODE-1: parsers may accept lowercase and must print uppercase."""
    for code in CODES:
        for variant in (code.lower(), code[0].lower() + code[1:], code[0] + code[1:].lower()):
            card = Card.parse(variant)
            assert card == Card.parse(code)
            assert str(card) == code


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "X",
        "ZK",
        "S",
        "SX",
        "S1",
        "S0",
        "S11",
        "S 10",
        "SKK",
        "KS",
        "10S",
        "T",
        "T0",
        "T22",
        "T01",
        "TT1",
        "E",
        "EXX",
        "XE",
        "Fool",
    ],
)
def test_g_code_1_bad_codes_raise_card_error(bad: str) -> None:
    """G-CODE-1/2: a string that is not a canonical code raises CardError naming the bad code."""
    with pytest.raises(CardError) as info:
        Card.parse(bad)
    message = str(info.value)
    assert repr(bad) in message
    assert "card" in message.lower()
    assert isinstance(info.value, ValueError) and isinstance(info.value, EngineError)


@pytest.mark.parametrize("bad", [13, None, 2.5])
def test_g_code_1_non_strings_raise_card_error(bad: object) -> None:
    """G-CODE-1: only text is a card code."""
    with pytest.raises(CardError):
        Card.parse(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("index", [-1, 78, 1000])
def test_g_code_4_index_out_of_range_raises(index: int) -> None:
    """G-CODE-4: indexes are 0…77; the message says so."""
    with pytest.raises(CardError, match="77"):
        Card(index)


def test_g_code_1_bad_code_in_an_action_is_an_action_error() -> None:
    """G-CODE-1: a bad card code inside an action text is rejected with the code in the message."""
    with pytest.raises(ActionError, match="ZZ"):
        Action.parse("play ZZ")


def test_g_code_2_suit_letter_comes_first() -> None:
    """G-CODE-2: EX is the Fool, T1…T21 taroks, otherwise first char = suit, rest = rank
    (so CC is the Cavalier of Clubs and SC the Cavalier of Spades)."""
    cc = Card.parse("CC")
    assert (cc.suit, cc.face) == ("C", 12)
    assert (Card.parse("SC").suit, Card.parse("SC").face) == ("S", 12)
    assert (Card.parse("CK").suit, Card.parse("CK").face) == ("C", 14)
    assert (Card.parse("D10").suit, Card.parse("D10").face) == ("D", 10)
    assert (Card.parse("T10").suit, Card.parse("T10").face) == ("T", 10)
    assert Card.parse("T10").is_tarok and not Card.parse("D10").is_tarok
    ex = Card.parse("EX")
    assert ex.is_fool and not ex.is_tarok and ex.suit == ""


def test_g_code_3_rank_letters() -> None:
    """G-CODE-3: K = King (roi, König), Q = Queen (dame), C = Cavalier, J = Jack (valet, Bube),
    A = the 1: face numbers 14, 13, 12, 11, 1 and the card values of G-CP-1."""
    for suit in SUIT_LETTERS:
        faces = {letter: Card.parse(suit + letter).face for letter in ("K", "Q", "C", "J", "A")}
        assert faces == {"K": 14, "Q": 13, "C": 12, "J": 11, "A": 1}
        assert Card.parse(suit + "K").is_king
        assert not any(Card.parse(suit + r).is_king for r in ("Q", "C", "J", "A"))
        # A King, Queen, Cavalier, Jack or Ace with two blanks is worth 5, 4, 3, 2, 1 (G-CP-1).
        blanks = ["T2", "T3"]
        worth = {r: p78_points(parse([suit + r, *blanks])) for r in ("K", "Q", "C", "J", "A")}
        assert worth == {"K": 5, "Q": 4, "C": 3, "J": 2, "A": 1}


def test_g_code_4_index_formula_and_table() -> None:
    """G-CODE-4: index = 14·s + (f − 1) (S=0, H=1, D=2, C=3; A=1 … K=14); Tn = 55 + n; EX = 77."""
    for s, suit in enumerate(SUIT_LETTERS):
        for f, face in enumerate(FACE_LETTERS, start=1):
            assert Card.parse(suit + face) == 14 * s + (f - 1)
    for n in range(1, 22):
        assert Card.parse(f"T{n}") == 55 + n
    assert Card.parse("EX") == 77
    table = {
        (0, 13): "SA S2 S3 S4 S5 S6 S7 S8 S9 S10 SJ SC SQ SK",
        (14, 27): "HA H2 H3 H4 H5 H6 H7 H8 H9 H10 HJ HC HQ HK",
        (28, 41): "DA D2 D3 D4 D5 D6 D7 D8 D9 D10 DJ DC DQ DK",
        (42, 55): "CA C2 C3 C4 C5 C6 C7 C8 C9 C10 CJ CC CQ CK",
        (56, 76): " ".join(TAROK_CODES),
        (77, 77): "EX",
    }
    for (lo, hi), row in table.items():
        assert codes(CARDS[lo : hi + 1]) == row.split()


def test_g_code_5_displays_sort_by_index() -> None:
    """G-CODE-5: sorted displays use the canonical index (not trick ranking)."""
    cards = [Card.parse(c) for c in ("EX", "T1", "CK", "H10", "HA", "SA", "T21")]
    assert format_cards(cards) == "SA HA H10 CK T1 T21 EX"
    state = DealState(find_variant("grosstarock"), 0, deck_for(3, 0))
    for seat in range(3):
        assert state.hand(seat) == sorted(state.hand(seat))


def test_g_code_5_trick_winner_uses_ranking_not_index() -> None:
    """G-CODE-5: HA (index 14) beats H10 (index 23) in grosstarock, because of the ranking."""
    state, _f, m, _d = one_trick("grosstarock", "H10", "HA")
    assert state.tricks[0].winner == m


def test_g_code_6_decks_are_permutations() -> None:
    """G-CODE-6: the canonical deck is index order 0…77; a shuffled deck is a permutation of the
    78 cards; a deck that is not one is rejected."""
    assert [int(c) for c in canonical_deck()] == list(range(78))
    assert codes(canonical_deck()) == CODES
    deck = deck_for(11, 2)
    assert sorted(deck) == list(range(78)) and deck != list(range(78))
    variant = find_variant("grosstarock")
    with pytest.raises(ActionError):
        DealState(variant, 0, deck[:77])
    with pytest.raises(ActionError):
        DealState(variant, 0, [*deck[:77], deck[0]])
    with pytest.raises(ActionError):
        DealState(variant, 0, [*deck[:77], 78])


# ---------------------------------------------------------------------------- §1.1 pack


def test_g_pack_2_fool_is_not_a_tarok() -> None:
    """G-PACK-2: T1…T21 are taroks, the Fool is not (for following: a player whose only
    'trump' is EX is void in taroks and may play any card)."""
    assert [c.code for c in CARDS if c.is_tarok] == TAROK_CODES
    assert not Card.parse("EX").is_tarok
    v_hand = TAROK_CODES + KING_CODES
    m_hand = ["EX", *[c for c in CODES if c not in v_hand and c != "EX"][:24]]
    state = full_hands("grosstarock", 0, {"F": v_hand, "M": m_hand})
    to_trick_one(state, discard=[str(c) for c in state.hands[state.dealer][:3]])
    _f, m, _d = state.order
    play(state, "T5")
    assert state.turn == m
    # Void in taroks (EX does not count): every card of the hand is legal, not only EX.
    assert legal(state) == {f"play {c}" for c in m_hand}


def test_g_pack_2_fool_with_taroks_must_still_follow_taroks() -> None:
    """G-PACK-2/G-TRICK-4: holding taroks and EX on a tarok lead: a tarok or EX, nothing else."""
    f_hand = ["T5", *[c for c in CODES if c.startswith(("S", "H"))][:24]]
    m_hand = ["EX", "T6", "T7", *[c for c in CODES if c[0] in "DC"][:22]]
    state = full_hands("grosstarock", 0, {"F": f_hand, "M": m_hand})
    to_trick_one(state)
    play(state, "T5")
    assert legal(state) == {"play EX", "play T6", "play T7"}


def test_g_pack_4_counting_cards_and_blanks() -> None:
    """G-PACK-4: 19 counting cards (T1, T21, EX and the 16 court cards); 59 blanks."""
    counting = {c.code for c in CARDS if is_counting(c)}
    courts = {s + r for s in SUIT_LETTERS for r in "KQCJ"}
    assert counting == {"T1", "T21", "EX"} | courts
    blanks = [c.code for c in CARDS if not is_counting(c)]
    assert len(blanks) == 59
    assert set(blanks) == {f"T{n}" for n in range(2, 21)} | {
        s + f for s in SUIT_LETTERS for f in FACE_LETTERS[:10]
    }


# ---------------------------------------------------------------------------- §1.3 ranking


@pytest.mark.parametrize(
    ("lead", "second", "winner"),
    [
        ("T20", "T21", "M"),  # G-RANK-1: T21 highest
        ("T1", "T2", "M"),  # T2 beats T1
        ("T2", "T1", "F"),  # T1 lowest
        ("SK", "T1", "M"),  # every tarok beats every suit card (M void in spades)
        ("HK", "T1", "M"),
        ("SA", "S2", "M"),  # G-RANK-2: black A lowest
        ("S10", "SJ", "M"),
        ("SQ", "SC", "F"),
        ("SK", "SQ", "F"),
        ("C9", "C10", "M"),
        ("CA", "C2", "M"),
        ("H10", "HA", "M"),  # G-RANK-3: red pips reversed, A high … 10 low
        ("HA", "H2", "F"),
        ("D2", "D3", "F"),
        ("D9", "D10", "F"),
        ("HA", "HJ", "M"),  # Jack above the Ace
        ("DK", "DQ", "F"),
    ],
)
def test_g_rank_1_2_3_grosstarock(lead: str, second: str, winner: str) -> None:
    """G-RANK-1…3 in `grosstarock` (red pips reversed)."""
    state, f, m, _d = one_trick("grosstarock", lead, second)
    assert state.tricks[0].winner == {"F": f, "M": m}[winner]


@pytest.mark.parametrize(
    ("options", "lead", "second", "winner"),
    [
        ({}, "H10", "HA", "M"),  # default: reversed
        ({}, "D2", "D3", "F"),
        ({"red_pips": "straight"}, "H10", "HA", "F"),  # AMB-01 option: straight as black
        ({"red_pips": "straight"}, "D2", "D3", "M"),
        ({"red_pips": "straight"}, "HA", "H2", "M"),
        ({"red_pips": "straight"}, "D10", "DJ", "M"),
        ({"red_pips": "straight"}, "SA", "S2", "M"),  # black unchanged
    ],
)
def test_g_rank_3_danish_pots_red_pips_option(
    options: dict[str, str], lead: str, second: str, winner: str
) -> None:
    """G-RANK-3/AMB-01: `danish-pots` option red_pips=straight ranks red pips like black ones."""
    state, f, m, _d = one_trick("danish-pots", lead, second, options)
    assert state.tricks[0].winner == {"F": f, "M": m}[winner]


# ---------------------------------------------------------------------------- §1.4 card points


def test_g_cp_1_example_and_pack_total() -> None:
    """G-CP-1: Queen + Jack + 7 = 4 + 2 + 1 − 2 = 5; the pack is worth 78 (Σv = 130, 26 triplets)."""
    assert p78_points(parse(["SQ", "HJ", "D7"])) == 5
    assert sum(card_value(c) for c in CODES) == 130
    assert p78_points(CARDS) == 78


@pytest.mark.parametrize(
    ("pile", "points"),
    [
        (["T1", "T21", "EX"], 13),
        (["SK", "HK", "DK"], 13),
        (["SK", "S2", "S3"], 5),  # a counting card with two blanks is worth its value (G-CP-2)
        (["HQ", "T2", "T3"], 4),
        (["DC", "C2", "C3"], 3),
        (["CJ", "H9", "D4"], 2),
        (["S2", "T10", "H10"], 1),  # three blanks are worth 1
        (["T1", "T2", "T3", "SK", "SQ", "SC"], 5 + 1 + 1 + 5 + 4 + 3 - 4),
        ([], 0),
    ],
)
def test_g_cp_1_values(pile: list[str], points: int) -> None:
    """G-CP-1: v = 5 (T1, T21, EX, Kings), 4 Queens, 3 Cavaliers, 2 Jacks, 1 blanks; CP = Σv − 2·N/3."""
    assert p78_points(parse(pile)) == points == sum(card_value(c) for c in pile) - 2 * len(pile) // 3


def test_g_cp_1_grouping_does_not_matter() -> None:
    """G-CP-1: any grouping of a pile into triplets gives the same total."""
    rng = random.Random(5)
    for _ in range(20):
        pile = rng.sample(CODES, 3 * rng.randint(1, 26))
        rng.shuffle(pile)
        grouped = sum(p78_points(parse(pile[i : i + 3])) for i in range(0, len(pile), 3))
        assert grouped == p78_points(parse(pile))


@pytest.mark.parametrize("size", [1, 2, 4, 77])
def test_g_cp_3_pile_size_must_be_a_multiple_of_three(size: int) -> None:
    """G-CP-3: counting a pile whose size is not divisible by 3 is an error."""
    with pytest.raises(AssertionError):
        p78_points(parse(CODES[:size]))


@pytest.mark.parametrize(
    ("pile", "points"),
    [
        (["SK"], 4),
        (["T1", "T21", "EX"], 12),
        (["SQ", "SC", "SJ"], 6),
        (["SK", "S2", "S3", "S4"], 5),  # 4 + one group of three blanks
        (["S2", "S3"], 0),  # fewer than three blanks: nothing
        (["S2", "S3", "S4", "S5", "S6"], 1),  # floor(5/3)
        (["T2", "T3", "T4", "T5", "T6", "T7"], 2),  # T2…T20 are blanks
    ],
)
def test_g_cp_5_p001_counting(pile: list[str], points: int) -> None:
    """G-CP-5 (P001): honours and Kings 4, Queens 3, Cavaliers 2, Jacks 1, + floor(blanks / 3)."""
    assert p001_points(parse(pile)) == points


def test_g_cp_5_p001_pack_total() -> None:
    """G-CP-5: the pack is worth 52 + floor(59/3) = 71 (71⅔ before rounding down, AMB-04)."""
    assert p001_points(CARDS) == 71


def test_g_cp_5_danish_pots_p001_results() -> None:
    """G-CP-5: under `danish-pots` counting=p001 the deal's card points are P001 points of the
    final piles (whose sizes are still multiples of 3)."""
    for seed in range(6):
        state = random_deal("danish-pots", seed, {"counting": "p001"})
        piles = settle_fool(state)
        result = state.result()
        assert all(len(p) % 3 == 0 for p in piles)
        assert result.card_points == [p001_points(p) for p in piles]
        assert sum(result.card_points) <= 71


# ---------------------------------------------------------------------------- §1.6 dealing


@pytest.mark.parametrize("name", ["grosstarock", "danish", "german-1754"])
@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_g_deal_1_packets(name: str, dealer: int) -> None:
    """G-DEAL-1: d[15r+5k … 15r+5k+4] go to player k (0 F, 1 M, 2 D); d[75..77] to the dealer."""
    deck = deck_for(17, dealer)
    state = DealState(find_variant(name), dealer, deck)
    f, m, d = state.order
    assert d == dealer
    for k, seat in enumerate((f, m, d)):
        expected = [deck[15 * r + 5 * k + i] for r in range(5) for i in range(5)]
        if seat == dealer:
            expected += deck[75:78]
        assert sorted(state.hands[seat]) == sorted(expected)
    assert [len(state.hands[s]) for s in (f, m, d)] == [25, 25, 28]
    assert set(deck[70:78]) <= set(state.hands[dealer])  # "the dealer keeps the last eight"


# ---------------------------------------------------------------------------- §1.2 seats


@pytest.mark.parametrize(
    ("name", "following"),
    [
        ("grosstarock", {0: 1, 1: 2, 2: 0}),
        ("danish", {0: 2, 1: 0, 2: 1}),
        ("danish-pots", {0: 2, 1: 0, 2: 1}),
        ("german-1754", {0: 2, 1: 0, 2: 1}),
    ],
)
def test_g_seat_1_2_direction(name: str, following: dict[int, int]) -> None:
    """G-SEAT-1/2: seats are numbered clockwise; clockwise next(i) = i+1, anticlockwise i−1."""
    state = DealState(find_variant(name), 0, deck_for(1, 0))
    assert {s: state.next_seat[s] for s in range(3)} == following


@pytest.mark.parametrize("name", ["grosstarock", "danish", "danish-pots", "german-1754"])
@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_g_seat_3_forehand_is_next_of_dealer_and_leads(name: str, dealer: int) -> None:
    """G-SEAT-3: forehand = next(dealer); forehand leads trick 1 (G-TRICK-2)."""
    state = DealState(find_variant(name), dealer, deck_for(2, dealer))
    step = 1 if name == "grosstarock" else -1
    assert state.forehand == (dealer + step) % 3
    assert state.order == (state.forehand, (state.forehand + step) % 3, dealer)
    while state.phase != "play":
        state.apply(state.legal_actions()[-1] if state.phase != "discard" else state.legal_actions()[0])
        if state.is_terminal():  # a Danish redeal cannot happen: every answer here is "pass"
            pytest.fail("deal ended before play")
    assert state.trick_no == 1 and state.turn == state.forehand


@pytest.mark.parametrize("name", ["grosstarock", "danish-pots", "german-1754"])
def test_g_seat_4_playing_order_in_every_trick(name: str) -> None:
    """G-SEAT-4: a trick is played leader, next(leader), next(next(leader))."""
    step = 1 if name == "grosstarock" else -1
    for seed in range(15):
        state = random_deal(name, seed)
        for trick in state.tricks:
            seats = [s for s, _ in trick.plays]
            assert seats == [trick.leader, (trick.leader + step) % 3, (trick.leader + 2 * step) % 3]


def _play_match_dealers(name: str, deals: int, first: int = 0) -> list[int]:
    match = Match(find_variant(name), seed=4, deals=deals, first_dealer=first)
    rng = random.Random(0)
    dealers = []
    while not match.is_over():
        state = match.start_deal()
        dealers.append(state.dealer)
        while not state.is_terminal():
            actions = state.legal_actions()
            state.apply(next((a for a in actions if a.type == "pass"), None) or rng.choice(actions))
        match.finish_deal(state)
    return dealers


@pytest.mark.parametrize(
    ("name", "first", "dealers"),
    [
        ("grosstarock", 0, [0, 1, 2, 0, 1, 2]),  # the deal passes to the left (DUM-TAB-1)
        ("grosstarock", 2, [2, 0, 1, 2, 0, 1]),
        ("danish", 0, [0, 2, 1, 0, 2, 1]),  # anticlockwise: to the right
        ("german-1754", 1, [1, 0, 2, 1, 0, 2]),
    ],
)
def test_g_seat_5_6_dealer_rotation(name: str, first: int, dealers: list[int]) -> None:
    """G-SEAT-5: after each deal the dealer becomes next(dealer); G-SEAT-6 the first dealer is
    seat 0 unless the match names another."""
    assert _play_match_dealers(name, 6, first) == dealers
    assert Match(find_variant(name), seed=1, deals=3).dealer == 0


def test_g_seat_5_danish_redeal_keeps_the_dealer() -> None:
    """G-SEAT-5: exception — a `danish` redeal is dealt again by the same dealer (and does not
    count as a dealer turn, G-SEAT-7)."""
    match = Match(find_variant("danish"), seed=1, deals=3)
    assert match.dealer == 0
    no_tarok = [c for c in CODES if suit_of(c) in ("S", "H")][:25]
    middlehand = DealState(find_variant("danish"), 0, list(CARDS)).order[1]
    state = new_deal("danish", hands={middlehand: no_tarok}, dealer=0, pots=match.pots)
    # Redeal round from forehand: forehand passes, middlehand (no tarok) claims.
    assert state.phase == "redeal" and state.turn == state.order[0]
    act(state, "pass")
    assert state.turn == state.order[1] and legal(state) == {"redeal", "pass"}
    act(state, "redeal")
    assert state.is_terminal() and state.result().annulled
    match.finish_deal(state)
    assert match.dealer == 0 and match.turns_done == 0
    normal = match.start_deal()
    assert normal.dealer == 0
    while not normal.is_terminal():
        normal.apply(normal.legal_actions()[-1] if normal.phase == "redeal" else normal.legal_actions()[0])
    match.finish_deal(normal)
    assert match.dealer == 2 and match.turns_done == 1


# ---------------------------------------------------------------------------- §1.7 trick play

# The trick-play deal used below (grosstarock, dealer 0: F = 1, M = 2, D = 0):
LAYOUT_T = {
    "F": [
        "SK",
        "S2",
        "S3",
        "D4",
        "D5",
        "D6",
        "D7",
        "D8",
        "D9",
        "D10",
        "DJ",
        "DC",
        "DQ",
        "DK",
        "CA",
        "C2",
        "C3",
        "C4",
        "C5",
        "C6",
        "C7",
        "C8",
        "C9",
        "C10",
        "T1",
    ],
    "M": [
        "SA",
        "S4",
        "S5",
        "S6",
        "S7",
        "S8",
        "S9",
        "S10",
        "SJ",
        "SC",
        "SQ",
        "CJ",
        "CC",
        "CQ",
        "CK",
        "T2",
        "T3",
        "T4",
        "T5",
        "T6",
        "T7",
        "T8",
        "T9",
        "T21",
        "EX",
    ],
    # D: all hearts, T10…T20, DA D2 D3 (laid away).
}


def layout_t() -> tuple[DealState, int, int, int]:
    state = full_hands("grosstarock", 0, LAYOUT_T)
    to_trick_one(state, discard=["DA", "D2", "D3"])
    return (state, *state.order)


def test_g_trick_4_follow_suit_trump_or_free() -> None:
    """G-TRICK-4: follow the led suit (EX always allowed); void → must play a tarok;
    void and no tarok → any card; no obligation to beat."""
    state, f, m, d = layout_t()
    assert (f, m, d) == (1, 2, 0)
    assert state.turn == f
    play(state, "S2")
    # M holds spades: spades or EX only.
    assert legal(state) == {
        f"play {c}" for c in ["SA", "S4", "S5", "S6", "S7", "S8", "S9", "S10", "SJ", "SC", "SQ", "EX"]
    }
    play(state, "SA")  # lower than S2: not obliged to beat
    # D is void in spades: must trump.
    assert legal(state) == {f"play T{n}" for n in range(10, 21)}
    play(state, "T10")
    assert state.tricks[0].winner == d  # G-TRICK-5: the tarok wins
    assert state.tricks[0].suit == "S"
    # Trick 2 (G-TRICK-2: the winner leads).
    play(state, "H5")
    assert state.tricks[-1].number == 1 and state.trick == [(d, Card.parse("H5"))]
    assert legal(state) == {"play T1"}  # F void in hearts: his only tarok
    play(state, "T1")
    assert legal(state) == {f"play T{n}" for n in (2, 3, 4, 5, 6, 7, 8, 9, 21)} | {"play EX"}
    play(state, "EX")
    assert state.tricks[1].winner == f  # the Fool never wins; T1 is the only tarok
    # Trick 3: F leads a diamond; M and D void in diamonds: must trump.
    play(state, "D4")
    assert legal(state) == {f"play T{n}" for n in (2, 3, 4, 5, 6, 7, 8, 9, 21)}
    play(state, "T2")
    assert legal(state) == {f"play T{n}" for n in range(11, 21)}
    play(state, "T11")
    assert state.tricks[2].winner == d
    # Trick 4: D leads a heart; F is void in hearts and has no tarok: any card.
    play(state, "H6")
    assert legal(state) == {f"play {c}" for c in state.hands[f]}
    assert len(legal(state)) == 22
    play(state, "SK")  # thrown away
    play(state, "T3")
    assert state.tricks[3].winner == m


def test_g_trick_4_property_legal_sets_in_random_grosstarock_deals() -> None:
    """G-TRICK-3 (`next_card`)/G-TRICK-4: in random `grosstarock` deals every legal-play list
    equals the list computed from the rule."""
    checked = 0

    def check(state: DealState) -> None:
        nonlocal checked
        if state.phase != "play":
            return
        hand = codes(state.hands[state.turn])
        trick = [str(c) for _, c in state.trick]
        assert legal(state) == {f"play {c}" for c in ref_legal_next_card(hand, trick)}
        checked += 1

    for seed in range(150):
        random_deal("grosstarock", seed, check=check)
    assert checked == 150 * 75


def test_g_trick_3_next_card_fool_led() -> None:
    """G-TRICK-3 `next_card`: after a led Fool the second player may play any card; the second
    card's suit is the led suit for the third player."""
    f_hand = ["EX", *[c for c in CODES if c.startswith("C")], *TAROK_CODES[:10]]
    m_hand = ["S5", "T15", *[c for c in CODES if c.startswith("H")], *TAROK_CODES[15:], "DA", "D2", "D3"]
    state = full_hands("grosstarock", 0, {"F": f_hand, "M": m_hand})
    f, m, d = state.order
    to_trick_one(state)
    play(state, "EX")
    assert legal(state) == {f"play {c}" for c in codes(state.hands[m])}  # anything, taroks included
    play(state, "S5")
    d_hand = codes(state.hands[d])
    assert any(c.startswith("S") for c in d_hand)
    assert legal(state) == {f"play {c}" for c in d_hand if c.startswith("S")}  # D must follow spades
    high = max((c for c in d_hand if c.startswith("S")), key=lambda c: rank_key(c, True))
    play(state, high)
    trick = state.tricks[0]
    assert trick.suit == "S"
    assert trick.winner == (d if rank_key(high, True) > rank_key("S5", True) else m)
    assert trick.winner != f


def test_g_trick_5_off_suit_card_never_wins() -> None:
    """G-TRICK-5: with no tarok, the highest card of the led suit wins; a King of another suit
    thrown by a void player does not."""
    state, f, _m, d = one_trick("grosstarock", "S3", "S2")
    trick = state.tricks[0]
    assert trick.card_of(d).code.endswith("K") and trick.card_of(d).suit != "S"
    assert trick.winner == f


@pytest.mark.parametrize(
    ("name", "options"),
    [("grosstarock", {}), ("german-1754", {}), ("danish", {}), ("danish-pots", {"red_pips": "straight"})],
)
def test_g_trick_5_property_winners(name: str, options: dict[str, str]) -> None:
    """G-TRICK-5: every trick of random deals goes to the highest tarok, else to the highest card
    of the led suit (variant ranking); the Fool never wins."""
    red_reversed = options.get("red_pips") != "straight"
    for seed in range(150):
        state = random_deal(name, seed, options)
        for trick in state.tricks:
            plays = [(s, str(c)) for s, c in trick.plays]
            if plays[0][1] == "EX" and name.startswith("danish"):
                continue  # designated suits: not covered by this reference
            assert trick.winner == ref_winner(plays, red_reversed), plays
            assert trick.card_of(trick.winner) != Card.parse("EX")


def test_g_trick_1_2_8_tricks_of_a_deal() -> None:
    """G-TRICK-1: 25 tricks, one card from each active player in playing order;
    G-TRICK-2: forehand leads trick 1, the winner leads the next;
    G-TRICK-8: tricks won count the tricks a player won (the skat and a retained Fool are not tricks)."""
    for name in ("grosstarock", "danish-pots"):
        for seed in range(20):
            state = random_deal(name, seed)
            assert len(state.tricks) == 25
            assert [t.number for t in state.tricks] == list(range(1, 26))
            played = [c for t in state.tricks for _, c in t.plays]
            assert len(played) == 75 and len(set(played) | set(state.skat)) == 78
            assert state.tricks[0].leader == state.forehand
            for before, after in zip(state.tricks, state.tricks[1:], strict=False):
                assert after.leader == before.winner
            for seat in range(3):
                assert state.tricks_won[seat] == sum(1 for t in state.tricks if t.winner == seat)
            assert sum(state.tricks_won) == 25
            assert state.result().tricks_won == state.tricks_won


def test_g_trick_6_fool_retained_with_a_debt() -> None:
    """G-TRICK-6: a Fool played to an ordinary trick goes to its owner's pile; the owner owes the
    trick winner one card."""
    state, f, m, _d = layout_t()
    play(state, "S2", "SA", "T10", "H5", "T1", "EX")
    trick = state.tricks[1]
    assert trick.winner == f and not trick.fool_captured
    assert Card.parse("EX") in state.piles[m]
    assert Card.parse("EX") not in state.piles[f]
    assert sorted(codes(state.piles[f])) == sorted(["H5", "T1"])  # 2 cards from the trick, no Fool
    assert state.fool_debts == [(m, f, 2)]


def _finish_lowest(state: DealState, prefer: Callable[[DealState], str | None] | None = None) -> DealState:
    """Finish the deal: every question answered pass, each card the first legal one (or `prefer`)."""
    while not state.is_terminal():
        if state.phase == "play":
            choice = prefer(state) if prefer else None
            act(state, choice or str(state.legal_actions()[0]))
        elif state.phase == "discard":
            act(state, str(state.legal_actions()[0]))
        else:
            act(state, "pass")
    return state


VOLE_HAND = TAROK_CODES + KING_CODES  # forehand wins every trick with it


def _vole_deal(m_hand: list[str], discard: list[str]) -> tuple[DealState, int, int, int]:
    state = full_hands("grosstarock", 0, {"F": VOLE_HAND, "M": m_hand})
    to_trick_one(state, discard=discard)
    f, m, d = state.order

    def prefer(s: DealState) -> str | None:
        if s.turn == f:  # keep T1 for the last trick
            options = [str(a) for a in s.legal_actions()]
            return next((a for a in options if a != "play T1"), options[0])
        if "play EX" in legal(s) and s.trick_no == 1:
            return "play EX"
        return None

    _finish_lowest(state, prefer)
    return state, f, m, d


def test_g_trick_7_exchange_lowest_value_then_lowest_index() -> None:
    """G-TRICK-7: the Fool's owner gives the creditor the card of lowest value in his pile other
    than the Fool, ties broken by lowest canonical index; the dealer's skat is part of his pile."""
    non_kings = [c for c in CODES if c not in VOLE_HAND and c != "EX"]
    d_hand = ["EX", "S5", "SQ", "S2", *[c for c in non_kings if c not in ("S5", "SQ", "S2")][:24]]
    m_hand = [c for c in non_kings if c not in d_hand]
    state, f, _m, d = _vole_deal(m_hand, discard=["S5", "SQ", "S2"])  # S2 laid away last
    assert state.tricks_won == [0, 25, 0]
    assert state.tricks[0].card_of(d) == Card.parse("EX")
    assert state.fool_debts == [(d, f, 1)]
    piles = settle_fool(state)
    assert sorted(codes(piles[d])) == sorted(["EX", "S5", "SQ"])  # S2 (value 1, index 1) was given
    assert "S2" in codes(piles[f]) and len(piles[f]) == 75
    result = state.result()
    assert result.card_points == [5 + 1 + 4 - 2, 78 - 8, 0]


def test_g_trick_7_pile_with_only_the_fool_gives_the_fool() -> None:
    """G-TRICK-7: an owner whose pile holds nothing but the Fool gives the Fool itself."""
    non_kings = [c for c in CODES if c not in VOLE_HAND and c != "EX"]
    m_hand = ["EX", *non_kings[:24]]
    state = full_hands("grosstarock", 0, {"F": VOLE_HAND, "M": m_hand})
    blanks = [c for c in codes(state.hands[state.dealer]) if card_value(c) == 1][:3]
    state, f, m, d = _vole_deal(m_hand, discard=blanks)
    assert state.tricks[0].card_of(m) == Card.parse("EX")
    assert state.fool_debts == [(m, f, 1)]
    piles = settle_fool(state)
    assert piles[m] == []
    assert Card.parse("EX") in piles[f] and len(piles[f]) == 75
    assert sorted(codes(piles[d])) == sorted(blanks)
    assert state.result().card_points == [1, 77, 0]


def test_g_trick_6_7_property_final_piles() -> None:
    """G-TRICK-6/7 (with DUM-PLAY-2): the final piles of random `grosstarock` deals, rebuilt
    from the tricks, the skat and the exchange rule."""
    for seed in range(200):
        state = random_deal("grosstarock", seed)
        piles = reference_piles(state)
        engine = settle_fool(state)
        for seat in range(3):
            assert sorted(codes(engine[seat])) == sorted(piles[seat])
            assert len(piles[seat]) % 3 == 0  # G-CP-3
        assert state.result().card_points == [p78_points(parse(piles[s])) for s in range(3)]


def test_g_trick_9_king_thrown_away_is_lost() -> None:
    """G-TRICK-9: a King played to a trick its player does not win (here thrown on another suit)
    is lost: DUM-BON-2 charges its player 5 to each opponent for it."""
    state, f, m, _d = layout_t()
    play(state, "S2", "SA", "T10", "H5", "T1", "EX", "D4", "T2", "T11", "H6", "SK", "T3")
    assert state.tricks[3].winner == m and state.tricks[3].card_of(f) == Card.parse("SK")
    _finish_lowest(state)
    king_net = {0: 0, 1: 0, 2: 0}
    for trick in state.tricks[:24]:
        for seat, card in trick.plays:
            if card.is_king:
                sign = 1 if seat == trick.winner else -1
                king_net[seat] += 10 * sign
                for other in range(3):
                    if other != seat:
                        king_net[other] -= 5 * sign
    assert king_net[f] <= -10  # at least the SK penalty
    balance = rule_balance(state.result(), "DUM-BON-2")
    assert balance == {s: v for s, v in king_net.items() if v}


# ---------------------------------------------------------------------------- §1.5 ledger


def test_g_pay_2_receive_from_each_and_pay_to_each() -> None:
    """G-PAY-2: "P receives a from each" = each other player transfers a to P; "P pays a to each"
    = P transfers a to each other player."""
    state = full_hands("grosstarock", 0, LAYOUT_T)
    f, m, d = state.order
    act(state, "discard DA", "discard D2", "discard D3")
    assert state.turn == d
    act(state, "declare cavallerie H", "pass", "pass", "pass")  # D holds HK HQ HC HJ
    while state.phase != "play":
        act(state, "pass")
    play(state, "S2", "SA", "T10", "H5", "T1", "EX", "D4", "T2", "T11", "H6", "SK", "T3")
    _finish_lowest(state)
    ledger = state.result().ledger
    decl = [(t.source, t.target, t.amount) for t in ledger if t.rule == "DUM-DECL-2"]
    assert sorted(decl) == sorted([(f, d, 10), (m, d, 10)])
    # The Pagat won trick 2: F receives 5 from each.
    pagat = [(t.source, t.target, t.amount) for t in ledger if t.rule == "DUM-BON-1"]
    assert sorted(pagat) == sorted([(d, f, 5), (m, f, 5)])
    # SK lost in trick 4: F pays 5 to each (among the other King transfers).
    kings = [(t.source, t.target, t.amount) for t in ledger if t.rule == "DUM-BON-2"]
    for transfer in ((f, d, 5), (f, m, 5)):
        assert transfer in kings


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("grosstarock", {}),
        ("grosstarock", {"nolo_cancels": "cards_only"}),
        ("german-1754", {}),
        ("danish", {}),
        ("danish-pots", {}),
        ("danish-pots", {"counting": "p001"}),
    ],
)
def test_g_pay_3_every_deal_is_zero_sum(name: str, options: dict[str, str]) -> None:
    """G-PAY-3: Σ player deltas + Σ pot deltas = 0; every transfer is positive between two
    different accounts of the table; deltas are the transfers' balances."""
    variant = find_variant(name, options)
    for seed in range(30):
        state = random_deal(name, seed, options)
        result = state.result()
        accounts = set(state.order) | set(variant.pot_names)
        balance: dict[object, int] = {a: 0 for a in accounts}
        for t in result.ledger:
            assert t.amount > 0 and t.source != t.target
            assert t.source in accounts and t.target in accounts
            balance[t.source] -= t.amount
            balance[t.target] += t.amount
        assert sum(result.deltas) + sum(result.pots.values()) == 0
        assert [balance[s] for s in range(3)] == result.deltas
        assert {p: balance[p] for p in variant.pot_names} == result.pots


def test_g_pay_3_danish_match_is_zero_sum_after_the_split() -> None:
    """G-PAY-3/G-PAY-4: over a Danish match, after the final pot split, Σ player totals = 0."""
    for name in ("danish", "danish-pots"):
        match = Match(find_variant(name), seed=9, deals=6)
        rng = random.Random(9)
        while not match.is_over():
            state = match.start_deal()
            while not state.is_terminal():
                state.apply(rng.choice(state.legal_actions()))
            match.finish_deal(state)
        match.final_split()
        assert sum(match.scores) == 0
        assert all(v == 0 for v in match.pots.values())
