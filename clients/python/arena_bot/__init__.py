"""arena-bot: the Python SDK for bots of the Grosstarock Arena.

    from arena_bot import main

    def decide(request):
        return request.legal_actions[0]

    main(decide, name="first-legal")

See README.md. `arena_bot.v1` holds the generated protocol modules (`arena_pb2`, `arena_pb2_grpc`).
"""

from arena_bot.sdk import (
    PROTOCOL_VERSION,
    Bot,
    BotError,
    Decide,
    MatchResult,
    action_text,
    main,
    make_action,
    run_bot,
)
from arena_bot.v1 import arena_pb2

__version__ = "0.1.0"

__all__ = [
    "PROTOCOL_VERSION",
    "Bot",
    "BotError",
    "Decide",
    "MatchResult",
    "action_text",
    "arena_pb2",
    "main",
    "make_action",
    "run_bot",
]
