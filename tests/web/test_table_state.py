"""The table state (`arena/replay/table.py`) at every position of the sample replays (every
variant): a spectator's holds no card of a hand, a seat's view holds that seat's cards and legal
actions only, the partner shows when the engine says a seat knows him, the piles are the rules',
and nothing a person reads is an engine id (`four_kings`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from support.table import codes_in, public_cards, public_partner

from arena.engine import DealState, observation
from arena.engine.views import known_partner
from arena.replay.samples import SAMPLES_DIR
from arena.replay.table import NAMES, public_view, table_state
from arena.replay.timeline import walk
from arena.replay.verify import verify_replay

IDS = {name for name in NAMES if "_" in name}


def positions() -> Iterator[tuple[str, list[str], DealState]]:
    """Every position of every sample's first deal: (variant, seat names, state)."""
    for sample in sorted(SAMPLES_DIR.glob("*.jsonl")):
        replay = verify_replay(sample, collect=True)
        names = list(replay.header["seats"])
        for state, _decision in walk(replay, replay.deals[0]):
            yield sample.stem, names, state


def words(table: dict[str, Any]) -> list[str]:
    """What the table writes for people: labels, badges, the status line, the actions offered."""
    out = [table["phase_label"], table["status"]]
    out += [badge["text"] for seat in table["seats"] for badge in seat["badges"]]
    out += [pile["label"] + " " + pile["note"] for pile in table["piles"]]
    out += [pot["label"] for pot in table["pots"]]
    out += [action["text"] for action in table["legal"] or []]
    if table["contract"] is not None:
        out += [table["contract"]["label"], table["contract"]["text"]]
    return out


def test_every_position_as_a_spectator_and_as_each_seat() -> None:
    seen_partner = seen_talon = seen_pots = seen_skat = 0
    for name, names, state in positions():
        where = f"{name} step {len(state.history)}"
        spectator = table_state(public_view(state), names)
        json.dumps(spectator)  # JSON as it is
        assert all(seat["hand"] is None and seat["pile"] is None for seat in spectator["seats"]), where
        assert codes_in(spectator) <= public_cards(state), where
        assert spectator["legal"] is None and spectator["view"] is None
        if spectator["contract"] is not None:
            assert spectator["contract"]["partner"] == public_partner(state), where
            seen_partner += spectator["contract"]["partner"] is not None
        for text in words(spectator):
            assert not any(id_ in text for id_ in IDS), (where, text)
        piles = {pile["id"]: pile for pile in spectator["piles"]}
        if "talon" in piles and piles["talon"]["cards"]:
            assert state.talon_visible, where
            seen_talon += 1
        if "skat" in piles and state.skat_public:
            assert piles["skat"]["note"].endswith(("tarok", "taroks")), where
            seen_skat += 1
        seen_pots += bool(spectator["pots"])
        for seat in range(state.seats):
            view = observation(state, seat)
            mine = table_state(public_view(state), names, views={seat: view}, view=seat)
            hands = [s["hand"] for s in mine["seats"]]
            assert hands[seat] == [str(c) for c in state.hands[seat]], where
            assert all(hand is None for i, hand in enumerate(hands) if i != seat), where
            if state.turn == seat:
                assert [a["code"] for a in mine["legal"]] == [str(a) for a in state.legal_actions()], where
                for text in words(mine):
                    assert not any(id_ in text for id_ in IDS), (where, text)
            else:
                assert mine["legal"] is None, where
            if mine["contract"] is not None:
                # The seat's own knowledge of the partner (the called card's holder knows first).
                assert mine["contract"]["partner"] == known_partner(state, seat), where
    assert seen_partner and seen_talon and seen_pots and seen_skat, (
        seen_partner,
        seen_talon,
        seen_pots,
        seen_skat,
    )
