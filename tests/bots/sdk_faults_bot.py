"""A bot of the Python SDK that misbehaves at its fifth request, as a process or in-process.

    python tests/bots/sdk_faults_bot.py CLASS       (a process, as `arena play` starts one)
    inprocess:tests/bots/sdk_faults_bot.py:CLASS    (in the referee's process)

Every class plays the heuristic bot's choices (deterministic) except at request `AT`:
Raise raises, Exit calls sys.exit(3), Wrong answers three different illegal actions (an illegal
fault), WrongOnce answers one illegal action and then the heuristic's, Overrun sleeps 1.5 s first.
Slow is no fault: it sleeps 6 ms before every answer (longer than the referee runs without
yielding to its other tasks).
"""

from __future__ import annotations

import sys
import time

from arena_bot import Bot, main
from arena_bot.heuristic_bot import decide as heuristic
from arena_bot.v1 import arena_pb2

AT = 5
OVERRUN_S = 1.5
SLOW_S = 0.006


class Faulty(Bot):
    name = "faulty"

    def __init__(self) -> None:
        self.seen: list[int] = []  # request ids, once each

    def decide(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action | str:
        if not self.seen or self.seen[-1] != request.request_id:
            self.seen.append(request.request_id)
        if len(self.seen) == AT:
            return self.misbehave(request)
        return heuristic(request)

    def misbehave(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action | str:
        return heuristic(request)


def missing_cards(request: arena_pb2.DecisionRequest) -> list[str]:
    held = set(request.view.hand)
    return [code for code in ("EX", "T21", "SK", "HA", "D5", "C10", "T2", "CK") if code not in held]


class Raise(Faulty):
    def misbehave(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action | str:
        raise RuntimeError("a bug in the bot")


class Exit(Faulty):
    def misbehave(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action | str:
        sys.exit(3)


class Wrong(Faulty):
    def __init__(self) -> None:
        super().__init__()
        self.tries = 0

    def misbehave(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action | str:
        self.tries += 1
        return f"play {missing_cards(request)[self.tries - 1]}"


class WrongOnce(Wrong):
    def misbehave(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action | str:
        if self.tries:
            return heuristic(request)
        return super().misbehave(request)


class Overrun(Faulty):
    def misbehave(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action | str:
        time.sleep(OVERRUN_S)
        return heuristic(request)


class Slow(Faulty):
    def decide(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action | str:
        time.sleep(SLOW_S)
        return heuristic(request)


if __name__ == "__main__":
    main(globals()[sys.argv.pop(1)]())
