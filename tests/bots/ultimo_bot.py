"""A bot that fails its ultimos on purpose, for the tests of numbers beyond 32 bits.

In `danish` a failed ultimo puts the pot's value into the pot (DK-END-3, AMB-07): the pot
doubles. This bot keeps the pagat, if it holds it, to the last trick, where another seat's
kept tarok beats it; a seat without the pagat keeps its highest tarok for that trick. Its other
cards go lowest first, so kings end up in the last trick too, and fail there as often. Every
decision but a play takes the first legal action.

Environment: RECORD, a path: each event, request view's pots and the MatchEnd are written to it
as JSON lines (json keeps every integer exact), for the test to compare with the replay.
"""

from __future__ import annotations

import json
import os

from arena_bot import Bot
from arena_bot.sdk import main
from arena_bot.v1 import arena_pb2


def choose_code(types: list[str], cards: list[str], hand: list[str]) -> int:
    """The index of the legal action to take: `types` and `cards` of the legal actions, the hand's
    card codes (the engine's tests use this function too)."""
    plays = [i for i, kind in enumerate(types) if kind == "play"]
    if not plays:
        return 0
    taroks = sorted(int(code[1:]) for code in hand if code.startswith("T"))
    keep = "T1" if "T1" in hand else (f"T{taroks[-1]}" if taroks else "")

    def cost(i: int) -> tuple[bool, int, str]:
        code = cards[i]
        return (code == keep, int(code[1:]) if code.startswith("T") else 0, code)

    return min(plays, key=cost)


class UltimoBot(Bot):
    name = "ultimo"

    def __init__(self, path: str) -> None:
        self.out = open(path, "a")  # noqa: SIM115 (open for the whole match)
        self.deal = -1

    def _line(self, **fields: object) -> None:
        self.out.write(json.dumps(fields) + "\n")

    def decide(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action:
        if request.deal != self.deal:
            self.deal = request.deal
            self._line(kind="view", deal=request.deal, pots=dict(request.view.pots_start))
        legal = list(request.legal_actions)
        index = choose_code([a.type for a in legal], [a.card for a in legal], list(request.view.hand))
        return legal[index]

    def on_event(self, event: arena_pb2.Event) -> None:
        if event.HasField("deal_started"):
            self._line(kind="deal_started", deal=event.deal, pots=dict(event.deal_started.pots))
        elif event.HasField("deal_ended"):
            ended = event.deal_ended
            scores, deltas, pots = list(ended.scores), list(ended.deltas), dict(ended.pots)
            self._line(kind="deal_ended", deal=event.deal, deltas=deltas, pots=pots, scores=scores)

    def on_match_end(self, end: arena_pb2.MatchEnd) -> None:
        self._line(kind="match_end", scores=list(end.scores), termination=end.termination, reason=end.reason)
        self.out.close()


if __name__ == "__main__":
    main(UltimoBot(os.environ["RECORD"]))
