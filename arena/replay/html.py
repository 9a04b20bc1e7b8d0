"""`arena replay html`: one self-contained HTML file that steps through a replay.

The page needs no network: its style, its script and the replay's data are inline. The data
holds, for every position (before each decision, and at the end of each deal), what each seat
knew, taken from the engine's `observation()`, and the public facts once (the same in every
view). The omniscient view is the union of the seats' views plus the decision itself; a seat's
view is drawn from that seat's observation, the public facts, the public version of each action
(a discard without its card) and the seat's own clock only.

The page reads and writes its position in the URL fragment, ``#deal=K&step=N&seat=S``
(``seat=all`` for the omniscient view), so a position can be linked to.
"""

from __future__ import annotations

import html
import json
from typing import Any

from ..engine import Action, observation
from .read import DealLog, Replay
from .timeline import (
    Event,
    action_text,
    clocks,
    events,
    public_action,
    running_points,
    trick_points,
    walk,
)
from .viewer import PAGE

# Keys of an observation that only its seat knows; the rest is public and the same for every seat.
# (`partner`: in `american` the called card's holder knows the partnership before the others.)
PRIVATE_KEYS = frozenset({"seat", "hand", "skat", "legal_actions", "partner"})
# Public keys that the page does not need per position (the deal's constants, the trick history).
CONSTANT_KEYS = frozenset(
    {"variant", "options", "dealer", "forehand", "order", "sitting_out", "pots_start", "tricks"}
)


def replay_data(replay: Replay) -> dict[str, Any]:
    """Everything the page shows, as JSON-able data."""
    variant = replay.variant
    assert variant is not None
    h = replay.header
    per, bank, increment = replay.time_control
    between = events(replay)
    deals = [_deal_data(replay, log, clocks(replay), between) for log in replay.deals]
    # The bot each seat's first Hello named; version 1 logs have no hello lines (null: not known).
    bots = (
        [hello.bot if hello is not None else "no Hello in the log" for hello in replay.first_hellos()]
        if h.get("version", 1) != 1
        else None
    )
    return {
        "variant": variant.name,
        "options": dict(variant.options),
        "matchId": h.get("match_id", ""),
        "seed": h.get("seed"),
        "dealerTurns": h.get("deals"),
        "names": list(h.get("seats", [])),
        "bots": bots,
        "seats": variant.seats,
        "clock": {
            "perDecision": per,
            "bank": bank,
            "increment": increment,
            "latencyAllowance": replay.latency_allowance_ms,
        },
        "faultPolicy": h.get("fault_policy"),
        "deals": deals,
        "matchEnd": replay.match_end,
        "problem": str(replay.problem) if replay.problem is not None else None,
        "partial": replay.partial_file and replay.match_end is None,
    }


def _deal_data(
    replay: Replay,
    log: DealLog,
    times: dict[tuple[int, int], Any],
    between: dict[tuple[int, int], list[Event]],
) -> dict[str, Any]:
    notes: dict[int, list[dict[str, Any]]] = {}  # the referee tells no other seat about these
    for (deal, step), found in between.items():
        if deal == log.index:
            notes[step] = [{"seat": event.seat, "text": event.text} for event in found]
    frames: list[dict[str, Any]] = []
    first: dict[str, Any] = {}
    for state, decision in walk(replay, log):
        views = [observation(state, seat) for seat in range(state.seats)]
        public = {k: v for k, v in views[0].items() if k not in PRIVATE_KEYS}
        for view in views[1:]:
            # The public part of every seat's view is the same; the page keeps it once.
            assert {k: v for k, v in view.items() if k not in PRIVATE_KEYS} == public
        if not first:
            first = {k: public.get(k) for k in CONSTANT_KEYS}
        last = state.tricks[-1] if state.tricks else None
        frame: dict[str, Any] = {
            "step": decision.step if decision is not None else len(log.decisions),
            "public": {k: v for k, v in public.items() if k not in CONSTANT_KEYS},
            "views": [
                {
                    "hand": view["hand"],
                    **({"skat": view["skat"]} if "skat" in view else {}),
                    **({"partner": view["partner"]} if "partner" in view else {}),
                    **(
                        {"legal": [_offered(a) for a in view["legal_actions"]]}
                        if "legal_actions" in view
                        else {}
                    ),
                }
                for view in views
            ],
            "last": None
            if last is None
            else {
                "number": last.number,
                "leader": last.leader,
                "winner": last.winner,
                "cards": [[seat, str(card)] for seat, card in last.plays],
                "points": trick_points(last),
            },
            "points": running_points(state),
            "talon": [str(c) for c in state.talon],  # `american`; for the omniscient view only
            "notes": notes.get(decision.step if decision is not None else len(log.decisions), []),
        }
        if decision is not None:
            clock = times[log.index, decision.step]
            frame["decision"] = {
                "seat": decision.seat,
                "action": action_text(decision.action),
                "code": str(decision.action),
                "public": action_text(public_action(decision.action)),
                "think": decision.think_ms,
                "limit": clock.limit_ms,
                "bank": clock.bank_ms,
                "fault": decision.fault,
                "line": decision.line,
            }
            if replay.latency_allowance_ms:  # as `arena replay show` prints it beside the think time
                frame["decision"]["latency"] = {
                    "rtt": decision.rtt_ms,  # null: no estimate yet
                    "allowed": decision.allowance_ms,
                    "charged": clock.charged_ms,
                }
        frames.append(frame)
    return {
        "index": log.index,
        "dealer": first.get("dealer"),
        "forehand": first.get("forehand"),
        "order": first.get("order"),
        "sittingOut": first.get("sitting_out"),
        "pots": first.get("pots_start") or {},
        "frames": frames,
        "result": log.result,
        "scores": log.scores,
    }


def _offered(text: str) -> dict[str, str]:
    action = Action.parse(text)
    return {"code": text, "text": action_text(action)}


def render_html(replay: Replay) -> str:
    """The page for `replay`."""
    data = replay_data(replay)
    # `</` inside a script would end it early; JSON allows `\/` for `/`.
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
    variant = replay.variant
    assert variant is not None
    title = f"{variant.name} · match {replay.header.get('match_id', '')}"
    return PAGE.replace("{{TITLE}}", html.escape(title)).replace("{{DATA}}", payload)
