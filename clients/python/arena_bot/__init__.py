"""arena-bot: the Python SDK for bots of the Grosstarock Arena.

    from arena_bot import main

    def decide(request):
        return request.legal_actions[0]

    main(decide, name="first-legal")

Registered bots of the standing arena join its lobby with `run_lobby` (or ``--bot-token`` on the
command line of any bot that calls `main`) and play every match they are seated at.

See README.md. The modules, each importing only those below it:

* `arena_bot.random_bot`, `arena_bot.heuristic_bot`: the example bots;
* `arena_bot.sdk`: `main`, the command-line entry (one seat, the lobby with ``--bot-token``, or
  one match per input line with ``ARENA_MATCHES=stdin``: `play_sequence`);
* `arena_bot.lobby`: the standing arena's lobby client (`run_lobby`, `Lobby`);
* `arena_bot.observation`: a `View` as the engine's observation dict (`view_observation`), for
  bots that reason with the `arena` package's engine or search;
* `arena_bot.match`: the match client (`run_bot`, `Bot`, `BotError`, `MatchResult`, …);
  `arena_bot.cards`: card helpers, without the server;
* `arena_bot.v1`: the generated protocol modules (`arena_pb2`, `arena_pb2_grpc`).
"""

from typing import TYPE_CHECKING, Any

from arena_bot.match import (
    PROTOCOL_VERSION,
    Bot,
    BotError,
    Decide,
    MatchResult,
    action_text,
    make_action,
    run_bot,
)
from arena_bot.sdk import main, play_sequence
from arena_bot.v1 import arena_pb2

if TYPE_CHECKING:
    from arena_bot.lobby import Lobby, LobbyError, LobbyResult, retry_after_ms, run_lobby

__version__ = "0.1.0"

# The lobby's names are imported when first used (PEP 562): a bot that plays one seat, as a ladder
# starts one per match, does not pay for importing the lobby client.
_LOBBY_NAMES = frozenset({"Lobby", "LobbyError", "LobbyResult", "retry_after_ms", "run_lobby"})


def __getattr__(name: str) -> Any:
    if name in _LOBBY_NAMES:
        from arena_bot import lobby

        return getattr(lobby, name)
    raise AttributeError(f"module 'arena_bot' has no attribute {name!r}")

__all__ = [
    "PROTOCOL_VERSION",
    "Bot",
    "BotError",
    "Decide",
    "Lobby",
    "LobbyError",
    "LobbyResult",
    "MatchResult",
    "action_text",
    "arena_pb2",
    "main",
    "make_action",
    "play_sequence",
    "retry_after_ms",
    "run_bot",
    "run_lobby",
]
