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

import base64
import hashlib
import html
import json
from pathlib import Path
from typing import Any

from ..engine import Action, DealState, observation
from .analysis import Analysis, Point
from .read import DealLog, Decision, Replay
from .table import LABELS, action_label, legal_action, public_facts, table_state
from .timeline import (
    Event,
    clocks,
    events,
    public_action,
    running_points,
    trick_points,
    walk,
)
from .viewer import PAGE as TEMPLATE

# The drawn table (cards, component, style) is the web site's own files, inlined: the page stays
# one file, and one change to the table shows on the site and in every replay page made after it.
_STATIC = Path(__file__).resolve().parent.parent / "web" / "static"
PAGE = TEMPLATE.replace("{{TABLE_CSS}}", (_STATIC / "table.css").read_text(encoding="utf-8")).replace(
    "{{TABLE_JS}}",
    (_STATIC / "cards.js").read_text(encoding="utf-8") + (_STATIC / "table.js").read_text(encoding="utf-8"),
)

# Public keys that the page does not need per position (the deal's constants, the trick history).
CONSTANT_KEYS = frozenset(
    {"variant", "options", "dealer", "forehand", "order", "sitting_out", "pots_start", "tricks"}
)


def replay_data(replay: Replay, analysis: Analysis | None = None) -> dict[str, Any]:
    """Everything the page shows, as JSON-able data; with `analysis`, the search's opinion of the
    decisions it analysed and each seat's costliest ones."""
    variant = replay.variant
    assert variant is not None
    h = replay.header
    per, bank, increment = replay.time_control
    between = events(replay)
    points = {(p.deal, p.step): p for p in analysis.points} if analysis is not None else {}
    deals = [_deal_data(replay, log, clocks(replay), between, points) for log in replay.deals]
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
        "analysis": _analysis_data(analysis) if analysis is not None else None,
        "labels": LABELS,
    }


def _analysis_data(analysis: Analysis) -> dict[str, Any]:
    """What the page says of the analysis as a whole: its budget, and each seat's costliest decisions
    in order (deal, step, loss), which it marks."""
    return {
        "seed": analysis.seed,
        "iterations": analysis.iterations,
        "thinkMs": analysis.think_ms,
        "seats": analysis.seats,
        "totalLoss": {str(seat): analysis.total_loss(seat) for seat in analysis.seats},
        "costliest": {
            str(seat): [
                {
                    "deal": p.deal,
                    "step": p.step,
                    "loss": p.loss,
                    "played": _text(p.played),
                    "best": _text(p.best),
                }
                for p in analysis.costliest(seat)
            ]
            for seat in analysis.seats
        },
    }


def _point_data(point: Point) -> dict[str, Any]:
    """One decision's analysis, for its decision panel: each legal action's value, the choice, the loss."""
    return {
        "best": point.best,
        "bestText": _text(point.best),
        "loss": point.loss,
        "values": point.values,
        "forced": point.forced,
    }


def _text(code: str) -> str:
    return action_label(Action.parse(code))


def _deal_data(
    replay: Replay,
    log: DealLog,
    times: dict[tuple[int, int], Any],
    between: dict[tuple[int, int], list[Event]],
    points: dict[tuple[int, int], Point],
) -> dict[str, Any]:
    notes: dict[int, list[dict[str, Any]]] = {}  # the referee tells no other seat about these
    for (deal, step), found in between.items():
        if deal == log.index:
            notes[step] = [{"seat": event.seat, "text": event.text} for event in found]
    frames: list[dict[str, Any]] = []
    first: dict[str, Any] = {}
    names = list(replay.header.get("seats", []))
    before = replay.deals.index(log)
    scores = (replay.deals[before - 1].scores if before > 0 else None) or [0] * replay.seats
    for state, decision in walk(replay, log):
        views = [observation(state, seat) for seat in range(state.seats)]
        public = public_facts(views[0])
        for view in views[1:]:
            # The public part of every seat's view is the same; the page keeps it once.
            assert public_facts(view) == public
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
                        {"legal": [legal_action(a) for a in view["legal_actions"]]}
                        if "legal_actions" in view
                        else {}
                    ),
                }
                for view in views
            ],
            "table": _table(replay, log, state, decision, public, views, names, scores, times),
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
                "action": action_label(decision.action),
                "code": str(decision.action),
                "public": action_label(public_action(decision.action)),
                "think": decision.think_ms,
                "limit": clock.limit_ms,
                "bank": clock.bank_ms,
                "fault": decision.fault,
                "line": decision.line,
            }
            if decision.cpu_ms is not None:  # a seat on a CPU clock: charged its CPU (docs/SANDBOX.md)
                frame["decision"]["cpu"] = decision.cpu_ms
            point = points.get((log.index, decision.step))
            if point is not None:
                frame["decision"]["analysis"] = _point_data(point)
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


def _table(
    replay: Replay,
    log: DealLog,
    state: DealState,
    decision: Decision | None,
    public: dict[str, Any],
    views: list[dict[str, Any]],
    names: list[str],
    scores: list[int],
    times: dict[tuple[int, int], Any],
) -> dict[str, Any]:
    """The public table state of this position (no hand in it: the page adds the views it shows)."""
    partners = [view.get("partner") for view in views]
    clock_list: list[dict[str, Any] | None] = [None] * state.seats
    if decision is not None:
        c = times[log.index, decision.step]
        clock_list[decision.seat] = {"deadline_ms": None, "limit_ms": c.limit_ms, "bank_ms": c.bank_ms}
    return table_state(
        public,
        names,
        # Public once every seat knows him (the holder of the called card knows first, AM-CALL-2).
        partner=partners[0] if all(p is not None for p in partners) else None,
        scores=scores,
        points=running_points(state),
        clocks=clock_list,
        deal=log.index,
        deals=replay.header.get("deals"),
        step=decision.step if decision is not None else len(log.decisions),
        last_points=trick_points(state.tricks[-1]) if state.tricks else None,
    )


def render_html(replay: Replay, analysis: Analysis | None = None, play_on: str | None = None) -> str:
    """The page for `replay`, with the search's `analysis` of it if given, and a "play on from here"
    link to `play_on` (a URL with a query, to which the position is added) if given."""
    data = replay_data(replay, analysis)
    data["playOn"] = play_on
    variant = replay.variant
    assert variant is not None
    title = f"{variant.name} · match {replay.header.get('match_id', '')}"
    page = PAGE.replace("{{CSP}}", html.escape(PAGE_CSP)).replace("{{TITLE}}", html.escape(title))
    return page.replace("{{DATA}}", script_json(data))


# Inside <script>, `</script`, `<!--` and `<script` change how the HTML parser reads on (a bot
# named `<!--<script>` once swallowed the page's code into its data block); U+2028 and U+2029 end
# a line of JavaScript. Each is written as its JSON escape, which JSON.parse reads back unchanged.
_SCRIPT_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def script_json(data: Any) -> str:
    """`data` as JSON that is safe as the text of a `<script type="application/json">` element."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).translate(_SCRIPT_ESCAPES)


def _inline_hash(page: str, tag: str) -> str:
    """The CSP source of the one inline `<tag>` element of `page` that has no attribute."""
    start = page.index(f"<{tag}>") + len(tag) + 2
    text = page[start : page.index(f"</{tag}>", start)]
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


PAGE_CSP = (
    f"default-src 'none'; script-src {_inline_hash(PAGE, 'script')}; "
    f"style-src {_inline_hash(PAGE, 'style')}; img-src data:; base-uri 'none'; form-action 'none'"
)
"""The replay page's Content-Security-Policy: its own inline style and script (by their hashes)
and nothing else; no network at all. The page carries it in a <meta> element, so a saved file
keeps it; the web site sends it as a header too, with `frame-ancestors` (which a <meta> cannot set)."""
