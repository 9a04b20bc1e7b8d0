"""The heuristic example bot with one planted blunder, for the analysis tests.

It plays as `arena_bot.heuristic_bot` does, except that at its first chance in `grosstarock`,
before trick 1, it announces Vole: to win all 25 tricks, with whatever hand it holds. The Vole
fails, and the announcer pays 52 to each other player (DUM-ANN-2, DUM-BON-5) on top of the deal's
normal result, a loss of 104 points that passing would have avoided.
"""

from __future__ import annotations

from arena_bot.heuristic_bot import decide as heuristic
from arena_bot.sdk import main
from arena_bot.v1 import arena_pb2


def decide(request: arena_pb2.DecisionRequest) -> arena_pb2.Action:
    vole = [a for a in request.legal_actions if a.type == "announce" and a.name == "vole"]
    if vole and request.view.trick_number == 1:
        return vole[0]
    return heuristic(request)


if __name__ == "__main__":
    main(decide, name="blunder")
