"""Scoring the end of a deal: the Fool exchange, card points, and a ledger of transfers.

Every payment is a `Transfer` between accounts (seats, and the Danish pots)
tagged with the rule that causes it, so a deal's ledger always sums to zero
(G-PAY-1, G-PAY-3) and every game point can be traced to a rule.  The one
exception is `american` Trischaken with `trischaken_scoring = literal`, where
each player pays his card points to the `PENALTY` account, which is nobody's.

`score_deal` reads a deal through `DealFields` (deal.py), the data `DealState` is
built on, and gives a `DealResult` (result.py); `DealState.result()` calls it, and
this module never imports state.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from .cards import FOOL, HONOURS, KINGS, PAGAT, SUIT_OF, Card, is_counting
from .deal import DealFields
from .options import Counting, Family, NoloCancels, TrischakenScoring
from .result import PENALTY, Account, DealResult, Transfer


def _p78_value(index: int) -> int:
    """G-CP-1: 5 for the honours and Kings, 4 Queens, 3 Cavaliers, 2 Jacks, 1 for a blank."""
    if index in (56, 76, 77):
        return 5
    if index >= 56:
        return 1
    return {14: 5, 13: 4, 12: 3, 11: 2}.get(index % 14 + 1, 1)


P78_VALUE: tuple[int, ...] = tuple(_p78_value(i) for i in range(78))
# G-CP-5 (P001): counting cards one less than P78; blanks counted in threes.
P001_VALUE: tuple[int, ...] = tuple(P78_VALUE[i] - 1 if is_counting(i) else 0 for i in range(78))
# G-CP-4 (P91) in half points, so that counting stays in integers: 4.5 → 9, 3.5 → 7, … 0.5 → 1.
P91_HALVES: tuple[int, ...] = tuple(2 * P78_VALUE[i] - 1 for i in range(78))


def p78_points(pile: Iterable[int]) -> int:
    """G-CP-1: Σv − 2·N/3; G-CP-3: N must be a multiple of 3."""
    cards = list(pile)
    n = len(cards)
    if n % 3:
        raise AssertionError(f"a pile of {n} cards cannot be counted in threes (G-CP-3)")
    return sum(P78_VALUE[c] for c in cards) - 2 * n // 3


def p91_points(pile: Iterable[int]) -> int:
    """G-CP-4: Σ values; a pile with an even number of cards counts a whole number of points."""
    cards = list(pile)
    if len(cards) % 2:
        raise AssertionError(f"a pile of {len(cards)} cards has no whole P91 count (G-CP-4)")
    return sum(P91_HALVES[c] for c in cards) // 2


def p001_points(pile: Iterable[int]) -> int:
    """G-CP-5: counting cards 4/3/2/1 plus one point per three blanks."""
    cards = list(pile)
    blanks = sum(1 for c in cards if not is_counting(c))
    return sum(P001_VALUE[c] for c in cards) + blanks // 3


class Ledger:
    """Collects transfers; helpers speak the rules' language ("receives a from each")."""

    def __init__(self, players: tuple[int, ...]) -> None:
        self.players = players
        self.transfers: list[Transfer] = []

    def pay(self, source: Account, target: Account, amount: int, rule: str) -> None:
        if amount > 0 and source != target:
            self.transfers.append(Transfer(source, target, amount, rule))
        elif amount < 0:
            self.transfers.append(Transfer(target, source, -amount, rule))

    def receive_from_each(self, seat: int, amount: int, rule: str) -> None:
        """G-PAY-2: every other active player transfers `amount` to `seat`."""
        for other in self.players:
            if other != seat:
                self.pay(other, seat, amount, rule)

    def pay_to_each(self, seat: int, amount: int, rule: str) -> None:
        for other in self.players:
            if other != seat:
                self.pay(seat, other, amount, rule)

    def balance(self, account: Account) -> int:
        return sum(t.amount for t in self.transfers if t.target == account) - sum(
            t.amount for t in self.transfers if t.source == account
        )


def settle_fool(state: DealFields) -> list[list[Card]]:
    """G-TRICK-7: the final piles after the Fool exchange (DK-FOOL-5/6, G54-FOOL-5 included)."""
    piles = [list(p) for p in state.piles]
    piles[state.dealer].extend(state.skat)  # DUM-DISC-1, G54-DISC-1, DK-SKAT-1: the skat counts for him
    v = state.variant
    tout = next((s for s in state.order if state.tricks_won[s] == v.trick_count), None)
    for owner, creditor, _trick in state.fool_debts:
        pile = piles[owner]
        if tout is not None and v.family is Family.DANISH:
            card = FOOL  # DK-FOOL-5: the Tout-maker takes it without an exchange card
        elif v.fool_owner_without_tricks_gives_fool and state.tricks_won[owner] == 0:
            card = FOOL  # DK-FOOL-6
        else:
            others = [c for c in pile if c != FOOL]
            card = min(others, key=lambda c: (P78_VALUE[c], c)) if others else FOOL
        pile.remove(card)
        piles[creditor].append(card)
    return piles


def score_deal(state: DealFields) -> DealResult:
    v = state.variant
    ledger = Ledger(state.order)
    if v.pots is not None and state.stakes:
        _pot_stakes(state, ledger)
    if v.family is Family.AMERICAN:
        return _score_american(state, ledger)
    if state.annulled:
        return _result(state, ledger, [0] * state.seats)
    piles = settle_fool(state)
    if v.family is Family.DUMMETT:
        points = [p78_points(p) for p in piles]
        _score_dummett(state, ledger, points)
    elif v.family is Family.GERMAN:
        points = [p78_points(p) for p in piles]
        _score_german(state, ledger, points)
    else:
        assert v.danish is not None
        count = p001_points if v.danish.counting is Counting.P001 else p78_points
        points = [count(p) if s in state.order else 0 for s, p in enumerate(piles)]
        for p in piles:
            p78_points(p)  # G-CP-3 holds whatever the counting
        _score_danish(state, ledger, points)
    return _result(state, ledger, points)


def _result(
    state: DealFields, ledger: Ledger, points: list[int], breakdown: dict[str, Any] | None = None
) -> DealResult:
    deltas = [ledger.balance(s) for s in range(state.seats)]
    pots = {name: ledger.balance(name) for name in state.variant.pot_names}
    return DealResult(
        points, deltas, pots, ledger.transfers, state.annulled, list(state.tricks_won), breakdown
    )


def _declarations(state: DealFields, ledger: Ledger, rule: str) -> None:
    for d in state.declarations:
        ledger.receive_from_each(d.seat, d.combination.value, rule)


def _card_settlement(state: DealFields, ledger: Ledger, points: list[int], rule: str) -> None:
    """DUM-CARD-1: CP − 26; those below pay their shortfall, those above receive their excess."""
    diff = {s: points[s] - 26 for s in state.order}
    winners = [s for s in state.order if diff[s] > 0]
    losers = [s for s in state.order if diff[s] < 0]
    if len(winners) == 1:
        for s in losers:
            ledger.pay(s, winners[0], -diff[s], rule)
    elif len(losers) == 1:
        for s in winners:
            ledger.pay(losers[0], s, diff[s], rule)


def _card_played(state: DealFields, predicate: Iterable[Card], last: bool) -> list[tuple[int, Card, bool]]:
    """(seat, card, won) for every card in `predicate` played to tricks 1…24 or to the last trick."""
    wanted = frozenset(predicate)
    final = state.variant.trick_count
    out = []
    for trick in state.tricks:
        if (trick.number == final) != last:
            continue
        for seat, card in trick.plays:
            if card in wanted:
                out.append((seat, card, seat == trick.winner))
    return out


VOLE_VALUE: Final = {1: 52, 13: 38, 20: 31}  # DUM-ANN-2: announced before trick t ≤ key
NOLO_VALUE: Final = {1: (36, 10), 13: (31, 5)}


def _window(table: dict[int, Any], trick: int) -> Any:
    for limit in sorted(table):
        if trick <= limit:
            return table[limit]
    raise AssertionError(f"no announcement window for trick {trick}")


def _score_dummett(state: DealFields, ledger: Ledger, points: list[int]) -> None:
    _declarations(state, ledger, "DUM-DECL-2")
    won = state.tricks_won
    vole_maker = next((s for s in state.order if won[s] == state.variant.trick_count), None)
    announced = {a.seat: a for a in state.announcements}
    # DUM-BON-5: Vole, announced or not; a failed announced Vole pays its value to each.
    for seat, ann in announced.items():
        if ann.name == "vole" and seat != vole_maker:
            ledger.pay_to_each(seat, _window(VOLE_VALUE, ann.trick), "DUM-BON-5")
    if vole_maker is not None:
        made = announced.get(vole_maker)
        value = _window(VOLE_VALUE, made.trick) if made and made.name == "vole" else 26
        ledger.receive_from_each(vole_maker, value, "DUM-BON-5")
    # DUM-BON-6/7: Nolo; void when a Vole is made.
    noloist = None
    if vole_maker is None:
        trickless = [s for s in state.order if won[s] == 0]
        noloist = trickless[0] if len(trickless) == 1 else None
        for seat, ann in announced.items():
            if ann.name == "nolo" and won[seat] > 0:
                ledger.pay_to_each(seat, _window(NOLO_VALUE, ann.trick)[1], "DUM-BON-7")
    if noloist is not None:
        made = announced.get(noloist)
        value = _window(NOLO_VALUE, made.trick)[0] if made and made.name == "nolo" else 26
        ledger.receive_from_each(noloist, value, "DUM-BON-6")
    cancel_bonuses = noloist is not None and state.variant.nolo_cancels is NoloCancels.ALL
    if noloist is None:
        _card_settlement(state, ledger, points, "DUM-CARD-1")
    if cancel_bonuses:
        return
    for seat, _card, wins in _card_played(state, [PAGAT], last=False):
        (ledger.receive_from_each if wins else ledger.pay_to_each)(seat, 5, "DUM-BON-1")
    for seat, _card, wins in _card_played(state, KINGS, last=False):
        (ledger.receive_from_each if wins else ledger.pay_to_each)(seat, 5, "DUM-BON-2")
    for seat, _card, wins in _card_played(state, [PAGAT], last=True):
        (ledger.receive_from_each if wins else ledger.pay_to_each)(seat, 15, "DUM-BON-3")
    for seat, _card, wins in _card_played(state, KINGS, last=True):
        (ledger.receive_from_each if wins else ledger.pay_to_each)(seat, 10, "DUM-BON-4")


def _score_german(state: DealFields, ledger: Ledger, points: list[int]) -> None:
    _declarations(state, ledger, "G54-DECL-1")
    _card_settlement(state, ledger, points, "G54-CARD-1")
    # G54-FOOL-5 (AMB-51): the Excuse's owner is who played it, or the dealer if it lies in the skat.
    owner = (
        state.dealer
        if FOOL in state.skat
        else next((seat for t in state.tricks for seat, card in t.plays if card == FOOL), None)
    )
    if owner is not None and state.tricks_won[owner] == 0:
        ledger.receive_from_each(owner, 4, "G54-FOOL-5")
    for seat, _card, wins in _card_played(state, [PAGAT], last=False):
        if not wins:
            ledger.pay_to_each(seat, 5, "G54-BON-1")
    for seat, _card, wins in _card_played(state, [PAGAT], last=True):
        if wins:
            ledger.receive_from_each(seat, 10, "G54-BON-3")
        else:
            ledger.pay_to_each(seat, 10, "G54-BON-2")


def _pot_stakes(state: DealFields, ledger: Ledger) -> None:
    """DK-POT-3 (AMB-09): refill empty pots; the dealer's stake of 5."""
    rules = state.variant.pots
    assert rules is not None
    for pot in state.variant.pot_names:
        empty = state.pots_start[pot] == 0
        if empty:
            for seat in state.order:
                ledger.pay(seat, pot, rules.refill, "DK-POT-3")
        if rules.stake_into_every_pot or not empty:
            ledger.pay(state.dealer, pot, rules.dealer_stake, "DK-POT-3")


def _score_danish(state: DealFields, ledger: Ledger, points: list[int]) -> None:
    v = state.variant
    params = v.danish
    assert params is not None
    _declarations(state, ledger, "DK-DECL-3")
    # DK-INPLAY-1…3: tricks 1…24.
    for seat, _card, wins in _card_played(state, [PAGAT], last=False):
        if wins:
            if params.pagat_win_pays:
                ledger.receive_from_each(seat, 5, "DK-INPLAY-2")
        else:
            ledger.pay_to_each(seat, 5, "DK-INPLAY-1")
            ledger.pay(seat, "pagat", 5, "DK-INPLAY-1")
    for seat, _card, wins in _card_played(state, KINGS, last=False):
        if not wins:
            ledger.pay_to_each(seat, 5, "DK-INPLAY-3")
            ledger.pay(seat, "king", 5, "DK-INPLAY-3")
    # DK-END-1: classify.
    won = state.tricks_won
    tout = next((s for s in state.order if won[s] == v.trick_count), None)
    trickless = [s for s in state.order if won[s] == 0]
    noloist = trickless[0] if tout is None and len(trickless) == 1 else None
    # DK-END-3: failed ultimos (AMB-07, AMB-11).
    if not (noloist is not None and params.nolo_skips_failed_ultimo):
        start = {pot: state.pots_start[pot] + ledger.balance(pot) for pot in v.pot_names}
        for seat, card, wins in _card_played(state, [PAGAT, *KINGS], last=True):
            if wins:
                continue
            pot, amount = ("pagat", 45) if card == PAGAT else ("king", 40)
            ledger.pay_to_each(seat, amount, "DK-END-3")
            ledger.pay(seat, pot, start[pot] if params.failed_ultimo_doubles_pot else amount, "DK-END-3")
    last = state.tricks[-1]
    if tout is not None:  # DK-END-5, after DK-END-3 (AMB-10)
        ledger.receive_from_each(tout, params.tout, "DK-END-5")
        for pot in v.pot_names:
            ledger.pay(pot, tout, state.pots_start[pot] + ledger.balance(pot), "DK-END-5")
    elif noloist is not None:  # DK-END-6
        ledger.receive_from_each(noloist, 25, "DK-END-6")
    else:  # DK-END-4: exclusive (AMB-46)
        w = last.winner
        winning = last.card_of(w)
        if winning == PAGAT:
            ledger.receive_from_each(w, 45, "DK-END-4")
            ledger.pay("pagat", w, state.pots_start["pagat"] + ledger.balance("pagat"), "DK-END-4")
        elif winning in KINGS:
            ledger.receive_from_each(w, 40, "DK-END-4")
            ledger.pay("king", w, state.pots_start["king"] + ledger.balance("king"), "DK-END-4")
        else:
            ledger.receive_from_each(w, 20, "DK-END-4")
    # DK-END-7: card settlement with forehand.
    forehand = state.forehand
    for seat in state.order:
        if seat == forehand:
            continue
        cp = points[seat]
        if params.counting is Counting.P001:
            ledger.pay(forehand, seat, cp - 25, "DK-END-7")
        elif cp > 26:
            ledger.pay(forehand, seat, 5 * ((cp - 24) // 5), "DK-END-7")
        elif cp < 26:
            ledger.pay(seat, forehand, 5 * ((28 - cp) // 5), "DK-END-7")


# --------------------------------------------------------------------------- american (RULES §5)


def _give_exchange_card(piles: list[list[Card]], owner: int, creditor: int) -> None:
    """G-TRICK-7, AM-FOOL-1/2: the lowest card other than the Excuse (ties: lowest index), else the Excuse."""
    pile = piles[owner]
    others = [c for c in pile if c != FOOL]
    card = min(others, key=lambda c: (P91_HALVES[c], c)) if others else FOOL
    pile.remove(card)
    piles[creditor].append(card)


def american_side_piles(state: DealFields) -> tuple[list[list[Card]], int | None]:
    """The piles of the declarer side and the defenders at the end (AM-SC-6, AMB-54), and the slam side.

    The six cards in the talon's place join their side first, then the Excuse debts are settled
    from each side's whole pile.
    """
    contract = state.contract
    assert contract is not None
    side = state.side
    piles: list[list[Card]] = [[], []]
    won = [0, 0]
    for seat in state.order:
        piles[side[seat]].extend(state.piles[seat])
        won[side[seat]] += state.tricks_won[seat]
    trick_count = state.variant.trick_count
    slam = 0 if won[0] == trick_count else 1 if won[1] == trick_count else None
    if contract.exchange:
        talon, owner = state.skat, 0  # AM-TAL-1: the six laid away
    else:
        talon, owner = list(state.talon), 1  # AM-TAL-2: the unseen talon
    piles[owner if slam is None else slam].extend(talon)  # AM-SC-6 (AMB-49)
    for seat, creditor, _trick in state.fool_debts:
        _give_exchange_card(piles, side[seat], side[creditor])
    return piles, slam


def _american_achievements(state: DealFields, piles: list[list[Card]], slam: int | None) -> dict[str, int]:
    """AM-BON-1: the side (0 declarer side, 1 defenders) that achieved each bonus; absent: nobody."""
    side = state.side
    out: dict[str, int] = {}
    for s in (0, 1):
        pile = set(piles[s])
        if pile >= HONOURS:
            out["trull"] = s
        if pile >= KINGS:
            out["four_kings"] = s
    if slam is not None:
        out["slam"] = slam
    called = state.called
    if called is not None and state.contract is not None and state.contract.calls:
        for trick in state.tricks:
            if called in (card for _seat, card in trick.plays) and side[trick.winner] == 1:
                out["capture_called"] = 1  # AMB-31: in a trick won by a defender
    last = state.tricks[-1]
    last_side = side[last.winner]
    last_cards = {card for _seat, card in last.plays}
    fool_slam = last.plays[0][1] == FOOL and last.winner == last.plays[0][0]
    if PAGAT in last_cards or (fool_slam and PAGAT in {c for _s, c in state.tricks[-2].plays}):
        out["petit_ultimo"] = last_side  # AM-FOOL-3: T1 in trick 17 counts when the Excuse completes a slam
    called_king = None
    if called is not None and SUIT_OF[called] not in ("T", ""):
        called_king = next(k for k in KINGS if SUIT_OF[k] == SUIT_OF[called])  # AMB-32
        if called_king in last_cards:
            out["king_ultimo_called"] = last_side
    if any(k in last_cards and k != called_king for k in KINGS):
        out["king_ultimo_other"] = last_side
    return out


def _bonus_value(name: str, announced: bool, achieved: bool) -> int:
    """AM-BON-2: +2b announced and achieved, −b announced and failed, +b achieved unannounced."""
    base = {"king_ultimo_other": 5, "slam": 200}.get(name, 10)
    if announced:
        return 2 * base if achieved else -base
    return base if achieved else 0


def _distribute(state: DealFields, ledger: Ledger, amount: int, rule: str) -> None:
    """AM-SC-7 (AMB-29): each defender −amount; declarer and partner +amount, or a lone declarer +3·amount.

    With a partner the first defender in playing order pays the declarer, the second the partner.
    """
    declarer, partner = state.declarer, state.partner
    assert declarer is not None
    defenders = [s for s in state.order if state.side[s] == 1]
    for k, seat in enumerate(defenders):
        ledger.pay(seat, declarer if partner is None or k == 0 else partner, amount, rule)


def _score_american(state: DealFields, ledger: Ledger) -> DealResult:
    if state.annulled:
        return _result(state, ledger, [0] * state.seats, {"petit_sec": state.petit_sec})  # AM-DEAL-2
    if state.trischaken:
        return _score_trischaken(state, ledger)
    contract = state.contract
    assert contract is not None
    piles, slam = american_side_piles(state)
    points = [p91_points(p) for p in piles]
    delta = points[0] - points[1]  # AM-SC-1
    achieved = _american_achievements(state, piles, slam)
    bonuses: list[dict[str, int]] = [{}, {}]
    for s in (0, 1):
        for name in state.bonuses_for_side(s):
            value = _bonus_value(name, name in state.side_announced[s], achieved.get(name) == s)
            if value:
                bonuses[s][name] = value
    sign = (1, -1)
    bon = sum(sign[s] * v for s in (0, 1) for name, v in bonuses[s].items() if name != "slam")  # AM-SC-2
    slam_value = bonuses[0].get("slam", 0) - bonuses[1].get("slam", 0)  # AM-SC-4
    m = contract.multiplier
    before = (delta + bon) * m + slam_value
    wins = before > 0 or (before == 0 and delta > 0)  # AM-SC-3 (AMB-30)
    combinations = sum(d.combination.value for d in state.declarations)
    x = before + (combinations if wins else -combinations)  # AM-SC-5
    _distribute(state, ledger, delta * m, "AM-SC-1")
    for s in (0, 1):
        for name, v in bonuses[s].items():
            if name != "slam":
                _distribute(state, ledger, sign[s] * v * m, "AM-BON-2")
    _distribute(state, ledger, slam_value, "AM-SC-4")
    _distribute(state, ledger, combinations if wins else -combinations, "AM-COMB-2")
    breakdown = {
        "contract": contract.name,
        "multiplier": m,
        "declarer": state.declarer,
        "partner": state.partner,
        "called": None if state.called is None else str(state.called),
        "side_points": points,
        "delta": delta,
        "bonuses": {"declarer": bonuses[0], "defenders": bonuses[1]},
        "bon": bon,
        "slam": slam_value,
        "combinations": combinations,
        "declarer_side_wins": wins,
        "x": x,
    }
    return _result(state, ledger, [points[state.side[s]] for s in range(state.seats)], breakdown)


def _score_trischaken(state: DealFields, ledger: Ledger) -> DealResult:
    """AM-TRI-5/6 (AMB-28): own piles after the Excuse exchange; the talon counts for nobody."""
    piles = [list(p) for p in state.piles]
    for owner, creditor, _trick in state.fool_debts:
        _give_exchange_card(piles, owner, creditor)
    points = [p91_points(p) for p in piles]
    if state.variant.trischaken_scoring is TrischakenScoring.LITERAL:
        for seat in state.order:
            ledger.pay(seat, PENALTY, points[seat], "AM-TRI-6")  # −CP_i: not zero-sum (G-PAY-3)
    else:
        order = state.order
        for k, i in enumerate(order):
            for j in order[k + 1 :]:
                ledger.pay(j, i, points[j] - points[i], "AM-TRI-6")  # each pair settles its difference
    breakdown = {"contract": "trischaken", "talon_points": p91_points(state.talon)}
    return _result(state, ledger, points, breakdown)
