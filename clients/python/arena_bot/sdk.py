"""A bot's command-line entry, `main`: one seat of one match, or the standing arena's lobby.

    from arena_bot import main

    def decide(request):                 # an arena_pb2.DecisionRequest
        return request.legal_actions[0]  # an arena_pb2.Action (or its text form, "play SK")

    if __name__ == "__main__":
        main(decide, name="first-legal")

With a seat token `main` plays that seat with `run_bot` (`arena_bot.match`: one stream per seat,
reconnected when it breaks; authentication and protocol errors are final, `BotError`). With
``ARENA_MATCHES=stdin`` (a ladder's persistent process) it plays one match per line of standard
input, each line a JSON object of that match's environment (``ARENA_ADDRESS``, ``ARENA_TOKEN``,
``ARENA_SEAT``, ``ARENA_BOT_SEED``, …), until standing input ends (`play_sequence`). A
registered bot of the standing arena passes ``--bot-token`` instead: `main` joins the lobby with
`run_lobby` (`arena_bot.lobby`) and plays every match it is seated at, each with `run_bot`.

This module sits on top of both clients. The public names are imported from `arena_bot`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from arena_bot.match import Bot, BotError, Decide, Dialer, MatchResult, run_bot
from arena_bot.v1 import arena_pb2

if TYPE_CHECKING:  # the lobby is imported when it is used: every bot process starts a little sooner
    from arena_bot.lobby import LobbyResult

__all__ = ["main"]


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    try:
        return int(value) if value else default
    except ValueError:
        print(f"{name}={value!r} is not a whole number", file=sys.stderr)
        raise SystemExit(2) from None


def _variant_list(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


NewMatch = Callable[[], None]
"""Called before each match of a persistent process, once its environment is set: a bot with
state (a generator seeded from ``ARENA_BOT_SEED``, memories) starts afresh there."""


def play_sequence(
    decide: Decide | Bot,
    lines: Iterable[str],
    *,
    name: str,
    version: str = "",
    new_match: NewMatch | None = None,
    reconnect_seconds: float = 30.0,
) -> list[MatchResult]:
    """Play one match per line of `lines` (JSON objects of environment variables, set in
    ``os.environ`` before `new_match` is called and the match is played by `run_bot`), in order.

    This is how a ladder's persistent bot process plays match after match: the ladder writes a
    line with a new seat token when it seats the process at its next match, and closes the
    input when it has no more. A blank line is skipped; a line that is not a JSON object of
    strings is a `BotError`. The matches are played on one channel while the address stays the same
    (`Dialer`): a new connection per match cost more than a short match's decisions."""
    results: list[MatchResult] = []
    dialer = Dialer()
    try:
        for line in lines:
            if not line.strip():
                continue
            try:
                update = json.loads(line)
            except json.JSONDecodeError as error:
                raise BotError(f"a match line that is not JSON: {error}") from None
            if not isinstance(update, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in update.items()
            ):
                raise BotError("a match line must be a JSON object of strings")
            os.environ.update(update)
            if new_match is not None:
                new_match()
            result = run_bot(
                decide,
                address=os.environ.get("ARENA_ADDRESS"),
                token=os.environ.get("ARENA_TOKEN"),
                name=name,
                version=version,
                reconnect_seconds=reconnect_seconds,
                dialer=dialer,
            )
            results.append(result)
            summary = f"{result.termination or 'over'}; seat {result.seat}; scores {result.scores}"
            print(f"{name}: {summary}", file=sys.stderr, flush=True)
    finally:
        dialer.close()
    return results


def main(
    decide: Decide | Bot,
    *,
    name: str | None = None,
    version: str | None = None,
    new_match: NewMatch | None = None,
) -> MatchResult | LobbyResult | list[MatchResult]:
    """Command-line entry of a bot.

    With a seat token (``--token`` or ``ARENA_TOKEN``): plays that seat of one match and prints the
    final scores; returns its `MatchResult`. Without one but with a bot token (``--bot-token`` or
    ``ARENA_BOT_TOKEN``): joins the standing arena's lobby (`run_lobby`) with ``--variants``,
    ``--max-matches``, ``--matches`` and ``--seconds``, prints a line per finished match and a summary;
    returns the `LobbyResult`. With ``ARENA_MATCHES=stdin``: one match per line of standard input
    (`play_sequence`, calling `new_match` before each); returns their results. Exits with status 2
    on `BotError`."""
    bot = decide if isinstance(decide, Bot) else None
    default_name = name or (bot.name if bot is not None else None) or os.environ.get("ARENA_BOT_NAME", "bot")
    parser = argparse.ArgumentParser(
        description="Play one seat of an arena match (seat token), or join the standing arena (bot token)."
    )
    parser.add_argument(
        "--address",
        default=os.environ.get("ARENA_ADDRESS"),
        help="host:port (env ARENA_ADDRESS); in the lobby, several servers of one arena separated by commas",
    )
    parser.add_argument("--token", default=os.environ.get("ARENA_TOKEN"), help="seat token (env ARENA_TOKEN)")
    parser.add_argument(
        "--name",
        help=f"bot name sent in Hello (default {default_name.replace('%', '%%')}; in the lobby: the "
        "registered name)",
    )
    parser.add_argument("--reconnect-seconds", type=float, default=30.0, help="per match stream")
    lobby = parser.add_argument_group("standing arena (used when no seat token is given)")
    lobby.add_argument(
        "--bot-token",
        default=os.environ.get("ARENA_BOT_TOKEN"),
        help="registered bot's token: join the lobby (env ARENA_BOT_TOKEN)",
    )
    lobby.add_argument(
        "--variants",
        type=_variant_list,
        default=_variant_list(os.environ.get("ARENA_VARIANTS", "")),
        help="comma-separated variants to be seated for; default every registered one (env ARENA_VARIANTS)",
    )
    lobby.add_argument(
        "--max-matches",
        type=int,
        help="matches to play at once (env ARENA_MAX_MATCHES; default 1)",
    )
    lobby.add_argument("--matches", type=int, help="leave after this many matches")
    lobby.add_argument("--seconds", type=float, help="leave after this many seconds")
    lobby.add_argument(
        "--pause-policy",
        choices=("wait", "stop"),
        default="wait",
        help="when paused for faults: wait for the pause to end (default), or stop",
    )
    lobby.add_argument("--lobby-reconnect-seconds", type=float, default=60.0)
    parser.add_argument("-v", "--verbose", action="store_true", help="log the conversation")
    args = parser.parse_args()
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    bot_version = version if version is not None else (bot.version if bot is not None else "")
    if not args.token and args.bot_token:
        return _main_lobby(decide, args, bot_version, default_name)
    args.name = args.name or default_name
    if os.environ.get("ARENA_MATCHES") == "stdin":
        try:
            return play_sequence(
                decide,
                sys.stdin,
                name=args.name,
                version=bot_version,
                new_match=new_match,
                reconnect_seconds=args.reconnect_seconds,
            )
        except BotError as error:
            print(f"{args.name}: {error}", file=sys.stderr)
            raise SystemExit(2) from None
    try:
        result = run_bot(
            decide,
            address=args.address,
            token=args.token,
            name=args.name,
            version=bot_version,
            reconnect_seconds=args.reconnect_seconds,
        )
    except BotError as error:
        print(f"{args.name}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    summary = f"{result.termination or 'over'}; seat {result.seat}; scores {result.scores}"
    print(f"{args.name}: {summary}", file=sys.stderr)
    return result


def _main_lobby(
    decide: Decide | Bot, args: argparse.Namespace, version: str, default_name: str
) -> LobbyResult:
    """`main` in the standing arena: the lobby until it ends, a line per match, a summary."""
    from arena_bot.lobby import run_lobby

    label = args.name or default_name
    printing = threading.Lock()

    def say(line: str) -> None:  # one write per line: matches end in threads of their own
        with printing:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    def finished(seated: arena_pb2.Seated, result: MatchResult | None, error: BaseException | None) -> None:
        me = seated.seat_names[seated.seat] if seated.seat < len(seated.seat_names) else label
        where = f"{me}: match {seated.match_id} ({seated.variant}, seat {seated.seat})"
        if result is None:
            say(f"{where}: failed: {error}")
        else:
            say(f"{where}: {result.termination or 'over'}; scores {result.scores}; mine {result.my_score}")

    max_matches = args.max_matches if args.max_matches is not None else _env_int("ARENA_MAX_MATCHES", 1)
    try:
        result = run_lobby(
            decide,
            address=args.address,
            bot_token=args.bot_token,
            variants=args.variants,
            max_matches=max_matches,
            name=args.name,  # None: each Hello carries the registered name
            version=version,
            matches=args.matches,
            seconds=args.seconds,
            on_match_end=finished,
            pause_policy=args.pause_policy,
            reconnect_seconds=args.lobby_reconnect_seconds,
            match_reconnect_seconds=args.reconnect_seconds,
        )
    except ValueError as error:  # a bad --max-matches, --matches or --seconds
        print(f"{label}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    except BotError as error:
        print(f"{label}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:  # the second one: the matches in flight are abandoned
        print(f"{label}: interrupted; matches in flight abandoned", file=sys.stderr)
        raise SystemExit(130) from None
    label = result.bot_name or label
    scores = [r.my_score for r in result.matches if r.my_score is not None]
    parts = [f"{len(result.matches)} match(es) played"]
    if scores:
        parts.append(f"total score {sum(scores)}")
    if result.failures:
        parts.append(f"{len(result.failures)} failed")
    if result.paused_reason is not None:
        parts.append(f"paused: {result.paused_reason}")
    parts.append(f"left the lobby: {result.stop_reason}")
    say(f"{label}: {'; '.join(parts)}")
    return result
