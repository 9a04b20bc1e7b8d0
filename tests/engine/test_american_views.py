"""`american`: what each seat sees (AM-CALL-2, AM-ANN-1), deal records, and invariants over many
seeded deals."""


from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import act, cards_in
from support.american import (
    AMERICAN,
    BASE,
    OTHER,
    D,
    F,
    P,
    bid_round,
    breakdown,
    new_deal,
    pass_announcements,
    points,
    rufer,
    to_announcements,
    value,
    zero_sum,
)

from arena.engine import (
    Card,
    DealState,
    IllegalActionError,
    RecordError,
    deal_record,
    deck_for,
    find_variant,
    observation,
    replay_record,
)
from arena.engine.combos import american as american_combinations
from arena.protocol import view_message
from arena.v1 import arena_pb2 as pb

# ---------------------------------------------------------------------------- views (AM-CALL-2, AM-ANN-1)


def partners(state: DealState) -> list[int | None]:
    return [observation(state, seat).get("partner") for seat in range(4)]


def test_only_the_partner_knows_him_until_the_called_card_is_played() -> None:
    """AM-CALL-2: the holder of the called card knows from the call; nobody else, the declarer
    included, until it is played (here in trick 4, the heart court trick)."""
    state = BASE.deal()
    act(state, "bid rufer", "pass", "pass", "pass")
    assert partners(state) == [None] * 4
    act(state, "call HK")
    assert partners(state) == [None, P, None, None]
    for card in BASE.talon:
        act(state, f"discard {card}")
    pass_announcements(state)
    for _ in range(3):  # tricks 1-3
        for _ in range(4):
            seat = state.current_player
            assert seat is not None
            act(state, f"play {BASE.tricks[state.trick_no - 1][seat]}")
    assert partners(state) == [None, P, None, None]
    while not any(str(c) == "HK" for _, c in state.trick):
        seat = state.current_player
        assert seat is not None
        act(state, f"play {BASE.tricks[3][seat]}")
    assert partners(state) == [P, P, P, P]  # public as soon as HK lies in the trick


def test_a_declarer_who_called_his_own_card_alone_knows_it() -> None:
    """AM-CALL-2 (AMB-35): F called his own SK; the others learn it when SK is played."""
    state = BASE.deal()
    act(state, "bid solorufer", "pass", "pass", "pass", "call SK")
    assert partners(state) == [None, None, None, -1]
    pass_announcements(state)
    act(state, "play SK")
    assert partners(state) == [-1, -1, -1, -1]


def test_a_combination_showing_the_called_card_reveals_the_partner() -> None:
    """AM-CALL-2, AM-COMB-1: P shows Half Kings holding the called HK."""
    hand = ["HK", "SK", "CK", "EX", *[f"S{n}" for n in range(2, 11)], "H2", "H3", "H4", "H5", "H6"]
    state = new_deal({P: hand})
    to_announcements(state, call="HK")
    assert partners(state)[D] is None
    act(state, "pass", "pass")  # F, OTHER
    act(state, "declare half_kings D")
    assert partners(state) == [P, P, P, P]
    # Trumps shows no card, so a Trumps declaration never reveals a called tarok.
    assert "cards" not in american_combinations([Card.parse(f"T{n}") for n in range(1, 12)])[0].public()


def test_views_never_hold_another_seats_legal_actions() -> None:
    """AM-ANN-1: only the seat to act sees its legal actions (they would reveal the partner)."""
    state = BASE.deal()
    to_announcements(state)
    for seat in range(4):
        view = observation(state, seat)
        assert ("legal_actions" in view) == (seat == state.current_player)


def test_view_message_carries_the_american_fields() -> None:
    """The wire View (arena.proto) holds contract, declarer, called card, talon, partner, shown cards."""
    state = BASE.deal()
    message = view_message(observation(state, OTHER))
    assert (message.contract, message.declarer, message.called, message.petit_sec) == ("", -1, "", -1)
    assert not message.HasField("partner") and not message.talon
    act(state, "bid rufer", "pass", "pass", "pass", "call HK")
    for seat in range(4):
        wire = pb.View.FromString(view_message(observation(state, seat)).SerializeToString())
        assert wire.contract == "rufer" and wire.declarer == F and wire.called == "HK"
        assert sorted(wire.talon) == sorted(BASE.talon)
        assert wire.HasField("partner") == (seat == P)
        assert [(r.round, r.seat, r.answer) for r in wire.round_answers] == [
            ("bid", F, "rufer"),
            ("bid", OTHER, "pass"),
            ("bid", P, "pass"),
            ("bid", D, "pass"),
        ]
    assert pb.View.FromString(view_message(observation(state, P)).SerializeToString()).partner == P
    dreier = BASE.deal()
    bid_round(dreier, "dreier", "pass", "pass", "pass")
    assert view_message(observation(dreier, D)).partner == -1
    shown = new_deal(
        {OTHER: ["HK", "HQ", "HC", "EX", *[f"S{n}" for n in range(2, 11)], "C3", "C4", "C5", "C6", "C7"]}
    )
    to_announcements(shown, call="DK")
    act(shown, "pass", "declare half_cavallerie H")
    [declaration] = view_message(observation(shown, D)).declarations
    assert list(declaration.cards) == ["HC", "HQ", "HK", "EX"] and declaration.value == 10


def test_illegal_actions_name_american_rules() -> None:
    """Every phase rejects a wrong action type with the rule of that phase."""
    state = BASE.deal()
    with pytest.raises(IllegalActionError) as err:
        act(state, "play SK")
    assert err.value.rule == "AM-BID-2"
    act(state, "bid rufer", "pass", "pass", "pass")
    with pytest.raises(IllegalActionError) as err:
        act(state, "pass")
    assert err.value.rule == "AM-CALL-1"
    act(state, "call HK")
    with pytest.raises(IllegalActionError) as err:
        act(state, "play SK")
    assert err.value.rule == "AM-TAL-1"
    for card in BASE.talon:
        act(state, f"discard {card}")
    with pytest.raises(IllegalActionError) as err:
        act(state, "declare trumps")
    assert err.value.rule == "AM-COMB-1"
    with pytest.raises(IllegalActionError) as err:
        act(state, "announce vole")
    assert err.value.rule == "AM-ANN-1"
    pass_announcements(state)
    with pytest.raises(IllegalActionError) as err:
        act(state, "play S5")
    assert err.value.rule == "G-TRICK-1"
    with pytest.raises(IllegalActionError) as err:
        act(state, "play EX S")
    assert err.value.rule == "G-TRICK-1"


# ---------------------------------------------------------------------------- records


def test_records_of_american_deals_replay() -> None:
    """Deal records (replays/FORMAT.md) hold 4 seats; an illegal call is reported with its rule."""
    state = rufer(BASE, {P: ["trull"]})
    record = json.loads(json.dumps(deal_record(state)))
    assert record["seats"] == 4 and record["variant"] == "american"
    assert record["options"] == {"trischaken_leader": "dealer", "trischaken_scoring": "pairwise"}
    assert [a["type"] for a in record["actions"][:5]] == ["bid", "pass", "pass", "pass", "call"]
    assert record["result"]["breakdown"]["x"] == -3  # Δ = 7, Trull announced and failed: −10
    assert deal_record(replay_record(record)) == record
    bad = dict(record, actions=[*record["actions"][:4], {"seat": F, "type": "call", "card": "S5"}])
    with pytest.raises(RecordError) as err:
        replay_record(bad)
    assert "step 4" in str(err.value) and "AM-CALL-1" in str(err.value)


# ---------------------------------------------------------------------------- invariants over many seeds

CONFIGS = [{}, {"trischaken_leader": "forehand", "trischaken_scoring": "literal"}]
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def random_deal(seed: int, options: dict[str, str]) -> DealState:
    """A deal played with random legal actions, passing often in the bidding so that Trischaken occurs."""
    variant = find_variant("american", options)
    rng = random.Random(seed)
    state = DealState(variant, seed % 4, deck_for(seed, 0))
    steps = 0
    while not state.is_terminal():
        choices = state.legal_actions()
        assert choices, f"no legal action in {state!r}"
        if state.phase == "bid" and rng.random() < 0.6:
            state.apply(choices[-1])  # pass
        else:
            state.apply(rng.choice(choices))
        steps += 1
        assert steps < 200, "a deal must terminate"
    return state


@pytest.mark.parametrize("options", CONFIGS, ids=["default", "forehand-literal"])
@settings(max_examples=80, deadline=None)
@given(seed=seeds)
def test_deals_terminate_count_91_and_are_zero_sum(options: dict[str, str], seed: int) -> None:
    """Deals end with a legal action at every step; card points of both sides (or all players) and
    the talon sum to 91 (G-CP-4); every ledger sums to zero (G-PAY-3) except literal Trischaken."""
    state = random_deal(seed, options)
    result = state.result()
    assert all(t.amount > 0 for t in result.ledger)
    if state.annulled:
        assert result.deltas == [0, 0, 0, 0]
        return
    assert sum(result.tricks_won) == 18 and all(len(state.hand(s)) == 0 for s in range(4))
    b = breakdown(state)
    if state.trischaken:
        assert sum(result.card_points) + b["talon_points"] == 91
        if options.get("trischaken_scoring") == "literal":
            assert result.deltas == [-c for c in result.card_points]
            return
    else:
        assert sum(b["side_points"]) == 91
        assert result.card_points == [b["side_points"][state.side[s]] for s in range(4)]
        assert b["x"] == (b["delta"] + b["bon"]) * b["multiplier"] + b["slam"] + (
            b["combinations"] if b["declarer_side_wins"] else -b["combinations"]
        )
        alone = state.partner is None
        assert result.deltas[state.declarer] == (3 if alone else 1) * b["x"]  # type: ignore[index]
    zero_sum(state)


@pytest.mark.parametrize("options", CONFIGS, ids=["default", "forehand-literal"])
@settings(max_examples=15, deadline=None)
@given(seed=seeds)
def test_determinism_and_records(options: dict[str, str], seed: int) -> None:
    """The same seed gives the same record byte for byte, and the record replays to itself."""
    first = json.dumps(deal_record(random_deal(seed, options)))
    second = json.dumps(deal_record(random_deal(seed, options)))
    assert first == second
    record = json.loads(first)
    assert json.dumps(deal_record(replay_record(record))) == first


@settings(max_examples=40, deadline=None)
@given(seed=seeds)
def test_views_hold_no_hidden_card(seed: int) -> None:
    """A view holds its own hand, the cards played, shown combinations, the talon only while shown
    (Rufer, Dreier), its own laid-away cards, the called card's name — never another hand, the
    unseen talon, or another seat's legal actions."""
    rng = random.Random(seed)
    state = DealState(AMERICAN, seed % 4, deck_for(seed, 0))
    while True:
        played = {c for t in state.tricks for _, c in t.plays} | {c for _, c in state.trick}
        shown = {c for d in state.declarations for c in d.combination.shown}
        for seat in range(4):
            view = observation(state, seat)
            allowed = set(state.hands[seat]) | played | shown
            if state.talon_visible:
                allowed |= set(state.talon)
            if seat == state.declarer:
                allowed |= set(state.skat)
            if state.called is not None:
                allowed.add(state.called)
            if seat == state.current_player and state.phase == "call":
                allowed |= {a.card for a in state.legal_actions() if a.card is not None}
            leaked = cards_in(view) - allowed
            assert not leaked, f"seat {seat} sees {sorted(map(str, leaked))}"
            assert ("legal_actions" in view) == (seat == state.current_player)
            if not state.talon_visible:
                assert "talon" not in view
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))


def swapped_deal(seed: int) -> tuple[DealState, DealState, int, int, Card, Card] | None:
    """Two deals that differ only in which of two non-declarers holds the called King.

    Forehand bids (Rufer or Solorufer by seed) and calls a King held by another player P; Q is
    another non-declarer; the deck is changed by exchanging the King with a non-tarok card X of Q.
    """
    deck = deck_for(seed, 0)
    dealer = seed % 4
    first = DealState(AMERICAN, dealer, deck)
    if first.annulled:
        return None
    declarer = first.forehand
    holders = {s: [k for k in first.hand(s) if k.is_king] for s in first.order if s != declarer}
    p = next((s for s, kings in holders.items() if kings), None)
    if p is None:
        return None
    king = holders[p][0]
    q = next(s for s in first.order if s not in (declarer, p))
    x = next(c for c in first.hand(q) if c.suit not in ("T", "") and not c.is_king)
    other = list(deck)
    i, j = other.index(king), other.index(x)
    other[i], other[j] = other[j], other[i]
    second = DealState(AMERICAN, dealer, other)
    contract = "rufer" if seed % 2 else "solorufer"
    for state in (first, second):
        bid_round(state, contract, "pass", "pass", "pass")
        act(state, f"call {king}")
    return first, second, p, q, king, x


@settings(max_examples=40, deadline=None)
@given(seed=seeds)
def test_the_partner_stays_hidden_until_the_called_card_is_public(seed: int) -> None:
    """AM-CALL-2: two deals differing only in which defender-candidate holds the called King give
    the declarer and the fourth player identical views, with identical play, until the King (or the
    card exchanged with it) is played or shown; the holder knows he is the partner from the call."""
    pair = swapped_deal(seed)
    if pair is None:
        return
    first, second, p, q, king, x = pair
    declarer = first.declarer
    assert first.partner == p and second.partner == q
    assert observation(first, p)["partner"] == p and observation(second, q)["partner"] == q
    watchers = [s for s in range(4) if s not in (p, q)]
    assert declarer in watchers
    rng = random.Random(seed)
    hidden = {king, x}
    while not first.is_terminal():
        public = {c for t in first.tricks for _, c in t.plays} | {c for _, c in first.trick}
        public |= {c for d in first.declarations for c in d.combination.shown}
        if first.talon_visible:
            public |= set(first.talon)
        if public & hidden:
            break
        for seat in watchers:
            assert observation(first, seat) == observation(second, seat), f"seat {seat} tells them apart"
            assert "partner" not in observation(first, seat)
        common = [a for a in first.legal_actions() if a in second.legal_actions()]
        if not common:
            break
        action = rng.choice(common)
        first.apply(action)
        second.apply(action)


def independent_x(state: DealState) -> tuple[list[int], int]:
    """Side points and X recomputed from the public record of the deal, straight from RULES §5."""
    contract = state.contract
    assert contract is not None and state.declarer is not None
    team = {state.declarer, state.partner} - {None}
    side = {s: 0 if s in team else 1 for s in range(4)}
    piles: list[list[str]] = [[], []]
    debts = []
    for t in state.tricks:
        for seat, card in t.plays:
            if str(card) == "EX" and seat != t.winner:  # retained (AM-FOOL-1); owed across sides
                piles[side[seat]].append("EX")
                if side[seat] != side[t.winner]:
                    debts.append(side[seat])
            else:
                piles[side[t.winner]].append(str(card))
    won = [sum(1 for t in state.tricks if side[t.winner] == s) for s in (0, 1)]
    slam = 0 if won[0] == 18 else 1 if won[1] == 18 else None
    talon = [str(c) for c in (state.skat if contract.exchange else state.talon)]
    piles[slam if slam is not None else (0 if contract.exchange else 1)] += talon  # AM-SC-6, AMB-54
    for owner in debts:  # G-TRICK-7, AM-FOOL-2
        others = sorted((c for c in piles[owner] if c != "EX"), key=lambda c: (value(c), int(Card.parse(c))))
        card = others[0] if others else "EX"
        piles[owner].remove(card)
        piles[1 - owner].append(card)
    cp = [points(p) for p in piles]
    last, before_last = state.tricks[-1], state.tricks[-2]
    last_cards = {str(c) for _, c in last.plays}
    last_side = side[last.winner]
    called = None if state.called is None else str(state.called)
    suit_call = called is not None and called[0] in "SHDC" and called != "EX"
    called_king = called[0] + "K" if suit_call and called is not None else None
    achieved: dict[str, int] = {}
    for s in (0, 1):
        if {"EX", "T1", "T21"} <= set(piles[s]):
            achieved["trull"] = s
        if {"SK", "HK", "DK", "CK"} <= set(piles[s]):
            achieved["four_kings"] = s
    excuse_slam = str(last.plays[0][1]) == "EX" and last.winner == last.plays[0][0]
    if "T1" in last_cards or (excuse_slam and "T1" in {str(c) for _, c in before_last.plays}):
        achieved["petit_ultimo"] = last_side
    if called_king is not None and called_king in last_cards:
        achieved["king_ultimo_called"] = last_side
    if any(k in last_cards and k != called_king for k in ("SK", "HK", "DK", "CK")):
        achieved["king_ultimo_other"] = last_side
    if slam is not None:
        achieved["slam"] = slam
    if contract.calls and any(
        called in {str(c) for _, c in t.plays} and side[t.winner] == 1 for t in state.tricks
    ):
        achieved["capture_called"] = 1
    announced = [{a.name for a in state.announcements if side[a.seat] == s} for s in (0, 1)]
    values = [0, 0]
    slams = [0, 0]
    for s in (0, 1):
        names = ["trull", "four_kings", "petit_ultimo", "king_ultimo_other", "slam"]
        if suit_call:
            names.append("king_ultimo_called")
        if s == 1 and contract.calls:
            names.append("capture_called")
        for name in names:
            base = {"king_ultimo_other": 5, "slam": 200}.get(name, 10)
            got, said = achieved.get(name) == s, name in announced[s]
            v = (2 * base if got else -base) if said else (base if got else 0)
            if name == "slam":
                slams[s] = v
            else:
                values[s] += v
    delta = cp[0] - cp[1]
    before = (delta + values[0] - values[1]) * contract.multiplier + slams[0] - slams[1]
    comb = sum(d.combination.value for d in state.declarations)
    wins = before > 0 or (before == 0 and delta > 0)
    return cp, before + (comb if wins else -comb)


@settings(max_examples=150, deadline=None)
@given(seed=seeds)
def test_partnership_scores_match_an_independent_count(seed: int) -> None:
    """AM-SC-1…7 over random deals (random announcements and declarations included)."""
    state = random_deal(seed, {})
    if state.annulled or state.trischaken:
        return
    cp, x = independent_x(state)
    b = breakdown(state)
    assert b["side_points"] == cp and b["x"] == x
    declarer = state.declarer
    assert declarer is not None
    expected = [-x] * 4
    expected[declarer] = x if state.partner is not None else 3 * x
    if state.partner is not None:
        expected[state.partner] = x
    assert state.result().deltas == expected
