"""A registered bot for the standing arena's end-to-end tests, built on the Python SDK's lobby.

Environment: ARENA_ADDRESS, ARENA_BOT_TOKEN, and
  MATCHES       leave after this many matches (default: stay until stopped)
  MAX_MATCHES   matches at once (default 1)
  DELAY         seconds to think before every answer (default 0)
  SLOW_FIRST    seconds to think before the first answer of each match (a timeout, on purpose)
  PAUSE_POLICY  wait or stop (default stop)
  HELLO_NAME    the bot name sent in each match's Hello (default: the registered name)
Prints one JSON line when it leaves: matches played, why it stopped, pauses and refusals.
Exit status 0, or 2 after a final error (the JSON line then has `error` and `code`).
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))
from arena_bot import LobbyError, LobbyResult, run_lobby
from arena_bot.v1 import arena_pb2

delay = float(os.environ.get("DELAY", "0"))
slow_first = float(os.environ.get("SLOW_FIRST", "0"))
rng = random.Random(os.environ.get("ARENA_BOT_TOKEN", ""))
slow_next = threading.Event()  # set when seated: the match's first answer is slow (one match at a time)


def on_seated(seated: arena_pb2.Seated) -> None:
    if slow_first:
        slow_next.set()


def decide(request: arena_pb2.DecisionRequest) -> arena_pb2.Action:
    if slow_next.is_set():
        slow_next.clear()
        time.sleep(slow_first)
    elif delay:
        time.sleep(delay)
    return rng.choice(list(request.legal_actions))


def summary(result: LobbyResult) -> dict[str, Any]:
    return {
        "bot": result.bot_name,
        "matches": [m.termination for m in result.matches],
        "seated": [s.match_id for s in result.seated],
        "stop_reason": result.stop_reason,
        "paused_reason": result.paused_reason,
        "rejected": result.rejected,
        "joins": result.joins,
    }


def main() -> int:
    matches = os.environ.get("MATCHES")
    hello_name = os.environ.get("HELLO_NAME") or None  # the name in each match's Hello
    try:
        result = run_lobby(
            decide,
            max_matches=int(os.environ.get("MAX_MATCHES", "1")),
            matches=int(matches) if matches else None,
            on_seated=on_seated,
            pause_policy="stop" if os.environ.get("PAUSE_POLICY", "stop") == "stop" else "wait",
            reconnect_seconds=float(os.environ.get("RECONNECT_SECONDS", "60")),
            name=hello_name,
        )
    except LobbyError as error:
        code = error.code.name if error.code is not None else ""
        print(json.dumps({**summary(error.result), "error": str(error), "code": code}), flush=True)
        return 2
    print(json.dumps(summary(result)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
