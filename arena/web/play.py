"""The site's routes for a person at a table (`arena serve --http ADDR --play`): start a match
against example bots or play on from a recorded position, read the seat's messages, answer.

    POST /api/play                    start a table; JSON in, {match_id, seat, token, url} out
    GET  /api/play/{id}/messages      the seat's messages after `after` (long polling), token needed
    POST /api/play/{id}/action        the person's answer {request_id, code or action}, token needed
    POST /api/play/lobby              a registered player waits for the lobby to seat them (`lobbyseat`)
    GET  /api/play/lobby/{place}      where that place is (long polling): waiting, seated, left
    DELETE /api/play/lobby/{place}    leave the queue
    GET  /api/play                    what a table may be: variants, bots, limits
    GET  /play, /play/{id}            the page (play.html): the form, or the table

Why long polling: the page must send its token in a header (`Authorization: Bearer`), which an
`EventSource` cannot, and a token in a query string ends up in logs and histories; a person's
seat gets a few messages a second at most, each answered at once when a poll waits for it. The
token lives in the page's URL fragment, which the browser never sends to the server. Every
handler runs on the trio thread, as the referee, so the link and the runner are used directly.
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import Any

import trio
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from ..engine import VARIANT_NAMES, Action, ConfigError, EngineError, find_variant
from ..protocol import action_message
from ..replay.read import Replay, ReplayReadError
from ..replay.verify import verify_replay
from ..v1 import arena_pb2 as pb
from .human import CHOICES, CONNECT_WAIT_S, HumanLink, Table, TableError, Tables, time_control
from .lobbyseat import JoinError, LobbySeats, Place
from .playon import PlayOnError

MAX_BODY_BYTES = 4096
POLL_S = 20.0
"""How long a poll waits for a message before it answers with none (the page asks again)."""
LIMITS = {
    "deals": (1, 8, 1),
    "per_decision_s": (5, 600, 60),
    "bank_s": (0, 3600, 300),
}
"""(lowest, highest, default) of each number a table is set with: a clock meant for people."""
MATCH_ID = re.compile(r"[0-9a-f]{16}")
TOKEN = re.compile(r"[A-Za-z0-9_-]{8,128}")
NAME = re.compile(r"[A-Za-z0-9 _.-]{1,24}")
FIELDS = {"type", "card", "suit", "name"}


def _tables(request: Request) -> Tables:
    tables: Tables | None = request.app.state.site.play
    if tables is None:
        raise HTTPException(404, "this server seats no people (start it with arena serve --http ADDR --play)")
    return tables


async def _json(request: Request) -> dict[str, Any]:
    # A form of another site can POST here too, but not as application/json (that takes a CORS
    # preflight, which this site never allows).
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise HTTPException(415, "send the body as application/json")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise HTTPException(413, f"a body of more than {MAX_BODY_BYTES} bytes")
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise HTTPException(400, "the body is not JSON") from None
    if not isinstance(value, dict):
        raise HTTPException(400, "the body is not a JSON object")
    return value


def _int(body: dict[str, Any], name: str, low: int, high: int, default: int | None = None) -> int:
    value = body.get(name, default)
    if value is None:
        raise HTTPException(400, f"{name}: missing")
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise HTTPException(400, f"{name}: expected a whole number from {low} to {high}")
    return value


def _setting(body: dict[str, Any], name: str) -> int:
    low, high, default = LIMITS[name]
    return _int(body, name, low, high, default)


def _table(request: Request) -> Table:
    """The table in the path, if the request's token speaks for its person's seat (else 401/403/404)."""
    tables = _tables(request)
    match_id = str(request.path_params["match_id"])
    table = tables.get(match_id) if MATCH_ID.fullmatch(match_id) else None
    if table is None or table.link is None:
        raise HTTPException(404, f"no table with a person for match {match_id!r}")
    _check_token(request, table.token, "seat", "the seat of this table")
    return table


def _check_token(request: Request, expected: str, what: str, whose: str) -> None:
    """401 without an `Authorization: Bearer` token, 403 when it is not `expected` (`what` names the
    token, `whose` what it must speak for)."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise HTTPException(401, f"no {what} token: send Authorization: Bearer TOKEN")
    if not secrets.compare_digest(token.encode(), expected.encode()):
        raise HTTPException(403, f"this token does not speak for {whose}")


async def api_play_options(request: Request) -> Response:
    """What a table may be; with `?from=MATCH`, that finished match as play-on needs it: its
    variant, seat names, the bot each seat's first Hello named, and each deal's decisions."""
    tables = _tables(request)
    limits = {name: {"min": low, "max": high, "default": d} for name, (low, high, d) in LIMITS.items()}
    seats = {name: find_variant(name).seats for name in VARIANT_NAMES}
    options: dict[str, Any] = {"variants": list(VARIANT_NAMES), "seats": seats, "bots": list(CHOICES)}
    options["limits"] = limits
    seats_by_lobby: LobbySeats | None = request.app.state.site.play_lobby
    if seats_by_lobby is not None:
        waiting = seats_by_lobby.waiting_bots()
        options["lobby"] = {"variants": seats_by_lobby.variants(), "waiting": waiting}
    source = request.query_params.get("from")
    if source is not None:
        replay = await _recorded(tables, source)
        options["from"] = {
            "match_id": source,
            "variant": replay.header["variant"],
            "seats": replay.header["seats"],
            "bots": [h.bot_name if h is not None else None for h in replay.first_hellos()],
            "decisions": [len(deal.decisions) for deal in replay.deals],
        }
    return JSONResponse(options)


async def _recorded(tables: Tables, source: Any) -> Replay:
    """The verified replay of a finished match of this server (400, 404 or 409 otherwise)."""
    if not isinstance(source, str) or not MATCH_ID.fullmatch(source):
        raise HTTPException(400, "from: a match id (16 hex digits)")
    state, path = tables.hub.replay_path(source)
    if path is None or state != "finished" or not path.exists():
        raise HTTPException(404, f"no finished match {source} with a replay on this server")
    try:
        replay = await trio.to_thread.run_sync(lambda: verify_replay(path, collect=True))
    except (OSError, ReplayReadError) as exc:
        raise HTTPException(409, f"the replay of {source} cannot be read: {exc}") from None
    if replay.variant is None:
        raise HTTPException(409, f"the replay of {source} does not verify: {replay.problem}")
    return replay


async def api_play_start(request: Request) -> Response:
    """A new table (`variant`, `seat`, `bots`, `deals`, `per_decision_s`, `bank_s`, `name`), or with
    `from` (a finished match's id), `deal` and `step`: a table played on from that position
    (`seat` null: bots at every seat; `bots`: {seat: bot} for seats whose recorded bot it cannot seat)."""
    tables = _tables(request)
    body = await _json(request)
    name = body.get("name", "you")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise HTTPException(400, "name: 1 to 24 letters, digits, spaces, _ . or -")
    clock = time_control(_setting(body, "per_decision_s"), _setting(body, "bank_s"))
    try:
        if "from" in body:
            table = await _play_on(tables, body, clock, name)
        else:
            variant_name = body.get("variant")
            if variant_name not in VARIANT_NAMES:
                raise HTTPException(400, f"variant: expected one of {', '.join(VARIANT_NAMES)}")
            options = body.get("options", {})
            if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
                raise HTTPException(400, "options: an object of strings")
            variant = find_variant(str(variant_name), options)
            seat = _int(body, "seat", 0, variant.seats - 1, 0)
            bots = body.get("bots", [])
            if not isinstance(bots, list) or not all(isinstance(b, str) for b in bots):
                raise HTTPException(400, f"bots: a list of {', '.join(CHOICES)}")
            table = tables.start(variant, seat, bots, _setting(body, "deals"), clock, name)
    except (TableError, PlayOnError, ConfigError) as exc:
        raise HTTPException(400, str(exc)) from None
    except OverflowError as exc:
        raise HTTPException(503, str(exc)) from None
    answer = table.describe()
    if table.seat_tokens:  # for the person's own bots, to dial in with (ARENA_TOKEN)
        answer["seat_tokens"] = {str(s): token for s, token in table.seat_tokens.items()}
        answer["connect_wait_s"] = CONNECT_WAIT_S
    if table.link is not None:
        answer.update(token=table.token, url=f"/play/{table.match_id}#token={table.token}")
    else:
        answer.update(url=f"/matches/{table.match_id}/live")
    return JSONResponse(answer, status_code=201)


async def _play_on(tables: Tables, body: dict[str, Any], clock: Any, name: str) -> Table:
    replay = await _recorded(tables, body.get("from"))
    assert replay.variant is not None
    seats = replay.variant.seats
    deal = _int(body, "deal", 0, 10_000)
    step = _int(body, "step", 0, 100_000)
    seat = None if body.get("seat") is None else _int(body, "seat", 0, seats - 1)
    bots = body.get("bots", {})
    if not isinstance(bots, dict) or not all(isinstance(b, str) for b in bots.values()):
        raise HTTPException(400, "bots: an object of seat numbers and bot names")
    by_seat: dict[int, str] = {}
    for key, bot in bots.items():
        if not (key.isascii() and key.isdigit() and int(key) < seats):
            raise HTTPException(400, f"bots: {key!r} is not a seat (0 to {seats - 1})")
        by_seat[int(key)] = bot
    return tables.play_on(replay, deal, step, seat, by_seat, clock, name)


async def api_play_messages(request: Request) -> Response:
    """The seat's messages from index `after` on; waits up to `POLL_S` for one when there are none."""
    table = _table(request)
    link = table.link
    assert link is not None
    text = request.query_params.get("after", "0")
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        raise HTTPException(400, "after: expected a whole number")
    after = int(text)
    await link.wait_past(after, POLL_S)
    return JSONResponse(
        {
            "messages": link.messages[after:],
            "next": len(link.messages),
            "open": link.open,
            "closed": link.closed_reason,
            "state": table.runner.state.value,
        }
    )


async def api_play_action(request: Request) -> Response:
    """The person's answer: judged by the referee, whose verdict comes as the seat's next message."""
    table = _table(request)
    link: HumanLink | None = table.link
    assert link is not None
    body = await _json(request)
    request_id = _int(body, "request_id", 1, 2**63)
    action, code = body.get("action"), body.get("code")
    if isinstance(code, str) and len(code) <= 64 and action is None:
        try:  # the drawn table's code of an action: "play SK", "bid rufer", "pass"
            message = action_message(Action.parse(code))
        except EngineError as exc:
            raise HTTPException(400, f"code: {exc}") from None
    elif isinstance(action, dict) and set(action) <= FIELDS and code is None and all(
        isinstance(v, str) and len(v) <= 32 for v in action.values()
    ):
        message = pb.Action(**action)
    else:
        raise HTTPException(
            400, f"give code (an action's text) or action (an object of strings: {', '.join(sorted(FIELDS))})"
        )
    if not link.open:
        raise HTTPException(409, f"the match is {table.runner.state.value}")
    link.answer(request_id, message)
    return JSONResponse({"sent": True}, status_code=202)


def _lobby(request: Request) -> LobbySeats:
    _tables(request)
    seats: LobbySeats | None = request.app.state.site.play_lobby
    if seats is None:
        raise HTTPException(404, "this server runs no lobby people can join")
    return seats


def _place(request: Request) -> tuple[LobbySeats, Place]:
    """The place in the path, if the request's token is its page's (else 401/403/404)."""
    seats = _lobby(request)
    place_id = str(request.path_params["place"])
    place = seats.get(place_id) if MATCH_ID.fullmatch(place_id) else None
    if place is None:
        raise HTTPException(404, f"no place {place_id!r} in the lobby's queue")
    _check_token(request, place.token, "place", "this place")
    return seats, place


async def api_lobby_join(request: Request) -> Response:
    """A registered player (`token`, the player's as registered) waits for a table of `variant`
    on a clock for people (`per_decision_s`, `bank_s`); with `opponents`, sits at once with
    those bots, waiting in the lobby now."""
    seats = _lobby(request)
    body = await _json(request)
    token = body.get("token")
    if not isinstance(token, str) or not TOKEN.fullmatch(token):
        raise HTTPException(400, "token: the player's token, as registered (arena bots register)")
    variant = body.get("variant")
    if not isinstance(variant, str) or variant not in VARIANT_NAMES:
        raise HTTPException(400, f"variant: expected one of {', '.join(VARIANT_NAMES)}")
    opponents = body.get("opponents", [])
    if not isinstance(opponents, list) or not all(isinstance(o, str) and len(o) <= 64 for o in opponents):
        raise HTTPException(400, "opponents: a list of bot names")
    clock = time_control(_setting(body, "per_decision_s"), _setting(body, "bank_s"))
    try:
        place = await seats.join(token, variant, clock, opponents)
    except TableError as exc:
        raise HTTPException(400, str(exc)) from None
    except JoinError as exc:
        raise HTTPException(exc.status, str(exc)) from None
    return JSONResponse({**place.describe(), "token": place.token}, status_code=201)


async def api_lobby_place(request: Request) -> Response:
    """Where the place is; while it waits, answers when it changes or after `POLL_S`."""
    seats, place = _place(request)
    await seats.wait(place, POLL_S)
    return JSONResponse(place.describe())


async def api_lobby_leave(request: Request) -> Response:
    seats, place = _place(request)
    seats.leave(place)
    return JSONResponse(place.describe())


def _page() -> Response:
    return FileResponse(Path(__file__).parent / "static" / "play.html", media_type="text/html")


async def page_play(request: Request) -> Response:
    _tables(request)
    return _page()


async def page_table(request: Request) -> Response:
    _tables(request)
    if not MATCH_ID.fullmatch(str(request.path_params["match_id"])):
        raise HTTPException(404, "no such table")
    return _page()


ROUTES = [
    Route("/play", page_play),
    Route("/play/{match_id}", page_table),
    Route("/api/play", api_play_options, methods=["GET"]),
    Route("/api/play", api_play_start, methods=["POST"]),
    Route("/api/play/lobby", api_lobby_join, methods=["POST"]),
    Route("/api/play/lobby/{place}", api_lobby_place, methods=["GET"]),
    Route("/api/play/lobby/{place}", api_lobby_leave, methods=["DELETE"]),
    Route("/api/play/{match_id}/messages", api_play_messages),
    Route("/api/play/{match_id}/action", api_play_action, methods=["POST"]),
]
