"""Checks of the drawn table shared by the web and replay tests: what a position makes public
(from the engine's state, not from the views the table is built from), the cards a table state
or a page names, and a page's layout at a phone's width."""

from __future__ import annotations

import re
from typing import Any

from arena.engine import DealState
from arena.engine.views import known_partner

CARD_CODE = re.compile(r"^(?:[SHDC](?:10|[2-9AJCQK])|T(?:2[01]|1[0-9]|[1-9])|EX)$")
SYMBOLS = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}


def public_cards(state: DealState) -> set[str]:
    """Every card a spectator may have seen by now: played (to a trick), the American talon while
    it is shown (AM-TAL-1), the cards a declaration shows, a Danish skat's shown cards, the called
    card (named by the call)."""
    seen = {str(c) for trick in state.tricks for _, c in trick.plays} | {str(c) for _, c in state.trick}
    if state.variant.contracts and state.talon_visible:
        seen |= {str(c) for c in state.talon}
    for declaration in state.declarations:
        seen |= {str(c) for c in declaration.combination.shown}
    published = state.skat_public
    if published:
        shown = published["shown"]
        assert isinstance(shown, list)
        seen |= {str(c) for c in shown}
    if state.variant.contracts and state.called is not None:
        seen.add(str(state.called))
    return seen


def public_partner(state: DealState) -> int | None:
    """The partner once every seat knows him (−1: the declarer alone), else None."""
    if not state.variant.contracts:
        return None
    known = {known_partner(state, seat) for seat in range(state.seats)}
    return known.pop() if len(known) == 1 else None


def codes_in(value: Any) -> set[str]:
    """Every card code among the strings of a JSON value."""
    if isinstance(value, str):
        return {value} if CARD_CODE.match(value) else set()
    if isinstance(value, dict):
        return set().union(*(codes_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(codes_in(v) for v in value)) if value else set()
    return set()


def text_cards(text: str) -> set[str]:
    """Cards named in a page's text: ♠K, ♥10, T21, EX."""
    found = {SYMBOLS[s] + r for s, r in re.findall(r"([♠♥♦♣])(10|[2-9AJCQK])(?![0-9])", text)}
    found |= {f"T{n}" for n in re.findall(r"\bT(2[01]|1[0-9]|[1-9])(?![0-9])", text)}
    if re.search(r"\bEX\b", text):
        found.add("EX")
    return found


LAYOUT = """() => {
  const width = document.documentElement.clientWidth;
  const scroller = (node) => {
    for (let up = node.parentElement; up; up = up.parentElement) {
      const overflow = getComputedStyle(up).overflowX;
      if (overflow === "auto" || overflow === "scroll") return up;
    }
    return null;
  };
  const outside = [];
  for (const node of document.body.querySelectorAll("*")) {
    const box = node.getBoundingClientRect();
    if (!box.width || !box.height) continue;
    if ((box.right > width + 0.5 || box.left < -0.5) && !scroller(node)) {
      outside.push(node.tagName + "." + (node.getAttribute("class") || "") + ": " + Math.round(box.right));
    }
  }
  return { width, scrollWidth: document.documentElement.scrollWidth, outside };
}"""
"""A page's width, its scroll width and the elements outside the screen (not in a scrolling box)."""
