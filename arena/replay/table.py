"""The table state: one position of a deal as the drawn table shows it (`static/table.js`).

The live table, the replay viewer and a person's seat feed the same component the same JSON
value, built here from what the engine lets a seat see: the public facts of an observation
(`observation()` without its private keys) and, for a view from one seat, that seat's own
observation. Nothing else goes in, so a spectator's table holds what every seat knows and no more.

The value (schema 1; docs/REPLAYS.md, "The table state"):

``schema``          1
``variant``         the variant's name
``deal``, ``deals`` the deal's index (from 0) and the number of dealer turns; null when unknown
``step``            decisions made in the deal so far
``phase``           the engine's phase id; ``phase_label`` its name in words
``to_act``          the seat to act, or null
``dealer``, ``forehand``, ``trick_number``
``view``            whose cards the table shows: a seat, ``"all"`` (the replay's omniscient view)
                    or null (a spectator: no hand at all)
``seats``           one per seat, in seat order: ``seat``, ``name``, ``score`` (match score or
                    null), ``hand_size``, ``tricks`` (won), ``points`` (card points won, or
                    null), ``dealer``, ``forehand``, ``out`` (sits this deal out), ``acting``,
                    ``role`` ("declarer", "partner" or null), ``badges`` (``{"kind", "text"}``:
                    bids, answers, declarations, announcements, in the order made), ``clock``
                    (null, or ``{"deadline_ms"``: the wall-clock time in ms since the epoch when
                    its time runs out, or null; ``"limit_ms"``, ``"bank_ms"``}), ``hand`` (card
                    codes, only for the seat of the view, or every seat in the omniscient view;
                    else null) and ``pile`` (the cards it laid away itself, shown as its hand is)
``trick``           the trick in play: ``{"leader", "cards": [[seat, card], ...], "note"}`` or null
``last_trick``      the last completed trick: ``{"number", "leader", "winner", "cards",
                    "points"}`` (points: null when not counted) or null
``piles``           the talon, the skat, the laid-away cards, as the rules show them:
                    ``{"id", "label", "cards"`` (face up) ``, "count"`` (face down) ``, "note"}``
``pots``            the Danish pots: ``{"name", "label", "amount"}`` (empty elsewhere)
``contract``        American: ``{"name", "label", "declarer", "called", "partner", "text"}`` or
                    null; ``partner`` is a seat, −1 (the declarer plays alone) or null (not known
                    to this view)
``legal``           the viewing seat's legal actions when it is to act: ``{"code", "text",
                    "card"}`` (``card``: the card a play, discard or call names, else null); else null
``result``          the end of the deal: ``{"annulled", "card_points", "deltas", "pots"}`` or null
``status``          one line saying where the deal is
``now_ms``          the server's clock (ms since the epoch) when the state was made, or null: a
                    page counts a deadline down from it, whatever its own clock says

A score, pot or delta beyond 2**53 (JavaScript's exact integers; Danish pots double without
bound) is a decimal string instead of a number (`js_int`): the pages only show them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..engine import Action, DealState
from ..engine.deal import BID, CALL
from ..engine.views import known_partner, seat_view
from .timeline import PHASE_NAMES, SUIT_SYMBOLS, action_text, card_text

SCHEMA = 1
JS_EXACT = 2**53 - 1  # the largest integer a JavaScript number holds exactly


def js_int(value: int) -> int | str:
    """`value` for a page's JSON: a number while JavaScript holds it exactly, else its decimal text."""
    return value if -JS_EXACT <= value <= JS_EXACT else str(value)


def _js_result(result: Any) -> Any:
    """A deal's result with its deltas and pot changes as `js_int` makes them."""
    if not isinstance(result, Mapping):
        return result
    exact = dict(result)
    if isinstance(exact.get("deltas"), list):
        exact["deltas"] = [js_int(d) for d in exact["deltas"]]
    if isinstance(exact.get("pots"), Mapping):
        exact["pots"] = {k: js_int(v) for k, v in exact["pots"].items()}
    return exact


PRIVATE_KEYS = frozenset({"seat", "hand", "skat", "legal_actions", "partner"})
"""Keys of an observation that only its seat knows; the rest is the same for every seat."""

CONTRACTS = {
    "rufer": "Rufer",
    "solorufer": "Solorufer",
    "dreier": "Dreier",
    "solodreier": "Solodreier",
    "trischaken": "Trischaken",
}
POTS = {"king": "King pot", "pagat": "Pagat pot"}  # DK-POT-1
# Declarations (combinations) and announcements in the rules' words, never their ids.
NAMES = {
    "trumps": "Trumps",
    "matadors": "Matadors",
    "kings": "Kings",
    "cavallerie": "Cavallerie",
    "half_cavallerie": "Half Cavallerie",
    "four_queens": "Four Queens",
    "four_cavaliers": "Four Cavaliers",
    "four_jacks": "Four Jacks",
    "ladons": "Ladons",
    "whole_cavalry": "Whole Cavalry",
    "half_cavalry": "Half Cavalry",
    "four_kings": "Four Kings",
    "three_kings": "Three Kings",
    "overfull_kings": "Overfull Kings",
    "full_kings": "Full Kings",
    "half_kings": "Half Kings",
    "overfull": "Overfull",
    "full": "Full",
    "half": "Half",
    "abundant_kings": "Abundant Kings",
    "abundant_cavallerie": "Abundant Cavallerie",
    "full_cavallerie": "Full Cavallerie",
    "vole": "Vole",
    "nolo": "Nolo",
    "trull": "Trull",
    "capture_called": "Capture Called Card",
    "petit_ultimo": "Petit Ultimo",
    "king_ultimo_called": "King Ultimo, called",
    "king_ultimo_other": "King Ultimo, other",
    "slam": "Slam",
}


LABELS = {**NAMES, **CONTRACTS, **POTS}
"""Every id the pages may have to name, with its name: sent to the live table with the position."""


def label(name: str) -> str:
    """A rule's name for an id of the engine: ``four_kings`` → ``Four Kings``."""
    return NAMES.get(name) or CONTRACTS.get(name) or name.replace("_", " ").capitalize()


def pile_label(variant: str) -> str:
    """The name of the cards a seat lays away: the declarer's "laid-away cards" in `american`
    (AM-TAL-1), the dealer's skat elsewhere (DUM-DISC-1, G54-DISC-1, DK-SKAT-1)."""
    return "Laid away" if variant == "american" else "Skat"


def public_facts(view: Mapping[str, Any]) -> dict[str, Any]:
    """An observation without the keys only its seat knows: the same from every seat."""
    return {k: v for k, v in view.items() if k not in PRIVATE_KEYS}


def public_view(state: DealState) -> dict[str, Any]:
    """The public facts of `state` now, and the partner once every seat knows him (or None)."""
    seats = state.seats
    # Any seat's view holds the public facts; one that is not to act spares its legal actions.
    seat = 0 if state.turn is None else (state.turn + 1) % seats
    facts = public_facts(seat_view(state, seat).to_dict())
    facts["step"] = len(state.history)
    partner = public_partner(state)
    if partner is not None:
        facts["partner"] = partner
    return facts


def public_partner(state: DealState) -> int | None:
    """The declarer's partner (−1: alone) once it is public (AM-CALL-2), else None."""
    if not state.variant.contracts or state.contract is None or state.phase in (BID, CALL):
        return None
    # A seat that did not hold the called card knows the partner only once every seat does.
    outsider = next(s for s in range(state.seats) if s != state.called_holder)
    return known_partner(state, outsider)


def table_state(
    public: Mapping[str, Any],
    names: Sequence[str],
    *,
    views: Mapping[int, Mapping[str, Any]] | None = None,
    view: int | str | None = None,
    partner: int | None = None,
    scores: Sequence[int] | None = None,
    points: Sequence[int] | None = None,
    clocks: Sequence[Mapping[str, Any] | None] | None = None,
    deal: int | None = None,
    deals: int | None = None,
    step: int | None = None,
    last_points: int | None = None,
    now_ms: int | None = None,
) -> dict[str, Any]:
    """The table state (module docstring) of one position.

    `public`: the public facts (`public_facts`, `public_view`); `views`: the observations of the
    seats whose cards are shown (`view` is that seat, or "all" with every seat's); `partner`: the
    partner as this view knows him (`public_view` puts the public one in `public`)."""
    views = views or {}
    variant = str(public["variant"])
    n = len(public["hand_sizes"])
    to_act = public.get("to_act")
    phase = str(public["phase"])
    if partner is None:
        partner = public.get("partner")
    for seen in views.values():
        if partner is None and "partner" in seen:
            partner = seen["partner"]
    declarer = public.get("declarer")
    badges: list[list[dict[str, str]]] = [[] for _ in range(n)]
    for answer in public.get("round_answers", ()):
        badges[answer["seat"]].append(_answer_badge(answer["round"], answer["answer"]))
    for d in public.get("declarations", ()):
        suit = d.get("suit")
        text = label(d["name"]) + (f" {SUIT_SYMBOLS.get(suit, suit)}" if suit else "")
        badges[d["seat"]].append({"kind": "declare", "text": f"{text} ({d['value']})"})
    for a in public.get("announcements", ()):
        badges[a["seat"]].append({"kind": "announce", "text": label(a["name"])})
    sitting_out = public.get("sitting_out")
    seats = []
    for s in range(n):
        own = views.get(s)
        role = "declarer" if declarer == s else "partner" if partner is not None and partner == s else None
        seats.append(
            {
                "seat": s,
                "name": names[s] if s < len(names) else f"seat {s}",
                "score": js_int(scores[s]) if scores is not None else None,
                "hand_size": public["hand_sizes"][s],
                "tricks": public["tricks_won"][s],
                "points": points[s] if points is not None else None,
                "dealer": s == public["dealer"],
                "forehand": s == public["forehand"],
                "out": s == sitting_out,
                "acting": s == to_act,
                "role": role,
                "badges": badges[s],
                "clock": clocks[s] if clocks is not None else None,
                "hand": list(own["hand"]) if own is not None else None,
                "pile": list(own["skat"]) if own is not None and "skat" in own else None,
            }
        )
    legal = None
    if isinstance(view, int) and view in views and to_act == view:
        legal = [legal_action(code) for code in views[view].get("legal_actions", ())]
    return {
        "schema": SCHEMA,
        "variant": variant,
        "deal": deal,
        "deals": deals,
        "step": step if step is not None else public.get("step"),
        "phase": phase,
        "phase_label": PHASE_NAMES.get(phase, phase),
        "to_act": to_act,
        "dealer": public["dealer"],
        "forehand": public["forehand"],
        "trick_number": public.get("trick_number", 0),
        "view": view,
        "seats": seats,
        "trick": _trick(public.get("trick")),
        "last_trick": _last_trick(public.get("tricks", ()), last_points),
        "piles": _piles(public, variant),
        "pots": [
            {"name": name, "label": POTS.get(name, label(name)), "amount": js_int(amount)}
            for name, amount in (public.get("pots_start") or {}).items()
        ],
        "contract": _contract(public, partner),
        "legal": legal,
        "result": _js_result(public.get("result")),
        "status": _status(public, names),
        "now_ms": now_ms,
    }


def _answer_badge(round_name: str, answer: str) -> dict[str, str]:
    if answer == "pass":
        return {"kind": "pass", "text": "pass"}
    if round_name == "bid":
        return {"kind": "bid", "text": label(answer)}
    if answer == "redeal":
        return {"kind": "redeal", "text": "redeal"}
    if answer == "demand":
        return {"kind": "demand", "text": "demands the Fool"}
    return {"kind": answer, "text": label(answer)}


def legal_action(code: str) -> dict[str, Any]:
    """A legal action as the table offers it: its code, its words, the card it names, its type."""
    action = Action.parse(code)
    card = str(action.card) if action.card is not None else None
    return {"code": code, "text": action_label(action), "card": card, "type": action.type}


def action_label(action: Action) -> str:
    """An action as a button says it, in the rules' words: ``bid Rufer``, ``declare Four Kings``."""
    kind = action.type
    suit = ""
    if action.suit:
        suit = "taroks" if action.suit == "T" else SUIT_SYMBOLS.get(action.suit, action.suit)
    if kind == "declare":
        return f"declare {label(str(action.name))}" + (f" {suit}" if suit else "")
    if kind == "announce":
        return f"announce {label(str(action.name))}"
    if kind == "bid":
        return f"bid {label(str(action.name))}"
    if kind == "demand":
        return "demand the Fool"
    if kind == "redeal":
        return "redeal"
    if kind == "discard" and action.card is not None:
        return f"lay away {card_text(str(action.card))}"
    return action_text(action)


def _trick(trick: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not trick:
        return None
    note = None
    if trick.get("designation"):
        named = trick.get("redesignation") or trick["designation"]
        note = "the Fool names " + ("taroks" if named == "T" else SUIT_SYMBOLS.get(named, named))
    return {"leader": trick["leader"], "cards": [list(c) for c in trick["cards"]], "note": note}


def _last_trick(tricks: Sequence[Mapping[str, Any]], points: int | None) -> dict[str, Any] | None:
    if not tricks:
        return None
    t = tricks[-1]
    return {
        "number": t["number"],
        "leader": t["leader"],
        "winner": t["winner"],
        "cards": [list(c) for c in t["cards"]],
        "points": points,
    }


def _pile(pile_id: str, name: str, cards: Sequence[str], count: int, note: str) -> dict[str, Any]:
    return {"id": pile_id, "label": name, "cards": list(cards), "count": count, "note": note}


def _piles(public: Mapping[str, Any], variant: str) -> list[dict[str, Any]]:
    """The talon, the skat, the laid-away cards, as much of them as the rules show everyone."""
    phase = public["phase"]
    if variant == "american":
        talon = public.get("talon")
        contract = public.get("contract")
        if contract is None or phase in (BID, CALL):
            if talon is not None:
                return [_pile("talon", "Talon", talon, 0, "shown to all")]
            return [_pile("talon", "Talon", [], 6, "face down")]
        if contract in ("solorufer", "solodreier", "trischaken"):  # AM-TAL-2, AM-TRI-1
            return [_pile("talon", "Talon", [], 6, "set aside unseen")]
        piles = [_pile("talon", "Talon", talon, 0, "shown, taken by the declarer")] if talon else []
        if phase != "discard":  # AM-TAL-1: the declarer's 6 cards, face down
            piles.append(_pile("laid_away", pile_label(variant), [], 6, "face down"))
        return piles
    if phase in ("redeal", "demand", "bid", "discard"):
        return []
    published = public.get("skat_public")
    if published is None:
        return [_pile("skat", pile_label(variant), [], 3, "face down")]
    taroks = published["taroks"]  # DK-SKAT-3/4: its taroks counted, combination cards shown
    shown = list(published["shown"])
    note = f"{taroks} tarok{'s' if taroks != 1 else ''}"
    return [_pile("skat", pile_label(variant), shown, 3 - len(shown), note)]


def _contract(public: Mapping[str, Any], partner: int | None) -> dict[str, Any] | None:
    name = public.get("contract")
    if name is None:
        return None
    declarer = public.get("declarer")
    called = public.get("called")
    parts = [CONTRACTS.get(name, label(name))]
    if declarer is not None:
        parts.append(f"declarer seat {declarer}")
    if called is not None:
        parts.append(f"called {card_text(called)}")
    if partner is not None:
        parts.append("plays alone" if partner == -1 else f"partner seat {partner}")
    return {
        "name": name,
        "label": CONTRACTS.get(name, label(name)),
        "declarer": declarer,
        "called": called,
        "partner": partner,
        "text": " · ".join(parts),
    }


def _status(public: Mapping[str, Any], names: Sequence[str]) -> str:
    phase = str(public["phase"])
    if phase == "end":
        result = public.get("result")
        return "the deal was annulled" if result and result.get("annulled") else "the deal is over"
    text = PHASE_NAMES.get(phase, phase)
    if phase in ("play", "announce") and public.get("trick_number", 0) > 0:
        text += f" · trick {public['trick_number']}"
    to_act = public.get("to_act")
    if to_act is not None:
        who = names[to_act] if to_act < len(names) else f"seat {to_act}"
        text += f" · {who} to act"
    return text
