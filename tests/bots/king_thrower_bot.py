"""The heuristic example bot with one planted blunder, for the analysis tests.

It plays as `arena_bot.heuristic_bot` does, except at its first chance to throw away a King it
could have saved: a trick it cannot win whatever it plays (a tarok is already in a suit trick it
follows, or it can neither follow nor trump), a King among its legal cards and another card that
is no King. There it plays the King, which is lost to the trick's winner (in `grosstarock`, 5 game
points to each other player and the King's card points: DUM-BON-2). Once only. It writes the
request number, the card and the trick to the file named by PLANTED (if set), so a test knows
which decision to look for.
"""

from __future__ import annotations

import json
import os

from arena_bot import cards as C
from arena_bot.heuristic_bot import decide as heuristic
from arena_bot.sdk import main
from arena_bot.v1 import arena_pb2

planted = False


def sure_loser(request: arena_pb2.DecisionRequest, card: str) -> bool:
    """No card of this seat can win the trick: it holds neither the suit led nor a tarok and plays
    a suit card, or it follows a suit trick that a tarok has already taken."""
    plays = [p.card for p in request.view.trick.cards]
    led = C.led_suit(plays, request.view.trick.designation, request.view.trick.redesignation)
    if not led or led == C.TAROK or C.is_tarok(card):
        return False
    hand = list(request.view.hand)
    if C.suit(card) != led:
        return not any(C.suit(c) in (led, C.TAROK) for c in hand if not C.is_fool(c))
    return any(C.is_tarok(c) for c in plays)


def decide(request: arena_pb2.DecisionRequest) -> arena_pb2.Action:
    global planted
    legal = list(request.legal_actions)
    if not planted and request.view.phase == "play":
        kings = [a for a in legal if a.type == "play" and C.is_king(a.card) and sure_loser(request, a.card)]
        others = [a for a in legal if a.type == "play" and not C.is_king(a.card)]
        if kings and others:
            planted = True
            if os.environ.get("PLANTED"):
                with open(os.environ["PLANTED"], "w", encoding="utf-8") as out:
                    json.dump({"card": kings[0].card, "trick": request.view.trick_number}, out)
            return kings[0]
    return heuristic(request)


if __name__ == "__main__":
    main(decide, name="king-thrower")
