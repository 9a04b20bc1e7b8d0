"""A bot that fails its ultimos on purpose (tests/support/ultimo.py), for the tests of numbers
beyond 32 bits: in `danish` a failed ultimo puts the pot's value into the pot (DK-END-3, AMB-07).

Environment: RECORD, a path: each event, request view's pots and the MatchEnd are written to it
as JSON lines (json keeps every integer exact), for the test to compare with the replay.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from arena_bot import Bot
from arena_bot.sdk import main
from arena_bot.v1 import arena_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the `support` package
from support.ultimo import choose_code


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
