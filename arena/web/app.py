"""The site's HTTP side: the JSON API (`/api/...`), the pages built on it, and its server.

`serve_site` runs Hypercorn's trio worker in the referee's own trio loop; `site_app` is the
Starlette application. Every page is a static file of `static/` that fetches the API and
writes each value with `textContent` (never as HTML), so a user-given string shows as text.
Errors are a JSON `{"error": ...}` under /api and a small HTML page elsewhere; an unexpected
exception is logged and answered with a 500 that shows no traceback. Every answer, errors and
static files included, carries the security headers of `SecurityHeaders`: a Content-Security-Policy
that the pages satisfy (scripts and styles from /static only; the replay viewer's inline ones by
hash), `nosniff`, and no framing.
"""

from __future__ import annotations

import html
import json
import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import structlog
import trio
from hypercorn.config import Config
from hypercorn.trio.run import worker_serve
from hypercorn.utils import wrap_app
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..engine import VARIANT_NAMES
from ..live import Hub
from ..replay.html import PAGE_CSP, render_html
from ..replay.read import ReplayReadError
from ..replay.verify import verify_replay
from ..standing.service import StandingArena
from ..standing.store import BOT_NAME, Store, UnknownBotError
from . import data
from .feed import FRAME_S, PING_S, UPDATES_PER_S, Feeds, MatchFeed, ViewerClock
from .human import Tables
from .lobbyseat import LobbySeats
from .play import ROUTES as PLAY_ROUTES

log = structlog.get_logger()

STATIC = Path(__file__).parent / "static"
MATCH_ID = re.compile(r"[0-9a-f]{16}")
MAX_DIGITS = 19
"""The longest whole number a query may give (2**62, the largest `before`, has 19 digits): int()
of a long string costs time quadratic in its length, and Python refuses one of over 4300 digits."""
MAX_VIEWERS = 2000
"""Live viewers at once over the whole server; more get 503 (each costs a socket and a task)."""
SEND_TIMEOUT_S = 10.0
"""A live viewer one of whose writes waits this long (its socket buffers are full: it does
not read) is dropped: its stream ends and its connection is closed."""
SEND_BUFFER_BYTES = 64 * 1024
"""The kernel's send buffer of each site connection (Linux doubles it for its bookkeeping)."""

SITE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""The pages' policy: they load their scripts and style from /static and fetch the API, nothing inline."""
REPLAY_CSP = PAGE_CSP + "; frame-ancestors 'none'"
"""The replay viewer's own policy (its inline style and script by hash), which cannot forbid framing
from its <meta> element: the header does."""
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
)
RAW_SEND = "arena.raw_send"
"""Where `SecurityHeaders` leaves the server's own `send` in the scope, for `LiveStream`'s writes."""

T = TypeVar("T")


@dataclass
class Site:
    """What the site reads: the hub's matches, the store, and who is in the lobby now."""

    hub: Hub
    store: Store
    connected: Callable[[], set[str]] = set
    send_timeout_s: float = SEND_TIMEOUT_S
    frame_s: float = FRAME_S
    updates_per_s: float = UPDATES_PER_S
    ping_s: float = PING_S
    play: Tables | None = None  # tables with a person (`--play`); None: the site seats nobody
    play_lobby: LobbySeats | None = None  # people the standing arena's lobby seats (`--play`)
    feeds: Feeds = field(init=False)
    clock: ViewerClock = field(init=False)
    history: data.RatingHistory = field(init=False)
    viewers: int = 0

    def __post_init__(self) -> None:
        self.feeds = Feeds(self.hub)
        self.clock = ViewerClock(self.frame_s, updates_per_s=self.updates_per_s)
        self.history = data.RatingHistory(self.store, self.hub.replay_dir)

    async def db(self, fn: Callable[..., T], *args: Any) -> T:
        return await trio.to_thread.run_sync(partial(fn, *args))


class BadRequest(HTTPException):
    def __init__(self, detail: str) -> None:
        super().__init__(400, detail)


def _query(
    request: Request, name: str, pattern: re.Pattern[str] | None = None, choices: tuple[str, ...] = ()
) -> str:
    """A query parameter ("" when absent) that matches `pattern` whole or is one of `choices`
    (a closed set: anything else is a 400 that lists them, never an empty answer)."""
    value = request.query_params.get(name, "")
    if value and pattern is not None and not pattern.fullmatch(value):
        raise BadRequest(f"{name}: not a valid value")
    if value and choices and value not in choices:
        raise BadRequest(f"{name}: expected one of {', '.join(choices)}")
    return value


def _int_query(request: Request, name: str, default: int, low: int, high: int) -> int:
    """A whole number of ASCII digits (str.isdigit() also takes "²" and other scripts' digits,
    which int() then refuses), at most `MAX_DIGITS` long, from `low` to `high`."""
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    if not (text.isascii() and text.isdigit() and len(text) <= MAX_DIGITS and low <= int(text) <= high):
        raise BadRequest(f"{name}: expected a whole number from {low} to {high}")
    return int(text)


def _bot_name(request: Request) -> str:
    name = str(request.path_params["name"])
    if not BOT_NAME.fullmatch(name):
        raise HTTPException(404, f"no bot named {name!r}")
    return name


def _match_id(request: Request) -> str:
    match_id = str(request.path_params["match_id"])
    if not MATCH_ID.fullmatch(match_id):
        raise HTTPException(404, f"no match {match_id!r}")
    return match_id


# ---------------------------------------------------------------------------------- the API


async def api_standings(request: Request) -> Response:
    site: Site = request.app.state.site
    variant = _query(request, "variant", choices=VARIANT_NAMES)
    return JSONResponse(await site.db(data.standings, site.store, variant, site.connected()))


async def api_bot(request: Request) -> Response:
    site: Site = request.app.state.site
    name = _bot_name(request)
    connected = name in site.connected()
    return JSONResponse(await site.db(data.bot_page, site.store, site.history, name, connected))


async def api_matches(request: Request) -> Response:
    """The store's matches (the standing arena's, rated) and the others this server runs or ran
    lately (an operator's CreateMatch), merged newest first."""
    site: Site = request.app.state.site
    bot = _query(request, "bot", BOT_NAME)
    state = _query(request, "state", choices=data.MATCH_STATES)
    limit = _int_query(request, "limit", 50, 1, data.MAX_LIMIT)
    before = _int_query(request, "before", 0, 0, 2**62)
    found = (await site.db(data.matches, site.store, bot, state, limit, before))["matches"]
    for match in found:
        _add_live(site, match)
    served = site.feeds.matches(bot, state, before)
    if served:
        known = {m["match_id"] for m in found}
        known |= await site.db(data.stored, site.store, [m["match_id"] for m in served])
        found += [dict(m, standing=False) for m in served if m["match_id"] not in known]
        found.sort(key=lambda m: (m["started_ms"], m["match_id"]), reverse=True)
    return JSONResponse({"matches": found[:limit]})


async def api_match(request: Request) -> Response:
    site: Site = request.app.state.site
    return JSONResponse(_add_live(site, await _match(site, _match_id(request))))


async def _match(site: Site, match_id: str) -> dict[str, Any]:
    """The store's record of a match, or this server's for a match the standing arena did not seat."""
    try:
        return await site.db(data.match, site.store, match_id)
    except data.NotFound:
        served = site.feeds.summary(match_id)
        if served is None:
            raise
        return dict(served, standing=False)


def _add_live(site: Site, match: dict[str, Any]) -> dict[str, Any]:
    """A running match's progress, from its live feed: deals done and scores so far."""
    feed = site.feeds.get(match["match_id"])
    if feed is not None:
        match["deals_done"] = feed.deals_done
        for seat, score in zip(match["seats"], feed.scores, strict=False):
            seat["score"] = score
    return match


async def api_replay(request: Request) -> Response:
    site: Site = request.app.state.site
    path = await _replay_path(site, _match_id(request))
    return PlainTextResponse(
        await trio.Path(path).read_text(encoding="utf-8"), media_type="application/jsonl"
    )


async def _replay_path(site: Site, match_id: str) -> Path:
    state, path = site.hub.replay_path(match_id)
    if path is None or state != "finished" or not path.exists():
        match = await _match(site, match_id)  # 404 when unknown
        raise HTTPException(409, f"match {match_id} is {match['state']}: it has no replay")
    return path


async def api_position(request: Request) -> Response:
    site: Site = request.app.state.site
    match_id = _match_id(request)
    feed = site.feeds.get(match_id)
    if feed is None:
        match = await _match(site, match_id)
        return JSONResponse({"match_id": match_id, "state": match["state"], "events": []})
    return Response(feed.snapshot(), media_type="application/json")


async def api_live(request: Request) -> Response:
    """Server-sent events: `position` (the current deal so far), then `update`s, then `end`."""
    site: Site = request.app.state.site
    match_id = _match_id(request)
    feed = site.feeds.get(match_id)
    if feed is None:
        match = await _match(site, match_id)  # 404 when unknown
        return EventSourceResponse(_ended(match), ping=15)
    if site.viewers >= MAX_VIEWERS:
        raise HTTPException(503, "too many live viewers now; try again later")
    return LiveStream(site, feed)


async def _ended(match: dict[str, Any]) -> AsyncIterator[dict[str, str]]:
    yield {"event": "end", "data": json.dumps(match)}


LIVE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-store"),  # as sse-starlette's EventSourceResponse sends them
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]
PING = ServerSentEvent(comment="ping").encode()


class LiveStream(Response):
    """A running match's live stream, written straight to the ASGI `send`.

    The server's work for a viewer is one write per frame, so that write is kept short: the
    events are encoded by sse-starlette's `ServerSentEvent` (once per frame, `MatchFeed`) and
    handed to Hypercorn as they are, with no generator, timeout scope or lock of a streaming
    response around each write, and no timer of the viewer's own. The stream is written by a
    task of its own (`_follow`); another waits for the client's disconnect (ASGI
    `http.disconnect`, which Hypercorn also gives when a write fails: the kernel reset a
    connection that did not take its data) and ends the stream.
    A keep-alive comment goes out when a viewer has been sent nothing for `ping_s` (the site's
    one keep-alive task wakes every idle viewer)."""

    def __init__(self, site: Site, feed: MatchFeed) -> None:
        super().__init__(status_code=200)
        self.site = site
        self.feed = feed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        site = self.site
        site.viewers += 1
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_until_disconnect, receive, nursery.cancel_scope)
                # The head goes through every layer (which add the security headers); the body is
                # written to the server's `send` itself, with no wrapper of a layer around each write.
                await send({"type": "http.response.start", "status": 200, "headers": LIVE_HEADERS})
                send = scope.get(RAW_SEND, send)
                # The stream is written by a task of its own, not by this one: a task's every wakeup
                # resumes its whole chain of coroutines, and this one runs under a dozen (Hypercorn's
                # and Starlette's ASGI layers), the stream's only under `_follow`.
                nursery.start_soon(self._follow_then_stop, send, nursery.cancel_scope)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            site.viewers -= 1

    async def _follow_then_stop(self, send: Send, scope: trio.CancelScope) -> None:
        await self._follow(send)
        scope.cancel()  # the disconnect watcher

    async def _follow(self, send: Send) -> None:
        clock = self.site.clock
        group = clock.join()  # the clock counts its viewers: their number sets the frame
        try:
            await self._stream(send, group)
        finally:
            clock.leave()

    async def _stream(self, send: Send, group: int) -> None:
        site, feed = self.site, self.feed
        snapshot = feed.snapshot()
        cursor = feed.end
        await send(_chunk(ServerSentEvent(data=snapshot, event="position").encode()))
        sent_at = trio.current_time()
        while feed.open:
            # A match in play has events at every tick: its viewer wakes once a frame, at its
            # group's tick. Only when a tick found nothing new (the match waits for its bots)
            # does it wait for the next event first, so that an idle table wakes nobody.
            frame = await site.clock.tick(group)
            update, cursor = feed.update_at(frame, cursor)
            if update:
                await send(_chunk(update))
                sent_at = frame
                continue
            if frame - sent_at >= site.ping_s:
                await send(_chunk(PING))
                sent_at = frame
            await feed.wait_past(cursor)
        update, cursor = feed.update_at(-1.0, cursor)
        if update:
            await send(_chunk(update))
        runner = feed.runner
        end = {
            "match_id": feed.match_id,
            "state": runner.state.value,
            "termination": runner.termination,
            "scores": list(runner.match.scores),
            "has_replay": runner.replay_path is not None,
        }
        await send(_chunk(ServerSentEvent(data=json.dumps(end), event="end").encode()))


def _chunk(data: bytes) -> Message:
    return {"type": "http.response.body", "body": data, "more_body": True}


async def _until_disconnect(receive: Receive, scope: trio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


# ---------------------------------------------------------------------------------- the pages


def _page(name: str) -> Response:
    return FileResponse(STATIC / name, media_type="text/html")


async def page_leaderboard(request: Request) -> Response:
    _query(request, "variant", choices=VARIANT_NAMES)
    return _page("index.html")


async def page_bot(request: Request) -> Response:
    site: Site = request.app.state.site
    name = _bot_name(request)
    await site.db(site.store.bot, name)  # 404 when unknown
    return _page("bot.html")


async def page_matches(request: Request) -> Response:
    _query(request, "bot", BOT_NAME)
    _query(request, "state", choices=data.MATCH_STATES)
    return _page("matches.html")


async def page_replay(request: Request) -> Response:
    """A finished match in the replay viewer; a running one's live table."""
    site: Site = request.app.state.site
    match_id = _match_id(request)
    if site.feeds.get(match_id) is not None:
        return Response(status_code=303, headers={"location": f"/matches/{match_id}/live"})
    path = await _replay_path(site, match_id)
    play_on = f"/play?from={match_id}" if site.play is not None else None
    try:
        page = await site.db(_replay_page, path, play_on)
    except (OSError, ReplayReadError, ValueError) as exc:
        raise HTTPException(500, f"the replay of {match_id} cannot be read: {exc}") from None
    return HTMLResponse(page, headers={"content-security-policy": REPLAY_CSP})


def _replay_page(path: Path, play_on: str | None) -> str:
    replay = verify_replay(path, collect=True)
    if replay.variant is None:
        raise ValueError(str(replay.problem))
    return render_html(replay, play_on=play_on)


async def page_live(request: Request) -> Response:
    site: Site = request.app.state.site
    match_id = _match_id(request)
    if site.feeds.get(match_id) is None:
        await _match(site, match_id)  # 404 when unknown
    return _page("live.html")


# ---------------------------------------------------------------------------------- errors


ERROR_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{status} · Grosstarock Arena</title><link rel="stylesheet" href="/static/site.css"></head>
<body><header><a class="home" href="/">Grosstarock Arena</a>
<nav><a href="/">Leaderboard</a> <a href="/matches">Matches</a></nav></header>
<main><h1>{status} {title}</h1><p class="error">{detail}</p></main></body></html>
"""
TITLES = {400: "Bad request", 404: "Not found", 409: "Not available", 500: "Server error", 503: "Busy"}


def _error(request: Request, status: int, detail: str) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": detail, "status": status}, status_code=status)
    page = ERROR_PAGE.format(status=status, title=TITLES.get(status, "Error"), detail=html.escape(detail))
    return HTMLResponse(page, status_code=status)


async def on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _error(request, exc.status_code, str(exc.detail))


async def on_not_found(request: Request, exc: Exception) -> Response:
    return _error(request, 404, str(exc))


async def on_unexpected(request: Request, exc: Exception) -> Response:
    log.error("web request failed", path=request.url.path, error=repr(exc))
    return _error(request, 500, "the server could not answer this request")


CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class SecurityHeaders:
    """The security headers on every HTTP answer of `app`, errors and static files included: the
    site's Content-Security-Policy unless the answer brings its own (the replay viewer's).

    A path with a control character is a 404 here, before routing: Starlette's route patterns end
    in `$`, which also matches before a final newline, so `/bots/alpha%0a` would be alpha's page."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope[RAW_SEND] = send

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                names = {bytes(name).lower() for name, _value in headers}
                headers += [(n, v) for n, v in SECURITY_HEADERS if n not in names]
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", SITE_CSP.encode()))
                message = {**message, "headers": headers}
            await send(message)

        if CONTROL.search(scope["path"]):
            response = _error(Request(scope), 404, f"no page at {scope['path']!r}")
            await response(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)


def site_app(site: Site) -> ASGIApp:
    """The site: its Starlette application inside `SecurityHeaders` (outside Starlette's own
    error middleware, so that its 500s carry them too)."""
    routes = [
        Route("/", page_leaderboard),
        Route("/bots/{name:path}", page_bot),
        Route("/matches", page_matches),
        Route("/matches/{match_id}", page_replay),
        Route("/matches/{match_id}/live", page_live),
        Route("/api/standings", api_standings),
        Route("/api/bots/{name:path}", api_bot),
        Route("/api/matches", api_matches),
        Route("/api/matches/{match_id}", api_match),
        Route("/api/matches/{match_id}/replay", api_replay),
        Route("/api/matches/{match_id}/position", api_position),
        Route("/api/matches/{match_id}/live", api_live),
        *PLAY_ROUTES,
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={
            HTTPException: on_http_error,
            data.NotFound: on_not_found,
            UnknownBotError: on_not_found,
            Exception: on_unexpected,
        },
    )
    app.state.site = site
    return SecurityHeaders(app)


def http_config(host: str, port: int) -> Config:
    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = 1.0
    return config


async def serve_site(
    site: Site, host: str, port: int, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve the site until cancelled; `task_status.started(port)` once it listens.

    The socket is bound here first, so a taken port is an `OSError` raised before `started`."""
    config = http_config(host, port)
    try:
        sockets = config.create_sockets()
    except OSError as exc:
        raise OSError(f"cannot serve the web site on {host}:{port}: {exc.strerror or exc}") from None
    bound = sockets.insecure_sockets[0].getsockname()[1]
    for sock in sockets.insecure_sockets:
        # Accepted connections inherit both. Hypercorn shields its socket writes from
        # cancellation, so sse-starlette's send timeout cannot end a write to a viewer that
        # does not read: the kernel does, resetting a connection whose data has waited
        # unacknowledged (or behind a zero window) for `send_timeout_s`, which ends the
        # write and the viewer's stream. The small buffer bounds what it holds meanwhile
        # (loopback autotuning would let it grow to megabytes per viewer).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, int(site.send_timeout_s * 1000))
        sock.listen(config.backlog)

    async def run(task_status: trio.TaskStatus[Any]) -> None:
        app = wrap_app(site_app(site), config.wsgi_max_body_size, "asgi")  # type: ignore[arg-type]
        await worker_serve(app, config, sockets=sockets, task_status=task_status)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(site.clock.run)
        nursery.start_soon(site.feeds.keep_alive, site.ping_s)
        await nursery.start(run)
        log.info("web site listening", url=f"http://{host}:{bound}/")
        task_status.started(bound)


async def serve_with_site(
    server: Callable[..., Awaitable[None]], service: StandingArena, host: str, port: int, play: bool = False
) -> None:
    """The referee (`server`: `serve` with its arguments) and the site on `host:port`, in one
    trio loop until cancelled. A port that cannot be bound raises its `OSError` unwrapped."""
    refused: OSError | None = None
    async with trio.open_nursery() as nursery:
        try:
            hub, _port = await nursery.start(server)
            lobby = lambda: service.lobby.connected_bots() if service.lobby is not None else set()  # noqa: E731
            site = Site(hub, service.store, lobby)
            if play:
                site.play = Tables(hub)
                if service.lobby is not None:
                    site.play_lobby = LobbySeats(service.lobby, site.play)
            await nursery.start(serve_site, site, host, port)
        except OSError as exc:  # raised below, not inside the nursery's exception group
            refused = exc
            nursery.cancel_scope.cancel()
    if refused is not None:
        raise refused
