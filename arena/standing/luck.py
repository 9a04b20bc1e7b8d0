"""The standing arena's luck-adjusted deal points (docs/ARENA.md, "Ratings").

The arena seats each deck once (no duplicate seating), so a bot's points carry the full luck of
its cards. A seat's adjusted points on a deal are its points minus its luck, the control of
`arena.search.luck` less its expectation: the rollout policy's self-play on the same deck and
dealer, with a first deal's pots so that it depends on the cards alone. β is 1 (no fit): the
control is in the points' own units, and a fixed β keeps the adjusted points unbiased whatever
the bots. Ratings rank the seats of each deal by these points; raw scores are kept beside them.

Only variants whose expectation ships with the package are adjusted (`adjusts`); in american the
rollout policy passes every bid and its self-play predicts nothing useful, so its points stay raw.
Computed on the worker thread that reads the finished match's replay (`results.summarise`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..engine import Card, Variant, find_variant
from ..replay.summary import DealRow
from ..search.luck import SHIPPED, expectation, luck

ADJUSTED = frozenset(SHIPPED)
"""The variants (at their default options) whose ratings use luck-adjusted points."""


def adjusts(variant: Variant) -> bool:
    return variant.name in ADJUSTED and dict(variant.options) == dict(
        find_variant(variant.name, None).options
    )


def _read(path: Path) -> tuple[Variant, dict[int, tuple[int, list[Card]]]]:
    """The replay's variant and each deal's dealer and deck."""
    starts: dict[int, tuple[int, list[Card]]] = {}
    variant: Variant | None = None
    with path.open(encoding="utf-8") as lines:
        for text in lines:
            if text.startswith('{"type":"header"'):
                header = json.loads(text)
                variant = find_variant(header["variant"], header.get("options") or {})
            elif text.startswith('{"type":"deal_start"'):
                line = json.loads(text)
                starts[int(line["deal"])] = (int(line["dealer"]), [Card.parse(c) for c in line["deck"]])
    if variant is None:
        raise ValueError(f"{path.name} has no header")
    return variant, starts


def adjusted_points(path: Path, deals: Sequence[DealRow]) -> list[list[float]] | None:
    """Each deal's points by seat with the seat's luck taken out (annulled deals and seats that
    sat out keep their raw points: they are not rated), or None where the variant is not adjusted."""
    variant, starts = _read(path)
    if not adjusts(variant):
        return None
    expectation(variant)  # shipped: no estimate here
    out = []
    for deal in deals:
        row = [float(p) for p in deal.points]
        if not deal.annulled and deal.deal in starts:
            dealer, deck = starts[deal.deal]
            for seat, value in enumerate(luck(variant, dealer, deck)):
                if deal.active[seat]:
                    row[seat] -= value
        out.append(row)
    return out
